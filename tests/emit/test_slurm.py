"""A real Slurm runs the emitted sbatch script.

The test starts its own slurmctld and slurmd on loopback (``tests/slurm_cluster.py``), submits the emitted ``launch.sbatch`` with torchrun replaced by a probe that records its argv
and rendezvous environment per task, waits for the job, checks what the candidate needs, and stops
the two daemons by their pids. It installs nothing: without Slurm it skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from primus_lang.emit import EmitContext, emit
from primus_lang.ir import Candidate
from tests.emit.harness import write
from tests.emit.ir_cases import MI325X, TINY, cluster, space
from tests.slurm_cluster import CLIENTS, slurm_fixture, wait_job

slurm = slurm_fixture  # the shared daemons, one pair per module

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

PROBE = """#!{python}
import json, os, sys
KEYS = ["MASTER_ADDR", "MASTER_PORT", "NNODES", "GPUS_PER_NODE", "SLURM_NODEID", "SLURM_PROCID",
        "SLURM_JOB_ID", "CUDA_DEVICE_MAX_CONNECTIONS", "GPU_MAX_HW_QUEUES"]
path = os.path.join(os.environ["PROBE_DIR"], "task-%s.json" % os.environ["SLURM_PROCID"])
with open(path, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": {{k: os.environ.get(k) for k in KEYS}}, "cwd": os.getcwd()}}, f)
"""


@pytest.mark.parametrize("framework", ["megatron", "primus"])
def test_sbatch_runs_one_task_per_node_with_the_rendezvous(
    framework: str, slurm: dict[str, str], tmp_path: Path
) -> None:
    sp = space("tiny", TINY, cluster(MI325X, 1, 2))
    cand = Candidate(tp=2, mbs=1, gbs=8, seq_len=512)
    workdir = tmp_path / "work"
    workdir.mkdir()
    ctx = EmitContext(variables={"slurm_gpus": "none", "time_limit": "00:05:00", "megatron_dir": str(workdir),
                                 "primus_dir": str(workdir), "master_port": "29617"})
    out = write(emit(sp, cand, f"{framework}+slurm", ctx), tmp_path / "out")
    probe_dir = tmp_path / "probe"
    probe_dir.mkdir()
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE.format(python=sys.executable))
    probe.chmod(0o755)
    env = {**os.environ, "SLURM_CONF": slurm["SLURM_CONF"]}
    submit = subprocess.run(
        [CLIENTS[0], "--parsable", f"--chdir={out}",
         # a stray NODE_RANK in the caller must not override the per-task SLURM_NODEID
         f"--export=ALL,PRIMUSC_TORCHRUN={probe},PROBE_DIR={probe_dir},NODE_RANK=5", str(out / "launch.sbatch")],
        env=env, capture_output=True, text=True, check=True,
     timeout=600)
    job = submit.stdout.strip().split(";")[0]
    state = wait_job(job, env)
    logs = "\n".join(p.read_text(errors="replace") for p in out.glob("*.out"))
    assert state == "COMPLETED", logs
    records = [json.loads(p.read_text()) for p in sorted(probe_dir.glob("task-*.json"))]
    assert len(records) == sp.cluster.nodes, logs  # srun: one task per node
    record = records[0]
    argv, env_seen = record["argv"], record["env"]
    assert argv[:10] == ["--nnodes", "1", "--node_rank", "0", "--nproc_per_node", "2",
                         "--master_addr", slurm["host"], "--master_port", "29617"]
    assert env_seen["MASTER_ADDR"] == slurm["host"]  # the allocation's first node, from scontrol
    assert env_seen["MASTER_PORT"] == "29617" and env_seen["NNODES"] == "1" and env_seen["SLURM_NODEID"] == "0"
    assert env_seen["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"  # TP 2 before Blackwell
    assert env_seen["GPU_MAX_HW_QUEUES"] == "2"  # the AMD preset
    assert record["cwd"] == str(workdir)
    if framework == "megatron":
        assert argv[10] == "pretrain_gpt.py"
        assert argv[argv.index("--tensor-model-parallel-size") + 1] == "2"
        assert argv[argv.index("--global-batch-size") + 1] == "8"
    else:
        assert argv[10:] == ["primus/cli/main.py", "train", "pretrain", "--config", str(out / "experiment.yaml")]
