"""A plan run again into its own --out: what it wrote there and nobody changed since is its own to
replace (or to remove, where the new plan does not write it); a file changed since stops it unless
--force, which then says what it replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.outputs import LEDGER_NAME

TINY = str(Path(__file__).parent / "data" / "tiny.prx")


def plan(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> tuple[int, str]:
    code = main(["plan", TINY, "--out", str(out), "--budget", "10", *args])
    return code, capsys.readouterr().err


def test_plan_no_emit_runs_again_into_its_own_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CI job that ran `plan --no-emit` twice failed the second time (P8003: the folder held the first
    run's report and trace)."""
    out = tmp_path / "p"
    assert plan(capsys, out, "--no-emit")[0] == 0
    first = (out / "report.html").read_bytes()
    assert plan(capsys, out, "--no-emit")[0] == 0
    assert (out / "report.html").read_bytes() == first
    assert sorted(json.loads((out / LEDGER_NAME).read_text())) == ["report.html", "trace.jsonl"]


def test_another_target_removes_the_launch_files_it_no_longer_writes(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p"
    assert plan(capsys, out, "--target", "primus+slurm")[0] == 0
    assert (out / "experiment.yaml").exists()
    code, err = plan(capsys, out, "--target", "megatron+slurm")
    assert code == 0 and "unchanged since: experiment.yaml" in err
    assert not (out / "experiment.yaml").exists() and (out / "launch.sbatch").exists()


def test_a_file_changed_since_the_plan_wrote_it_is_the_user_s(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p"
    assert plan(capsys, out, "--target", "megatron+slurm")[0] == 0
    with (out / "launch.sbatch").open("a") as f:
        f.write("# my edit\n")
    (out / "notes.txt").write_text("mine")
    code, err = plan(capsys, out, "--target", "megatron+slurm")
    assert code == 1 and "P8003" in err and "`launch.sbatch`, `notes.txt`" in err
    assert (out / "launch.sbatch").read_text().endswith("# my edit\n")
    code, err = plan(capsys, out, "--target", "megatron+slurm", "--force")
    assert code == 0 and "--force replaced files changed since primusc wrote them: launch.sbatch" in err
    assert (out / "notes.txt").read_text() == "mine"  # never the plan's: neither replaced nor removed


def test_a_ledger_that_names_files_outside_the_folder_is_not_followed(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    out = tmp_path / "p"
    out.mkdir()
    (out / LEDGER_NAME).write_text(json.dumps({"../precious.txt": "x", "/etc/hostname": "y"}))
    assert plan(capsys, out, "--no-emit")[0] == 0
    assert outside.read_text() == "keep"


def test_the_table_shows_the_fastest_the_tie_rule_ranked_below_its_rows(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """BF16 gradients project faster and the tie rule prefers FP32 ones: the fastest fell out of the table
    and the JSON, named in a sentence only."""
    space = tmp_path / "s.prx"
    space.write_text(Path(TINY).read_text().replace("  mbs : 1 | 2 | 4\n", "  mbs : 1 | 2 | 4\n  main_grad_dtype : fp32 | bf16\n"))
    code = main(["plan", str(space), "--json", "--no-emit", "--top", "1", "--budget", "60", "--out", str(tmp_path / "j")])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["label"] for r in data["ranked"]] == [data["winner"]]
    assert data["fastest"]["label"] == data["result"]["best"]["label"] != data["winner"]
    assert "main_grad_dtype=bf16" in data["fastest"]["label"] and data["fastest_band"] is not None
    assert main(["plan", str(space), "--no-emit", "--top", "1", "--budget", "60", "--out", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    rank = data["tied"].index(data["fastest"]["label"]) + 1
    assert f"│ {rank}≈ │ {data['fastest']['label']}" in out
    assert "and it keeps its gradients in BF16" in out


def test_a_shortlist_campaign_s_folder_is_the_plan_s_to_replace(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The second `plan --shortlist 2` into one --out was refused: `campaign` was no file of the record."""
    out = tmp_path / "p"
    assert plan(capsys, out, "--target", "megatron+slurm", "--shortlist", "2")[0] == 0
    assert (out / "campaign").is_dir()
    assert plan(capsys, out, "--target", "megatron+slurm", "--shortlist", "2")[0] == 0
    code = plan(capsys, out, "--target", "megatron+slurm")[0]  # no shortlist now: its jobs are removed
    assert code == 0 and not (out / "campaign").exists()
