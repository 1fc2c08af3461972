"""`primusc plan --shortlist K`: the campaign beside the winner's launch files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.outputs import LEDGER_NAME

SPACE = Path(__file__).parent / "space.prx"
SHELLCHECK = shutil.which("shellcheck")


def plan(tmp_path: Path, *extra: str, out: str = "plan") -> Path:
    code = main(["plan", str(SPACE), "--out", str(tmp_path / out), *extra])
    assert code == 0
    return tmp_path / out


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            # the record of what a plan wrote lists the trace's digest (its timings) and the campaign's files
            if p.is_file() and p.name not in ("trace.jsonl", "report.html", LEDGER_NAME)}


@pytest.mark.parametrize(("target", "driver"), [("megatron+slurm", "campaign.sbatch"), ("primus+local", "campaign.sh"),
                                                 ("megatron+k8s", "campaign.sh")])
def test_a_shortlist_writes_one_job_per_candidate_tied_group_first(tmp_path: Path, target: str, driver: str) -> None:
    out = plan(tmp_path, "--shortlist", "4", "--target", target, "--var", "container_image=reg.example/t:1",
               "--var", "train_iters=500000", "--var", "checkpoint_dir=/ckpt")
    root = out / "campaign"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["driver"] == driver and (root / driver).exists()
    jobs = manifest["jobs"]
    assert [j["index"] for j in jobs] == [0, 1, 2, 3]
    tied = [j["tied"] for j in jobs]
    assert tied == sorted(tied, reverse=True)  # the tied group comes first
    assert jobs[0]["label"] == json.loads((out / "manifest.json").read_text())["label"]  # the winner is job 0
    band = jobs[0]["projected"]["band"]
    assert band["tokens_per_gpu"][0] < jobs[0]["projected"]["tokens_per_gpu"] < band["tokens_per_gpu"][1]
    # bounded: the site's run shape (a long schedule, checkpoints) never reaches a measuring job
    assert manifest["bounds"]["iterations"] == 30 and manifest["variables"]["checkpoint_dir"] == ""
    assert manifest["bounds"]["nodes_per_job"] == 1 and manifest["bounds"]["time_limit"]
    for job in jobs:
        per_job = json.loads((root / job["folder"] / "manifest.json").read_text())
        assert per_job["label"] == job["label"] and per_job["variables"]["train_iters"] == "30"
    assert manifest["profile"] == {"name": "h200_calibrated", "module": "hardware.calibrated"}


def test_campaign_variables_override_the_bounds(tmp_path: Path) -> None:
    out = plan(tmp_path, "--shortlist", "2", "--var", "slurm_gpus=none", "--campaign-var", "train_iters=50",
               "--campaign-var", "time_limit=00:40:00")
    manifest = json.loads((out / "campaign" / "manifest.json").read_text())
    assert manifest["bounds"]["iterations"] == 50 and manifest["bounds"]["time_limit"] == "00:40:00"
    assert manifest["bounds"]["node_hours_at_most"] == pytest.approx(2 * 40 / 60, abs=1e-3)
    text = (out / "campaign" / "campaign.sbatch").read_text()
    assert "#SBATCH --array=0-1%1" in text and "#SBATCH --time=00:40:00" in text
    assert "--gpus-per-node" not in text  # the site's slurm_gpus does reach the campaign


def test_the_campaign_is_deterministic_and_a_plain_plan_unchanged(tmp_path: Path) -> None:
    a = plan(tmp_path, "--shortlist", "3", out="a")
    b = plan(tmp_path, "--shortlist", "3", out="b")
    assert files(a / "campaign") == files(b / "campaign")
    plain = plan(tmp_path, out="plain")
    assert not (plain / "campaign").exists()
    assert {k: v for k, v in files(a).items() if not k.startswith("campaign/")} == files(plain)


def test_scripts_parse_and_dry_run_without_executing_values(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"/w/$(touch {marker})`touch {marker}`;x'"
    for target in ("megatron+slurm", "megatron+local"):
        out = plan(tmp_path, "--shortlist", "2", "--target", target, "--var", f"megatron_dir={hostile}",
                   out=target.replace("+", "-"))
        root = out / "campaign"
        driver = root / ("campaign.sbatch" if target.endswith("slurm") else "campaign.sh")
        subprocess.run(["bash", "-n", str(driver)], check=True, timeout=600)
        if SHELLCHECK:
            subprocess.run([SHELLCHECK, "-x", str(driver)], check=True, timeout=600)
        shown = subprocess.run(["bash", str(driver), "--dry-run"], cwd=root, capture_output=True, text=True, check=True, timeout=600)
        assert "job 0:" in shown.stdout and "job 1:" in shown.stdout and "pretrain_gpt.py" in shown.stdout
    assert not marker.exists()


@pytest.mark.parametrize("extra", [["--shortlist", "0"], ["--shortlist", "65"], ["--shortlist", "2", "--no-emit"],
                                   ["--campaign-var", "train_iters=5"]])
def test_a_shortlist_that_cannot_be_written_is_p8040(tmp_path: Path, extra: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SPACE), "--out", str(tmp_path / "p"), *extra]) == 1
    assert "P8040" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()  # refused before the search


def test_a_bad_campaign_variable_is_refused_before_the_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SPACE), "--out", str(tmp_path / "p"), "--shortlist", "2",
                 "--campaign-var", "train_iters=lots"]) == 1
    assert "P7004" in capsys.readouterr().err


def test_the_shortlist_spreads_over_layouts_and_measures_the_baseline(tmp_path: Path) -> None:
    """Issue 31: four of 23 tied candidates that differed only in recompute depth were shortlisted and the
    space's recipe left out, so the campaign could not say whether the plan beats it."""
    text = SPACE.read_text().replace("  maximize tokens_per_gpu",
                                     "  baseline { tp = 4; mbs = 1; recompute = full(layers: 2) }\n"
                                     "  maximize tokens_per_gpu")
    space = tmp_path / "with_baseline.prx"
    space.write_text(text)
    assert main(["plan", str(space), "--out", str(tmp_path / "p"), "--shortlist", "4", "--target",
                 "primus+local"]) == 0
    jobs = json.loads((tmp_path / "p" / "campaign" / "manifest.json").read_text())["jobs"]
    assert len(jobs) == 4
    marked = [j for j in jobs if j["baseline"]]
    assert len(marked) == 1 and marked[0]["candidate"]["tp"] == 4 and marked[0]["candidate"]["mbs"] == 1
    others = [j["candidate"] for j in jobs if not j["baseline"]]
    layouts = {(c["tp"], c["mbs"], c["recompute"]["kind"]) for c in others}
    assert len(layouts) == len(others)  # no two picks are one layout at two recompute depths


