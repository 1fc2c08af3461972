from __future__ import annotations

from primus_lang.report.charts import MIN_BLOCK_PX, narrow_runs, timeline_chart
from primus_lang.report.view import TimelineEvent
from tests.report.synthetic import candidate


def alternating(n: int, f: float, b: float, start: float = 0.0, stage: int = 0) -> list[TimelineEvent]:
    out, t = [], start
    for i in range(n):
        out.append(TimelineEvent(stage, "F", i, t, t + f))
        out.append(TimelineEvent(stage, "B", i, t + f, t + f + b))
        t += f + b
    return out


def test_wide_blocks_are_not_rasterized() -> None:
    events = alternating(4, 1.0, 2.0)
    assert narrow_runs(events, px_per_second=10.0, pixels=200) == []


def test_narrow_blocks_show_each_kind_share() -> None:
    # 1 s forwards and 2 s backwards at 1 px/s: a third and two thirds of every bin.
    events = alternating(300, 1.0, 2.0)
    runs = narrow_runs(events, px_per_second=1.0, pixels=900)
    assert runs
    covered = sum(r.last - r.first for r in runs)
    assert covered >= 880
    # Bins of a few pixels alias against the 3-pixel period, but every bin is full and the shares
    # average out to the true split.
    assert all(7 <= sum(n for _, n in r.shares) <= 9 for r in runs)
    f = sum(dict(r.shares).get("F", 0) * (r.last - r.first) for r in runs) / (8 * covered)
    assert abs(f - 1 / 3) < 1 / 16


def test_idle_time_stays_empty() -> None:
    events = alternating(10, 0.5, 1.0) + alternating(10, 0.5, 1.0, start=500.0)
    runs = narrow_runs(events, px_per_second=1.0, pixels=600)
    assert all(r.last <= 20 or r.first >= 496 for r in runs)


def test_runs_stay_on_their_stage_and_ignore_communication() -> None:
    events = alternating(50, 0.5, 1.0, stage=0) + alternating(50, 0.5, 1.0, stage=3)
    events.append(TimelineEvent(1, "comm", -1, 0.0, 1.0))
    runs = narrow_runs(events, px_per_second=1.0, pixels=100)
    assert {r.stage for r in runs} == {0, 3}


def test_a_dense_step_draws_compactly() -> None:
    events = tuple(e for s in range(8) for e in alternating(2000, 0.001, 0.002, stage=s))
    cand = candidate("tp=1,pp=8", 1000.0, 1 << 30, True, 1)
    import attrs

    svg = timeline_chart(attrs.evolve(cand, timeline=events, step_time=max(e.end for e in events)))
    assert svg.count("block-F") >= 8 and svg.count("block-B") >= 8
    assert len(svg) < 400_000
    assert MIN_BLOCK_PX >= 1


def test_one_stage_s_step_tail_is_no_bubble() -> None:
    """PP 1: after the last backward pass the step syncs gradients and steps the optimizer; the page drew
    that as a hatched "idle (bubble)" strip beside a bubble of 0.0%."""
    import attrs

    # the tail's gradient reduction is a communication event of its own, to the step's end
    events = (*alternating(4, 1.0, 2.0), TimelineEvent(0, "comm", -1, 12.0, 14.0))
    cand = attrs.evolve(candidate("tp=1", 1000.0, 1 << 30, True, 1, stages=1), timeline=events, step_time=14.0)
    svg = timeline_chart(cand)
    assert 'class="tail"' in svg and "gradient sync and optimizer" in svg
    assert "idle (bubble)" not in svg


def test_a_legend_that_wraps_makes_its_chart_taller_and_ticks_stay_inside() -> None:
    from primus_lang.report.charts import legend_row
    from primus_lang.report.svg import Svg

    svg = Svg(300, 40, "t")
    below = legend_row(svg, [("a long legend entry", "#000000")] * 6, 10, 30, 280)
    assert below > 40 and svg.height >= below - 8
    assert f'viewBox="0 0 300 {svg.height:g}"' in svg.render()
