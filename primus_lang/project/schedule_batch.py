"""``fast`` for many candidates at once: one schedule plan replayed over a column per candidate.

Candidates that share a schedule shape (schedule, PP, VPP, micro-batches) share its plan, and a
plan's replay is the same chain of additions and maxima whatever the durations: numpy runs each op
of the plan once for the whole group instead of once per candidate. Every float operation is the
scalar path's, in its order (IEEE addition, multiplication and comparison, element by element), so
each result equals ``schedule.fast``'s to the bit; ``tests/project/test_project_batch.py`` checks
that on every example space. A group too small to repay numpy's per-call cost, and the rare
candidate that needs ``fast``'s search for a late period, take the scalar path itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from primus_lang.project.schedule import (
    Plan,
    ScheduleResult,
    Times,
    fast,
    plan,
    remember,
    remembered,
    replayable,
    result_key,
)

Array = NDArray[np.float64]

# Below this many distinct inputs a group replays candidate by candidate: a numpy call costs about
# as much as a dozen scalar steps of the sweep.
MIN_BATCH = 12


def fast_many(schedule: str, pp: int, m: int, fwds: Sequence[Times], bwds: Sequence[Times],
              wgts: Sequence[Times], p2ps: Sequence[float]) -> list[ScheduleResult]:
    """``[fast(schedule, pp, m, f, b, w, p) for ...]``, with the replays of a shape run together (and
    memoized as ``fast`` memoizes its own)."""
    keys = [result_key(schedule, pp, m, fwds[i], bwds[i], wgts[i], p2ps[i]) for i in range(len(fwds))]
    known = [remembered(k) for k in keys]
    todo = [i for i, r in enumerate(known) if r is None]
    if todo:
        fresh = _compute(schedule, pp, m, [fwds[i] for i in todo], [bwds[i] for i in todo], [wgts[i] for i in todo],
                         [p2ps[i] for i in todo])
        for i, r in zip(todo, fresh, strict=True):
            remember(keys[i], r)
            known[i] = r
    return _done(known)


def _compute(schedule: str, pp: int, m: int, fwds: Sequence[Times], bwds: Sequence[Times],
             wgts: Sequence[Times], p2ps: Sequence[float]) -> list[ScheduleResult]:
    """``fast_many`` for inputs it has not memoized."""
    n = len(fwds)
    if n < MIN_BATCH:
        return [fast(schedule, pp, m, fwds[i], bwds[i], wgts[i], p2ps[i]) for i in range(n)]
    v = len(fwds[0][0])
    # [pass][stage][chunk][candidate]: each candidate's durations as one column
    dur = np.array([fwds, bwds, wgts], dtype=np.float64).transpose(0, 2, 3, 1)
    p2p = np.array(p2ps, dtype=np.float64)
    out: list[ScheduleResult | None] = [None] * n
    everyone = np.arange(n)
    m0 = pp
    affordable = replayable(pp, v, m)
    if m < m0 + 2 * pp:
        _store(out, everyone, _replay(plan(schedule, pp, v, m), dur, p2p))
        return _done(out)
    uniform = _uniform_middle(dur, pp)
    if affordable:
        whole = everyone[~uniform]
        if whole.size:
            _store(out, whole, _replay(plan(schedule, pp, v, m), dur[..., whole], p2p[whole]))
    tried = everyone[uniform] if affordable else everyone
    if tried.size:
        result, periodic = _extrapolate(schedule, pp, v, m, m0, dur[..., tried], p2p[tried])
        _store(out, tried[periodic], _select(result, periodic))
        late = tried[~periodic]
        if late.size and affordable:
            _store(out, late, _replay(plan(schedule, pp, v, m), dur[..., late], p2p[late]))
        elif late.size:
            # ``fast`` looks further out for the period: rare (thousands of micro-batches on
            # unequal stages), so these go candidate by candidate
            for i in late.tolist():
                out[i] = fast(schedule, pp, m, fwds[i], bwds[i], wgts[i], p2ps[i])
    return _done(out)


# One replay of a group: per stage (rows) and candidate (columns), the finish, busy seconds and last
# gradient pass, with the plan's in-flight peaks.
_Replay = tuple[Array, Array, Array, tuple[int, ...]]


def _replay(p: Plan, dur: Array, p2p: Array) -> _Replay:
    """``schedule._sweep`` over columns: the same additions and maxima, op by op."""
    pp, v = p.pp, p.v
    f, b, w = dur[0, :pp, :v], dur[1, :pp, :v], dur[2, :pp, :v]
    if not p.split:
        b = b + w
    slots = np.concatenate([f.reshape(pp * v, -1), b.reshape(pp * v, -1), w.reshape(pp * v, -1)])
    cols = slots.shape[1]
    end = np.empty((len(p.sweep) + 1, cols))
    end[0] = 0.0
    ready = np.empty(cols)
    for n, (slot, prev, dep, cross) in enumerate(p.sweep, start=1):
        row = end[n]
        if cross:
            np.add(end[dep], p2p, out=ready)
            np.maximum(end[prev], ready, out=row)
        else:
            np.maximum(end[prev], end[dep], out=row)
        row += slots[slot]
    finish = end[[i + 1 for i in p.stage_last]]
    busy = np.zeros((pp, cols))
    for slot, k in enumerate(p.slot_count):
        if k:
            busy[(slot % (pp * v)) // v] += k * slots[slot]
    last_b = np.array([slots[i] if i >= 0 else np.zeros(cols) for i in p.stage_grad])
    return finish, busy, last_b, p.inflight


def _uniform_middle(dur: Array, pp: int) -> NDArray[np.bool_]:
    """Per candidate, ``schedule._same`` for every middle stage and pass against stage 1's."""
    ok = np.ones(dur.shape[-1], dtype=bool)
    for s in range(1, pp - 1):
        x, y = dur[:, s], dur[:, 1]
        ok &= np.all(np.abs(x - y) <= 1e-12 * np.maximum(1.0, np.abs(x)), axis=(0, 1))
    return ok


