"""The report of a real search over an example space, drawn by headless Chromium.

The space is the 8B example with each axis cut to its first two values, so the search (check, memory
proof, projection, auto strategy) runs in a few seconds; everything else is the real pipeline.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.ir import Domain, Space
from primus_lang.lower import load_space
from primus_lang.report import render_report, write_report
from primus_lang.report.adapt import from_search
from primus_lang.resources import data_dir
from primus_lang.search.budget import Limits
from primus_lang.search.run import search_landscape
from primus_lang.search.stages import evaluator_of, landscape_of
from primus_lang.search.ties import choose
from primus_lang.search.trial import SearchResult
from tests.report.pngread import coloured_pixels
from tests.report.test_browser import CHROMIUM, chromium, screenshot

EXAMPLE = Path(data_dir("examples")) / "llama3_1_8b_mi325x.prx"


def small(space: Space) -> Space:
    axes = tuple(attrs.evolve(a, domain=Domain(a.domain.values[:2])) for a in space.axes)
    return attrs.evolve(space, axes=axes)


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Space, SearchResult, Path]:
    space = small(load_space(EXAMPLE))
    trace = tmp_path_factory.mktemp("example") / "plan.jsonl"
    result = search_landscape(landscape_of(space), evaluator_of(space), "auto", Limits(evaluations=30), seed=0,
                              trace=trace)
    return space, result, trace


def test_report_shows_the_real_stages(searched: tuple[Space, SearchResult, Path]) -> None:
    space, result, _ = searched
    data = from_search(result, space)
    # the winner is plan's: the best projection, or a tied one that changes numerics less (search.ties)
    chosen = choose(result, space.cluster.gpu.provenance, space.objective.metric, space.objective.sense,
                    space.settings).winner
    assert data.winner is not None and chosen is not None
    assert data.winner.label == chosen.label
    assert data.capacity == space.cluster.gpu.hbm_capacity
    # The report's figures are the search's, and its memory peak the memory proof's.
    assert chosen.evaluation is not None
    assert data.winner.tokens_per_gpu == pytest.approx(chosen.evaluation.tokens_per_gpu, rel=1e-9)
    assert data.winner.memory_peak == chosen.memory_peak
    assert data.winner.ranks and data.winner.timeline
    assert data.winner.memory_peak <= data.limit
    assert {e.kind for e in data.winner.timeline} >= {"F", "B"}
    projected = [c for c in data.evaluated if c.tokens_per_gpu == c.tokens_per_gpu]  # NaN: not projected
    assert len(projected) == result.evaluations
    assert len({c.label for c in data.evaluated}) == len(data.evaluated)


def test_report_command_with_the_space_matches_plan_report(searched: tuple[Space, SearchResult, Path],
                                                           tmp_path: Path) -> None:
    space, result, trace = searched
    direct = render_report(result, space)
    out = tmp_path / "again.html"
    assert main(["report", str(trace), "--out", str(out), "--space", str(EXAMPLE)]) == 0
    rebuilt = out.read_text()
    # the page holds no wall-clock time, so the one rebuilt from the trace is the same bytes
    assert rebuilt == direct and "search time" not in rebuilt


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_chromium_draws_the_example_report(searched: tuple[Space, SearchResult, Path], tmp_path: Path) -> None:
    space, result, _ = searched
    page = write_report(result, tmp_path / "report.html", space)
    assert page.stat().st_size < 2_000_000
    dom = chromium(tmp_path, page, "--dump-dom").stdout
    for cls in ("timeline", "memory", "scatter", "trajectory", "breakdown"):
        assert re.search(rf'<svg[^>]*class="chart {cls}"', dom), cls
    assert dom.count('class="block block-') >= 2 * result.best.candidate.microbatches(space.cluster.world)  # type: ignore[union-attr]
    assert dom.count('class="term"') >= 5 and dom.count('class="point"') >= 10
    png = screenshot(tmp_path, page, 1040, 2600, scale=0.5)
    colour, ink = coloured_pixels(png, step=2)
    assert colour > 2000 and ink > colour
