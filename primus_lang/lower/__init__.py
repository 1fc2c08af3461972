"""Lowering: AST → IR (imports, names, units, inheritance with overrides, domains)."""

from primus_lang.lower.domains import single
from primus_lang.lower.load import load_program, load_space, loads_program, pick_space

__all__ = ["load_program", "load_space", "loads_program", "pick_space", "single"]
