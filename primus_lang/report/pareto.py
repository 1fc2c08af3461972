"""The Pareto front of throughput against memory peak."""

from __future__ import annotations

import math
from collections.abc import Sequence

from primus_lang.report.view import CandidateView


def pareto_front(cands: Sequence[CandidateView]) -> list[CandidateView]:
    """Fitting candidates that no other fitting candidate beats on both throughput and memory.

    Ordered by memory peak, so the front draws as a staircase; of exact duplicates the first is kept.
    """
    pool = [c for c in cands if c.fits and math.isfinite(c.tokens_per_gpu)]
    pool.sort(key=lambda c: (c.memory_peak, -c.tokens_per_gpu, c.evaluation))
    front: list[CandidateView] = []
    best = -math.inf
    for cand in pool:
        if cand.tokens_per_gpu > best:
            front.append(cand)
            best = cand.tokens_per_gpu
    return front
