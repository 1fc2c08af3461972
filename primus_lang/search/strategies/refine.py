"""Local refinement of the incumbent: first-improvement hill climbing over small moves.

Moves that change one axis come first, then moves that change two at once (PP with VPP, TP with
MBS: knobs that are only good together). Within a distance, the points whose bound promises most go
first. The climb recentres as soon as the incumbent improves and stops at a local optimum: no
unevaluated fitting point within two axes of it.
"""

from __future__ import annotations

import numpy as np

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal

BATCH = 8
REACH = 2


class Refine(Strategy):
    name = "refine"

    def propose(self) -> list[Proposal]:
        s = self.search
        center = s.best_index
        if center is None:
            self.stop_reason = "nothing to refine"
            return []
        open_ = self.open_mask()
        dist = s.land.distances(s.land.coords[center])
        for reach in range(1, REACH + 1):
            ring = np.flatnonzero(open_ & (dist == reach))
            if len(ring) == 0:
                continue
            if s.upper is not None:
                ring = ring[np.argsort(-s.upper[ring], kind="stable")]
            else:
                ring = s.rng(f"{self.name}:{center}:{reach}").permutation(ring)
            return [self.point(int(i)) for i in ring[: self.batch_size(BATCH)]]
        self.stop_reason = "local optimum"
        return []
