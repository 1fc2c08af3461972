"""What the `project` and `plan` tables say about their columns: the MFU line where candidates run at
different peaks, and layouts written in the knobs' order whichever order the space declares its axes."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.resources import data_dir

EXAMPLE = data_dir("examples") / "llama3_70b_h100.prx"
FP8 = "tp=4,pp=8,schedule=interleaved,vpp=5,cp=2,mbs=1,recompute=selective,precision=fp8"


def run(*argv: str) -> int:
    return main(["--error-format", "short", *argv])


def test_project_says_an_fp8_mfu_is_of_the_fp8_peak(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("project", str(EXAMPLE), "--point", FP8) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "MFU: of each candidate's own precision's dense peak on h100_sxm_calibrated (FP8 1,979; BF16 989 TFLOP/s)" in out


def test_a_bf16_table_has_no_mfu_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("project", str(EXAMPLE), "--point", FP8.replace("precision=fp8", "precision=bf16")) == 0
    assert "MFU: of" not in capsys.readouterr().out


def test_plan_layouts_follow_the_knob_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the example declares `precision` before `tp`; the table writes tp first, as `project` does
    assert EXAMPLE.read_text().index("precision :") < EXAMPLE.read_text().index("tp :")
    assert run("plan", str(EXAMPLE), "--out", str(tmp_path / "p"), "--no-emit") == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│   1 │")]
    assert rows and rows[0].split("│")[2].strip().startswith("tp=")


def test_plan_says_what_the_space_fixes_beside_its_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the rows name axis values only; a knob the space fixes (`ep = 8`) was in the tie sentence's full
    # label (`pp=2,ep=8`) but in no row (`pp=2`)
    space = tmp_path / "s.prx"
    space.write_text(EXAMPLE.read_text().replace("  precision :", "  cp_comm = a2a\n  precision :", 1))
    assert run("plan", str(space), "--out", str(tmp_path / "p"), "--no-emit") == 0
    out = capsys.readouterr().out
    assert "every row also: cp_comm=a2a (fixed by the space; a full label names them)" in out
    assert run("plan", str(EXAMPLE), "--out", str(tmp_path / "q"), "--no-emit") == 0
    assert "every row also" not in capsys.readouterr().out
