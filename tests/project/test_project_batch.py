"""The batched projection path (``project_many``, ``schedule_batch.columns``) equals the scalar one
to the bit: on every example space, and on schedules built to take each of ``fast``'s branches."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from primus_lang.check import legal_points
from primus_lang.ir import Candidate, Recompute, derived
from primus_lang.ir.quantity import META_CHOICES
from primus_lang.lower import load_space
from primus_lang.project import batch, project, project_many, schedule_batch, step_floor, step_floors
from primus_lang.project import schedule as module
from primus_lang.project.build import layers_of, stage_template, step_shapes
from primus_lang.project.plans import plan
from primus_lang.project.projection import default_oracle
from primus_lang.project.schedule import ScheduleResult, fast
from primus_lang.project.schedule_batch import MIN_BATCH, columns
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))

Times = list[list[float]]


def _columns(schedule: str, pp: int, m: int, fwds: Sequence[Times], bwds: Sequence[Times], wgts: Sequence[Times],
             p2ps: Sequence[float]) -> list[ScheduleResult]:
    """``columns`` of candidates given as ``fast`` takes them, one micro-batch count for all."""
    dur = np.array([fwds, bwds, wgts], dtype=np.float64).transpose(0, 2, 3, 1)
    return columns(schedule, pp, [m] * len(fwds), dur, np.array(p2ps, dtype=np.float64)).results()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_projects_the_same_in_a_batch(path: Path) -> None:
    space = load_space(path)
    # every third legal point, so that schedule shapes keep groups large enough to be batched
    cands = list(itertools.islice(legal_points(space), 0, None, 3))[:1500]
    batch = project_many(space.model, space.cluster, cands, space.settings)
    assert len(batch) == len(cands)
    module._results.clear()  # the scalar path computes afresh rather than reading its own memo
    for cand, got in zip(cands, batch, strict=True):
        assert got == project(space.model, space.cluster, cand, space.settings), cand.label()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_floors_the_same_in_a_batch(path: Path) -> None:
    """``step_floors`` (what branch and bound asks of the points ahead) equals ``step_floor`` to the bit,
    for a point's own floor and for the one its timing knobs share."""
    space = load_space(path)
    cands = list(itertools.islice(legal_points(space), 1, None, 3))[:1500]
    for shared in (False, True):
        got = step_floors(space.model, space.cluster, cands, space.settings, shared=shared)
        want = [step_floor(space.model, space.cluster, c, space.settings, shared=shared) for c in cands]
        assert got == want, shared


def _times(rng: random.Random, pp: int, v: int, uniform: bool) -> tuple[Times, Times, Times]:
    mid = [rng.uniform(0.5, 1.5), rng.uniform(0.5, 2.0), rng.uniform(0.2, 1.0)]

    def one(x: float, s: int) -> list[float]:
        if uniform and 0 < s < pp - 1:
            return [x] * v
        return [x * rng.uniform(0.8, 1.25) for _ in range(v)]

    f, b, w = ([one(x, s) for s in range(pp)] for x in mid)
    return f, b, w


def _same(got: list[ScheduleResult], want: list[ScheduleResult]) -> None:
    for g, r in zip(got, want, strict=True):
        assert (g.makespan, g.finish, g.busy, g.inflight, g.last_backward) == (
            r.makespan, r.finish, r.busy, r.inflight, r.last_backward)


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("interleaved", 3),
                                             ("zero_bubble", 1), ("zbv", 2)])
