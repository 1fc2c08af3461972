"""The ground a search walks on: the legal points of a space, their coordinates and memory verdicts.

Memory is proved for every legal point up front with the vectorized pre-filter, so strategies only
ever spend evaluations (projections) on points that fit. Coordinates are each point's value index on
every axis (-1 where a conditional axis left the knob at a value outside its domain), which lets
strategies measure distance and find neighbours with numpy instead of Python loops.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter

import numpy as np
from attrs import frozen

from primus_lang.ir.candidate import Candidate, shown_workload
from primus_lang.ir.space import OBJECTIVE_METRICS, Objective, Value
from primus_lang.memo import by_distinct
from primus_lang.search.trial import Evaluation


@frozen
class AxisView:
    name: str
    values: tuple[Value, ...]


def _value_key(value: object) -> tuple[str, object]:
    # True == 1 in Python; keying by type keeps a flag axis from matching an integer one.
    return (type(value).__name__, value)


def _code(table: dict[tuple[str, object], int], value: object) -> int:
    return table.get(_value_key(value), -1)


class Landscape:
    """Legal points, their memory peaks against the limit, and the objective that ranks them."""

    def __init__(
        self,
        name: str,
        axes: Sequence[AxisView],
        points: Sequence[Candidate],
        peaks: Sequence[int] | np.ndarray,
        limit: int,
        objective: Objective | None = None,
        capacity: int | None = None,
        explain_illegal: Callable[[Candidate], list[str]] | None = None,
        base: Candidate | None = None,
        cluster_point: str = "",
        tie: float = 0.0,
        launch_target: str = "",
    ) -> None:
        if not points:
            raise ValueError("a landscape needs at least one legal point")
        self.name = name
        self.cluster_point = cluster_point  # the cluster of a plan across clusters ("" when none)
        # the target the points are judged for where it is not the space's own (`plan --target`; "" when it is)
        self.launch_target = launch_target
        # two projections within this relative band are tied (the profile's paired band); a proof by
        # bound must see every point that could tie the best, for the tie-break to choose among them
        self.tie = tie
        self.axes = tuple(axes)
        # a space that varies its sequence or batch names them in its points' labels
        self.shown = shown_workload(a.name for a in self.axes)
        self.points = list(points)
        self.peaks = np.asarray(peaks, dtype=np.int64)
        if self.peaks.shape != (len(self.points),):
            raise ValueError("one memory peak per point is needed")
        self.limit = int(limit)
        self.capacity = int(capacity if capacity is not None else limit)
        self.objective = objective or Objective()
        if self.objective.metric not in OBJECTIVE_METRICS:
            raise ValueError(f"unknown objective metric {self.objective.metric!r}")
        self.fits = self.peaks <= self.limit
        self.fitting = np.flatnonzero(self.fits)
        self.axis_names = frozenset(a.name for a in self.axes)
        self._value_index = [{_value_key(v): j for j, v in enumerate(a.values)} for a in self.axes]
        self.coords = np.zeros((len(self.points), len(self.axes)), dtype=np.int16)
        for j, (axis, table) in enumerate(zip(self.axes, self._value_index, strict=True)):
            self.coords[:, j] = by_distinct(list(map(attrgetter(axis.name), self.points)), partial(_code, table))
        self._explain = explain_illegal
        self.base = base if base is not None else self.points[0]

    def label(self, cand: Candidate) -> str:
        """``cand``'s label as this space's tables give it (its sequence where the space varies it)."""
        return cand.label(show=self.shown)

    def __len__(self) -> int:
        return len(self.points)

    @functools.cached_property
    def index(self) -> dict[Candidate, int]:
        """Each point's position. Built on first use: hashing every point costs as much as listing the
        coordinates, and a search that proposes points by position (exhaustive) never looks one up."""
        return {c: i for i, c in enumerate(self.points)}

    def without_ties(self) -> Landscape:
        """The same points and peaks where no projection ties another (``tie`` is read by ``tie_reach`` alone)."""
        plain = copy.copy(self)
        plain.tie = 0.0
        return plain

    @property
    def sign(self) -> float:
        return 1.0 if self.objective.sense == "maximize" else -1.0

    def coords_of(self, cand: Candidate) -> tuple[int, ...]:
        return tuple(
            table.get(_value_key(getattr(cand, axis.name)), -1)
            for axis, table in zip(self.axes, self._value_index, strict=True)
        )

    def lookup(self, cand: Candidate) -> int | None:
        return self.index.get(cand)

    def candidate_at(self, coords: Sequence[int], base: Candidate | None = None) -> Candidate:
        """The candidate with these axis values on top of ``base`` (it need not be legal)."""
        changes = {
            a.name: a.values[j] for a, j in zip(self.axes, coords, strict=True) if 0 <= j < len(a.values)
        }
        return (base or self.base).replace(**changes)

    def tie_reach(self, best: float) -> float:
        """The lowest score still tied with the score ``best`` (``best`` itself where nothing ties: no
        band, or a memory peak, which is exact)."""
        if self.tie <= 0 or self.objective.metric == "memory_peak":
            return best
        return best / (1 + self.tie) if best > 0 else best * (1 + self.tie)  # scores are signed values

    def cannot_tie(self, bound: float, best: float) -> bool:
        """Whether a point whose score is at most ``bound`` can neither beat ``best`` nor tie with it."""
        reach = self.tie_reach(best)
        return bound <= best if reach == best else bound < reach

    def score(self, evaluation: Evaluation, peak: int) -> float:
        """The objective, oriented so that larger is better."""
        metric = self.objective.metric
        value = float(peak) if metric == "memory_peak" else evaluation.metric(metric)
        return self.sign * value

    def why_illegal(self, cand: Candidate) -> list[str]:
        reasons = self._explain(cand) if self._explain is not None else []
        return reasons or ["not a legal point of the space"]

    def distances(self, coords: Sequence[int] | np.ndarray) -> np.ndarray:
        """Hamming distance (axes that differ) from ``coords`` to every point."""
        target = np.asarray(coords, dtype=np.int16)
        result: np.ndarray = (self.coords != target).sum(axis=1)
        return result

    def nearest(
        self, coords: Sequence[int] | np.ndarray, allowed: np.ndarray, rng: np.random.Generator
    ) -> int | None:
        """A point closest to ``coords`` among the ``allowed`` mask, ties broken by ``rng``."""
        if not allowed.any():
            return None
        dist = self.distances(coords).astype(np.int64)
        dist[~allowed] = np.iinfo(np.int64).max
        best = np.flatnonzero(dist == dist.min())
        return int(best[rng.integers(len(best))])
