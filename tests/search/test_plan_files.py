"""What `plan` (and the other commands with an --out) do to files: never through a link, never
over a file without --force, never two outputs in one file, one plan per folder, and an interrupted
plan whose printed command continues it as printed."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.outputs import folder_lock
from primus_lang.resources import data_dir

TINY = str(Path(__file__).parent / "data" / "tiny.prx")


def run(*argv: str) -> int:
    return main(["--error-format", "short", *argv])


def test_emit_force_never_writes_through_a_planted_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "node.sh").symlink_to(victim)
    example = data_dir("examples") / "llama3_70b_h100.prx"
    assert run("emit", str(example), "--point", "tp=4,pp=8,schedule=interleaved,vpp=5,cp=2,mbs=1,"
               "recompute=selective,precision=fp8", "--out", str(out), "--force") == 1
    assert "P8010" in capsys.readouterr().err
    assert victim.read_text() == "precious"
    assert sorted(p.name for p in out.iterdir()) == ["node.sh"]  # refused before the first file


def test_plan_refuses_two_outputs_in_one_file_before_searching(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    same = tmp_path / "x"
    out = tmp_path / "o"
    for args in (("--trace", str(same), "--report", str(same)),
                 ("--trace", str(out / "node.sh")),  # a launch file of megatron+local
                 ("--report", TINY),
                 ("--trace", str(tmp_path / "t.jsonl"), "--report", str(tmp_path / "d" / ".." / "t.jsonl"))):
        assert run("plan", TINY, "--out", str(out), "--force", *args) == 1
        assert "P8012" in capsys.readouterr().err
    assert not same.exists() and not out.exists()


def test_plan_never_writes_over_a_file_the_space_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's `--trace` named the site file the space imports, and `--force` replaced it with the trace."""
    site = tmp_path / "site.prx"
    site.write_text('site lab { partition = "gpu" }\n')
    space = tmp_path / "s.prx"
    space.write_text('import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\nimport "./site.prx" (lab)\n'
                     "space s on mi325x_x8 { model = llama3_1_8b; gbs = 64; site = lab }\n")
    before = site.read_text()
    assert run("plan", str(space), "--out", str(tmp_path / "o"), "--force", "--trace", str(site)) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "P8012" in err and "the imported file" in err and site.read_text() == before


def test_a_second_plan_into_a_held_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    with folder_lock(out):  # as the first plan holds it
        assert run("plan", TINY, "--out", str(out), "--force", "--budget", "5", "--json") == 1
    err = capsys.readouterr().err
    assert "P8011" in err and str(out) in err
    assert sorted(p.name for p in out.iterdir()) == []
    assert run("plan", TINY, "--out", str(out), "--budget", "5", "--json") == 0
    assert ".primusc.lock" not in {p.name for p in out.iterdir()}


def _printed_command(err: str) -> list[str]:
    assert "Traceback" not in err
    last = err.splitlines()[-1]  # the interrupt's one line (warnings about the space may come before)
    assert last.startswith("interrupted"), err
    return shlex.split(last.split("with: ", 1)[1])


def test_a_plan_killed_while_writing_launch_files_finishes_as_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import primus_lang.outputs as outputs

    whole = tmp_path / "whole"
    assert run("plan", TINY, "--out", str(whole), "--budget", "12", "--seed", "4", "--json") == 0
    capsys.readouterr()

    out = tmp_path / "my plan"  # printed quoted, and pasted back as one word
    real, calls = outputs.write_file, []

    def killed_at_the_second(*args: object, **kwargs: object) -> Path:
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(outputs, "write_file", killed_at_the_second)
    assert run("plan", TINY, "--out", str(out), "--budget", "12", "--seed", "4", "--json") == 130
    monkeypatch.undo()
    words = _printed_command(capsys.readouterr().err)
    assert words[:2] == ["primusc", "plan"] and words[words.index("--out") + 1] == str(out)
    assert run(*words[1:]) == 0  # no --force needed: the files it replaces are its own
    capsys.readouterr()
    for name in ("launch.sh", "node.sh", "manifest.json"):
        assert (out / name).read_bytes() == (whole / name).read_bytes()
    assert ".primusc.lock" not in {p.name for p in out.iterdir()}


def test_a_resumed_plan_still_keeps_the_users_own_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert run("plan", TINY, "--out", str(out), "--budget", "6", "--json") == 0
    (out / "notes.txt").write_text("mine")
    assert run("plan", TINY, "--out", str(out), "--budget", "6", "--json", "--resume", str(out / "trace.jsonl")) == 1
    assert "P8003" in capsys.readouterr().err and (out / "notes.txt").read_text() == "mine"


def test_a_plan_interrupted_while_searching_resumes_as_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from primus_lang.search.engine import Search

    real, calls = Search.submit, []

    def interrupted_at_the_fifth(self: Search, proposal: object) -> object:
        calls.append(proposal)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(self, proposal)  # type: ignore[arg-type]

    out = tmp_path / "o'dd"
    monkeypatch.setattr(Search, "submit", interrupted_at_the_fifth)
    assert run("plan", TINY, "--out", str(out), "--budget", "10", "--seed", "2", "--strategy", "random",
               "--var", "checkpoint_dir=/ckpt/a b", "--json") == 130
    monkeypatch.undo()
    words = _printed_command(capsys.readouterr().err)
    assert words[words.index("--resume") + 1] == str(out / "trace.jsonl")
    assert words[words.index("--var") + 1] == "checkpoint_dir=/ckpt/a b"
    assert run(*words[1:]) == 0
    capsys.readouterr()
    assert (out / "manifest.json").is_file() and (out / "report.html").is_file()


@pytest.mark.parametrize("command", [
    ("tune-compare", TINY, "--budgets", "5", "--seeds", "1", "--strategies", "random"),
    ("calibrate", "--runs", "no-such-runs.yaml"),
])
def test_tune_compare_and_calibrate_keep_an_existing_out(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        command: tuple[str, ...]) -> None:
    mine = tmp_path / "mine.md"
    mine.write_text("precious")
    assert run(*command, "--out", str(mine)) == 1  # refused before any work: the runs file is never read
    assert "P8003" in capsys.readouterr().err and mine.read_text() == "precious"
    link = tmp_path / "link.md"
    link.symlink_to(mine)
    assert run(*command, "--out", str(link), "--force") == 1
    assert "P8010" in capsys.readouterr().err and mine.read_text() == "precious"
    same = TINY if command[0] == "tune-compare" else "no-such-runs.yaml"
    assert run(*command, "--out", same, "--force") == 1
    assert "P8012" in capsys.readouterr().err


def test_tune_compare_replaces_its_out_with_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "cmp.md"
    mine.write_text("old")
    assert run("tune-compare", TINY, "--budgets", "5", "--seeds", "1", "--strategies", "random",
               "--out", str(mine), "--force") == 0
    assert "| random |" in mine.read_text()
