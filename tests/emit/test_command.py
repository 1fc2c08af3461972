"""`primusc emit`: loads a space, parses the point, writes the files and a manifest, refuses to clobber."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.resources import data_dir

pytest.importorskip("primus_lang.lower")
EXAMPLE = data_dir("examples") / "llama3_70b_h100.prx"
POINT = "tp=4,pp=8,schedule=interleaved,vpp=5,cp=2,mbs=1,recompute=selective,precision=fp8"
OVERFLOWING = "tp=4,pp=8,schedule=interleaved,vpp=5,mbs=1,recompute=selective,precision=fp8"  # 80.3 of 75.7 GiB


def run(*argv: str) -> int:
    return main(["--error-format", "short", *argv])


def test_writes_files_and_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out), "--var", "partition=gpu") == 0
    assert sorted(p.name for p in out.iterdir()) == [".primusc-written.json", "launch.sbatch", "manifest.json",
                                                     "node.sh"]
    assert os.access(out / "node.sh", os.X_OK) and os.access(out / "launch.sbatch", os.X_OK)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["sha256"] == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert manifest["source"]["file"] == EXAMPLE.name
    assert manifest["target"] == "megatron+slurm"  # the space's own target
    assert manifest["candidate"]["tp"] == 4 and manifest["candidate"]["vpp"] == 5
    assert manifest["variables"]["partition"] == "gpu"
    assert "#SBATCH --partition=gpu" in (out / "launch.sbatch").read_text()
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == entry["sha256"]
    if manifest["projection"]:
        assert manifest["projection"]["tokens_per_gpu"] > 0
    if manifest["memory"]:
        assert "ranks" in manifest["memory"]


def test_refuses_a_non_empty_folder_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out)) == 1
    assert "P7006" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out), "--force", "--target", "primus+local") == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "experiment.yaml").exists() and (out / "launch.sh").exists()


def test_a_rerun_replaces_its_own_files_and_refuses_hand_edits(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """emit refused its own identical rerun, and `--force` replaced a hand-edited file without a word;
    it keeps the ledger plan keeps (`.primusc-written.json`)."""
    out = tmp_path / "out"
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out)) == 0
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out)) == 0  # its own files, unchanged
    edited = next(p for p in sorted(out.iterdir()) if p.suffix == ".sh")
    edited.write_text(edited.read_text() + "# mine\n")
    capsys.readouterr()
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out)) == 1
    assert f"changed since: {edited.name}" in capsys.readouterr().err and edited.read_text().endswith("# mine\n")
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(out), "--force") == 0
    assert f"--force replaced files changed since primusc wrote them: {edited.name}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("--target", "megatron+mars"), "P7002"),
        (("--var", "nonsense=1"), "P7003"),
        (("--var", "novalue"), "P7004"),
        (("--target", "megatron+k8s"), "P7004"),
        (("--point", "tp=3"), "P7005"),
        (("--point", OVERFLOWING), "P5001"),  # legal, but its memory account does not fit
    ],
)
def test_user_errors_are_diagnostics(argv: tuple[str, ...], code: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = ["emit", str(EXAMPLE), "--point", POINT, "--out", str(tmp_path / "out"), *argv]
    assert run(*args) == 1
    assert code in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_path_that_cannot_be_written_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file where a folder must go is the user's to fix: P2015 (or P7006 for --out itself), exit 1."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(afile / "sub")) == 1
    assert "P2015" in capsys.readouterr().err
    assert run("emit", str(EXAMPLE), "--point", POINT, "--out", str(afile)) == 1
    assert "P7006" in capsys.readouterr().err and afile.read_text() == "x"


def test_the_spaces_own_recipe_is_written_with_the_accounts_verdict(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline the account says does not fit (NVIDIA's Llama 3.1 405B GB200 recipe: 190 GiB against
    176.7) was refused by `emit --point baseline`, and `plan` stopped at P8005: the recipe that ran
    could not be launched at all. Its files are written with W5002; another such point stays P5001."""
    space = tmp_path / "space.prx"
    text = EXAMPLE.read_text()
    space.write_text(text.replace("  maximize", f"  baseline {{ {OVERFLOWING.replace(',', '; ')} }}\n  maximize", 1))
    assert run("emit", str(space), "--point", "baseline", "--out", str(tmp_path / "b")) == 0
    err = capsys.readouterr().err
    assert "W5002" in err and "does not fit" in err and (tmp_path / "b" / "node.sh").is_file()
    assert run("emit", str(EXAMPLE), "--point", OVERFLOWING, "--out", str(tmp_path / "o")) == 1
    assert "P5001" in capsys.readouterr().err


