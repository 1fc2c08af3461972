"""Random search: points drawn uniformly, without replacement, from the points that fit."""

from __future__ import annotations

import numpy as np

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal

BATCH = 8


class RandomSearch(Strategy):
    name = "random"

    def __init__(self) -> None:
        super().__init__()
        self._order: np.ndarray | None = None
        self._next = 0

    def propose(self) -> list[Proposal]:
        s = self.search
        if self._order is None:
            self._order = s.rng(self.name).permutation(s.land.fitting)
        open_ = self.open_mask()
        picks: list[Proposal] = []
        want = self.batch_size(BATCH)
        while self._next < len(self._order) and len(picks) < want:
            i = int(self._order[self._next])
            self._next += 1
            if open_[i]:
                picks.append(self.point(i))
        return picks
