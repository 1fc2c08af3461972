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

import numpy as np
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


# What a compiler emits: per op two ints in a row, the tick it starts on and its cell, ``pass · nvirt · m
# + virtual stage · m + micro-batch``. One flat list rather than a tuple per op: numpy reads it in one pass.
_Events = list[int]


def compile_plan(schedule: str, pp: int, v: int, m: int) -> Plan:
    """The op order of ``schedule`` at unit times, ordered by start tick, then stage."""
    ticks = _greedy_ticks if schedule in _SPLIT else _fixed_ticks
    return _assemble(schedule, pp, v, m, ticks(schedule, pp, v, m))


def _assemble(schedule: str, pp: int, v: int, m: int, events: _Events) -> Plan:
    """The plan of ``events``: each op's previous op on its stage and the op it waits for, as
    indices into the (tick, stage) order, the sweep's view of them and each stage's in-flight peak.
    Whole-array steps: each op's input started on an earlier tick, so every op's index is known
    before any is looked up."""
    nvirt = pp * v
    bs = nvirt * m
    ev = np.fromiter(events, dtype=np.intp, count=len(events)).reshape(-1, 2)
    where = np.array(placement(schedule, pp, v), dtype=np.intp).reshape(-1, 2)  # [virtual] -> (stage, chunk)
    j_of = ev[:, 1] % bs // m
    # a stage runs one op per tick, so (tick, stage) names an op: bucket them instead of sorting
    key = ev[:, 0] * pp + where[j_of, 0]
    at = np.full(int(key.max(initial=0)) + 1, -1, dtype=np.intp)
    at[key] = np.arange(len(ev))
    tick, cell = ev[at[at >= 0]].T
    n = np.arange(len(cell))
    kind, j, i = cell // bs, cell % bs // m, cell % m
    s, c = where[j, 0], where[j, 1]
    index = np.full(3 * bs, -1, dtype=np.intp)  # [cell] -> op
    index[cell] = n
    # what each op waits for: F the previous virtual stage's F, B the next one's B (the last virtual
    # stage: its own F), W nothing; where there is none, ``towards`` is any index and masked out
    is_f, is_b = kind == _F, kind == _B
    own_f = is_b & (j == nvirt - 1)
    towards = np.where(is_f, j - 1, np.where(is_b & ~own_f, j + 1, j))
    waits = (is_f & (j > 0)) | is_b
    dep = np.where(waits, index[np.where(is_b & ~own_f, bs, 0) + towards * m + i], -1)
    cross = waits & ~own_f & (where[towards, 0] != s)
    # per stage, its ops in order: each one's previous is the one before it in that order
    on_stage = np.argsort(s, kind="stable")
    prev = np.full(len(n), -1, dtype=np.intp)
    follows = s[on_stage][1:] == s[on_stage][:-1]
    prev[on_stage[1:][follows]] = on_stage[:-1][follows]
    slot = kind * nvirt + s * v + c
    last = np.full(pp, -1, dtype=np.intp)
    np.maximum.at(last, s, n)
    last_grad = np.full(pp, -1, dtype=np.intp)
    np.maximum.at(last_grad, s[~is_f], n[~is_f])
    grad = np.append(slot, -1)[last_grad]  # -1 (no such op) reads the -1 appended
    # in flight: F passes so far less B passes, stage by stage; every stage's passes add to 0, so
    # one running sum over the stage-ordered ops starts each stage from 0
    alive = np.cumsum(np.where(is_f, 1, np.where(is_b, -1, 0))[on_stage])
    peak = np.zeros(pp, dtype=np.intp)
    np.maximum.at(peak, s[on_stage], alive)
    starts = np.flatnonzero(np.diff(tick, prepend=-1))
    sweep = tuple(zip(slot.tolist(), (prev + 1).tolist(), (dep + 1).tolist(), cross.astype(np.float64).tolist(),
                      strict=True))
    return Plan(tuple(peak.tolist()), pp, v, m, schedule in _SPLIT, sweep, tuple(last.tolist()),
                tuple(grad.tolist()), tuple(np.bincount(slot, minlength=3 * nvirt).tolist()),
                tuple(starts.tolist()))


