"""Error bands measured from held-out residuals: how far a projection carries, and how far the
ratio of two projections carries.

Every function here takes signed relative errors ``projected / measured - 1`` of rows that the fit
projecting them never saw (k-fold cross-validation, a GPU left out of its vendor's pool, or the
stdlib defaults, which saw nothing) and returns what ``ir.Provenance`` stores: the quantiles of
measured over projected tokens/s/GPU, and the quantile of the error of a ratio of two rows of one
group. Quantiles are empirical (numpy's linear interpolation): the corpus's residuals are skewed
and heavy-tailed (a spec sheet is 50% optimistic, not symmetric about zero), which a normal band
would misstate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from attrs import frozen

COVERAGE = 0.8  # the share of measured runs a band is to hold: an 80% interval
# Two candidates are tied when the projected margin between them is below the median error of such a
# margin: the measured order then differs from the projected one in a quarter of such pairs or more.
PAIRED_COVERAGE = 0.5


@frozen
class MeasuredBand:
    """A band and the evidence behind it."""

    low: float  # measured / projected at the band's lower quantile
    high: float
    paired: float  # relative error of a ratio of two projections, at ``paired_coverage``
    rows: int  # residuals the band was measured on
    pairs: int  # pairs of distinct layouts the paired band was measured on
    coverage: float = COVERAGE
    error: float = math.nan  # mean absolute error of those residuals
    paired_coverage: float = PAIRED_COVERAGE

    def to_json(self) -> dict[str, float | int | None]:
        # no pair measured is null (JSON has no NaN)
        return {"low": self.low, "high": self.high, "paired": self.paired if self.pairs else None, "rows": self.rows,
                "pairs": self.pairs, "coverage": self.coverage, "error": self.error,
                "paired_coverage": self.paired_coverage}


def _ratios(errors: Iterable[float]) -> np.ndarray:
    """Measured over projected for each signed error ``projected / measured - 1``."""
    return np.array([1.0 / (1.0 + e) for e in errors], dtype=float)


def band_of(errors: Sequence[float], coverage: float = COVERAGE) -> tuple[float, float]:
    """The central ``coverage`` interval of measured over projected tokens/s/GPU, for a run the
    residuals did not include. The sample's own quantiles are too narrow for a new run (with n
    residuals, a new one falls above the sample's q-quantile with probability about 1 - q·n/(n+1)
    plus the sampling error of the quantile itself), so each tail's level is widened by
    split-conformal's (n+1)/n: the interval between the ⌊α/2·(n+1)⌋-th and ⌈(1-α/2)·(n+1)⌉-th
    order statistics, read by interpolation."""
    ratios = _ratios(errors)
    n = len(ratios)
    if not n:
        return math.nan, math.nan
    upper = min(1.0, (1.0 - (1.0 - coverage) / 2) * (n + 1) / n)
    lo, hi = np.quantile(ratios, [1.0 - upper, upper])
    return float(lo), float(hi)


def pair_errors(errors: Mapping[str, float], group: Callable[[str], str], layout: Callable[[str], str]) -> list[float]:
    """|log| of the error of each ratio of two rows of one group with different layouts: how far
    ``projected_a / projected_b`` lands from ``measured_a / measured_b``. Rows re-measuring one layout
    are not a pair (their projections are equal by construction, so they would say nothing about
    ranking two recipes)."""
    by_group: dict[str, list[tuple[str, float]]] = {}
    for rid, e in sorted(errors.items()):
        by_group.setdefault(group(rid), []).append((layout(rid), math.log1p(e)))
    out = []
    for rows in by_group.values():
        for i, (la, ea) in enumerate(rows):
            for lb, eb in rows[i + 1:]:
                if la != lb:
                    out.append(abs(ea - eb))
    return out


def paired_of(pairs: Sequence[float], coverage: float = PAIRED_COVERAGE) -> float:
    """The relative error of a ratio of two projections that ``coverage`` of the pairs stay within."""
    if not pairs:
        return math.nan
    return float(math.expm1(float(np.quantile(np.array(pairs), coverage))))


def measure(errors: Mapping[str, float], pairs: Sequence[float], coverage: float = COVERAGE,
            paired_coverage: float = PAIRED_COVERAGE) -> MeasuredBand:
    """The band of one set of held-out residuals (row id -> signed error) and the paired band of
    ``pairs`` (``pair_errors`` of the same or a larger set)."""
    values = [errors[k] for k in sorted(errors)]
    lo, hi = band_of(values, coverage)
    mape = float(np.mean(np.abs(values))) if values else math.nan
    return MeasuredBand(lo, hi, paired_of(pairs, paired_coverage), len(values), len(pairs), coverage, mape,
                        paired_coverage)


def held_out_coverage(targets: Mapping[str, float], evidence: Mapping[str, float], layout: Callable[[str], str],
                      coverage: float = COVERAGE) -> tuple[int, int]:
    """How many rows of ``targets`` fall inside a band measured on ``evidence`` without them: for
    each target row, the band of every evidence residual except those of its own layout (a twin
    re-measuring it would leak its own error into its band). Returns (inside, rows judged)."""
    inside = judged = 0
    for rid, e in sorted(targets.items()):
        others = [x for k, x in sorted(evidence.items()) if layout(k) != layout(rid)]
        if len(others) < 2:
            continue
        lo, hi = band_of(others, coverage)
        judged += 1
        inside += lo <= 1.0 / (1.0 + e) <= hi
    return inside, judged
