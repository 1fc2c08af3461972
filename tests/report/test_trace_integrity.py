"""A trace two plans wrote at once is refused, by `report` and by `--resume`; a killed plan's is not.
And `report` without --space says what its page lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.report.trace import result_from_trace
from primus_lang.search.budget import Limits
from primus_lang.search.run import search_landscape
from tests.search import synthetic

TINY = str(Path(__file__).parents[1] / "search" / "data" / "tiny.prx")


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = tmp_path_factory.mktemp("trace") / "plan.jsonl"
    search_landscape(synthetic.landscape(), synthetic.evaluator(), "auto", Limits(evaluations=20), seed=1,
                     trace=path)
    return path.read_text().splitlines()


def _refused(path: Path) -> str:
    with pytest.raises(CompileError) as err:
        result_from_trace(path)
    assert err.value.diagnostics[0].code.id == "P8013"
    with pytest.raises(CompileError) as again:  # and a resume of it
        search_landscape(synthetic.landscape(), synthetic.evaluator(), "auto", Limits(evaluations=20), seed=1,
                         resume=path)
    assert again.value.diagnostics[0].code.id == "P8013"
    return err.value.diagnostics[0].message


def test_two_searches_in_one_trace_are_refused(lines: list[str], tmp_path: Path) -> None:
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(lines + lines) + "\n")
    assert "second `start`" in _refused(both)
    ends = tmp_path / "ends.jsonl"
    end = next(line for line in lines if json.loads(line)["event"] == "end")
    ends.write_text("\n".join([*lines, end]) + "\n")
    assert "second `end`" in _refused(ends)


def test_a_torn_line_inside_the_trace_is_refused(lines: list[str], tmp_path: Path) -> None:
    torn = tmp_path / "torn.jsonl"
    middle = len(lines) // 2
    torn.write_text("\n".join([*lines[:middle], lines[middle][:30] + lines[middle + 1][10:],
                               *lines[middle + 2:]]) + "\n")
    assert "torn line" in _refused(torn)


def test_a_killed_and_resumed_trace_still_reports(lines: list[str], tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    cut = len(lines) // 2
    path.write_text("\n".join(lines[:cut]) + "\n" + lines[cut][:25])  # killed mid-line
    assert result_from_trace(path)[0].stop_reason == "interrupted"
    search_landscape(synthetic.landscape(), synthetic.evaluator(), "auto", Limits(evaluations=20), seed=1,
                     resume=path)
    assert len(path.read_text().splitlines()) > len(lines)  # the torn line stays, before its `resume`
    assert result_from_trace(path)[0].evaluations == 20


def test_report_says_what_is_missing_without_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", TINY, "--out", str(tmp_path / "p"), "--budget", "5", "--json", "--no-emit"]) == 0
    capsys.readouterr()
    trace = str(tmp_path / "p" / "trace.jsonl")
    assert main(["report", trace, "--out", str(tmp_path / "a.html")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: no --space") and "--space FILE.prx" in err and len(err.splitlines()) == 1
    assert main(["report", trace, "--out", str(tmp_path / "b.html"), "--space", TINY]) == 0
    assert "no --space" not in capsys.readouterr().err
    assert main(["--error-format", "short", "report", trace, "--out", trace, "--force"]) == 1
    assert "P8012" in capsys.readouterr().err
