"""Memory legality: the exact per-rank byte account of a candidate and a vectorized pre-filter."""

from primus_lang.memory.account import account
from primus_lang.memory.result import MemoryAccount, RankAccount, Term
from primus_lang.memory.schedule import inflight_microbatches

__all__ = ["MemoryAccount", "RankAccount", "Term", "account", "inflight_microbatches"]
