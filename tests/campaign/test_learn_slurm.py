"""The loop on a real Slurm: plan --shortlist writes a job array, sbatch runs it with a stand-in for
torchrun that logs in Megatron-LM's format at the speed of a hidden "true" profile, and
`primusc learn` recovers that profile well enough to pick the truly fastest candidate.

The daemons are the ones tests/slurm_cluster.py starts (slurmctld and slurmd on loopback,
auth/none); without Slurm or root the test skips with the reason. Completion is waited on with a
hang guard only; nothing depends on how long a job takes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.campaign.loop import SPACE, learn_and_check, plan_on_learned, torchrun, true_best, write_truth
from tests.slurm_cluster import CLIENTS, slurm_fixture, wait_job

slurm = slurm_fixture  # the shared daemons, one pair per module

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_a_slurm_job_array_campaign_teaches_a_profile_that_picks_the_true_best(
        slurm: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+slurm", "--shortlist", "6",
                 "--var", "slurm_gpus=none", "--var", f"megatron_dir={tmp_path}", "--var", "master_port=29631"]) == 0
    campaign = out / "campaign"
    manifest = json.loads((campaign / "manifest.json").read_text())
    assert manifest["bounds"]["iterations"] == 30 and len(manifest["jobs"]) == 6
    env = {**os.environ, "SLURM_CONF": slurm["SLURM_CONF"]}
    truth = write_truth(tmp_path, campaign)
    submit = subprocess.run(
        [CLIENTS[0], "--parsable", f"--chdir={campaign}",
         f"--export=ALL,PRIMUSC_TORCHRUN={torchrun()},FAKE_TRUTH={truth}", str(campaign / "campaign.sbatch")],
        env=env, capture_output=True, text=True, check=True, timeout=600)
    array = submit.stdout.strip().split(";")[0]
    for index in range(6):
        state = wait_job(f"{array}_{index}", env)
        log = campaign / f"job-{index}" / "train.log"
        assert state == "COMPLETED", log.read_text(errors="replace") if log.exists() else f"no {log}"
    text = (campaign / "job-0" / "train.log").read_text()
    assert "elapsed time per iteration (ms)" in text and "tokens per GPU" not in text  # Megatron's format
    result = learn_and_check(campaign, capsys)
    assert plan_on_learned(tmp_path, campaign / "site.prx", str(result["name"]), capsys) == true_best()


def test_jobs_that_fail_on_slurm_are_reported_by_cause_and_the_baseline_compared(
        slurm: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31's acceptance: on the real Slurm, jobs that run out of memory, time out and fail to start
    (their logs as such jobs print them) are reported with how they ended and never ranked; the measured
    ones are, with the space's own recipe compared."""
    space = tmp_path / "space.prx"
    space.write_text(SPACE.read_text().replace("  maximize tokens_per_gpu", "  baseline { tp = 4; mbs = 1 }\n"
                                                                              "  maximize tokens_per_gpu"))
    out = tmp_path / "plan"
    assert main(["plan", str(space), "--out", str(out), "--target", "megatron+slurm", "--shortlist", "6",
                 "--var", "slurm_gpus=none", "--var", f"megatron_dir={tmp_path}", "--var", "master_port=29632"]) == 0
    campaign = out / "campaign"
    manifest = json.loads((campaign / "manifest.json").read_text())
    base = next(j["index"] for j in manifest["jobs"] if j["baseline"])
    failing = [j["index"] for j in manifest["jobs"] if j["index"] != base][1:4]
    endings = dict(zip((str(i) for i in failing), ("oom", "timeout", "start"), strict=True))
    env = {**os.environ, "SLURM_CONF": slurm["SLURM_CONF"]}
    truth = write_truth(tmp_path, campaign)
    ends = tmp_path / "endings.json"
    ends.write_text(json.dumps(endings))
    submit = subprocess.run(
        [CLIENTS[0], "--parsable", f"--chdir={campaign}", f"--export=ALL,PRIMUSC_TORCHRUN={torchrun()},"
         f"FAKE_TRUTH={truth},FAKE_ENDINGS={ends}", str(campaign / "campaign.sbatch")],
        env=env, capture_output=True, text=True, check=True, timeout=600)
    array = submit.stdout.strip().split(";")[0]
    for index in range(6):
        state = wait_job(f"{array}_{index}", env)
        assert (state == "COMPLETED") == (index not in failing), (index, state)
    capsys.readouterr()
    assert main(["learn", str(campaign), "--partial", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {f["index"]: f["ended"] for f in result["failed"]} == dict(
        zip(failing, ("out of memory", "timed out", "failed to start"), strict=True))
    assert sorted(r["index"] for r in result["ranked"]) == sorted(set(range(6)) - set(failing))
    assert any("over the baseline" in n for n in result["notes"])
