"""Check: lazy enumeration of a space, Megatron legality rules, the user's constraints."""

from primus_lang.check.enumerate import (
    LegalitySummary,
    RuleCount,
    Violation,
    environment,
    legal_list,
    legal_mask,
    legal_points,
    legality,
    raw_points,
    raw_size,
    summarize,
)
from primus_lang.check.point import baseline_point, parse_point

__all__ = [
    "LegalitySummary",
    "RuleCount",
    "Violation",
    "baseline_point",
    "environment",
    "legal_list",
    "legal_mask",
    "legal_points",
    "legality",
    "parse_point",
    "raw_points",
    "raw_size",
    "summarize",
]
