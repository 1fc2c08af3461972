"""Discrete-event pipeline-schedule simulator over F, B and W passes.

Stage ``s`` runs its chunk ``c`` of micro-batch ``i`` as ops ``F``, ``B`` (input gradient) and ``W``
(weight gradient; folded into ``B`` for schedules that do not split it). An op starts when its
stage is free and its input has arrived: ``F`` needs the previous virtual stage's ``F`` of the same
micro-batch, ``B`` the next virtual stage's ``B`` (the last virtual stage: its own ``F``), each plus
the point-to-point time when the neighbour sits on another stage.

- ``1f1b`` and ``interleaved`` run Megatron's fixed per-stage orders (warm-up forwards, one-forward-
  one-backward, cool-down);
- ``zero_bubble`` (ZB-H1) and ``zbv`` run the greedy rule of the zero-bubble paper under the 1F1B
  activation limit: a ready ``B`` first, then a ``F`` while fewer than the limit are in flight, then
  a deferred ``W`` to fill what would have been a bubble. ZBV places two chunks per stage in a V.

In-flight counts are in chunk units: a micro-batch whose forward on that chunk has started and
whose input-gradient pass (B) there has not finished (a pending W keeps only its GEMM inputs).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from attrs import frozen

from primus_lang.ir import derived
from primus_lang.project.plans import DeadlockError, Plan, megatron_order, placement, plan, virtual_index

Times = Sequence[Sequence[float]]  # [stage][chunk] seconds


@frozen
class ScheduleResult:
    makespan: float
    finish: tuple[float, ...]  # per stage: when its last op ends
    busy: tuple[float, ...]  # per stage: seconds spent in ops
    inflight: tuple[int, ...]  # per stage: peak chunk-micro-batches alive
    last_backward: tuple[float, ...]  # per stage: its last gradient pass (B+W, or W when split)
    events: tuple[tuple[int, str, int, int, float, float], ...] = ()  # (stage, F/B/W, chunk, mb, start, end)

    @property
    def bubble_fraction(self) -> float:
        """Idle share of the least idle stage: the pipeline's own bubble, not a light stage's slack."""
        if self.makespan <= 0:
            return 0.0
        return max(0.0, (self.makespan - max(self.busy)) / self.makespan)


def simulate(
    schedule: str,
    pp: int,
    m: int,
    fwd: Times,
    bwd: Times,
    wgt: Times,
    p2p: float = 0.0,
    record: bool = False,
) -> ScheduleResult:
    """Simulate one step. ``fwd/bwd/wgt[s][c]``: per micro-batch times of stage ``s``, chunk ``c``.

    This is the reference event simulation. For ``1f1b`` and ``interleaved`` the weight-gradient
    time is added to the backward; the zero-bubble schedules pick each op greedily at run time.
    """
    v = len(fwd[0])
    if schedule in ("zero_bubble", "zbv"):
        return _greedy(schedule, pp, v, m, fwd, bwd, wgt, p2p, record)
    merged = [[bwd[s][c] + wgt[s][c] for c in range(v)] for s in range(pp)]
    return _fixed(schedule, pp, v, m, fwd, merged, p2p, record)


def replay(p: Plan, fwd: Times, bwd: Times, wgt: Times, p2p: float = 0.0,
           record: bool = False) -> ScheduleResult:
    """Run a fixed plan with real times: each op starts when its stage is free and its input is in.

    Plans of ``1f1b``/``interleaved`` carry no W ops: pass ``wgt`` and it is folded into B.
    """
    if not record:
        return _sweep(p, fwd, bwd, wgt, p2p)
    pp, v = p.pp, p.v
    has_w = p.split
    dur = [[fwd[s][c] for c in range(v)] for s in range(pp)], (
        [[bwd[s][c] for c in range(v)] for s in range(pp)] if has_w
        else [[bwd[s][c] + wgt[s][c] for c in range(v)] for s in range(pp)]
    ), [[wgt[s][c] for c in range(v)] for s in range(pp)]
    ops = p.ops
    end = [0.0] * len(ops)
    busy = [0.0] * pp
    free = [0.0] * pp
    last_b = [0.0] * pp
    events: list[tuple[int, str, int, int, float, float]] = []
    names = "FBW"
    for n, (s, kind, c, prev, dep, cross) in enumerate(ops):
        start = end[prev] if prev >= 0 else 0.0
        if dep >= 0:
            ready = end[dep] + p2p if cross else end[dep]
            if ready > start:
                start = ready
        d = dur[kind][s][c]
        end[n] = start + d
        busy[s] += d
        free[s] = end[n]
        if kind:
            last_b[s] = d  # the last pass that produces weight gradients: what grad reduction overlaps
        if record:
            events.append((s, names[kind], c, -1, start, end[n]))
    return ScheduleResult(max(free), tuple(free), tuple(busy), p.inflight, tuple(last_b), tuple(events))


def _sweep(p: Plan, fwd: Times, bwd: Times, wgt: Times, p2p: float) -> ScheduleResult:
    """``replay`` without the event record: one pass over the plan's precomputed slots."""
    pp, v = p.pp, p.v
    f = [t for s in range(pp) for t in fwd[s][:v]]
    w = [t for s in range(pp) for t in wgt[s][:v]]
    b = [t for s in range(pp) for t in bwd[s][:v]]
    if not p.split:
        b = [x + y for x, y in zip(b, w, strict=True)]
    d = f + b + w
    end = [0.0]  # end[0]: "no previous op", "no input"; op n ends at end[n + 1]
    append = end.append
    for slot, prev, dep, cross in p.sweep:
        start = end[prev]
        ready = end[dep] + cross * p2p
        append((start if start >= ready else ready) + d[slot])
    free = tuple(end[i + 1] for i in p.stage_last)
    busy = [0.0] * pp
    for slot, k in enumerate(p.slot_count):
        if k:
            busy[(slot % (pp * v)) // v] += k * d[slot]
    last_b = tuple(d[i] if i >= 0 else 0.0 for i in p.stage_grad)
    return ScheduleResult(max(free), free, tuple(busy), p.inflight, last_b, ())


def _fixed(schedule: str, pp: int, v: int, m: int, fwd: Times, bwd: Times, p2p: float,
           record: bool) -> ScheduleResult:
    nvirt = pp * v
    where = placement(schedule, pp, v)
    orders = [megatron_order(pp, v, m, s) for s in range(pp)]
    f_end: dict[tuple[int, int], float] = {}  # (virtual, mb) -> end
    b_end: dict[tuple[int, int], float] = {}
    pos = [0] * pp
    free = [0.0] * pp
    busy = [0.0] * pp
    alive = [0] * pp
    peak = [0] * pp
    last_b = [0.0] * pp
    events: list[tuple[int, str, int, int, float, float]] = []
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(pp):
            order = orders[s]
            while pos[s] < len(order):
                kind, c, i = order[pos[s]]
                j = virtual_index(schedule, pp, s, c)
                if kind == "F":
                    if j == 0:
                        ready = 0.0
                    else:
                        dep = f_end.get((j - 1, i))
                        if dep is None:
                            break
                        ready = dep + (p2p if where[j - 1][0] != s else 0.0)
                    dur = fwd[s][c]
                else:
                    if j == nvirt - 1:
                        dep = f_end.get((j, i))
                        if dep is None:
                            break
                        ready = dep
                    else:
                        dep = b_end.get((j + 1, i))
                        if dep is None:
                            break
                        ready = dep + (p2p if where[j + 1][0] != s else 0.0)
                    dur = bwd[s][c]
                start = max(free[s], ready)
                end = start + dur
                free[s] = end
                busy[s] += dur
                if kind == "F":
                    f_end[(j, i)] = end
                    alive[s] += 1
                    peak[s] = max(peak[s], alive[s])
                else:
                    b_end[(j, i)] = end
                    alive[s] -= 1
                    last_b[s] = dur
                if record:
                    events.append((s, kind, c, i, start, end))
                pos[s] += 1
                remaining -= 1
                progressed = True
        if not progressed and not _unblock(schedule, pp, nvirt, orders, pos, f_end, b_end):
            raise DeadlockError(f"{schedule} with pp={pp}, v={v}, m={m} deadlocks")
    return ScheduleResult(max(free), tuple(free), tuple(busy), tuple(peak), tuple(last_b), tuple(events))


def _unblock(schedule: str, pp: int, nvirt: int, orders: list[list[tuple[str, int, int]]], pos: list[int],
             f_end: dict[tuple[int, int], float], b_end: dict[tuple[int, int], float]) -> bool:
    """When the interleaved order's last, shorter micro-batch group leaves every stage waiting, the
    first stage that has a runnable op later in its order runs it now (Megatron's p2p pairs do the
    same in effect: the blocked receive is posted and the other direction proceeds)."""
    for s in range(pp):
        order = orders[s]
        for k in range(pos[s] + 1, len(order)):
            kind, c, i = order[k]
            j = virtual_index(schedule, pp, s, c)
            if kind == "F":
                ready = j == 0 or (j - 1, i) in f_end
            else:
                ready = (j, i) in f_end if j == nvirt - 1 else (j + 1, i) in b_end
                ready = ready and (j, i) in f_end
            if ready:
                order.insert(pos[s], order.pop(k))
                return True
    return False


class _Greedy:
    """One run of the zero-bubble greedy rule: what each stage holds, waits for and has run, and the
    clock of completions and arrivals."""

    def __init__(self, schedule: str, pp: int, v: int, m: int, fwd: Times, bwd: Times, wgt: Times, p2p: float,
                 record: bool) -> None:
        self.schedule, self.pp, self.v, self.m = schedule, pp, v, m
        self.fwd, self.bwd, self.wgt, self.p2p, self.record = fwd, bwd, wgt, p2p, record
        self.nvirt = pp * v
        self.where = placement(schedule, pp, v)
        self.virtual = [[virtual_index(schedule, pp, s, c) for c in range(v)] for s in range(pp)]
        # what a forward's input adds to its sender's end: the p2p time when the sender is another stage
        self.f_delay = [[p2p if j > 0 and self.where[j - 1][0] != s else 0.0 for c, j in enumerate(row)]
                        for s, row in enumerate(self.virtual)]
        # the 1F1B activation limit: stage s keeps pp - s micro-batches; ZBV keeps pp per chunk on every
        # stage (2 pp half-size chunk units: the same bytes as 1F1B's first stage, balanced over stages)
        self.cap = [pp if schedule == "zbv" else pp - s for s in range(pp)]
        self.alive_chunk = [[0] * v for _ in range(pp)]
        self.f_end: dict[tuple[int, int], float] = {}
        self.b_end: dict[tuple[int, int], float] = {}
        self.next_f = [[0] * v for _ in range(pp)]  # next micro-batch to forward, per stage and chunk
        self.ready_b: list[list[tuple[int, int, int]]] = [[] for _ in range(pp)]  # (mb order key, chunk, mb)
        self.pending_w: list[list[tuple[int, int]]] = [[] for _ in range(pp)]
        self.b_wait: dict[tuple[int, int], float] = {}  # (virtual, mb) -> time its input gradient arrives
        self.free = [0.0] * pp
        self.idle = [True] * pp
        self.busy = [0.0] * pp
        self.alive = [0] * pp
        self.peak = [0] * pp
        self.last_b = [0.0] * pp
        self.last_w = [0.0] * pp
        self.events: list[tuple[int, str, int, int, float, float]] = []
        self.clock: list[float] = [0.0]
        self.pushed: set[float] = {0.0}
        self.done = 0
        self.total = pp * v * m * 3
        self.now = 0.0

    def wake(self, t: float) -> None:
        if t not in self.pushed:
            self.pushed.add(t)
            heapq.heappush(self.clock, t)

    def f_ready(self, s: int, c: int) -> bool:
        i, j = self.next_f[s][c], self.virtual[s][c]
        if i >= self.m:
            return False
        if j == 0:
            return True
        dep = self.f_end.get((j - 1, i))
        return dep is not None and dep + self.f_delay[s][c] <= self.now

    def choose(self, s: int) -> tuple[str, int, int] | None:
        """A ready B first, then a F under the activation limit, then a deferred W."""
        virtual, b_wait, now = self.virtual[s], self.b_wait, self.now
        avail = [(key, c, i) for key, c, i in self.ready_b[s] if b_wait[(virtual[c], i)] <= now]
        if avail:
            key, c, i = min(avail)
            self.ready_b[s].remove((key, c, i))
            return ("B", c, i)
        # later chunks first: they sit closer to the loss and release backward work sooner
        for c in range(self.v - 1, -1, -1):
            if self.alive_chunk[s][c] < self.cap[s] and self.f_ready(s, c):
                i = self.next_f[s][c]
                self.next_f[s][c] += 1
                return ("F", c, i)
        if self.pending_w[s]:
            c, i = self.pending_w[s].pop(0)
            return ("W", c, i)
        return None

    def run(self, s: int, kind: str, c: int, i: int) -> None:
        j = self.virtual[s][c]
        dur = self.fwd[s][c] if kind == "F" else self.bwd[s][c] if kind == "B" else self.wgt[s][c]
        start, end = self.now, self.now + dur
        self.free[s] = end
        self.busy[s] += dur
        self.idle[s] = False
        self.wake(end)
        if kind == "F":
            self.forward_done(s, c, i, j, end)
        elif kind == "B":
            self.backward_done(s, c, i, j, end)
            self.last_b[s] = dur
        else:
            self.last_w[s] = dur
        self.done += 1
        if self.record:
            self.events.append((s, kind, c, i, start, end))

    def forward_done(self, s: int, c: int, i: int, j: int, end: float) -> None:
        self.f_end[(j, i)] = end
        self.alive[s] += 1
        self.alive_chunk[s][c] += 1
        self.peak[s] = max(self.peak[s], self.alive[s])
        if j == self.nvirt - 1:
            self.b_wait[(j, i)] = end
            self.ready_b[s].append((i * self.v + (self.v - 1 - c), c, i))

    def backward_done(self, s: int, c: int, i: int, j: int, end: float) -> None:
        self.b_end[(j, i)] = end
        self.pending_w[s].append((c, i))
        self.alive[s] -= 1
        self.alive_chunk[s][c] -= 1
        if j > 0:
            ps, pc = self.where[j - 1]
            self.b_wait[(j - 1, i)] = end + (self.p2p if ps != s else 0.0)
            self.ready_b[ps].append((i * self.v + (self.v - 1 - pc), pc, i))

    def advance(self) -> None:
        """Move the clock to the next completion or arrival, and free the stages done by then."""
        while True:
            nxt = heapq.heappop(self.clock) if self.clock else None
            if nxt is None:
                if self.done < self.total:
                    raise DeadlockError(f"{self.schedule} with pp={self.pp}, v={self.v}, m={self.m} deadlocks")
                break
            if nxt > self.now:
                self.now = nxt
                break
        for s in range(self.pp):
            if self.free[s] <= self.now:
                self.idle[s] = True

    def wake_at_arrivals(self) -> None:
        """Arrivals of inputs can fall between completions: make sure they wake the clock."""
        now, m, f_end, b_wait, wake = self.now, self.m, self.f_end, self.b_wait, self.wake
        for s in range(self.pp):
            virtual, next_f, delay = self.virtual[s], self.next_f[s], self.f_delay[s]
            for c in range(self.v):
                i, j = next_f[c], virtual[c]
                if i < m and j > 0:
                    dep = f_end.get((j - 1, i))
                    if dep is not None and dep + delay[c] > now:
                        wake(dep + delay[c])
            for _key, c, i in self.ready_b[s]:
                t = b_wait[(virtual[c], i)]
                if t > now:
                    wake(t)

    def result(self) -> ScheduleResult:
        finish = tuple(self.free)
        window = tuple(self.last_b[s] + self.last_w[s] for s in range(self.pp))
        return ScheduleResult(max(finish), finish, tuple(self.busy), tuple(self.peak), window, tuple(self.events))


def _greedy(schedule: str, pp: int, v: int, m: int, fwd: Times, bwd: Times, wgt: Times, p2p: float,
            record: bool) -> ScheduleResult:
    sim = _Greedy(schedule, pp, v, m, fwd, bwd, wgt, p2p, record)
    while sim.done < sim.total:
        for s in range(pp):
            if not sim.idle[s] or sim.free[s] > sim.now:
                continue
            choice = sim.choose(s)
            if choice is not None:
                sim.run(s, *choice)
        sim.advance()
        sim.wake_at_arrivals()
    return sim.result()


def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    return all(abs(x - y) <= 1e-12 * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))


