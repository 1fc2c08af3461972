"""Schedule plans: a schedule's ops in one dependency-respecting order, compiled once per
(schedule, PP, VPP, micro-batches) and replayed with real times (``schedule.replay``).

A plan is the order the schedule runs its ops in when F, B and W each take one unit of time:
Megatron's fixed per-stage orders (1F1B, interleaved), or the order the zero-bubble greedy rule picks
(the paper's handcrafted ZB-H1 and ZB-V patterns come from that same assumption). At unit times
every op starts on an integer tick, so the compilers here count ticks in integer lists: no event
clock, no float times, no sort. ``schedule.simulate`` is the reference they agree with op for op
(``tests/project/test_plans.py``).
"""

from __future__ import annotations

import functools
import heapq
from collections import deque

from attrs import frozen

_SPLIT = ("zero_bubble", "zbv")  # the schedules that run W apart from B
_F, _B, _W = 0, 1, 2


class DeadlockError(RuntimeError):
    pass


def virtual_index(schedule: str, pp: int, stage: int, chunk: int) -> int:
    if schedule == "zbv":
        return stage if chunk == 0 else 2 * pp - 1 - stage
    return chunk * pp + stage


def placement(schedule: str, pp: int, v: int) -> list[tuple[int, int]]:
    """(stage, chunk) of each virtual stage, in model order."""
    where = [(0, 0)] * (pp * v)
    for s in range(pp):
        for c in range(v):
            where[virtual_index(schedule, pp, s, c)] = (s, c)
    return where


def megatron_order(pp: int, v: int, m: int, stage: int) -> list[tuple[str, int, int]]:
    """Megatron's per-stage op order for 1F1B (v=1) and interleaved 1F1B (v>1)."""
    total = m * v
    # Megatron's warm-up forwards: pp - s - 1, or for interleaving 2 (pp - s - 1) + (v - 1) pp
    warmup = min(pp - stage - 1, m) if v == 1 else min((pp - stage - 1) * 2 + (v - 1) * pp, total)
    fs, bs = _megatron_passes(pp, v, m)
    order = list(fs[:warmup])
    for pair in zip(fs[warmup:], bs, strict=False):  # one forward, one backward
        order += pair
    order += bs[total - warmup:]
    return order


