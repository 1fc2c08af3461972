"""An NSGA-II style evolutionary search: throughput against memory peak.

Two objectives, the score (higher is better) and the memory peak (lower is better), because a recipe
with more headroom is worth knowing about even when it is a little slower. Selection is by
non-dominated rank then crowding distance (Deb et al. 2002); children come from uniform crossover of
two tournament winners' axis values plus per-axis mutation, and are repaired to the nearest point
that is legal, fits and is not yet evaluated, so every child costs exactly one fresh evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from primus_lang.search.strategies.base import Strategy
from primus_lang.search.trial import Proposal, Trial


def fronts(objs: np.ndarray) -> list[list[int]]:
    """Non-dominated fronts of the rows of ``objs`` (every column maximized)."""
    n = len(objs)
    dominated_by = [0] * n
    dominates: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if np.all(objs[i] >= objs[j]) and np.any(objs[i] > objs[j]):
                dominates[i].append(j)
                dominated_by[j] += 1
            elif np.all(objs[j] >= objs[i]) and np.any(objs[j] > objs[i]):
                dominates[j].append(i)
                dominated_by[i] += 1
    result: list[list[int]] = []
    current = [i for i in range(n) if dominated_by[i] == 0]
    while current:
        result.append(current)
        nxt: list[int] = []
        for i in current:
            for j in dominates[i]:
                dominated_by[j] -= 1
                if dominated_by[j] == 0:
                    nxt.append(j)
        current = sorted(nxt)
    return result


def crowding(objs: np.ndarray) -> np.ndarray:
    n, m = objs.shape
    dist = np.zeros(n)
    if n <= 2:
        return np.full(n, np.inf)
    for k in range(m):
        order = np.argsort(objs[:, k], kind="stable")
        span = objs[order[-1], k] - objs[order[0], k]
        dist[order[0]] = dist[order[-1]] = np.inf
        if span > 0:
            dist[order[1:-1]] += (objs[order[2:], k] - objs[order[:-2], k]) / span
    return dist


class Evolutionary(Strategy):
    name = "evolutionary"

    def __init__(self, population: int = 16, crossover: float = 0.9) -> None:
        super().__init__()
        self.size = population
        self.crossover = crossover
        self.population: list[int] = []
        self._rank: dict[int, int] = {}
        self._crowd: dict[int, float] = {}
        self._rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = self.search.rng(self.name)
        return self._rng

    def propose(self) -> list[Proposal]:
        open_ = self.open_mask()
        if not open_.any():
            return []
        s = self.search
        land = s.land
        if not self.population:
            return self._initial(open_)
        want = self.batch_size(self.size)
        k = len(land.axes)
        taken = np.zeros(len(land), dtype=bool)
        picks: list[Proposal] = []
        for _ in range(want):
            a, b = self._tournament(), self._tournament()
            child = land.coords[a].copy()
            if self.rng.random() < self.crossover:
                mask = self.rng.random(k) < 0.5
                child[mask] = land.coords[b][mask]
            mutate = self.rng.random(k) < 1.0 / max(1, k)
            for g in np.flatnonzero(mutate):
                child[g] = self.rng.integers(len(land.axes[g].values))
            idx = land.nearest(child, open_ & ~taken, self.rng)
            if idx is None:
                break
            taken[idx] = True
            picks.append(self.point(idx))
        return picks

    def _initial(self, open_: np.ndarray) -> list[Proposal]:
        s = self.search
        # earlier phases' best points seed the population; random fitting points fill it
        seeds = [int(i) for i in s.evaluated_indices[np.argsort(-s.scores[s.evaluated_indices], kind="stable")]]
        self.population = seeds[: self.size // 2]
        fill = self.size - len(self.population)
        choice = self.rng.permutation(np.flatnonzero(open_))[: min(fill, self.batch_size(fill))]
        if not self.population and len(choice) == 0:
            return []
        self._pending_initial = [int(i) for i in choice]
        if not self._pending_initial:
            self._select(self.population)
            return self.propose()
        self._select(self.population)
        return [self.point(i) for i in self._pending_initial]

    def observe(self, trials: Sequence[Trial]) -> None:
        s = self.search
        new = [s.land.lookup(t.candidate) for t in trials if t.candidate is not None and t.score is not None]
        pool = sorted(set(self.population) | {i for i in new if i is not None and s.seen[i]})
        self._select(pool)

    def _objectives(self, pool: list[int]) -> np.ndarray:
        s = self.search
        return np.column_stack(
            [s.scores[pool], -s.land.peaks[pool].astype(np.float64)]
        )

    def _select(self, pool: list[int]) -> None:
        if not pool:
            return
        objs = self._objectives(pool)
        survivors: list[int] = []
        self._rank, self._crowd = {}, {}
        for r, front in enumerate(fronts(objs)):
            members = [pool[i] for i in front]
            dist = crowding(objs[front])
            for m, d in zip(members, dist, strict=True):
                self._rank[m], self._crowd[m] = r, float(d)
            if len(survivors) + len(members) <= self.size:
                survivors.extend(members)
            else:
                order = np.argsort(-dist, kind="stable")
                survivors.extend(members[i] for i in order[: self.size - len(survivors)])
                break
        self.population = survivors

    def _tournament(self) -> int:
        pop = self.population
        a = pop[int(self.rng.integers(len(pop)))]
        b = pop[int(self.rng.integers(len(pop)))]
        key_a = (self._rank.get(a, 99), -self._crowd.get(a, 0.0))
        key_b = (self._rank.get(b, 99), -self._crowd.get(b, 0.0))
        return a if key_a <= key_b else b
