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

import itertools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from primus_lang.project.plans import Plan, plan
from primus_lang.project.schedule import ScheduleResult, fast, replayable

Array = NDArray[np.float64]

# Below this many distinct inputs a group replays candidate by candidate: a numpy call costs about
# as much as a dozen scalar steps of the sweep.
MIN_BATCH = 12


class Columns(NamedTuple):
    """``fast``'s results for a group, a column per candidate: per stage (rows) the finish, busy
    seconds and last gradient pass; per candidate its in-flight peaks."""

    finish: Array
    busy: Array
    last_backward: Array
    inflight: list[tuple[int, ...]]

    def results(self) -> list[ScheduleResult]:
        finish, busy, last_b = self.finish.T.tolist(), self.busy.T.tolist(), self.last_backward.T.tolist()
        out = []
        for f, b, lb, peak in zip(finish, busy, last_b, self.inflight, strict=True):
            f = tuple(f)
            out.append(ScheduleResult(max(f), f, tuple(b), peak, tuple(lb)))
        return out


def columns(schedule: str, pp: int, ms: Sequence[int] | NDArray[np.int64], dur: Array, p2p: Array) -> Columns:
    """``fast`` for every column of ``dur`` ([pass F/B/W][stage][chunk][candidate]), ``p2p`` and
    micro-batch counts ``ms``, not memoized: what a caller that holds its durations as arrays asks
    for. Columns of different counts share what their plans share: a whole replay per count, and
    the three short replays of an extrapolation per count modulo PP."""
    n = dur.shape[-1]
    v = dur.shape[2]
    m = np.asarray(ms, dtype=np.int64)
    out = Columns(np.zeros((pp, n)), np.zeros((pp, n)), np.zeros((pp, n)), [()] * n)
    everyone = np.arange(n)
    m0 = pp
    affordable = np.array([replayable(pp, v, k) for k in m.tolist()], dtype=bool)
    uniform = _uniform_middle(dur, pp)
    whole = (m < m0 + 2 * pp) | (~uniform & affordable)
    for k in np.unique(m[whole]).tolist():
        _replay_whole(out, schedule, pp, k, dur, p2p, everyone[whole & (m == k)])
    tried = everyone[~whole]
    rests = (m[tried] - m0) % pp
    for rest in np.unique(rests).tolist():
        some = tried[rests == rest]
        if some.size < MIN_BATCH:
            _scalar(out, schedule, pp, m, dur, p2p, some)
            continue
        result, periodic = _extrapolate(schedule, pp, v, m[some], m0 + rest, dur[..., some], p2p[some])
        _store(out, some[periodic], _select(result, periodic))
        late = some[~periodic]
        for k in np.unique(m[late]).tolist():
            at = late[m[late] == k]
            if replayable(pp, v, k):
                _replay_whole(out, schedule, pp, k, dur, p2p, at)
            else:
                # ``fast`` looks further out for the period: rare (thousands of micro-batches on
                # unequal stages), so these go candidate by candidate
                _scalar(out, schedule, pp, m, dur, p2p, at)
    return out


def _replay_whole(out: Columns, schedule: str, pp: int, m: int, dur: Array, p2p: Array,
                  where: NDArray[np.intp]) -> None:
    """The whole plan of ``m`` micro-batches replayed over the columns ``where`` (``fast`` itself
    below ``MIN_BATCH`` of them: a numpy call costs about as much as a dozen scalar steps)."""
    if where.size < MIN_BATCH:
        _scalar(out, schedule, pp, np.full(dur.shape[-1], m), dur, p2p, where)
    elif where.size:
        _store(out, where, _replay(plan(schedule, pp, dur.shape[2], m), dur[..., where], p2p[where]))


def _scalar(out: Columns, schedule: str, pp: int, m: NDArray[np.int64], dur: Array, p2p: Array,
            where: NDArray[np.intp]) -> None:
    """``fast`` itself for the columns ``where`` (memoized as it memoizes)."""
    for i in where.tolist():
        f, b, w = (dur[k, :, :, i].tolist() for k in range(3))
        r = fast(schedule, pp, int(m[i]), f, b, w, float(p2p[i]))
        out.finish[:, i], out.busy[:, i], out.last_backward[:, i] = r.finish, r.busy, r.last_backward
        out.inflight[i] = r.inflight


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
    lay = _layout(p)
    finish = _by_op(p, slots, p2p) if lay is None else _by_tick(lay, slots, p2p)
    busy = np.zeros((pp, cols))
    for slot, k in enumerate(p.slot_count):
        if k:
            busy[(slot % (pp * v)) // v] += k * slots[slot]
    last_b = np.array([slots[i] if i >= 0 else np.zeros(cols) for i in p.stage_grad])
    return finish, busy, last_b, p.inflight


def _by_op(p: Plan, slots: Array, p2p: Array) -> Array:
    """Each op's end in a row of its own, one op at a time; per stage, its last op's end."""
    cols = slots.shape[1]
    end = np.empty((len(p.sweep) + 1, cols))
    end[0] = 0.0
    # every row as a view made once: an op reads two rows and writes one, and indexing the array
    # itself would make a new view for each
    rows, durs = list(end), list(slots)
    ready = np.empty(cols)
    add, maximum = np.add, np.maximum
    for row, (slot, prev, dep, cross) in zip(rows[1:], p.sweep, strict=True):
        if cross:
            add(rows[dep], p2p, out=ready)
            maximum(rows[prev], ready, out=row)
        else:
            maximum(rows[prev], rows[dep], out=row)
        add(row, durs[slot], out=row)
    out: Array = end[[i + 1 for i in p.stage_last]]
    return out


class _Layout(NamedTuple):
    """A plan as ``_by_tick`` reads it: per tick, for its ops, the ring rows they read (their previous
    ops' and their inputs'; row ``ring`` holds the zeros that stand for "none"), their slots, the
    rows they write, and which of them take an input from another stage; per stage the row its last
    op's end stays in."""

    ticks: list[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], NDArray[np.intp],
                      NDArray[np.intp] | None]]
    last: NDArray[np.intp]
    ring: int


