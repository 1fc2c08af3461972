"""What a strategy may read and do of the search running it.

``search/engine.py`` runs strategies and ``Search`` is this protocol; strategies are written against
it, so ``search/strategies`` never imports the engine (the engine imports the strategy interface).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from primus_lang.search.budget import Limits, Meter
from primus_lang.search.landscape import Landscape
from primus_lang.search.trace import TraceWriter
from primus_lang.search.trial import Proposal, Trial


class SearchView(Protocol):
    land: Landscape
    limits: Limits
    meter: Meter
    trace: TraceWriter
    upper: np.ndarray | None  # an upper bound on every point's score, or None
    bound_valid: bool
    llm_replies: dict[str, dict[str, Any]]  # recorded replies a resumed run answers from
    trials: list[Trial]
    seen: np.ndarray
    scores: np.ndarray
    trial_of: dict[int, Trial]
    best: Trial | None
    best_index: int | None
    phase: str

    def rng(self, name: str) -> np.random.Generator:
        """A generator private to ``name`` so one strategy's draws never shift another's."""

    @property
    def evaluated_indices(self) -> np.ndarray: ...

    def refined(self, index: int, enough: float = float("inf")) -> float:
        """Point ``index``'s upper bound, refined where the search can until it is at most ``enough``."""

    def refine_ahead(self, indices: Sequence[int]) -> None:
        """Tell the refined bound the points it will be asked about next (it may compute them together)."""

    def note(self, message: str) -> None: ...

    def submit(self, proposal: Proposal) -> Trial:
        """Judge and, if it passes every check, evaluate one proposal."""
