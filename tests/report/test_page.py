from __future__ import annotations

import re

import attrs

from primus_lang.report import render_report
from primus_lang.report.page import shown
from tests.report.synthetic import candidate, one_f_one_b, report

SECTIONS = ("summary", "figures", "why", "timeline", "breakdown", "memory", "pareto", "trajectory", "knobs")


def test_every_section_is_present_with_its_chart() -> None:
    page = render_report(report())
    for section in SECTIONS:
        assert f"id='{section}'" in page
    for chart in ("timeline", "memory", "scatter", "trajectory", "breakdown"):
        assert f'class="chart {chart}"' in page
    assert page.count("<svg ") == 5
    assert 'class="pareto"' in page and 'class="winner"' in page and 'class="capacity"' in page


def test_text_is_escaped_and_nothing_is_fetched() -> None:
    page = render_report(report())
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # The only URL is the SVG namespace, which browsers never fetch.
    assert set(re.findall(r"https?://[^\"' )]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert "<link" not in page and "@import" not in page and "src=" not in page


def test_the_largest_plan_stays_under_two_megabytes() -> None:
    # 2,000 evaluations and a timeline of 16 stages x 128 micro-batches (F, B and p2p per block).
    data = report(n=2000)
    assert data.winner is not None
    winner = attrs.evolve(data.winner, timeline=tuple(one_f_one_b(16, 128, 0.01, 0.02, 0.0005)))
    page = render_report(attrs.evolve(data, winner=winner))
    assert len(page.encode()) < 2_000_000


def test_shown_lists_each_candidate_once() -> None:
    data = report()
    winner = data.winner
    assert winner is not None
    data = attrs.evolve(data, runners_up=(winner, *data.runners_up), baseline=winner)
    labels = [c.label for c in shown(data)]
    assert len(labels) == len(set(labels))
    assert labels[0] == winner.label


def test_missing_parts_say_so_instead_of_drawing() -> None:
    data = report()
    bare = attrs.evolve(data, winner=attrs.evolve(candidate("tp=1,pp=1", 100.0, 1 << 30, True, 1), ranks=()),
                        runners_up=(), baseline=None, trajectories=())
    page = render_report(bare)
    assert "no timeline" in page
    assert "no search trajectory" in page
    assert "no memory account" in page


def test_an_empty_search_renders() -> None:
    data = attrs.evolve(report(), winner=None, runners_up=(), baseline=None, evaluated=(), trajectories=())
    page = render_report(data)
    assert "found no candidate that fits" in page
    assert "<svg " not in page


def test_an_over_limit_rank_is_flagged() -> None:
    data = report()
    big = candidate("tp=1,pp=4", 900.0, 2 * data.capacity, False, 3)
    page = render_report(attrs.evolve(data, runners_up=(big,)))
    assert "over by" in page


def test_a_timeline_that_disagrees_with_the_step_is_pointed_out() -> None:
    data = report()
    assert data.winner is not None
    end = max(e.end for e in data.winner.timeline)
    agreeing = attrs.evolve(data, winner=attrs.evolve(data.winner, step_time=end))
    assert "schedule simulation ends at" not in render_report(agreeing)
    off = attrs.evolve(data, winner=attrs.evolve(data.winner, step_time=end * 1.02))
    assert "schedule simulation ends at" in render_report(off)
