"""Memory legality: the exact per-rank byte account of a candidate and a vectorized pre-filter."""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.memory.account import account
from primus_lang.memory.explain import explain_overflow
from primus_lang.memory.params import ModelSize, model_size
from primus_lang.memory.prefilter import prefilter
from primus_lang.memory.result import MemoryAccount, RankAccount, Term, not_counted, usable_bytes
from primus_lang.memory.schedule import inflight_microbatches
from primus_lang.memory.stage import offload_bytes
from primus_lang.memory.table import account_to_json, render_account
from primus_lang.memory.unpublished import least_memory

__all__ = [
    "MemoryAccount",
    "ModelSize",
    "RankAccount",
    "Term",
    "account",
    "account_to_json",
    "explain_overflow",
    "inflight_microbatches",
    "least_memory",
    "model_size",
    "not_counted",
    "offload_bytes",
    "prefilter",
    "render_account",
    "usable_bytes",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.memory.explain import refuse_overflow

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["refuse_overflow"]
