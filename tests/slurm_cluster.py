"""A real Slurm on loopback, for the tests that submit what primusc writes.

``slurm_fixture`` (module scope; bind it as ``slurm = slurm_fixture`` in a test module) starts its own slurmctld and slurmd (auth/none, a config in a temp folder,
free ports), waits until the node is idle, and stops the two daemons by their pids. It installs
nothing: without Slurm, or without root (slurmd starts job steps as their user), it skips with the
reason; ``.ci/run`` installs slurm-wlm. ``wait_job`` waits for a job's end state; its timeout is a
hang guard, never a timing check.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

DAEMONS = [shutil.which(name) or "" for name in ("slurmctld", "slurmd")]
CLIENTS = [shutil.which(name) or "" for name in ("sbatch", "scontrol")]

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
# linuxproc: pgid tracking held each batch step ~3 s after its processes ended
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
# the next array task is allocated as soon as one ends, not at the next periodic pass
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0,sched_interval=1
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def free_port() -> int:
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


@pytest.fixture(scope="module", name="slurm")
def slurm_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    if not all(DAEMONS + CLIENTS):
        pytest.skip("Slurm is not installed (apt-get install slurm-wlm); .ci/run installs it")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start job steps")
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(CONF.format(host=host, dir=folder, ctld_port=free_port(), d_port=free_port(),
                                cpus=os.cpu_count() or 1))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    logs = (folder / "slurmctld.out").open("wb"), (folder / "slurmd.out").open("wb")
    ctld = subprocess.Popen([DAEMONS[0], "-D", "-f", str(conf)], env=env, stdout=logs[0], stderr=subprocess.STDOUT)
    slurmd = subprocess.Popen([DAEMONS[1], "-D", "-f", str(conf), "-N", host], env=env, stdout=logs[1],
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300  # a hang guard: daemons start slowly on a loaded machine
        while time.monotonic() < deadline:
            state = subprocess.run([CLIENTS[1], "show", "node", host], env=env, capture_output=True, text=True, timeout=600)
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


def wait_job(job: str, env: dict[str, str], timeout: float = 600) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([CLIENTS[1], "show", "job", job], env=env, capture_output=True, text=True, timeout=600).stdout
        state = next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.5)
    raise AssertionError(f"job {job} did not finish in {timeout} s")
