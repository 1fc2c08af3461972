"""Pipeline schedules: closed forms where exact, the fast path against the reference simulation."""

from __future__ import annotations

import random

import pytest

from primus_lang.project.schedule import fast, plan, replay, simulate


def uniform(pp: int, v: int, t: float) -> list[list[float]]:
    return [[t] * v for _ in range(pp)]


@pytest.mark.parametrize(("pp", "m"), [(2, 8), (4, 8), (4, 16), (8, 32), (8, 8)])
def test_1f1b_bubble_closed_form(pp: int, m: int) -> None:
    f, b, w = 1.0, 1.4, 0.6
    r = simulate("1f1b", pp, m, uniform(pp, 1, f), uniform(pp, 1, b), uniform(pp, 1, w))
    assert r.makespan == pytest.approx((m + pp - 1) * (f + b + w))
    bubble = r.makespan - m * (f + b + w)
    assert bubble / (m * (f + b + w)) == pytest.approx((pp - 1) / m)
    assert r.inflight == tuple(pp - s for s in range(pp))


@pytest.mark.parametrize(("pp", "v", "m"), [(2, 2, 8), (4, 2, 8), (4, 4, 16), (8, 2, 32)])
def test_interleaved_bubble_closed_form(pp: int, v: int, m: int) -> None:
    t = 3.0
    r = simulate("interleaved", pp, m, uniform(pp, v, 1.0 / v), uniform(pp, v, 1.0 / v), uniform(pp, v, 1.0 / v))
    assert (r.makespan - m * t) / (m * t) == pytest.approx((pp - 1) / (v * m))
    # Megatron's first stage: pp v + pp - 1 chunk activations, i.e. pp (1 + (pp-1)/(pp v)) micro-batches
    assert r.inflight[0] == pp * v + pp - 1


@pytest.mark.parametrize(("pp", "m"), [(2, 16), (4, 8), (4, 12), (8, 32)])
@pytest.mark.parametrize(("f", "b", "w"), [(1.0, 1.0, 1.0), (1.0, 2.0, 1.0), (1.0, 1.5, 0.5)])
def test_zero_bubble_h1_closed_form(pp: int, m: int, f: float, b: float, w: float) -> None:
    r = replay(plan("zero_bubble", pp, 1, m), uniform(pp, 1, f), uniform(pp, 1, b), uniform(pp, 1, w))
    assert r.makespan == pytest.approx(m * (f + b + w) + (pp - 1) * (f + b - w))
    assert r.inflight == tuple(pp - s for s in range(pp))  # the same activation limit as 1F1B


def test_zero_bubble_is_a_third_of_1f1b_when_passes_are_equal() -> None:
    pp, m = 8, 32
    one = uniform(pp, 1, 1.0)
    zb = replay(plan("zero_bubble", pp, 1, m), one, one, one).makespan - 3 * m
    ofob = simulate("1f1b", pp, m, one, one, one).makespan - 3 * m
    assert zb == pytest.approx(ofob / 3)


def test_zbv_beats_1f1b_with_equal_passes() -> None:
    pp, m = 4, 16
    half = uniform(pp, 2, 0.5)
    zbv = replay(plan("zbv", pp, 2, m), half, half, half)
    one = uniform(pp, 1, 1.0)
    assert zbv.makespan < replay(plan("zero_bubble", pp, 1, m), one, one, one).makespan
    assert zbv.makespan >= 3 * m
    assert max(zbv.inflight) <= 2 * pp  # at most 1F1B's first-stage activations, in half-size chunks


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved"])
def test_fixed_plans_replay_the_event_simulation(schedule: str) -> None:
    rng = random.Random(11)
    for _ in range(30):
        pp = rng.choice([2, 3, 4, 8])
        v = 1 if schedule == "1f1b" else rng.choice([2, 3])
        m = pp * rng.choice([1, 2, 4])
        times = [[[rng.uniform(0.3, 2.0) for _ in range(v)] for _ in range(pp)] for _ in range(3)]
        c = rng.choice([0.0, 0.2])
        a = simulate(schedule, pp, m, *times, p2p=c)
        b = replay(plan(schedule, pp, v, m), *times, p2p=c)
        assert b.makespan == pytest.approx(a.makespan, rel=1e-12)
        assert b.inflight == a.inflight