def replayable(pp: int, v: int, m: int) -> bool:
    """Whether the whole plan of ``m`` micro-batches is short enough to replay op by op."""
    return pp * v * m <= derived.MAX_SCHEDULE_SLOTS


_results: dict[tuple[object, ...], ScheduleResult] = {}


def fast(schedule: str, pp: int, m: int, fwd: Times, bwd: Times, wgt: Times, p2p: float = 0.0) -> ScheduleResult:
    """The step's makespan without replaying every micro-batch, where that is known to be exact.

    Once the pipeline is full, a fixed plan repeats with period ``pp`` micro-batches, so the
    makespan grows by the same amount for every further group of ``pp``. When the middle stages are
    identical (the usual case: only the first and last stages carry the embedding and the head),
    three short replays ``m0, m0+pp, m0+2pp`` with equal increments give the makespan at ``m`` by
    that increment; otherwise, or when the increments differ, the whole plan is replayed. A plan
    too long to replay whole (``derived.MAX_SCHEDULE_SLOTS``, only reached with unequal middle
    stages and thousands of micro-batches) is extrapolated from replays further out instead: an
    approximation by what remains of the start-up transient (under 5% in the tests).
    The tests check this against ``replay`` and the event simulation. Results are memoized on the
    exact inputs: candidates that differ only in step-level knobs share their pipeline.
    """
    key = result_key(schedule, pp, m, fwd, bwd, wgt, p2p)
    hit = _results.get(key)
    if hit is not None:
        return hit
    result = _fast(schedule, pp, m, fwd, bwd, wgt, p2p)
    remember(key, result)
    return result


