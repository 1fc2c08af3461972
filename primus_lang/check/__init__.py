"""Check: lazy enumeration of a space, Megatron legality rules, the user's constraints."""

from typing import TYPE_CHECKING

from primus_lang.check.enumerate import (
    LegalitySummary,
    RuleCount,
    Violation,
    environment,
    legal_list,
    legal_mask,
    legal_points,
    legal_values,
    legality,
    never_legal,
    never_legal_why,
    raw_points,
    raw_size,
    ruled_out_together,
    summarize,
)
from primus_lang.check.point import baseline_point, nearest_legal_point, parse_point
from primus_lang.exports import lazy_exports

__all__ = [
    "LegalitySummary",
    "RuleCount",
    "Violation",
    "baseline_point",
    "environment",
    "legal_list",
    "legal_mask",
    "legal_points",
    "legal_values",
    "legality",
    "nearest_legal_point",
    "never_legal",
    "never_legal_why",
    "parse_point",
    "raw_points",
    "raw_size",
    "ruled_out_together",
    "summarize",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.check.enumerate import require_legal
    from primus_lang.check.evaluate import evaluate as evaluate_expr
    from primus_lang.check.point import outside_warning

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["evaluate_expr", "outside_warning", "require_legal"]
