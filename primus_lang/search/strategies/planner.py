"""The seed planner: a baseline recipe, then single-axis sweeps around the incumbent.

The baseline is the recipe a practitioner starts from: no recomputation if it fits, the least model
parallelism that fits (Megatron's own advice: model-parallel only as far as memory needs, then data
parallel), micro-batch 1, and every other knob at its default. Each sweep then tries every value of
one axis with the rest held at the incumbent; a value whose single-axis move is illegal (PP 4 may
need another VPP) is reached through the nearest legal point that has it. The incumbent moves after
every sweep; the planner stops when a whole round of sweeps finds nothing better.
"""

from __future__ import annotations

from operator import attrgetter

import attrs
import numpy as np

from primus_lang.ir.candidate import Candidate, Recompute
from primus_lang.memo import by_distinct
from primus_lang.search.landscape import Landscape
from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal

# From the least recomputation to the most: op-level checkpointing keeps less than selective and
# recomputes more of each layer, but still less than full recomputation.
_RECOMPUTE_ORDER = {"none": 0, "selective": 1, "op": 2, "full": 3}


_DEFAULTS = attrs.asdict(Candidate(), recurse=False)


def _default(name: str) -> object:
    return _DEFAULTS[name]


# What the planner's baseline is, in the words every output uses (baseline_key orders by it): the least
# recomputation that fits (none where a point without it fits), then the least model parallelism
BASELINE_MEANING = "the least recomputation and model parallelism that fit"


def _recompute_rank(r: Recompute) -> int:
    return _RECOMPUTE_ORDER.get(r.kind, len(_RECOMPUTE_ORDER))


def _key_columns(points: list[Candidate], off_default: np.ndarray) -> list[np.ndarray]:
    """The baseline's order as columns over ``points``, the first deciding most: the least
    recomputation, the least model parallelism (then PP, TP, CP, EP), micro-batch, VPP, and the fewest
    axes off their defaults (``off_default``, per point)."""
    recompute = [c.recompute for c in points]
    tp, pp, cp, ep, mbs, vpp = (np.fromiter(map(attrgetter(name), points), dtype=np.int64, count=len(points))
                                for name in ("tp", "pp", "cp", "ep", "mbs", "vpp"))
    return [np.asarray(by_distinct(recompute, _recompute_rank), dtype=np.int64),
            np.asarray(by_distinct(recompute, attrgetter("layers")), dtype=np.int64),
            tp * pp * cp * ep, pp, tp, cp, ep, mbs, vpp, off_default]


def baseline_key(cand: Candidate, axes: tuple[str, ...]) -> tuple[int, ...]:
    """One point's place in the baseline's order, its axes read from the point itself."""
    off_default = np.array([sum(1 for a in axes if getattr(cand, a) != _default(a))], dtype=np.int64)
    return tuple(int(column[0]) for column in _key_columns([cand], off_default))


def baseline_index(land: Landscape) -> int | None:
    """The fitting point of least ``baseline_key``, the first of equal ones: the key's columns over every
    fitting point, whether a point is off an axis's default read from its coordinates (a plan across
    clusters asks it of every cluster's hundred thousand points)."""
    fitting = np.flatnonzero(land.fits)
    if not len(fitting):
        return None
    points = [land.points[int(i)] for i in fitting]
    off_default = np.zeros(len(points), dtype=np.int64)
    for j, axis in enumerate(land.axes):
        default: object = _default(axis.name)
        code = land.coords[fitting, j]
        # a last slot for coordinate -1 to index, set below from the point itself
        off = np.array([bool(v != default) for v in axis.values] + [False], dtype=bool)[code]
        for k in np.flatnonzero(code < 0):  # a value off the axis (a conditional axis's default)
            off[k] = bool(getattr(points[k], axis.name) != default)
        off_default += off
    # lexsort sorts by its last key first and is stable: equal keys keep the points' order
    order = np.lexsort(_key_columns(points, off_default)[::-1])
    return int(fitting[order[0]])


class Planner(Strategy):
    name = "planner"
    starts_at_baseline = True

    def __init__(self, max_rounds: int = 4) -> None:
        super().__init__()
        self.max_rounds = max_rounds
        self._axis = 0
        self._round = 0
        self._improved_in_round = False
        self._started = False
        self._center: int | None = None

    def propose(self) -> list[Proposal]:
        s = self.search
        land = s.land
        if not self._started:
            self._started = True
            start = s.best_index
            if start is None:
                base = baseline_index(land)
                if base is None:
                    self.stop_reason = "nothing fits"
                    return []
                self._center = base
                return [Proposal(f"{self.name}:baseline", candidate=land.points[base],
                                 hypothesis=f"{BASELINE_MEANING}, mbs 1", index=base)]
            self._center = start
        while self._round < self.max_rounds:
            if self._axis >= len(land.axes):
                if not self._improved_in_round:
                    self.stop_reason = "planner converged"
                    return []
                self._round += 1
                self._axis = 0
                self._improved_in_round = False
                continue
            axis = self._axis
            self._axis += 1
            batch = self._sweep(axis)
            if batch:
                return batch
        self.stop_reason = "planner converged"
        return []

    def observe(self, trials: object) -> None:
        best = self.search.best_index
        if best is not None and best != self._center:
            self._center = best
            self._improved_in_round = True

    def _sweep(self, axis: int) -> list[Proposal]:
        s = self.search
        land = s.land
        center = self._center if self._center is not None else s.best_index
        if center is None:
            return []
        here = land.coords[center]
        name = land.axes[axis].name
        open_ = self.open_mask()
        dist = land.distances(here)
        picks: list[Proposal] = []
        for j in range(len(land.axes[axis].values)):
            if j == here[axis]:
                continue
            has_value = land.coords[:, axis] == j
            allowed = has_value & land.fits
            if not allowed.any():
                continue
            # the nearest legal fitting point with this value (the first in landscape order among equals,
            # so the planner is deterministic whatever the seed); it may already be evaluated
            d = np.where(allowed, dist, np.iinfo(np.int64).max)
            pick = int(np.argmin(d))
            if open_[pick]:
                value = land.axes[axis].values[j]
                picks.append(Proposal(self.name, candidate=land.points[pick], hypothesis=f"sweep {name} -> {value}",
                                      index=pick))
        return picks[: self.batch_size(len(picks))]
