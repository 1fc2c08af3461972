"""Which evaluated candidates the report's charts draw when a search evaluated too many to draw.

Each drawn dot costs a few hundred bytes of SVG, so a 76,000-evaluation plan once wrote a 31 MB
page. Past ``MAX_DRAWN`` dots a chart draws what a reader can tell apart: everything that matters
on its own (the Pareto front, the best ``TOP``, every change of the incumbent), and for the rest
the best candidate of each small cell of the chart, standing for the others in its cell. The
trace keeps every evaluation; the page says how many it drew of how many.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from attrs import frozen

from primus_lang.report.pareto import pareto_front
from primus_lang.report.view import CandidateView, Trajectory, TrajectoryPoint

MAX_DRAWN = 2000  # dots per chart; a page of two such charts stays near 1 MB
TOP = 200  # the best candidates, always drawn
_GRID = (256, 96)  # the finest cells tried, about 3.5 px on the charts' plot areas

T = TypeVar("T")


@frozen
class Sample:
    """The candidates a scatter draws, each with how many evaluated candidates it stands for."""

    drawn: tuple[tuple[CandidateView, int], ...]
    total: int

    @property
    def thinned(self) -> bool:
        return len(self.drawn) < self.total


def _bins(value: float, low: float, high: float, n: int) -> int:
    if not math.isfinite(value):
        return -1
    return min(n - 1, int((value - low) / (high - low) * n)) if high > low else 0


def _cells(items: Sequence[T], key: Callable[[T, int, int], Hashable], better: Callable[[T, T], bool],
           budget: int) -> list[tuple[T, int]]:
    """The best item of each cell and the cell's count, on the finest grid whose occupied cells fit
    ``budget`` (halving the grid until they do); in the items' order."""
    cols, rows = _GRID
    while True:
        best: dict[Hashable, int] = {}
        count: dict[Hashable, int] = {}
        for i, item in enumerate(items):
            k = key(item, cols, rows)
            count[k] = count.get(k, 0) + 1
            if k not in best or better(item, items[best[k]]):
                best[k] = i
        if len(best) <= budget or (cols <= 2 and rows <= 2):
            break
        cols, rows = max(2, cols // 2), max(2, rows // 2)
    by_index = {i: count[k] for k, i in best.items()}
    return [(items[i], by_index[i]) for i in sorted(by_index)]


def scatter_sample(cands: Sequence[CandidateView], limit: int = MAX_DRAWN) -> Sample:
    """All of ``cands`` when they are ``limit`` or fewer; else the Pareto front, the best ``TOP``
    and the best of each cell of throughput against memory, fitting and not fitting apart."""
    if len(cands) <= limit:
        return Sample(tuple((c, 1) for c in cands), len(cands))
    keep = {id(c) for c in pareto_front(cands)}
    keep |= {id(c) for c in sorted(cands, key=lambda c: (-c.tokens_per_gpu, c.evaluation))[:TOP]}
    most_mem = max(c.memory_peak for c in cands)
    most_rate = max(c.tokens_per_gpu for c in cands)

    def cell(c: CandidateView, cols: int, rows: int) -> Hashable:
        return (c.fits, _bins(c.memory_peak, 0, most_mem, cols), _bins(c.tokens_per_gpu, 0, most_rate, rows))

    rest = [c for c in cands if id(c) not in keep]
    cells = _cells(rest, cell, lambda a, b: a.tokens_per_gpu > b.tokens_per_gpu, max(1, limit - len(keep)))
    drawn = [(c, 1) for c in cands if id(c) in keep] + cells
    return Sample(tuple(drawn), len(cands))


def trajectory_sample(trajs: Sequence[Trajectory], limit: int = MAX_DRAWN) -> tuple[Trajectory, ...]:
    """All points when there are ``limit`` or fewer; else, per strategy, every point where its
    incumbent line steps and the last, and the best point of each cell of evaluation against value."""
    points = [p for t in trajs for p in t.points]
    if len(points) <= limit:
        return tuple(trajs)
    last = max(p.evaluation for p in points)
    values = [p.value for p in points if math.isfinite(p.value)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    out = []
    for t in trajs:
        steps = {i for i, p in enumerate(t.points)
                 if i == 0 or i == len(t.points) - 1 or not _same(p.incumbent, t.points[i - 1].incumbent)}
        rest = [(i, p) for i, p in enumerate(t.points) if i not in steps]
        share = max(1, (limit * len(t.points)) // len(points) - len(steps))

        def cell(item: tuple[int, TrajectoryPoint], cols: int, rows: int) -> Hashable:
            _, p = item
            return _bins(float(p.evaluation), 0.0, float(last), cols), _bins(p.value, low, high, rows)

        kept = {i for (i, _), _n in _cells(rest, cell, lambda a, b: _above(a[1].value, b[1].value), share)}
        out.append(Trajectory(t.strategy, tuple(p for i, p in enumerate(t.points) if i in steps or i in kept)))
    return tuple(out)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _above(a: float, b: float) -> bool:
    return math.isfinite(a) and (not math.isfinite(b) or a > b)
