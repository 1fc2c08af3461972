"""Lowering: AST → IR (imports, names, units, inheritance with overrides, domains)."""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.lower.domains import single
from primus_lang.lower.load import load_program, load_space, loads_program, pick_space
from primus_lang.lower.stdlib import stdlib_cards

__all__ = ["load_program", "load_space", "loads_program", "pick_space", "single", "stdlib_cards"]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.lower.capacity import select_cluster
    from primus_lang.lower.load import Loader
    from primus_lang.lower.names import knob_hint
    from primus_lang.lower.values import block_class

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["Loader", "block_class", "knob_hint", "select_cluster"]
