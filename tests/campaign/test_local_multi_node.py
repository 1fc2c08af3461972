"""A local campaign of a multi-node space (a trial): its driver runs on every node, says so, and each node
saves its own log, as the Kubernetes driver saves the printing pod's and rank 0's apart: on a shared folder
every node had truncated the one `job-<i>/train.log`, losing node 0's arguments block."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.resources import data_dir
from tests.campaign.loop import SPACE


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_each_node_of_a_local_campaign_saves_its_own_log(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    space = data_dir("examples") / "llama3_70b_h100.prx"  # 8 nodes
    assert main(["plan", str(space), "--target", "megatron+local", "--budget", "6", "--shortlist", "2",
                 "--out", str(out)]) == 0
    campaign = out / "campaign"
    driver = campaign / "campaign.sh"
    assert "NODE_RANK=0 MASTER_ADDR=" in driver.read_text()
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    assert [j.get("first_log") for j in jobs] == ["job-0/rank0.log", "job-1/rank0.log"]
    for job in jobs:  # each job's launch stands in for torchrun: it says which node ran it
        (campaign / job["folder"] / "launch.sh").write_text('echo "node $NODE_RANK of job $PRIMUSC_CAMPAIGN_JOB"\n')

    def run(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(driver)], env={**os.environ, **env}, capture_output=True, text=True,
                              timeout=60, check=False)

    bare = {k: v for k, v in os.environ.items() if k not in ("NODE_RANK", "MASTER_ADDR")}
    refused = subprocess.run(["bash", str(driver)], env=bare, capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 2 and "NODE_RANK (0..7) and MASTER_ADDR" in refused.stderr
    assert run(NODE_RANK="8", MASTER_ADDR="n0").returncode == 2
    for rank in (0, 3, 7):
        assert run(NODE_RANK=str(rank), MASTER_ADDR="n0").returncode == 0
    for name, rank in (("rank0.log", 0), ("node3.log", 3), ("train.log", 7)):
        assert (campaign / "job-1" / name).read_text() == f"node {rank} of job 1\n"


def test_a_single_node_or_slurm_campaign_lists_no_rank_zero_log(tmp_path: Path) -> None:
    # one node prints both; Slurm's --output gathers every node's output into one file
    for space, target in ((SPACE, "megatron+local"), (data_dir("examples") / "llama3_70b_h100.prx", "megatron+slurm")):
        out = tmp_path / target
        assert main(["plan", str(space), "--target", target, "--budget", "6",
                     "--shortlist", "1", "--out", str(out)]) == 0
        assert "first_log" not in json.loads((out / "campaign" / "manifest.json").read_text())["jobs"][0]
