"""Memory legality: the exact per-rank byte account of a candidate and a vectorized pre-filter."""

from primus_lang.memory.account import account
from primus_lang.memory.explain import explain_overflow
from primus_lang.memory.prefilter import prefilter
from primus_lang.memory.result import MemoryAccount, RankAccount, Term
from primus_lang.memory.schedule import inflight_microbatches
from primus_lang.memory.table import account_to_json, render_account

__all__ = [
    "MemoryAccount",
    "RankAccount",
    "Term",
    "account",
    "account_to_json",
    "explain_overflow",
    "inflight_microbatches",
    "prefilter",
    "render_account",
]