def result_key(schedule: str, pp: int, m: int, fwd: Times, bwd: Times, wgt: Times, p2p: float) -> tuple[object, ...]:
    """What ``fast``'s result is memoized on: its exact inputs."""
    return (schedule, pp, m, tuple(map(tuple, fwd)), tuple(map(tuple, bwd)), tuple(map(tuple, wgt)), p2p)


def remembered(key: tuple[object, ...]) -> ScheduleResult | None:
    return _results.get(key)


def remember(key: tuple[object, ...], result: ScheduleResult) -> None:
    if len(_results) > 100_000:
        _results.clear()
    _results[key] = result


def _fast(schedule: str, pp: int, m: int, fwd: Times, bwd: Times, wgt: Times, p2p: float) -> ScheduleResult:
    v = len(fwd[0])
    m0 = pp
    middle = range(1, pp - 1)
    uniform = all(_same(fwd[s], fwd[1]) and _same(bwd[s], bwd[1]) and _same(wgt[s], wgt[1]) for s in middle)
    affordable = replayable(pp, v, m)
    if m < m0 + 2 * pp or (not uniform and affordable):
        return replay(plan(schedule, pp, v, m), fwd, bwd, wgt, p2p)
    base = m0
    while True:
        result, periodic = _extrapolate(schedule, pp, v, m, base, fwd, bwd, wgt, p2p)
        if periodic:
            return result
        if affordable:
            return replay(plan(schedule, pp, v, m), fwd, bwd, wgt, p2p)
        # Too long to replay whole: unequal stages can take several groups to settle into their
        # period, so look further out while the replays stay affordable, then take the latest
        # increment, whose error is what is left of the start-up transient.
        base *= 2
        if base + 3 * pp > m or pp * v * (base + 3 * pp) > derived.MAX_SCHEDULE_SLOTS:
            return result


