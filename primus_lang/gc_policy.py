"""The garbage collector's thresholds for the commands, which project thousands of candidates.

Projection allocates many small objects that live for the whole run (op lists, cached timings,
schedule plans) and makes almost no reference cycles. CPython's default first-generation threshold
(700 allocations) then runs a collection every few candidates that finds nothing to free: on the
Llama 3.1 70B example it cost about an eighth of the cold projection time (docs/projection.md).
"""

from __future__ import annotations

import gc

# Measured on the 70B example (median of six runs, one core): defaults (700, 10, 10) 5,340
# projections/s; (50,000, 10, 10) 5,740/s; (50,000, 20, 20) 6,040/s.
BULK_THRESHOLDS = (50_000, 20, 20)


def use_bulk_thresholds() -> None:
    """Collect less often; never more often than the thresholds already set."""
    current = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(current, BULK_THRESHOLDS, strict=True)))
