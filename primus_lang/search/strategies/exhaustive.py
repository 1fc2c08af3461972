"""Exhaustive search with branch and bound.

Memory prunes first: points the proof rejects are never projected. The rest are projected best bound
first, where the bound is an upper limit on each point's score (for throughput: the compute-only step
time at the hardware's efficiency plateau, see ``bound.py``). Once the best remaining bound cannot
beat the incumbent, no unevaluated point can, and the incumbent is proven optimal. Before a point is
projected it is asked for its refined bound where the search has one (the projection's passes and
tails without the schedule, ``project.step_floor``): a point that even so can neither beat the
incumbent nor tie with it (``Landscape.tie``) is set aside unprojected. Without a bound, or once the engine catches a bound failing, it evaluates every
fitting point, those set aside included.
"""

from __future__ import annotations

import numpy as np

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal

BATCH = 16
# points whose refined bounds are computed together before they are asked for one by one
AHEAD = 2048


class Exhaustive(Strategy):
    name = "exhaustive"

    def __init__(self) -> None:
        super().__init__()
        self._order: np.ndarray | None = None
        self._next = 0
        # where in ``_order`` the points told to the refined bound end: the next point beyond is told
        # with the 2,047 after it, so their floors are computed together
        self._ahead = 0
        self.set_aside: list[int] = []  # fitting points their refined bound kept from being projected

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
        if not self.search.bound_valid:  # a bound failed: what it set aside may beat the incumbent after all
            while self.set_aside and len(picks) < want:
                i = self.set_aside.pop()
                if open_[i]:
                    picks.append(self.point(i))
        meter = self.search.meter
        while self._next < len(order) and len(picks) < want:
            # refining bounds can set aside thousands of points in a row: a time budget is kept here too
            spent = meter.stop_reason()
            if spent:
                if not picks:
                    self.stop_reason = spent
                return picks
            i = int(order[self._next])
            if self._beaten(i):
                return self._proven(picks)
            self._next += 1
            if open_[i]:
                # told once there is an incumbent, which the floors wanted ahead depend on
                if self._next > self._ahead and self.search.best is not None:
                    self.search.refine_ahead(order[self._next - 1:self._next - 1 + AHEAD].tolist())
                    self._ahead = self._next - 1 + AHEAD
                if self._beaten(i, refined=True):
                    self.set_aside.append(i)
                    continue
                picks.append(self.point(i))
        if not picks:
            if self.set_aside and self.search.bound_valid:
                return self._proven(picks)
            self.stop_reason = "every fitting point evaluated"
        return picks

    def _proven(self, picks: list[Proposal]) -> list[Proposal]:
        self.proven = True
        self.stop_reason = "optimum proven by the bound"
        return picks

    def _beaten(self, i: int, refined: bool = False) -> bool:
        """Whether point ``i``'s bound (and so every later one's) can neither beat the incumbent nor tie
        with it (``Landscape.tie``: the tie-break then sees every point it could choose); with
        ``refined``, whether its refined bound cannot (that says nothing of the later points)."""
        s = self.search
        if s.upper is None or not s.bound_valid or s.best is None or s.best.score is None:
            return False
        best, land = s.best.score, s.land
        bound = s.refined(i, land.tie_reach(best)) if refined else float(s.upper[i])
        return land.cannot_tie(bound, best)

    def observe(self, trials: object) -> None:
        if self._order is not None and self._next < len(self._order) and self._beaten(int(self._order[self._next])):
            self.proven = True
