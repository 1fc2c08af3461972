"""A benchmark campaign runs under a real Slurm on CPUs, and plan's hybrid oracle reads what it merged.

The loopback Slurm of ``tests/slurm_cluster.py`` has one node, so the job's "two nodes" are two
tasks on it: the collectives between them run over gloo with 2 ranks, then the first task runs the
kernel harness on the listed kernels (a small budget) and the collectives inside its node. Measured
values are only checked to be positive and finite; the job's wait is a hang guard.
"""

from __future__ import annotations

import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.slurm_cluster import CLIENTS, free_port, slurm_fixture, wait_job

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
slurm = slurm_fixture

SPACE = """
import hardware.nvidia (h200)
model micro {
  num_layers = 4; hidden = 64; ffn_hidden = 128; heads = 4; kv_heads = 2; head_dim = 16
  vocab = 256; seq_len = 64; max_position_embeddings = 128
}
cluster c { gpu = h200; nodes = 1; gpus_per_node = 2 }
space s on c {
  model = micro; seq_len = 64; gbs = 4
  tp : 1 | 2
}
"""


def test_a_campaign_runs_under_slurm_merges_and_feeds_the_hybrid_oracle(
    slurm: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    job = tmp_path / "job dir"  # a space in the path: everything that reaches a shell is quoted
    primusc = Path(sys.executable).parent / "primusc"
    # the rendezvous port is a free one: a fixed port fails the job whenever another suite holds it
    variables = {"nodes": "1", "tasks_per_node": "2", "max_bytes": "16384", "budget_s": "0.005",
                 "time_limit": "00:10:00", "master_port": str(free_port()), "primusc": str(primusc), "slurm_gpus": "none"}
    argv = ["bench", str(space), "--job", "slurm", "--out", str(job), "--device", "cpu"]
    argv += [a for name, value in variables.items() for a in ("--var", f"{name}={value}")]
    assert main(argv) == 0
    capsys.readouterr()
    env = {**os.environ, "SLURM_CONF": slurm["SLURM_CONF"]}
    submit = subprocess.run([CLIENTS[0], "--parsable", f"--chdir={job}", str(job / "bench.sbatch")],
                            env=env, capture_output=True, text=True, check=True, timeout=600)
    state = wait_job(submit.stdout.strip().split(";")[0], env)
    logs = "\n".join(p.read_text(errors="replace") for p in job.glob("*.out"))
    assert state == "COMPLETED", logs
    campaign = job / "profile.sqlite"
    with sqlite3.connect(campaign) as conn:
        seconds = [r[0] for r in conn.execute("SELECT seconds FROM kernels UNION ALL SELECT seconds FROM collectives")]
        backends = {r[0] for r in conn.execute("SELECT DISTINCT backend FROM collectives")}
        facts = dict(conn.execute("SELECT fact, value FROM provenance"))
    assert seconds and all(math.isfinite(s) and s > 0 for s in seconds)
    assert backends == {"gloo", "gloo+net"}  # inside the node, and between the job's two ranks
    assert facts["backend"] == "gloo" and facts["runtime"] == "cpu" and facts["torch"]

    db = tmp_path / "local.sqlite"
    assert main(["bench", "--merge", str(campaign), "--db", str(db)]) == 0
    first = capsys.readouterr().out
    assert "(0 already present)" in first
    assert main(["bench", "--merge", str(campaign), "--db", str(db)]) == 0
    assert "added 0 kernels, 0 collectives, 0 blocks" in capsys.readouterr().out

    # read back under the campaign's target name, as on a machine that has no such device
    assert main(["project", str(space), "--oracle", "hybrid", "--device", "h200", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    timings = out[out.index("oracle hybrid: op timings"):]
    measured = int(timings.split(" measured")[0].split()[-1])
    assert measured > 0, out

    from primus_lang.bench.oracle import BenchmarkOracle, make_oracle
    from primus_lang.ir import Candidate
    from primus_lang.lower import load_space
    from primus_lang.project import project
    sp = load_space(str(space), None)
    oracle = make_oracle("hybrid", "h200", str(db), cluster=sp.cluster)
    result = project(sp.model, sp.cluster, Candidate(tp=2, mbs=1, gbs=4, seq_len=64), sp.settings, oracle=oracle)
    assert math.isfinite(result.step_time) and result.step_time > 0
    assert isinstance(oracle, BenchmarkOracle)
    sources = oracle.sources
    collectives = [source for key, source in sources.items() if key[0] == "collective"]
    assert "measured" in collectives, sources  # the TP all-reduce, read off the gloo points
