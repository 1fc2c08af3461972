"""The report rebuilt from a real search trace matches the report of the search result itself."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.report import render_report
from primus_lang.report.adapt import from_search
from primus_lang.report.trace import result_from_trace
from primus_lang.resources import data_dir
from primus_lang.search.budget import Limits
from primus_lang.search.run import search_landscape
from primus_lang.search.trial import EVALUATED
from tests.search import synthetic


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    path = tmp_path_factory.mktemp("trace") / "plan.jsonl"
    result = search_landscape(synthetic.landscape(), synthetic.evaluator(), "auto",
                              Limits(evaluations=60), seed=3, trace=path)
    return result, path


def test_rebuilt_result_has_the_same_trials_and_winner(traced: tuple[object, Path]) -> None:
    result, path = traced
    rebuilt, header = result_from_trace(path)
    assert header["space"] == "synthetic"
    assert rebuilt.best is not None and result.best is not None  # type: ignore[attr-defined]
    assert rebuilt.best.candidate == result.best.candidate  # type: ignore[attr-defined]
    assert rebuilt.baseline == result.baseline  # type: ignore[attr-defined]
    ours = [(t.number, t.source, t.verdict, t.evaluation, t.score) for t in rebuilt.trials]
    theirs = [(t.number, t.source, t.verdict, t.evaluation, t.score) for t in result.trials]  # type: ignore[attr-defined]
    assert ours == theirs
    assert [t.candidate for t in rebuilt.trials if t.verdict == EVALUATED] == [
        t.candidate for t in result.trials if t.verdict == EVALUATED]  # type: ignore[attr-defined]


def test_rebuilt_report_draws_the_same_data(traced: tuple[object, Path]) -> None:
    result, path = traced
    rebuilt, _ = result_from_trace(path)
    a, b = from_search(result), from_search(rebuilt)
    # Only the wall-clock note may differ: the trace stamps evaluations, the result the whole run.
    assert attrs.evolve(a, notes=()) == attrs.evolve(b, notes=())
    assert a.winner is not None and len(a.evaluated) >= 40
    incumbents = [p.incumbent for t in a.trajectories for p in sorted(t.points, key=lambda p: p.evaluation)]
    assert [p for p in incumbents if math.isfinite(p)] == sorted(p for p in incumbents if math.isfinite(p))
    assert {t.strategy for t in a.trajectories} >= {"planner"}


def test_report_command_writes_a_page(traced: tuple[object, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _, path = traced
    out = tmp_path / "r" / "report.html"
    assert main(["report", str(path), "--out", str(out)]) == 0
    page = out.read_text()
    assert "class=\"chart scatter\"" in page and "class=\"chart trajectory\"" in page
    assert "no space file" in page
    assert str(out) in capsys.readouterr().out


def test_a_trace_without_evaluations_is_a_diagnostic(traced: tuple[object, Path], tmp_path: Path) -> None:
    _, path = traced
    cut = tmp_path / "cut.jsonl"
    lines = path.read_text().splitlines()
    kept = [ln for ln in lines if json.loads(ln)["event"] not in ("evaluation",)]
    cut.write_text("\n".join(kept) + "\n")
    with pytest.raises(CompileError) as err:
        result_from_trace(cut)
    assert err.value.diagnostics[0].code.id == "P8901"


def test_a_torn_trace_still_reports(traced: tuple[object, Path], tmp_path: Path) -> None:
    _, path = traced
    torn = tmp_path / "torn.jsonl"
    text = path.read_text()
    torn.write_text(text[: len(text) // 2])  # killed mid-line, no end event
    rebuilt, _ = result_from_trace(torn)
    assert rebuilt.stop_reason == "interrupted"
    assert "<svg" in render_report(rebuilt)


def test_a_report_rebuilt_from_the_trace_of_a_space_with_a_baseline_is_plans_own(tmp_path: Path) -> None:
    """`report` compares the winner with the space's recipe, as the report `plan` wrote does (it used
    the planner's least-parallel recipe instead)."""
    space = tmp_path / "space.prx"
    space.write_text((data_dir("examples") / "llama3_1_8b_mi325x.prx").read_text()
                     .replace("  maximize tokens_per_gpu", "  baseline { tp = 2; mbs = 1 }\n  maximize tokens_per_gpu"))
    out = tmp_path / "plan"
    assert main(["plan", str(space), "--budget", "20", "--no-emit", "--out", str(out)]) == 0
    rebuilt = tmp_path / "rebuilt.html"
    assert main(["report", str(out / "trace.jsonl"), "--space", str(space), "--out", str(rebuilt)]) == 0
    plans = (out / "report.html").read_text()
    assert "the space&#x27;s recipe" in plans
    assert rebuilt.read_text() == plans


@pytest.mark.parametrize("strategy", ["exhaustive", "random"])
def test_a_report_says_which_recipe_the_launch_files_run(tmp_path: Path, strategy: str) -> None:
    """Where the target cannot express the winner, the launch files run another recipe: plan's terminal said
    so and its report did not (a new user found the report's winner BF16 `tp=4` beside launch files of an
    FP8 `pp=8` recipe). The line is in the trace, so the report rebuilt from it says it too; so are the
    search's notes and the count of proposals refused, illegal or over memory."""
    from tests.search.test_plan_command import OP_WINS

    space = tmp_path / "op.prx"
    space.write_text(OP_WINS)
    out = tmp_path / "plan"
    assert main(["plan", str(space), "--out", str(out), "--strategy", strategy]) == 0
    plans = (out / "report.html").read_text()
    assert "cannot express the best recipe" in plans and "recompute=full(32,block)" in plans
    assert "refused by the gate" in plans
    rebuilt = tmp_path / "rebuilt.html"
    assert main(["report", str(out / "trace.jsonl"), "--space", str(space), "--out", str(rebuilt)]) == 0
    assert rebuilt.read_text() == plans
