"""A search of any size writes a report of bounded size that says what its charts left out."""

from __future__ import annotations

import math
import re

import pytest

from primus_lang.report import render_report
from primus_lang.report.pareto import pareto_front
from primus_lang.report.sampling import MAX_DRAWN, TOP, scatter_sample, trajectory_sample
from tests.report.synthetic import report


@pytest.mark.slow
def test_a_large_search_writes_a_bounded_page_that_says_what_it_left_out() -> None:
    data = report(n=12_000)
    page = render_report(data)
    assert len(page.encode()) < 1_500_000  # was 5 MB: one SVG element per evaluation, twice
    assert page.count('class="point') <= MAX_DRAWN + 1
    assert "12,000 candidates were evaluated" in page and "The trace holds every evaluation" in page
    assert 'class="chart histogram"' in page
    counted = sum(int(n.replace(",", "")) for n in re.findall(r": ([\d,]+) candidates that", page))
    assert counted == sum(1 for c in data.evaluated if math.isfinite(c.tokens_per_gpu))  # it counts them all
    assert page.count('class="pareto-point"') == len(pareto_front(list(data.evaluated)))
    assert data.winner is not None and data.winner.label in page


def test_the_sample_keeps_the_front_the_best_and_stands_for_every_candidate() -> None:
    pts = [c for c in report(n=6_000).evaluated if math.isfinite(c.tokens_per_gpu)]
    sample = scatter_sample(pts)
    assert sample.thinned and len(sample.drawn) <= MAX_DRAWN
    drawn = {id(c) for c, _ in sample.drawn}
    assert all(id(c) in drawn for c in pareto_front(pts))
    best = sorted(pts, key=lambda c: (-c.tokens_per_gpu, c.evaluation))[:TOP]
    assert all(id(c) in drawn for c in best)
    assert sum(n for _, n in sample.drawn) == len(pts)


def test_the_incumbent_lines_keep_every_step() -> None:
    trajs = report(n=6_000).trajectories
    thinned = trajectory_sample(trajs)
    assert sum(len(t.points) for t in thinned) <= MAX_DRAWN + 2 * len(trajs) + 50
    for whole, kept in zip(trajs, thinned, strict=True):
        steps = [p.incumbent for p in whole.points]
        assert [p.incumbent for p in kept.points if True] and kept.points[-1] == whole.points[-1]
        changes = [p for i, p in enumerate(whole.points) if i == 0 or p.incumbent != steps[i - 1]]
        assert all(p in kept.points for p in changes)


def test_a_small_search_is_drawn_whole() -> None:
    data = report(n=300)
    assert not scatter_sample(list(data.evaluated)).thinned
    assert trajectory_sample(data.trajectories) == data.trajectories
    page = render_report(data)
    assert "to keep this page small" not in page and 'class="chart histogram"' not in page
