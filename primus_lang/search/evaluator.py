"""The memoized oracle: a candidate's evaluation is computed once, however many searches ask.

The cache is shared by every search that uses the same evaluator (``tune-compare`` runs dozens over
one space), while each search still charges its own budget for a point the first time *it* asks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from primus_lang.ir.candidate import Candidate
from primus_lang.search.trial import Evaluation


class Evaluator:
    def __init__(self, fn: Callable[[Candidate], Evaluation]) -> None:
        self._fn = fn
        self._cache: dict[Candidate, Evaluation] = {}
        self.computed = 0  # oracle calls actually made

    def __call__(self, cand: Candidate) -> Evaluation:
        hit = self._cache.get(cand)
        if hit is None:
            hit = self._fn(cand)
            self._cache[cand] = hit
            self.computed += 1
        return hit

    def preload(self, pairs: Iterable[tuple[Candidate, Evaluation]]) -> None:
        for cand, ev in pairs:
            self._cache[cand] = ev
