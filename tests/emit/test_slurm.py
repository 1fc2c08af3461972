"""A real Slurm runs the emitted sbatch script.

The test starts its own slurmctld and slurmd on loopback (auth/none, a config in a temp folder, free
ports), submits the emitted ``launch.sbatch`` with torchrun replaced by a probe that records its argv
and rendezvous environment per task, waits for the job, checks what the candidate needs, and stops
the two daemons by their pids. It installs nothing: without Slurm it skips.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from primus_lang.emit import EmitContext, emit
from primus_lang.ir import Candidate
from tests.emit.harness import write
from tests.emit.ir_cases import MI325X, TINY, cluster, space

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

DAEMONS = [shutil.which(name) or "" for name in ("slurmctld", "slurmd")]
CLIENTS = [shutil.which(name) or "" for name in ("sbatch", "scontrol")]

PROBE = """#!{python}
import json, os, sys
KEYS = ["MASTER_ADDR", "MASTER_PORT", "NNODES", "GPUS_PER_NODE", "SLURM_NODEID", "SLURM_PROCID",
        "SLURM_JOB_ID", "CUDA_DEVICE_MAX_CONNECTIONS", "GPU_MAX_HW_QUEUES"]
path = os.path.join(os.environ["PROBE_DIR"], "task-%s.json" % os.environ["SLURM_PROCID"])
with open(path, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": {{k: os.environ.get(k) for k in KEYS}}, "cwd": os.getcwd()}}, f)
"""

CONF = """\
ClusterName=primusctest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/none
CredType=cred/none
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    if not all(DAEMONS + CLIENTS):
        pytest.skip("Slurm is not installed (apt-get install slurm-wlm); .ci/run installs it")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start job steps")
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(CONF.format(host=host, dir=folder, ctld_port=_free_port(), d_port=_free_port(),
                                cpus=os.cpu_count() or 1))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    logs = (folder / "slurmctld.out").open("wb"), (folder / "slurmd.out").open("wb")
    ctld = subprocess.Popen([DAEMONS[0], "-D", "-f", str(conf)], env=env, stdout=logs[0], stderr=subprocess.STDOUT)
    slurmd = subprocess.Popen([DAEMONS[1], "-D", "-f", str(conf), "-N", host], env=env, stdout=logs[1],
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300  # a hang guard: daemons start slowly on a loaded machine
        while time.monotonic() < deadline:
            state = subprocess.run([CLIENTS[1], "show", "node", host], env=env, capture_output=True, text=True)
            if "State=IDLE" in state.stdout:
                break
            time.sleep(0.5)
        else:
            pytest.fail("slurmd never became idle:\n" + (folder / "slurmctld.log").read_text(errors="replace")[-3000:])
        yield {"SLURM_CONF": str(conf), "host": host, "folder": str(folder)}
    finally:
        _stop(slurmd)
        _stop(ctld)
        for log in logs:
            log.close()


def _wait(job: str, env: dict[str, str], timeout: float = 600) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([CLIENTS[1], "show", "job", job], env=env, capture_output=True, text=True).stdout
        state = next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.5)
    raise AssertionError(f"job {job} did not finish in {timeout} s")


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
    )
    job = submit.stdout.strip().split(";")[0]
    state = _wait(job, env)
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
