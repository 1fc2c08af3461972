"""What each training framework accepts, per version, as data generated from its own sources
(``frameworks/``, written by ``tools/framework_knowledge.py``): Megatron-LM's flags and Primus's
presets, Megatron-Bridge's recipes, what Megatron-LM's validate_args refuses (``rules``). Readers of recipes and logs and the emitters ask here instead of restating a framework's facts."""

from primus_lang.frameworks import bridge, megatron, primus, reading, rules, spelling
from primus_lang.frameworks.target import megatron_of

__all__ = ["bridge", "megatron", "megatron_of", "primus", "reading", "rules", "spelling"]