def test_the_command_lines_variables_win_over_the_recipes_and_the_limit_over_its_exit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An imported recipe carries its own run length (`--train-iters 500000`, `--exit-duration-in-mins
    235`): `--var train_iters=50` was ignored, the 235-minute exit outlived a one-hour Slurm job, and no
    warning said the 500,000 iterations would not finish."""
    from tests.recipes.test_bad_recipes import LLAMA8B

    script = tmp_path / "run.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B +
                      "--tensor-model-parallel-size 8 --train-iters 500000 --exit-duration-in-mins 235\n")
    space = tmp_path / "s.prx"
    assert run("import-recipe", str(script), "--gpu", "h100", "--out", str(space)) == 0
    space.write_text(space.read_text().replace("target megatron + local", "target megatron + slurm"))
    capsys.readouterr()
    assert run("emit", str(space), "--point", "baseline", "--out", str(tmp_path / "a")) == 0
    node = (tmp_path / "a" / "node.sh").read_text()
    assert "--train-iters 500000" in node and "--exit-duration-in-mins 54" in node  # 01:00:00 less 6 min
    assert "W7022" in capsys.readouterr().err
    assert run("emit", str(space), "--point", "baseline", "--out", str(tmp_path / "b"), "--var", "train_iters=50") == 0
    assert "--train-iters 50\n" in (tmp_path / "b" / "node.sh").read_text()
    assert "W7022" not in capsys.readouterr().err
    # Megatron's exit of 0 is none at all: the scheduler's limit stands
    space.write_text(space.read_text().replace('exit_duration_in_mins = "235"', 'exit_duration_in_mins = "0"'))
    assert run("emit", str(space), "--point", "baseline", "--out", str(tmp_path / "c")) == 0
    assert "--exit-duration-in-mins 54" in (tmp_path / "c" / "node.sh").read_text()


def test_project_point_baseline_projects_the_recipe_that_does_not_fit_by_the_account(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what `emit --point baseline` writes with W5002, `project --point baseline` projects with it
    space = tmp_path / "space.prx"
    text = EXAMPLE.read_text()
    space.write_text(text.replace("  maximize", f"  baseline {{ {OVERFLOWING.replace(',', '; ')} }}\n  maximize", 1))
    assert run("project", str(space), "--point", "baseline") == 0
    out = capsys.readouterr()
    assert "W5002" in out.err and "is projected though" in out.err and "0 fit in memory" in out.out
    assert run("project", str(EXAMPLE), "--point", OVERFLOWING) == 1
    assert "P5001" in capsys.readouterr().err


def test_emit_says_how_sure_the_projection_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The launch files' manifest keeps the projection's band beside its figures, and `emit` warns as `project`
    does where the point lies beyond the runs its profile was fitted on (a trial's host-bound dense point was
    emitted without a word, where `plan` said W6012)."""
    src = tmp_path / "small.prx"
    src.write_text("import models.llama3 (llama3_8b)\nimport hardware.calibrated (gb300_calibrated)\n"
                   "cluster c { gpu = gb300_calibrated; nodes = 2; gpus_per_node = 4 }\n"
                   "space s on c { model = llama3_8b; seq_len = 8192; gbs = 128; precision = fp8; tp = 2; cp = 4 }\n")
    out = tmp_path / "out"
    assert main(["emit", str(src), "--point", "tp=2,cp=4", "--target", "megatron+local", "--out", str(out)]) == 0
    assert "W6012" in capsys.readouterr().err
    projection = json.loads((out / "manifest.json").read_text())["projection"]
    band = projection["band"]
    assert band["tokens_low"] < projection["tokens_per_gpu"] < band["tokens_high"]
    assert any(why.startswith("host-bound") for why in band["beyond"])
