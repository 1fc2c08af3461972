"""`primusc diff --rev A --rev B FILE` on a throwaway git repository: the space and its relative
imports are read as they were at each revision, stdlib imports from the installed stdlib."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from primus_lang.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MODELS = "import models.llama3 (llama3_1_8b)\n\nmodel small = llama3_1_8b { num_layers = 16 }\n"
SPACE = """import "./lib/models.prx" (small)
import clusters.amd (mi325x_x8)

space s on mi325x_x8 {
  model = small
  gbs = 128
  tp : 1 | 2 | 4 | 8
  pp : 1 | 2
  mbs : 1 | 2
  fits memory
  maximize tokens_per_gpu
  strategy exhaustive
}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                          cwd=repo, check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "models.prx").write_text(MODELS)
    (tmp_path / "space.prx").write_text(SPACE)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "lib" / "models.prx").write_text(MODELS.replace("num_layers = 16", "num_layers = 32"))
    (tmp_path / "space.prx").write_text(SPACE.replace("tp : 1 | 2 | 4 | 8", "tp : 1 | 2"))
    git(tmp_path, "commit", "-q", "-am", "two")
    # uncommitted: neither revision may see it
    (tmp_path / "lib" / "models.prx").write_text(MODELS.replace("num_layers = 16", "num_layers = 8"))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_two_revisions_report_the_space_counts_and_winner(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", "--rev", "HEAD~1", "--rev", "HEAD", str(repo / "space.prx"),
                         "--budget", "30", "--json")
    assert code == 0, err
    data = json.loads(out)
    changed = {c["what"]: (c["a"], c["b"]) for c in data["changes"]}
    assert changed["axis `tp`"] == ("1 | 2 | 4 | 8", "1 | 2")
    assert changed["model.num_layers"] == ("16", "32")  # the relative import, read at each revision
    a, b = data["a"], data["b"]
    assert (a["raw"], b["raw"]) == (16, 8)
    assert a["legal"] >= b["legal"] > 0 and a["fitting"] >= 1 and b["fitting"] >= 1
    assert a["winner"] and b["winner"] and a["projection"]["tokens_per_gpu"] > 0
    assert a["label"].startswith("HEAD~1 (") and b["label"].startswith("HEAD (")


def test_one_revision_compares_with_the_work_tree_and_markdown_reads(repo: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"), "--budget", "30", "--markdown")
    assert code == 0
    assert "→ work tree" in out and "model.num_layers: 32 → 8" in out
    assert "| raw points | 8 | 8 | 0 |" in out and "tokens/s/GPU" in out
    code, out, _ = run(capsys, "diff", "--rev", "HEAD~1", str(repo / "space.prx"), "--budget", "30")
    assert code == 0 and "changes in the space" in out and "throughput" in out


def test_a_bad_revision_or_a_file_outside_git_is_p8051(repo: Path, tmp_path_factory: pytest.TempPathFactory,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "--rev", "no-such-branch", str(repo / "space.prx"))
    assert code == 1 and "P8051" in err
    code, _, err = run(capsys, "diff", "--rev=--upload-pack=x", str(repo / "space.prx"))
    assert code == 1 and "P8051" in err
    (repo / "new.prx").write_text(SPACE)
    code, _, err = run(capsys, "diff", "--rev", "HEAD~1", str(repo / "new.prx"))
    assert code == 1 and "P8051" in err and "does not exist" in err
    outside = tmp_path_factory.mktemp("nogit") / "space.prx"
    outside.write_text(SPACE)
    code, _, err = run(capsys, "diff", "--rev", "HEAD", str(outside))
    assert code == 1 and "P8051" in err


def test_an_error_at_a_revision_names_the_revision(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "space.prx").write_text(SPACE.replace("gbs = 128", "gbs = 128\n  tpp = 2"))
    git(repo, "commit", "-q", "-am", "three")
    code, _, err = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"))
    assert code == 1 and "HEAD:space.prx:7:3" in err and "primusc-rev-" not in err


def test_a_file_without_a_space_at_a_revision_is_named_by_the_revision(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The message named the temporary checkout (`primusc-rev-.../lib/models.prx defines no space`)."""
    code, _, err = run(capsys, "diff", "--rev", "HEAD~1", "--rev", "HEAD", str(repo / "lib" / "models.prx"))
    assert code == 1 and "`HEAD~1:lib/models.prx` defines no space" in err and "primusc-rev-" not in err


def test_the_winner_at_a_revision_is_the_one_plan_chooses_under_the_space_s_budget(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The diff named the search's best projection, which plan's tie rule may set aside, from a search of
    200 evaluations whatever the space's budget."""
    budgeted = SPACE.replace("  strategy exhaustive\n", "  precision : bf16 | fp8\n  budget 7 evals\n")
    (repo / "space.prx").write_text(budgeted)
    git(repo, "commit", "-q", "-am", "three")
    code, out, err = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"))
    assert code == 0, err
    assert "a search of at most 7 evaluations" in out
    code, out, err = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"), "--json")
    winner = json.loads(out)["b"]["winner"]
    code, out, err = run(capsys, "plan", str(repo / "space.prx"), "--json", "--no-emit", "--out", str(repo / "p"))
    assert code == 0, err
    plan = json.loads(out)
    assert winner == plan["winner"] == plan["ranked"][0]["label"]


def test_revisions_and_points_do_not_mix_p8052(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"), "tp=1", "tp=2")
    assert code == 1 and "P8052" in err
    code, _, err = run(capsys, "diff", "--rev", "A", "--rev", "B", "--rev", "C", str(repo / "space.prx"))
    assert code == 1 and "P8052" in err
    code, _, err = run(capsys, "diff", "--rev", "HEAD", str(repo / "space.prx"), "--budget", "0")
    assert code == 1 and "P8052" in err


def test_two_points_still_diff_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "llama3_1_8b_mi325x.prx"
    code, out, err = run(capsys, "diff", str(example), "tp=1", "tp=2", "--json")
    assert code == 0, err
    assert "knobs" in json.loads(out)


def test_a_changed_quantity_reads_in_its_unit_and_the_winner_s_move_is_said(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "space.prx").write_text(SPACE.replace("import clusters.amd (mi325x_x8)", "import clusters.amd (mi300x_x8)")
                                    .replace("on mi325x_x8", "on mi300x_x8"))
    git(repo, "commit", "-q", "-am", "three")
    code, out, err = run(capsys, "diff", "--rev", "HEAD~1", "--rev", "HEAD", str(repo / "space.prx"), "--json")
    assert code == 0, err
    data = json.loads(out)
    changed = {c["what"]: (c["a"], c["b"]) for c in data["changes"]}
    assert changed["cluster.gpu.hbm_capacity"] == ("256 GiB", "192 GiB")  # not 274877906944 → 206158430208
    assert changed["cluster.gpu.hbm_bandwidth"][1].endswith(" GB/s")
    assert all(len(v) < 100 for pair in changed.values() for v in pair if v)  # provenance notes are summarized
    moved = data["winner_changes"]
    assert (data["a"]["winner"] == data["b"]["winner"]) == (moved == [])


def test_a_side_without_a_legal_point_says_why(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "space.prx").write_text(SPACE.replace("tp : 1 | 2 | 4 | 8", "tp : 3 | 5"))
    git(repo, "commit", "-q", "-am", "three")
    code, out, err = run(capsys, "diff", "--rev", "HEAD~1", "--rev", "HEAD", str(repo / "space.prx"))
    assert code == 0, err
    assert "no legal point: TP·PP·CP" in out  # the rule that removes every point, not "no legal point" alone
