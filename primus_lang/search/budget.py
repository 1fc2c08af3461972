"""Budgets and stop rules: what a search may spend, and when it should stop on its own."""

from __future__ import annotations

import time

from attrs import frozen

STOP_EVALUATIONS = "evaluation budget spent"
STOP_TIME = "time budget spent"
STOP_PATIENCE = "no improvement"
STOP_EXHAUSTED = "space exhausted"
STOP_PROVEN = "optimum proven"
STOP_DONE = "strategy finished"
STOP_STALLED = "strategy stalled"


@frozen
class Limits:
    """``None`` means unlimited. ``patience``: stop after this many evaluations without improvement."""

    evaluations: int | None = 100
    seconds: float | None = None
    llm_calls: int | None = None
    llm_cost_usd: float | None = None
    patience: int | None = None


class Meter:
    """What a search has spent so far. ``offset`` carries the elapsed time of a resumed run."""

    def __init__(self, limits: Limits, offset: float = 0.0) -> None:
        self.limits = limits
        self.evaluations = 0
        self.llm_calls = 0
        self.llm_cost_usd = 0.0
        self.since_improvement = 0
        self._start = time.monotonic() - offset

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def remaining_evaluations(self) -> int | None:
        if self.limits.evaluations is None:
            return None
        return max(0, self.limits.evaluations - self.evaluations)

    def remaining_seconds(self) -> float | None:
        if self.limits.seconds is None:
            return None
        return max(0.0, self.limits.seconds - self.elapsed)

    def llm_allowed(self) -> bool:
        lim = self.limits
        if lim.llm_calls is not None and self.llm_calls >= lim.llm_calls:
            return False
        return lim.llm_cost_usd is None or self.llm_cost_usd < lim.llm_cost_usd

    def stop_reason(self) -> str | None:
        lim = self.limits
        if lim.evaluations is not None and self.evaluations >= lim.evaluations:
            return STOP_EVALUATIONS
        if lim.seconds is not None and self.elapsed >= lim.seconds:
            return STOP_TIME
        if lim.patience is not None and self.since_improvement >= lim.patience:
            return f"{STOP_PATIENCE} in {lim.patience} evaluations"
        return None