def _extrapolate(schedule: str, pp: int, v: int, m: int, base: int, dur: Array,
                 p2p: Array) -> tuple[_Replay, NDArray[np.bool_]]:
    """``schedule._extrapolate`` over columns: the step at ``m`` from three replays a group apart,
    and per candidate whether the plan had reached its period."""
    groups, rest = divmod(m - base, pp)
    runs = [_replay(plan(schedule, pp, v, base + rest + i * pp), dur, p2p) for i in range(3)]
    f0, f1, f2 = runs[0][0], runs[1][0], runs[2][0]
    steps = f1 - f0
    busy_a = np.array([m * (_chunk_sum(dur[0, s]) + _chunk_sum(dur[1, s]) + _chunk_sum(dur[2, s]))
                       for s in range(pp)])
    bottleneck = np.max(busy_a, axis=0) / m * pp
    makespan = np.max(f2, axis=0)
    periodic = np.all((np.abs(f2 - f1 - steps) <= 1e-9 * makespan) & (steps >= bottleneck * (1 - 1e-9)), axis=0)
    late = np.maximum(f2 - f1, bottleneck)
    finish = np.where(periodic, f0 + groups * steps, f2 + (groups - 2) * late)
    return (finish, busy_a, runs[0][2], runs[2][3]), periodic


def _chunk_sum(rows: Array) -> Array:
    """``sum(times[s])`` per column: from 0, chunk by chunk, as Python's ``sum`` adds."""
    acc = np.zeros(rows.shape[-1])
    for row in rows:
        acc = acc + row
    return acc


def _select(r: _Replay, keep: NDArray[np.bool_]) -> _Replay:
    return r[0][:, keep], r[1][:, keep], r[2][:, keep], r[3]


def _store(out: list[ScheduleResult | None], where: NDArray[np.intp], r: _Replay) -> None:
    finish, busy, last_b, inflight = r[0].T.tolist(), r[1].T.tolist(), r[2].T.tolist(), r[3]
    for j, i in enumerate(where.tolist()):
        f = tuple(finish[j])
        out[i] = ScheduleResult(max(f), f, tuple(busy[j]), inflight, tuple(last_b[j]))


def _done(out: list[ScheduleResult | None]) -> list[ScheduleResult]:
    done = [r for r in out if r is not None]
    assert len(done) == len(out), "every candidate of the group has its schedule"
    return done
