"""Bayesian optimisation with optuna's TPE sampler; the memory verdict is its constraint.

Every axis is a categorical parameter over its value indices. A sample that is illegal or does not
fit is told to optuna as infeasible (constraint > 0: the share by which it exceeds the memory limit,
or 1 for an illegal point), at the worst score seen, so TPE learns where the feasible region lies; the
search then evaluates the nearest open fitting point instead and adds it to the study as well.
optuna is an optional dependency (``primusc[search]``) and is imported only here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import OPTIONAL_MISSING
from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal, Trial

if TYPE_CHECKING:
    from primus_lang.search.view import SearchView

ASKS_PER_PROPOSAL = 25
STARTUP_TRIALS = 10


class Bayes(Strategy):
    name = "bayes"

    def __init__(self) -> None:
        super().__init__()
        self._optuna: Any = None
        self._study: Any = None
        self._dists: dict[str, Any] = {}
        self._pending: dict[int, Any] = {}  # point index -> the optuna trial that asked for it (or None)
        self._by_coords: dict[tuple[int, ...], int] = {}
        self._told: set[int] = set()
        self._native = True

    def start(self, search: SearchView) -> None:
        super().start(search)
        try:
            import optuna
        except ImportError:
            raise CompileError(
                Diagnostic(OPTIONAL_MISSING, "the `bayes` strategy needs optuna, which is not installed",
                           help="pip install 'primusc[search]'")
            ) from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self._optuna = optuna
        land = search.land
        self._dists = {
            a.name: optuna.distributions.CategoricalDistribution(list(range(len(a.values)))) for a in land.axes
        }
        self._by_coords = {tuple(int(x) for x in row): i for i, row in enumerate(land.coords)}
        seed = int(search.rng(self.name).integers(2**31 - 1))
        # optuna 5 reads constraints set on the trial; older releases need constraints_func
        self._native = hasattr(optuna.trial.Trial, "set_constraint")
        options: dict[str, Any] = {}
        if not self._native:
            options["constraints_func"] = lambda t: (float(t.user_attrs.get("violation", 0.0)),)
        sampler = optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=STARTUP_TRIALS, multivariate=True, **options
        )
        self._study = optuna.create_study(direction="maximize", sampler=sampler)
        for i in search.evaluated_indices:  # earlier phases' results (when run inside another strategy)
            self._add(int(i), float(search.scores[i]))

    def _params(self, i: int) -> dict[str, int] | None:
        coords = self.search.land.coords[i]
        if (coords < 0).any():
            return None  # a conditional axis left its domain: TPE cannot express this point
        return {a.name: int(c) for a, c in zip(self.search.land.axes, coords, strict=True)}

    def _add(self, i: int, score: float) -> None:
        if i in self._told:
            return
        params = self._params(i)
        if params is None:
            return
        self._told.add(i)
        extra: dict[str, Any] = {"constraints": {"memory": 0.0}} if self._native else {}
        trial = self._optuna.trial.create_trial(
            params=params, distributions=self._dists, value=score, user_attrs={"violation": 0.0}, **extra
        )
        self._study.add_trial(trial)

    def _tell(self, trial: Any, score: float, violation: float) -> None:
        if self._native:
            trial.set_constraint("memory", violation)
        trial.set_user_attr("violation", violation)
        self._study.tell(trial, score)

    def _worst(self) -> float:
        s = self.search
        seen = s.scores[s.seen]
        return float(seen.min()) if len(seen) else 0.0

    def propose(self) -> list[Proposal]:
        s = self.search
        land = s.land
        open_ = self.open_mask()
        if not open_.any():
            return []
        for _ in range(ASKS_PER_PROPOSAL):
            trial = self._study.ask(self._dists)
            coords = tuple(int(trial.params[a.name]) for a in land.axes)
            i = self._by_coords.get(coords)
            if i is not None and land.fits[i] and not s.seen[i]:
                self._pending[i] = trial
                return [self.point(i)]
            if i is not None and land.fits[i]:
                self._tell(trial, float(s.scores[i]), 0.0)
                self._told.add(i)
                continue
            violation = 1.0 if i is None else float(land.peaks[i] - land.limit) / land.limit
            self._tell(trial, self._worst(), violation)
            repaired = land.nearest(np.array(coords), open_, s.rng(f"{self.name}:{trial.number}"))
            if repaired is not None:
                self._pending[repaired] = None
                return [self.point(repaired, note="nearest fitting point to an infeasible sample")]
        # TPE keeps sampling known points: take a random open one so the search still moves
        pick = int(s.rng(f"{self.name}:fallback:{len(s.trials)}").choice(np.flatnonzero(open_)))
        self._pending[pick] = None
        return [self.point(pick)]

    def observe(self, trials: Sequence[Trial]) -> None:
        land = self.search.land
        for t in trials:
            if t.candidate is None:
                continue
            i = land.lookup(t.candidate)
            if i is None or i not in self._pending:
                continue
            asked = self._pending.pop(i)
            if t.score is None:
                continue
            if asked is not None:
                self._tell(asked, t.score, 0.0)
                self._told.add(i)
            else:
                self._add(i, t.score)
