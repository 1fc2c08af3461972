"""The default strategy: the planner, then a cross-axis explorer, then local refinement.

The explorer is the LLM investigator when one is configured and the evolutionary search otherwise
(or once the LLM has spent its own budget or keeps failing). Each phase gets a share of the
evaluation budget; when refinement reaches a local optimum with budget left, exploration resumes
from the evolutionary population and refinement follows again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.strategies.evolutionary import Evolutionary
from primus_lang.search.strategies.planner import Planner
from primus_lang.search.strategies.refine import Refine
from primus_lang.search.trial import Proposal, Trial

if TYPE_CHECKING:
    from primus_lang.search.view import SearchView

PLANNER_SHARE = 0.6
EXPLORE_SHARE = 0.85
NOMINAL_BUDGET = 100  # phase shares for a search limited only by time


class Auto(Strategy):
    name = "auto"
    starts_at_baseline = True

    def __init__(self, explorer: Callable[[], Strategy] | None = None) -> None:
        super().__init__()
        self._make_explorer = explorer
        self._phases: list[tuple[Strategy, float | None]] = []
        self._current = 0
        self._evolution = Evolutionary()
        self._one_batch = False

    def start(self, search: SearchView) -> None:
        super().start(search)
        explorer = self._make_explorer() if self._make_explorer is not None else self._evolution
        self._phases = [(Planner(), PLANNER_SHARE), (explorer, EXPLORE_SHARE), (Refine(), None)]
        self._enter(0)

    def finish(self) -> None:
        for strategy, _share in self._phases:
            strategy.finish()
        self._evolution.finish()
        super().finish()

    def _enter(self, i: int) -> None:
        self._current = i
        strategy, _ = self._phases[i]
        strategy.start(self.search)
        self.search.phase = strategy.name
        self.search.trace.write("phase", name=strategy.name, evaluations=self.search.meter.evaluations)

    def _cap(self, share: float | None) -> int | None:
        if share is None:
            return None
        total = self.search.limits.evaluations or NOMINAL_BUDGET
        return max(1, round(total * share))

    def propose(self) -> list[Proposal]:
        empty = 0
        while empty <= len(self._phases):
            strategy, share = self._phases[self._current]
            cap = self._cap(share)
            spent = self.search.meter.evaluations
            batch: list[Proposal] = []
            if cap is None or spent < cap:
                batch = strategy.propose()
                if cap is not None:
                    batch = batch[: cap - spent]
            if batch:
                return batch
            empty += 1
            if not self._advance():
                return []
        self.stop_reason = "no phase has anything left to propose"
        return []

    def _advance(self) -> bool:
        if self._current + 1 < len(self._phases):
            self._enter(self._current + 1)
            return True
        # refinement reached a local optimum with budget left: explore again, then refine again
        if not self.open_mask().any():
            self.stop_reason = "no open point left near or far"
            return False
        explorer = self._phases[1][0]
        if explorer.stop_reason and explorer is not self._evolution:
            explorer = self._evolution
        self._phases = [*self._phases[:1], (explorer, None), (Refine(), None)]
        self._enter(1)
        # the explorer runs for one batch, then refinement takes over again
        self._phases[1] = (explorer, None)
        self._one_batch = True
        return True

    def observe(self, trials: Sequence[Trial]) -> None:
        strategy, _ = self._phases[self._current]
        strategy.observe(trials)
        if self._one_batch and self._current == 1:
            self._one_batch = False
            self._enter(2)
        if strategy.proven:
            self.proven = True