def test_zero_bubble_plans_equal_the_greedy_simulation_with_equal_passes() -> None:
    for schedule, v in (("zero_bubble", 1), ("zbv", 2)):
        for pp, m in ((2, 8), (4, 8), (4, 13)):
            t = uniform(pp, v, 1.0)
            assert replay(plan(schedule, pp, v, m), t, t, t).makespan == pytest.approx(
                simulate(schedule, pp, m, t, t, t).makespan)


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_fast_path_agrees_with_the_reference(schedule: str) -> None:
    rng = random.Random(5)
    for _ in range(25):
        pp = rng.choice([2, 3, 4, 8])
        v = {"1f1b": 1, "zero_bubble": 1, "zbv": 2}.get(schedule, rng.choice([2, 3]))
        m = pp * rng.choice([8, 10, 16]) if schedule == "interleaved" else rng.choice([8 * pp, 9 * pp + 1])
        mid = [rng.uniform(0.5, 1.5), rng.uniform(0.5, 2.0), rng.uniform(0.2, 1.0)]
        f, b, w = (uniform(pp, v, x) for x in mid)
        f[-1] = [x * rng.uniform(1.0, 1.5) for x in f[-1]]  # the head on the last stage
        b[-1] = [x * rng.uniform(1.0, 1.5) for x in b[-1]]
        f[0] = [x * rng.uniform(1.0, 1.1) for x in f[0]]  # the embedding on the first
        c = rng.choice([0.0, 0.1, 0.5])
        ref = replay(plan(schedule, pp, v, m), f, b, w, c)
        got = fast(schedule, pp, m, f, b, w, c)
        assert got.makespan == pytest.approx(ref.makespan, rel=1e-9)
        assert got.bubble_fraction == pytest.approx(ref.bubble_fraction, rel=1e-6, abs=1e-12)
        assert got.inflight == ref.inflight
        assert got.finish == pytest.approx(ref.finish, rel=1e-9)
        assert got.last_backward == pytest.approx(ref.last_backward, rel=1e-9)


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_unequal_stages_past_the_slot_limit_are_extrapolated(schedule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past MAX_SCHEDULE_SLOTS unequal middle stages are not replayed whole: the step is extrapolated
    # from replays of a few groups. Their start-up transient can outlast those groups (an
    # interleaved plan's increments can hold for three groups, then grow), so this is an
    # approximation, bounded here at 5% on stages differing by up to 25% each way.
    from primus_lang.ir import derived
    from primus_lang.project import schedule as module

    planned: list[int] = []
    real_plan = module.plan

    def recording(name: str, pp: int, v: int, m: int) -> object:
        planned.append(m)
        return real_plan(name, pp, v, m)

    rng = random.Random(11)
    for _ in range(12):
        pp = rng.choice([3, 4, 6, 8])
        v = {"1f1b": 1, "zero_bubble": 1, "zbv": 2}.get(schedule, rng.choice([2, 3]))
        m = pp * rng.choice([40, 64]) + (0 if schedule == "interleaved" else rng.choice([0, 3]))
        mid = [rng.uniform(0.5, 1.5), rng.uniform(0.5, 2.0), rng.uniform(0.2, 1.0)]
        f, b, w = ([[x * rng.uniform(0.8, 1.25) for _ in range(v)] for _ in range(pp)] for x in mid)
        ref = replay(real_plan(schedule, pp, v, m), f, b, w, 0.1)
        planned.clear()
        monkeypatch.setattr(derived, "MAX_SCHEDULE_SLOTS", pp * v * m - 1)
        monkeypatch.setattr(module, "plan", recording)
        got = module._fast(schedule, pp, m, f, b, w, 0.1)
        monkeypatch.setattr(module, "plan", real_plan)
        monkeypatch.setattr(derived, "MAX_SCHEDULE_SLOTS", 2**19)
        assert max(planned) < m, "the whole step was planned"
        assert got.makespan == pytest.approx(ref.makespan, rel=0.05)
        assert got.inflight == ref.inflight


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("zero_bubble", 1), ("zbv", 2)])
def test_the_sweep_equals_the_recorded_replay(schedule: str, v: int) -> None:
    # replay() without a record runs a leaner loop over precomputed slots: same answers, per stage
    rng = random.Random(3)
    for _ in range(20):
        pp = rng.choice([2, 3, 4, 8])
        m = pp * rng.choice([1, 2, 3])
        times = [[[rng.uniform(0.2, 2.0) for _ in range(v)] for _ in range(pp)] for _ in range(3)]
        c = rng.choice([0.0, 0.3])
        p = plan(schedule, pp, v, m)
        lean, full = replay(p, *times, p2p=c), replay(p, *times, p2p=c, record=True)
        assert lean.finish == full.finish
        assert lean.last_backward == full.last_backward
        assert lean.busy == pytest.approx(full.busy, rel=1e-12)
        assert len(full.events) == len(p.ops) and not lean.events


def test_slower_passes_never_shorten_a_step() -> None:
    rng = random.Random(2)
    for schedule, v in (("1f1b", 1), ("interleaved", 2), ("zero_bubble", 1), ("zbv", 2)):
        pp, m = 4, 16
        f, b, w = ([[rng.uniform(0.5, 1.5) for _ in range(v)] for _ in range(pp)] for _ in range(3))
        base = replay(plan(schedule, pp, v, m), f, b, w, 0.1).makespan
        slower = [[x * 1.2 for x in row] for row in b]
        assert replay(plan(schedule, pp, v, m), f, slower, w, 0.1).makespan >= base
        assert replay(plan(schedule, pp, v, m), f, b, w, 0.3).makespan >= base


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("interleaved", 3),
                                             ("zero_bubble", 1), ("zbv", 2)])
def test_every_micro_batch_count_has_a_plan(schedule: str, v: int) -> None:
    # including interleaving with a last micro-batch group shorter than pp
    for pp in (2, 3, 4, 8):
        for m in range(1, 3 * pp + 2):
            p = plan(schedule, pp, v, m)
            assert sum(1 for op in p.ops if op[1] == 0) == pp * v * m


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zero_bubble", "zbv"])
def test_lighter_end_stages_are_not_taken_for_the_period(schedule: str) -> None:
    # With the embedding and the loss counted as layers (account_for_embedding/loss), the first and
    # last stages are lighter: the middle ones run ahead on that slack for several groups, with equal
    # increments below the busiest stage's work, before the step settles into its period.
    v = 1 if schedule in ("1f1b", "zero_bubble") else 2
    f = [[0.1521, 0.1658][:v], [0.1658] * v, [0.1658] * v, [0.1658, 0.1575][-v:]]
    b = [[0.1566, 0.1709][:v], [0.1709] * v, [0.1709] * v, [0.1709, 0.1619][-v:]]
    w = [[0.0188, 0.0204][:v], [0.0204] * v, [0.0204] * v, [0.0204, 0.0232][-v:]]
    for m in (24, 32, 48, 64):
        ref = replay(plan(schedule, 4, v, m), f, b, w, 0.00085)
        got = fast(schedule, 4, m, f, b, w, 0.00085)
        assert got.finish == pytest.approx(ref.finish, rel=1e-9), m