@functools.lru_cache(maxsize=8)
def _megatron_passes(pp: int, v: int, m: int) -> tuple[tuple[tuple[str, int, int], ...], tuple[tuple[str, int, int], ...]]:
    """Every stage's forwards and backwards in Megatron's order, before warm-up splits them (the
    same for every stage: one (chunk, micro-batch) sequence)."""
    # micro-batch groups of pp; when m is not a multiple of pp the last group is short, and the
    # virtual ids that name missing micro-batches are skipped
    fs: list[tuple[str, int, int]] = []
    bs: list[tuple[str, int, int]] = []
    for group in range((m + pp - 1) // pp):
        for chunk in range(v):
            for offset in range(pp):
                i = group * pp + offset
                if i < m:
                    fs.append(("F", chunk, i))
                    bs.append(("B", v - 1 - chunk, i))
    return tuple(fs), tuple(bs)


def _virtual_table(schedule: str, pp: int, v: int) -> list[list[int]]:
    """``virtual_index`` of every (stage, chunk)."""
    return [[virtual_index(schedule, pp, s, c) for c in range(v)] for s in range(pp)]


def _b_order(i: int, c: int, v: int) -> int:
    """The greedy rule's order among ready B passes: lowest micro-batch, then the later chunk."""
    return i * v + (v - 1 - c)


@frozen
class Plan:
    """A schedule's ops in one dependency-respecting order, fixed for (schedule, pp, v, m), as the
    sweep reads them: per op (duration slot ``pass·pp·v + stage·v + chunk``, previous op on its
    stage, the op whose output it waits for, 1.0 where that output crosses stages), op indices
    shifted by one so that 0 reads a leading 0.0 for "none": the replay appends each end with no
    branch and no index arithmetic. Replaying a plan is a single longest-path sweep, so projecting a
    candidate costs one pass over its ops.
    """

    inflight: tuple[int, ...]
    pp: int
    v: int
    m: int
    split: bool  # W ops are separate (zero-bubble schedules); else W is folded into B
    sweep: tuple[tuple[int, int, int, float], ...]
    stage_last: tuple[int, ...]  # per stage, its last op (-1: none)
    stage_grad: tuple[int, ...]  # per stage, the slot of its last B or W op (-1: none)
    slot_count: tuple[int, ...]  # per slot, how many ops run it
    # where each unit tick's ops begin in ``sweep``: ops of one tick never wait for each other (what
    # an op waits for started on an earlier tick), so a replay may run a tick's ops together
    ticks: tuple[int, ...] = ()

    @property
    def ops(self) -> list[tuple[int, int, int, int, int, bool]]:
        """Each op as (stage, pass 0/1/2 for F/B/W, chunk, previous op on the stage or -1, the op
        whose output it waits for or -1, whether that output crosses stages), decoded from ``sweep``
        on each call: only a replay that records its events reads it."""
        pv, v = self.pp * self.v, self.v
        return [((slot % pv) // v, slot // pv, slot % v, prev - 1, dep - 1, cross == 1.0)
                for slot, prev, dep, cross in self.sweep]


def plan(schedule: str, pp: int, v: int, m: int) -> Plan:
    """``compile_plan``, memoized while small: a plan near the slot limit takes a hundred
    megabytes, and a search visits many micro-batch counts."""
    if pp * v * m <= _CACHED_SLOTS:
        return _cached_plan(schedule, pp, v, m)
    return compile_plan(schedule, pp, v, m)


_CACHED_SLOTS = 2**14


@functools.lru_cache(maxsize=256)
def _cached_plan(schedule: str, pp: int, v: int, m: int) -> Plan:
    return compile_plan(schedule, pp, v, m)


# An op as a compiler emits it: (tick it starts on, stage, pass, chunk, micro-batch).
_Event = tuple[int, int, int, int, int]


def compile_plan(schedule: str, pp: int, v: int, m: int) -> Plan:
    """The op order of ``schedule`` at unit times, ordered by start tick, then stage."""
    if schedule in _SPLIT:
        events, inflight = _greedy_ticks(schedule, pp, v, m)
    else:
        events, inflight = _fixed_ticks(schedule, pp, v, m)
    return _assemble(schedule, pp, v, m, events, inflight)


def _assemble(schedule: str, pp: int, v: int, m: int, events: list[_Event], inflight: tuple[int, ...]) -> Plan:
    """The plan of ``events``: each op's previous op on its stage and the op it waits for, as
    indices into the (tick, stage) order, and the sweep's view of them."""
    nvirt = pp * v
    where = placement(schedule, pp, v)
    virt = _virtual_table(schedule, pp, v)
    # a stage runs one op per tick, so (tick, stage) names an op: bucket them instead of sorting
    at = [-1] * ((max((e[0] for e in events), default=0) + 1) * pp)
    for n, e in enumerate(events):
        at[e[0] * pp + e[1]] = n
    index = [[-1] * (nvirt * m) for _ in range(3)]  # [pass][virtual · m + micro-batch] -> op
    last = [-1] * pp
    grad = [-1] * pp
    count = [0] * (3 * nvirt)
    sweep: list[tuple[int, int, int, float]] = []
    ticks: list[int] = []
    last_tick = -1
    for n in at:
        if n < 0:
            continue
        tick, s, kind, c, i = events[n]
        if tick != last_tick:
            ticks.append(len(sweep))
            last_tick = tick
        j = virt[s][c]
        dep, cross = -1, False
        if kind == _F and j > 0:
            dep, cross = index[_F][(j - 1) * m + i], where[j - 1][0] != s
        elif kind == _B:
            if j == nvirt - 1:
                dep = index[_F][j * m + i]
            else:
                dep, cross = index[_B][(j + 1) * m + i], where[j + 1][0] != s
        op = len(sweep)
        index[kind][j * m + i] = op
        slot = kind * nvirt + s * v + c
        sweep.append((slot, last[s] + 1, dep + 1, 1.0 if cross else 0.0))
        last[s] = op
        if kind:
            grad[s] = slot
        count[slot] += 1
    return Plan(inflight, pp, v, m, schedule in _SPLIT, tuple(sweep), tuple(last), tuple(grad), tuple(count),
                tuple(ticks))


def _fixed_ticks(schedule: str, pp: int, v: int, m: int) -> tuple[list[_Event], tuple[int, ...]]:
    """Megatron's per-stage orders run at unit times: each stage runs its next op as soon as its
    input is in (``schedule._fixed`` with F and B+W of one tick each)."""
    nvirt = pp * v
    virt = _virtual_table(schedule, pp, v)
    orders = [megatron_order(pp, v, m, s) for s in range(pp)]
    f_end = [-1] * (nvirt * m)  # [virtual · m + micro-batch] -> the tick its F ends on (-1: not run)
    b_end = [-1] * (nvirt * m)
    pos = [0] * pp
    free = [0] * pp
    alive = [0] * pp
    peak = [0] * pp
    events: list[_Event] = []
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(pp):
            order, row, k = orders[s], virt[s], pos[s]
            while k < len(order):
                kind, c, i = order[k]
                j = row[c]
                if kind == "F":
                    ready = 0 if j == 0 else f_end[(j - 1) * m + i]
                else:
                    ready = f_end[j * m + i] if j == nvirt - 1 else b_end[(j + 1) * m + i]
                if ready < 0:
                    break
                start = free[s] if free[s] >= ready else ready
                free[s] = start + 1
                if kind == "F":
                    f_end[j * m + i] = start + 1
                    alive[s] += 1
                    if alive[s] > peak[s]:
                        peak[s] = alive[s]
                    events.append((start, s, _F, c, i))
                else:
                    b_end[j * m + i] = start + 1
                    alive[s] -= 1
                    events.append((start, s, _B, c, i))
                k += 1
                remaining -= 1
                progressed = True
            pos[s] = k
        if not progressed and not _unblock(m, nvirt, virt, orders, pos, f_end, b_end):
            raise DeadlockError(f"{schedule} with pp={pp}, v={v}, m={m} deadlocks")
    return events, tuple(peak)


def _unblock(m: int, nvirt: int, virt: list[list[int]], orders: list[list[tuple[str, int, int]]], pos: list[int],
             f_end: list[int], b_end: list[int]) -> bool:
    """When the interleaved order's last, shorter micro-batch group leaves every stage waiting, the
    first stage that has a runnable op later in its order runs it now (Megatron's p2p pairs do the
    same in effect: the blocked receive is posted and the other direction proceeds)."""
    for s, order in enumerate(orders):
        for k in range(pos[s] + 1, len(order)):
            kind, c, i = order[k]
            j = virt[s][c]
            if kind == "F":
                ready = j == 0 or f_end[(j - 1) * m + i] >= 0
            else:
                ready = (f_end[j * m + i] >= 0 if j == nvirt - 1 else b_end[(j + 1) * m + i] >= 0) \
                    and f_end[j * m + i] >= 0
            if ready:
                order.insert(pos[s], order.pop(k))
                return True
    return False


def _greedy_ticks(schedule: str, pp: int, v: int, m: int) -> tuple[list[_Event], tuple[int, ...]]:
    """The zero-bubble greedy rule at unit times (``schedule._Greedy``): on each tick every stage
    takes a ready B first (lowest micro-batch, later chunk first), then a F while its chunk keeps
    fewer than the 1F1B activation limit, then a deferred W. What an op produces on one tick is
    ready on the next, so each tick is decided from the ticks before it alone."""
    nvirt = pp * v
    where = placement(schedule, pp, v)
    virt = _virtual_table(schedule, pp, v)
    # the 1F1B activation limit: stage s keeps pp - s micro-batches; ZBV keeps pp per chunk on every
    # stage (2 pp half-size chunk units: the same bytes as 1F1B's first stage, balanced over stages)
    cap = [pp if schedule == "zbv" else pp - s for s in range(pp)]
    never = 1 << 62
    f_end = [never] * (nvirt * m)
    next_f = [[0] * v for _ in range(pp)]
    alive_chunk = [[0] * v for _ in range(pp)]
    ready_b: list[list[tuple[int, int, int]]] = [[] for _ in range(pp)]  # heaps of (order key, chunk, mb)
    arriving: list[list[tuple[int, int, int]]] = [[] for _ in range(pp)]  # ready from the next tick
    pending_w: list[deque[tuple[int, int]]] = [deque() for _ in range(pp)]
    alive = [0] * pp
    peak = [0] * pp
    events: list[_Event] = []
    done, total, tick = 0, 3 * nvirt * m, 0
    while done < total:
        for s in range(pp):
            for item in arriving[s]:
                heapq.heappush(ready_b[s], item)
            arriving[s].clear()
        ran = done
        for s in range(pp):
            if ready_b[s]:
                _key, c, i = heapq.heappop(ready_b[s])
                j = virt[s][c]
                pending_w[s].append((c, i))
                alive[s] -= 1
                alive_chunk[s][c] -= 1
                if j > 0:
                    ps, pc = where[j - 1]
                    arriving[ps].append((_b_order(i, pc, v), pc, i))
                events.append((tick, s, _B, c, i))
                done += 1
                continue
            chunks, row = alive_chunk[s], virt[s]
            for c in range(v - 1, -1, -1):
                i, j = next_f[s][c], row[c]
                # later chunks first: they sit closer to the loss and release backward work sooner
                if chunks[c] < cap[s] and i < m and (j == 0 or f_end[(j - 1) * m + i] <= tick):
                    next_f[s][c] += 1
                    f_end[j * m + i] = tick + 1
                    alive[s] += 1
                    chunks[c] += 1
                    if alive[s] > peak[s]:
                        peak[s] = alive[s]
                    if j == nvirt - 1:
                        arriving[s].append((_b_order(i, c, v), c, i))
                    events.append((tick, s, _F, c, i))
                    done += 1
                    break
            else:
                if pending_w[s]:
                    c, i = pending_w[s].popleft()
                    events.append((tick, s, _W, c, i))
                    done += 1
        if done == ran:
            raise DeadlockError(f"{schedule} with pp={pp}, v={v}, m={m} deadlocks")
        tick += 1
    return events, tuple(peak)