# A tick's ops run as one numpy step where a plan's ticks hold at least this many ops on average:
# the step's gathers cost about what as many ops one by one cost.
_TICK_OPS = 8


def _layout(p: Plan) -> _Layout | None:
    hit = _layouts.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    lay = _make_layout(p) if p.ticks and len(p.sweep) >= _TICK_OPS * len(p.ticks) else None
    if len(_layouts) > 256:
        _layouts.clear()
    _layouts[id(p)] = (p, lay)
    return lay


_layouts: dict[int, tuple[Plan, _Layout | None]] = {}


def _make_layout(p: Plan) -> _Layout:
    ops = np.array(p.sweep, dtype=np.float64).reshape(len(p.sweep), 4)
    n = np.arange(1, len(ops) + 1)
    slot, prev, dep = (ops[:, k].astype(np.intp) for k in range(3))
    cross = ops[:, 3] != 0.0
    # an op's end is read by the ops that follow it within ``ring`` ops, and each stage's last op's
    # end at the close: ``ring`` rows, reused in turn, hold every end still to be read
    lasts = np.array([i + 1 for i in p.stage_last if i >= 0], dtype=np.intp)
    reach = max(int(np.max(n - np.where(prev > 0, prev, n))), int(np.max(n - np.where(dep > 0, dep, n))), 1)
    bounds = list(itertools.pairwise([*p.ticks, len(ops)]))
    widest = max(b - a for a, b in bounds)
    ring = max(reach, widest, int(len(ops) - lasts.min()) + 1 if lasts.size else 1)

    def row(k: NDArray[np.intp]) -> NDArray[np.intp]:
        return np.where(k > 0, k % ring, ring)

    prev_row, dep_row, write = row(prev), row(dep), n % ring
    # each tick's index arrays cut once here: the replay runs every tick for every group of columns
    ticks = []
    for a, b in bounds:
        crossing = np.flatnonzero(cross[a:b])
        ticks.append((prev_row[a:b], dep_row[a:b], slot[a:b], write[a:b], crossing if crossing.size else None))
    last = np.array([(i + 1) % ring if i >= 0 else ring for i in p.stage_last], dtype=np.intp)
    return _Layout(ticks, last, ring)


def _by_tick(lay: _Layout, slots: Array, p2p: Array) -> Array:
    """``_by_op`` a tick at a time: the tick's ops read the ends of earlier ticks' ops only, so they
    are gathered, maxed and added together, each element by the same operations as one by one.
    Ends live in a ring of rows that later ops overwrite once nothing reads them."""
    ends = np.zeros((lay.ring + 1, slots.shape[1]))
    for prev, dep, slot, write, crossing in lay.ticks:
        start = ends[prev]
        ready = ends[dep]
        if crossing is not None:
            ready[crossing] += p2p
        np.maximum(start, ready, out=start)
        start += slots[slot]
        ends[write] = start
    out: Array = ends[lay.last]
    return out


def _uniform_middle(dur: Array, pp: int) -> NDArray[np.bool_]:
    """Per candidate, ``schedule._same`` for every middle stage and pass against stage 1's."""
    ok = np.ones(dur.shape[-1], dtype=bool)
    for s in range(1, pp - 1):
        x, y = dur[:, s], dur[:, 1]
        ok &= np.all(np.abs(x - y) <= 1e-12 * np.maximum(1.0, np.abs(x)), axis=(0, 1))
    return ok


def _extrapolate(schedule: str, pp: int, v: int, m: NDArray[np.int64], start: int, dur: Array,
                 p2p: Array) -> tuple[_Replay, NDArray[np.bool_]]:
    """``schedule._extrapolate`` over columns: each column's step at its ``m`` from three replays a
    group apart, from ``start`` (its ``base + rest``, the same for every column), and per column
    whether the plan had reached its period."""
    groups = (m - start) // pp
    runs = [_replay(plan(schedule, pp, v, start + i * pp), dur, p2p) for i in range(3)]
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


def _store(out: Columns, where: NDArray[np.intp], r: _Replay) -> None:
    out.finish[:, where], out.busy[:, where], out.last_backward[:, where] = r[0], r[1], r[2]
    for i in where.tolist():
        out.inflight[i] = r[3]