def _fixed_ticks(schedule: str, pp: int, v: int, m: int) -> _Events:
    """Megatron's per-stage orders run at unit times: each stage runs its next op as soon as its
    input is in (``schedule._fixed`` with F and B+W of one tick each)."""
    nvirt = pp * v
    bs = nvirt * m
    # ``end[cell]``: the tick the op of that cell ends on (-1: not run); the first virtual stage's
    # F waits for the m zeros past the end. Per stage, its order as the cells each op waits for and
    # writes, so the loop below does no index arithmetic.
    end = [-1] * (2 * bs) + [0] * m
    waits: list[list[int]] = []
    writes: list[list[int]] = []
    for s, row in enumerate(_virtual_table(schedule, pp, v)):
        # per pass and chunk, the cells of micro-batch 0 (micro-batch i's are i further on)
        wait0 = {"F": [(j - 1) * m if j else 2 * bs for j in row],
                 "B": [j * m if j == nvirt - 1 else bs + (j + 1) * m for j in row]}
        write0 = {"F": [j * m for j in row], "B": [bs + j * m for j in row]}
        order = megatron_order(pp, v, m, s)
        waits.append([wait0[kind][c] + i for kind, c, i in order])
        writes.append([write0[kind][c] + i for kind, c, i in order])
    pos = [0] * pp
    free = [0] * pp
    events: _Events = []
    remaining = 2 * bs
    while remaining:
        progressed = False
        for s in range(pp):
            wait, write, k, t = waits[s], writes[s], pos[s], free[s]
            while k < len(wait):
                ready = end[wait[k]]
                if ready < 0:
                    break
                if t < ready:
                    t = ready
                cell = write[k]
                events += (t, cell)
                t += 1
                end[cell] = t
                k += 1
            if k != pos[s]:
                remaining -= k - pos[s]
                progressed = True
            pos[s], free[s] = k, t
        if not progressed and not _unblock(waits, writes, pos, end, bs):
            raise DeadlockError(f"{schedule} with pp={pp}, v={v}, m={m} deadlocks")
    return events


def _unblock(waits: list[list[int]], writes: list[list[int]], pos: list[int], end: list[int], bs: int) -> bool:
    """When the interleaved order's last, shorter micro-batch group leaves every stage waiting, the
    first stage that has a runnable op later in its order runs it now (Megatron's p2p pairs do the
    same in effect: the blocked receive is posted and the other direction proceeds)."""
    for s, (wait, write) in enumerate(zip(waits, writes, strict=True)):
        for k in range(pos[s] + 1, len(wait)):
            # a B (cell from ``bs`` on) also needs its own F, ``bs`` cells below it
            if end[wait[k]] >= 0 and (write[k] < bs or end[write[k] - bs] >= 0):
                wait.insert(pos[s], wait.pop(k))
                write.insert(pos[s], write.pop(k))
                return True
    return False


def _greedy_ticks(schedule: str, pp: int, v: int, m: int) -> _Events:
    """The zero-bubble greedy rule at unit times (``schedule._Greedy``): on each tick every stage
    takes a ready B first (lowest micro-batch, later chunk first), then a F while its chunk keeps
    fewer than the 1F1B activation limit, then a deferred W. What an op produces on one tick is
    ready on the next, so each tick is decided from the ticks before it alone."""
    nvirt = pp * v
    bs = nvirt * m
    where = placement(schedule, pp, v)
    virt = _virtual_table(schedule, pp, v)
    # the 1F1B activation limit: stage s keeps pp - s micro-batches; ZBV keeps pp per chunk on every
    # stage (2 pp half-size chunk units: the same bytes as 1F1B's first stage, balanced over stages)
    cap = [pp if schedule == "zbv" else pp - s for s in range(pp)]
    # ``f_end[cell]``: the tick a F ends on; the first virtual stage's F reads the m zeros past the end
    f_end = [1 << 62] * bs + [0] * m
    f_input = [[(j - 1) * m if j else bs for j in row] for row in virt]
    next_f = [[0] * v for _ in range(pp)]
    alive_chunk = [[0] * v for _ in range(pp)]
    # ready B passes as heaps of their ``_b_order`` key, which names the chunk and micro-batch too
    ready_b: list[list[int]] = [[] for _ in range(pp)]
    arriving: list[list[int]] = [[] for _ in range(pp)]  # ready from the next tick
    pending_w: list[deque[int]] = [deque() for _ in range(pp)]  # their cells
    events: _Events = []
    done, total, tick = 0, 3 * bs, 0
    while done < total:
        for s, items in enumerate(arriving):
            if items:
                for key in items:
                    heapq.heappush(ready_b[s], key)
                items.clear()
        ran = done
        for s in range(pp):
            if ready_b[s]:
                i, later = divmod(heapq.heappop(ready_b[s]), v)
                c = v - 1 - later
                j = virt[s][c]
                pending_w[s].append(2 * bs + j * m + i)
                alive_chunk[s][c] -= 1
                if j > 0:
                    ps, pc = where[j - 1]
                    arriving[ps].append(_b_order(i, pc, v))
                events += (tick, bs + j * m + i)
                done += 1
                continue
            chunks, row, inputs, nexts = alive_chunk[s], virt[s], f_input[s], next_f[s]
            for c in range(v - 1, -1, -1):
                i = nexts[c]
                # later chunks first: they sit closer to the loss and release backward work sooner
                if chunks[c] < cap[s] and i < m and f_end[inputs[c] + i] <= tick:
                    nexts[c] += 1
                    chunks[c] += 1
                    j = row[c]
                    f_end[j * m + i] = tick + 1
                    if j == nvirt - 1:
                        arriving[s].append(_b_order(i, c, v))
                    events += (tick, j * m + i)
                    done += 1
                    break
            else:
                if pending_w[s]:
                    events += (tick, pending_w[s].popleft())
                    done += 1
        if done == ran:
            raise DeadlockError(f"{schedule} with pp={pp}, v={v}, m={m} deadlocks")
        tick += 1
    return events