def _extrapolate(schedule: str, pp: int, v: int, m: int, base: int, fwd: Times, bwd: Times, wgt: Times,
                 p2p: float) -> tuple[ScheduleResult, bool]:
    """The step at ``m`` from replays at ``base + rest``, one and two groups of PP later, and whether
    every stage's finish grew by the same amount in both groups (the plan has reached its period)."""
    groups, rest = divmod(m - base, pp)
    runs = [replay(plan(schedule, pp, v, base + rest + i * pp), fwd, bwd, wgt, p2p) for i in range(3)]
    steps = [runs[1].finish[s] - runs[0].finish[s] for s in range(pp)]
    busy = tuple(m * (sum(fwd[s]) + sum(bwd[s]) + sum(wgt[s])) for s in range(pp))
    # No period is shorter than the busiest stage's work on a group: a stage cannot finish before its
    # own work is done. Equal increments below it are slack from the start-up still being used up (a
    # lighter first or last stage lets the others run ahead for a few groups), not the period.
    bottleneck = max(busy) / m * pp
    periodic = all(abs(runs[2].finish[s] - runs[1].finish[s] - steps[s]) <= 1e-9 * runs[2].makespan
                   and steps[s] >= bottleneck * (1 - 1e-9) for s in range(pp))
    if periodic:
        finish = tuple(f + groups * d for f, d in zip(runs[0].finish, steps, strict=True))
    else:
        late = [max(runs[2].finish[s] - runs[1].finish[s], bottleneck) for s in range(pp)]
        finish = tuple(f + (groups - 2) * d for f, d in zip(runs[2].finish, late, strict=True))
    # the in-flight peak is reached within the first 3 pp micro-batches of every schedule here
    return ScheduleResult(max(finish), finish, busy, runs[2].inflight, runs[0].last_backward), periodic
