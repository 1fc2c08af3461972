"""`primusc import-recipe`: a launch recipe people run today, read into a space.

``words`` splits a command line into words with their positions (never running it), ``megatron``
and ``primus`` turn a command line or a Primus experiment into ``Setting``s keyed by Megatron's
argument names, ``interpret`` turns those into a model, a baseline candidate, the cluster and
the settings carried through unchanged, and ``render`` writes the space.
"""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.recipes.interpret import Imported, interpret, null_tokenizer_extra
from primus_lang.recipes.read import ReadOptions, read_recipe
from primus_lang.recipes.render import neighbour_notes, render_space
from primus_lang.recipes.settings import Recipe

__all__ = ["Imported", "ReadOptions", "Recipe", "interpret", "neighbour_notes", "null_tokenizer_extra", "read_recipe", "render_space"]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.recipes.cards import find_card, match_shape, primus_card_name, tokenizer_card
    from primus_lang.recipes.render import knob_text, passthrough_keys_ok

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["find_card", "knob_text", "match_shape", "passthrough_keys_ok", "primus_card_name", "tokenizer_card"]
