"""The strategy interface: ``propose`` a batch, ``observe`` its trials, repeat.

A strategy sees the search through the engine (``SearchView``): the landscape, what has been evaluated,
the incumbent, the budget left and a random generator seeded from the run's seed and its own name.
It returns an empty batch when it has nothing left to propose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from primus_lang.search.trial import Proposal, Trial

if TYPE_CHECKING:
    from primus_lang.search.view import SearchView


class Strategy:
    name = "strategy"
    # whether its first proposal is the planner's baseline; the engine evaluates the baseline first for
    # those that do not, so that no search ends below the recipe its output compares it with
    starts_at_baseline = False

    def __init__(self) -> None:
        self.proven = False  # set when the strategy has proved the incumbent optimal
        self.stop_reason = ""  # why it proposed nothing (empty: the engine's default)
        self._search: SearchView | None = None

    @property
    def search(self) -> SearchView:
        if self._search is None:
            raise RuntimeError(f"strategy {self.name} used before start()")
        return self._search

    def start(self, search: SearchView) -> None:
        self._search = search

    def finish(self) -> None:
        """Let go of the search, which has ended."""
        self._search = None

    def propose(self) -> list[Proposal]:
        raise NotImplementedError

    def observe(self, trials: Sequence[Trial]) -> None:
        """Most strategies read the engine's state instead; those that learn override this."""

    # helpers shared by the strategies over the legal set
    def point(self, index: int, note: str = "") -> Proposal:
        return Proposal(self.name, candidate=self.search.land.points[index], hypothesis=note, index=index)

    def open_mask(self) -> np.ndarray:
        """Points that fit and have not been evaluated by this search yet."""
        result: np.ndarray = self.search.land.fits & ~self.search.seen
        return result

    def batch_size(self, wanted: int) -> int:
        left = self.search.meter.remaining_evaluations()
        return wanted if left is None else max(1, min(wanted, left))