def test_a_launch_projected_past_the_time_limit_is_warned_and_exits_before_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31: 2,000 iterations at 5.34 s against a 2 h limit were written with no word and no exit option."""
    out = tmp_path / "p"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+slurm", "--var", "train_iters=100000",
                 "--var", "time_limit=02:00:00"]) == 0
    err = capsys.readouterr().err
    assert "W7022" in err and "over the time limit of 02:00:00" in err
    assert "--exit-duration-in-mins 108" in (out / "node.sh").read_text()  # 120 min less a tenth
    assert main(["plan", str(SPACE), "--out", str(tmp_path / "q"), "--target", "megatron+slurm"]) == 0
    assert "W7022" not in capsys.readouterr().err
    assert main(["plan", str(SPACE), "--out", str(tmp_path / "r"), "--target", "megatron+local"]) == 0
    assert "exit-duration" not in (tmp_path / "r" / "node.sh").read_text()  # no scheduler kills it


def test_the_report_and_the_terminal_mean_one_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31: the HTML report's baseline card showed the planner's start while the terminal compared
    with the space's recipe."""
    space = tmp_path / "with_baseline.prx"
    space.write_text(SPACE.read_text().replace("  maximize tokens_per_gpu",
                                               "  baseline { tp = 4; mbs = 1 }\n  maximize tokens_per_gpu"))
    assert main(["plan", str(space), "--out", str(tmp_path / "p")]) == 0
    assert "baseline (the space's recipe): tp=4" in capsys.readouterr().out
    page = (tmp_path / "p" / "report.html").read_text()
    assert "baseline (the space&#x27;s recipe) · " in page and "<code>tp=4</code>" in page


def test_a_campaign_time_limit_too_short_for_a_job_to_start_is_said(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's `--campaign-var time_limit=00:05:00` (and 00:00:30) wrote every job to be killed before its first
    iteration without a word; emit's own warning said a 30-second run stops itself after a minute."""
    out = tmp_path / "plan"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+slurm", "--shortlist", "2",
                 "--campaign-var", "time_limit=00:00:30"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "W7022" in err and "the time limit of 00:00:30 (the run stops itself after 1 min) is shorter than the 10 min" in err
    # 12 minutes stop the run after 10, before a job given 10 to start has stepped (the re-trial's find)
    assert main(["plan", str(SPACE), "--out", str(tmp_path / "p2"), "--target", "megatron+slurm", "--shortlist", "2",
                 "--campaign-var", "time_limit=00:12:00"]) == 0
    assert "ends before it logs an iteration" in " ".join(capsys.readouterr().err.split())
