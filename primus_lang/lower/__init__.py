"""Lowering: AST → IR (imports, names, units, inheritance with overrides, domains)."""

from primus_lang.lower.domains import single
from primus_lang.lower.load import load_program, load_space, loads_program, pick_space
from primus_lang.lower.stdlib import stdlib_cards

__all__ = ["load_program", "load_space", "loads_program", "pick_space", "single", "stdlib_cards"]