def test_columns_equal_fast_on_every_branch(schedule: str, v: int) -> None:
    # short steps (replayed whole), unequal middle stages (replayed whole), equal ones (extrapolated),
    # with and without p2p time, mixed in one group
    rng = random.Random(7)
    for pp in (2, 3, 4, 8):
        for m in sorted({pp, 2 * pp + 1, 3 * pp, 5 * pp + 1, 8 * pp}):
            if schedule == "interleaved" and m % pp:
                continue
            cases = [_times(rng, pp, v, uniform=i % 3 != 0) for i in range(2 * MIN_BATCH)]
            p2ps = [rng.choice([0.0, 0.05, 0.3]) for _ in cases]
            got = _columns(schedule, pp, m, *zip(*cases, strict=True), p2ps)
            module._results.clear()
            want = [fast(schedule, pp, m, f, b, w, c) for (f, b, w), c in zip(cases, p2ps, strict=True)]
            _same(got, want)


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_columns_past_the_slot_limit(schedule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # too long to replay whole: equal stages extrapolate in the batch, unequal ones whose period does
    # not show within three groups go to fast's own search one by one; both equal fast's answers
    rng = random.Random(5)
    v = {"1f1b": 1, "zero_bubble": 1, "zbv": 2}.get(schedule, 2)
    pp, m = 4, 4 * 40
    monkeypatch.setattr(derived, "MAX_SCHEDULE_SLOTS", pp * v * m - 1)
    cases = [_times(rng, pp, v, uniform=i % 2 == 0) for i in range(2 * MIN_BATCH)]
    p2ps = [0.1] * len(cases)
    got = _columns(schedule, pp, m, *zip(*cases, strict=True), p2ps)
    module._results.clear()
    _same(got, [fast(schedule, pp, m, f, b, w, 0.1) for f, b, w in cases])


def test_a_small_group_takes_the_scalar_path() -> None:
    rng = random.Random(1)
    cases = [_times(rng, 4, 1, uniform=True) for _ in range(MIN_BATCH - 1)]
    got = _columns("1f1b", 4, 16, *zip(*cases, strict=True), [0.0] * len(cases))
    _same(got, [fast("1f1b", 4, 16, f, b, w, 0.0) for f, b, w in cases])


def test_an_empty_batch_projects_nothing() -> None:
    space = load_space(EXAMPLES[0])
    assert project_many(space.model, space.cluster, [], space.settings) == []


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_columns_with_lighter_end_stages(schedule: str) -> None:
    # equal middle stages whose start-up transient outlasts three groups (test_schedule's case of
    # the embedding and loss counted as layers): the batch replays those whole, as fast does
    v = 1 if schedule in ("1f1b", "zero_bubble") else 2
    rng = random.Random(9)
    cases = []
    for _ in range(2 * MIN_BATCH):
        k = rng.uniform(0.9, 1.1)
        f = [[0.1521 * k, 0.1658][:v], [0.1658] * v, [0.1658] * v, [0.1658, 0.1575 * k][-v:]]
        b = [[0.1566 * k, 0.1709][:v], [0.1709] * v, [0.1709] * v, [0.1709, 0.1619 * k][-v:]]
        w = [[0.0188, 0.0204][:v], [0.0204] * v, [0.0204] * v, [0.0204, 0.0232][-v:]]
        cases.append((f, b, w))
    for m in (24, 32, 64):
        got = _columns(schedule, 4, m, *zip(*cases, strict=True), [0.00085] * len(cases))
        module._results.clear()
        _same(got, [fast(schedule, 4, m, f, b, w, 0.00085) for f, b, w in cases])


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("zero_bubble", 1), ("zbv", 2)])
def test_columns_of_mixed_micro_batch_counts_equal_fast(schedule: str, v: int) -> None:
    # one call with columns of many micro-batch counts (short, whole replays and extrapolations that
    # share a count modulo PP), equal and unequal middle stages: each column equals fast at its own m
    rng = random.Random(11)
    pp = 4
    ms = [m for m in range(pp, 9 * pp) if schedule != "interleaved" or m % pp == 0]
    cases = [(_times(rng, pp, v, uniform=i % 4 != 0), rng.choice(ms)) for i in range(24 * MIN_BATCH)]
    dur = np.array([[f for (f, _b, _w), _m in cases], [b for (_f, b, _w), _m in cases],
                    [w for (_f, _b, w), _m in cases]]).transpose(0, 2, 3, 1)
    got = columns(schedule, pp, [m for _t, m in cases], dur, np.full(len(cases), 0.05)).results()
    module._results.clear()
    _same(got, [fast(schedule, pp, m, f, b, w, 0.05) for (f, b, w), m in cases])


@pytest.mark.parametrize(("schedule", "pp", "v", "m"), [
    ("1f1b", 16, 1, 64), ("1f1b", 8, 1, 20), ("interleaved", 8, 2, 24), ("interleaved", 4, 3, 13),
    ("zero_bubble", 8, 1, 32), ("zbv", 8, 2, 16)])
def test_a_plan_replayed_a_tick_at_a_time_equals_it_op_by_op(schedule: str, pp: int, v: int, m: int) -> None:
    # unequal stages and passes and a p2p per column: the ring of ends must hold every end still read
    rng = np.random.default_rng(pp * 100 + m)
    cols = 7
    p = plan(schedule, pp, v, m)
    slots = rng.uniform(0.5, 2.0, size=(3 * pp * v, cols))
    p2p = rng.uniform(0.0, 0.3, size=cols)
    by_tick = schedule_batch._by_tick(schedule_batch._make_layout(p), slots, p2p)
    by_op = schedule_batch._by_op(p, slots, p2p)
    assert by_tick.tobytes() == by_op.tobytes()


def _others(cand: Candidate, name: str) -> list[Any]:
    """Other values of ``cand``'s field ``name``: its choices, the other flag, a doubled count, other
    recomputations."""
    value = getattr(cand, name)
    if isinstance(value, Recompute):
        return [Recompute(kind=k) for k in ("none", "selective")] + [Recompute(kind="full", layers=1)]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [2 * value or 1]
    return [c for c in attrs.fields_dict(Candidate)[name].metadata.get(META_CHOICES, ()) if c != value]


@pytest.mark.parametrize("name", ["deepseek_v3_mi355x", "llama3_1_70b_mi325x"])
def test_a_step_set_is_keyed_by_every_field_its_step_reads(name: str) -> None:
    # project_many shares a step set (``batch._STEP``) among candidates equal in the fields it names:
    # any other field, changed, must leave the step's shapes and each stage's parameters as they were
    space = load_space(data_dir("examples") / f"{name}.prx")
    read = set(batch._STEP.__reduce__()[1])
    run = batch._Run(space.model, space.cluster, space.settings, default_oracle(space.cluster))
    changed = 0
    for cand in itertools.islice(legal_points(space), 0, None, 997):
        shapes = step_shapes(space.model, space.cluster, cand, run.fsdp2)
        params = run.stage_params(layers_of(space.model, space.cluster, cand, run.fsdp2),
                                  stage_template(space.model, cand))
        for field in attrs.fields(Candidate):
            if field.name in read or field.name == "gbs":  # gbs: a column of the step set's candidates
                continue
            for value in _others(cand, field.name):
                other = attrs.evolve(cand, **{field.name: value})
                assert step_shapes(space.model, space.cluster, other, run.fsdp2) is shapes, (field.name, value)
                assert run.stage_params(layers_of(space.model, space.cluster, other, run.fsdp2),
                                        stage_template(space.model, other)) == params, (field.name, value)
                changed += 1
    assert changed > 20
