"""Exhaustive search with branch and bound.

Memory prunes first: points the proof rejects are never projected. The rest are projected best bound
first, where the bound is an upper limit on each point's score (for throughput: the compute-only step
time at the hardware's efficiency plateau, see ``bound.py``). Once the best remaining bound cannot
beat the incumbent, no unevaluated point can, and the incumbent is proven optimal. Without a bound,
or once the engine catches the bound failing, it simply evaluates every fitting point.
"""

from __future__ import annotations

import numpy as np

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal

BATCH = 16


class Exhaustive(Strategy):
    name = "exhaustive"

    def __init__(self) -> None:
        super().__init__()
        self._order: np.ndarray | None = None
        self._next = 0

    def _ordered(self) -> np.ndarray:
        if self._order is None:
            land = self.search.land
            fitting = land.fitting
            upper = self.search.upper
            if upper is None:
                self._order = fitting
            else:
                # stable sort keeps landscape order among equal bounds: deterministic
                self._order = fitting[np.argsort(-upper[fitting], kind="stable")]
        return self._order

    def propose(self) -> list[Proposal]:
        order = self._ordered()
        open_ = self.open_mask()
        picks: list[Proposal] = []
        want = self.batch_size(BATCH)
        while self._next < len(order) and len(picks) < want:
            i = int(order[self._next])
            if self._beaten(i):
                self.proven = True
                self.stop_reason = "optimum proven by the bound"
                return picks
            self._next += 1
            if open_[i]:
                picks.append(self.point(i))
        if not picks:
            self.stop_reason = "every fitting point evaluated"
        return picks

    def _beaten(self, i: int) -> bool:
        """Whether point ``i``'s bound (and so every later one's) cannot beat the incumbent."""
        s = self.search
        if s.upper is None or not s.bound_valid or s.best is None or s.best.score is None:
            return False
        return float(s.upper[i]) <= s.best.score

    def observe(self, trials: object) -> None:
        if self._order is not None and self._next < len(self._order) and self._beaten(int(self._order[self._next])):
            self.proven = True
