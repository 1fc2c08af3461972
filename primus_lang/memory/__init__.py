"""Memory legality: the exact per-rank byte account of a candidate and a vectorized pre-filter."""

from primus_lang.memory.account import account
from primus_lang.memory.explain import explain_overflow
from primus_lang.memory.prefilter import prefilter
from primus_lang.memory.result import MemoryAccount, RankAccount, Term, usable_bytes
from primus_lang.memory.schedule import inflight_microbatches
from primus_lang.memory.table import account_to_json, render_account
from primus_lang.memory.unpublished import least_memory

__all__ = [
    "MemoryAccount",
    "RankAccount",
    "Term",
    "account",
    "account_to_json",
    "explain_overflow",
    "inflight_microbatches",
    "least_memory",
    "prefilter",
    "render_account",
    "usable_bytes",
]
