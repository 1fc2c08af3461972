"""Schedule plans: the tick compilers give, op for op, the plan the event simulation gives at unit times."""

from __future__ import annotations

import itertools

import pytest

from primus_lang.project.plans import Plan, compile_plan, plan, virtual_index
from primus_lang.project.schedule import simulate


def reference_plan(schedule: str, pp: int, v: int, m: int) -> tuple[tuple[tuple[int, int, int, int, int, bool], ...],
                                                                     tuple[int, ...]]:
    """The plan as the event simulation orders it: every op at unit time, sorted by start, then
    stage, each op's previous op on its stage and the op it waits for as indices in that order."""
    split = schedule in ("zero_bubble", "zbv")
    ones = [[1.0] * v for _ in range(pp)]
    ref = simulate(schedule, pp, m, ones, ones, ones if split else [[0.0] * v for _ in range(pp)], record=True)
    where = {virtual_index(schedule, pp, s, c): s for s in range(pp) for c in range(v)}
    index: dict[tuple[str, int, int], int] = {}
    last = [-1] * pp
    ops = []
    for s, kind, c, i, _start, _end in sorted(ref.events, key=lambda e: (e[4], e[0])):
        j = virtual_index(schedule, pp, s, c)
        dep, cross = -1, False
        if kind == "F" and j > 0:
            dep, cross = index[("F", j - 1, i)], where[j - 1] != s
        elif kind == "B":
            if j == pp * v - 1:
                dep = index[("F", j, i)]
            else:
                dep, cross = index[("B", j + 1, i)], where[j + 1] != s
        index[(kind, j, i)] = len(ops)
        ops.append((s, "FBW".index(kind), c, last[s], dep, cross))
        last[s] = len(ops) - 1
    return tuple(ops), ref.inflight


SHAPES = [(pp, v, m) for pp in (1, 2, 3, 4, 8) for v in (1, 2, 3) for m in (1, 2, 3, 5, 8, 13, 16, 24)]


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_compiled_plans_equal_the_event_simulation_op_for_op(schedule: str) -> None:
    checked = 0
    for pp, v, m in SHAPES:
        if (schedule in ("1f1b", "zero_bubble")) != (v == 1) or (schedule == "zbv" and v != 2):
            continue
        got = compile_plan(schedule, pp, v, m)
        ops, inflight = reference_plan(schedule, pp, v, m)
        assert (tuple(got.ops), got.inflight) == (ops, inflight), (schedule, pp, v, m)
        checked += 1
    assert checked >= 30


def test_the_sweep_view_matches_the_ops() -> None:
    p: Plan = plan("interleaved", 4, 2, 13)
    pv = p.pp * p.v
    assert [(slot, prev, dep, cross) for slot, prev, dep, cross in p.sweep] == [
        (kind * pv + s * p.v + c, prev + 1, dep + 1, 1.0 if cross else 0.0) for s, kind, c, prev, dep, cross in p.ops]
    assert p.stage_last == tuple(max(n for n, op in enumerate(p.ops) if op[0] == s) for s in range(p.pp))
    assert sum(p.slot_count) == len(p.ops) == 2 * pv * 13
    assert not p.split and plan("zbv", 4, 2, 13).split


def test_a_ticks_ops_wait_only_for_earlier_ticks() -> None:
    for schedule, pp, v, m in [("1f1b", 8, 1, 24), ("interleaved", 4, 3, 13), ("zero_bubble", 4, 1, 16),
                               ("zbv", 4, 2, 8)]:
        p = compile_plan(schedule, pp, v, m)
        bounds = [*p.ticks, len(p.sweep)]
        assert p.ticks[0] == 0 and bounds == sorted(bounds) and len(p.ticks) == len(set(p.ticks))
        for a, b in itertools.pairwise(bounds):
            # sweep entries count ops from 1 (0: none): an op of this tick is an entry in a + 1 .. b
            assert all(prev <= a and dep <= a for _slot, prev, dep, _cross in p.sweep[a:b]), (schedule, a)
            assert len({(slot % (pp * v)) // v for slot, *_ in p.sweep[a:b]}) == b - a  # one op a stage
