"""`primusc import-hf`: a Hugging Face ``config.json`` becomes a model card in the language.

``read_config`` loads and checks the JSON, ``map_config`` turns it into an IR ``Model`` plus the
notes on what the card approximates, ``render_card`` writes that as ``.prx`` text. Anything the IR
cannot express faithfully is refused with a P31xx diagnostic instead of being guessed.
"""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.hfimport.config import HfConfig, read_config
from primus_lang.hfimport.mapping import SUPPORTED_MODEL_TYPES, Imported, map_config
from primus_lang.hfimport.render import card_name, render_card

__all__ = [
    "SUPPORTED_MODEL_TYPES",
    "HfConfig",
    "Imported",
    "card_name",
    "map_config",
    "read_config",
    "render_card",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.hfimport.render import check_name

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["check_name"]
