"""A real Slurm runs the example sites' sbatch scripts with the container runtime replaced by probes.

pyxis is an srun plugin, so a fake ``srun`` first on PATH records its arguments, drops the
``--container-*`` options and calls the real srun; ``docker`` is a fake that records its arguments
and runs the command after the image on the node. torchrun is the probe of ``test_slurm.py``'s
kind, recording the argv and the environment Megatron and Primus read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from primus_lang.emit import EmitContext, emit
from primus_lang.ir import Candidate
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from tests.emit.harness import write
from tests.emit.ir_cases import H100, MI325X, TINY, cluster, space
from tests.slurm_cluster import CLIENTS, slurm_fixture, wait_job

slurm = slurm_fixture

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

TORCHRUN = """#!{python}
import json, os, sys
path = os.path.join(os.environ["PROBE_DIR"], "torchrun-%s.json" % os.environ["SLURM_PROCID"])
with open(path, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}, f)
"""

FAKE_SRUN = """#!{python}
import json, os, sys
with open(os.path.join(os.environ["PROBE_DIR"], "srun.json"), "w") as f:
    json.dump(sys.argv[1:], f)
args = [a for a in sys.argv[1:] if not a.startswith("--container-")]
os.execv({srun!r}, [{srun!r}, *args])
"""

FAKE_DOCKER = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.path.join(os.environ["PROBE_DIR"], "docker-%s.json" % os.environ["SLURM_PROCID"]), "w") as f:
    json.dump(args, f)
start = args.index("bash")  # the image is the word before the command
os.chdir(args[args.index("-w") + 1])
os.execvp(args[start], args[start:])
"""


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _run(files: dict[str, str], tmp_path: Path, slurm: dict[str, str], extra_env: dict[str, str]) -> dict[str, object]:
    out = write(files, tmp_path / "out")
    probes = tmp_path / "probe"
    bindir = tmp_path / "bin"
    probes.mkdir()
    bindir.mkdir()
    _script(tmp_path / "torchrun", TORCHRUN.format(python=sys.executable))
    _script(bindir / "srun", FAKE_SRUN.format(python=sys.executable, srun=shutil.which("srun")))
    _script(bindir / "docker", FAKE_DOCKER.format(python=sys.executable))
    env = {**os.environ, "SLURM_CONF": slurm["SLURM_CONF"], "PATH": f"{bindir}:{os.environ['PATH']}", **extra_env}
    exports = ",".join(["ALL", f"PRIMUSC_TORCHRUN={tmp_path / 'torchrun'}", f"PROBE_DIR={probes}"])
    submit = subprocess.run([CLIENTS[0], "--parsable", f"--chdir={out}", f"--export={exports}",
                             str(out / "launch.sbatch")], env=env, capture_output=True, text=True, check=True, timeout=600)
    state = wait_job(submit.stdout.strip().split(";")[0], env)
    logs = "\n".join(p.read_text(errors="replace") for p in out.glob("*.out"))
    assert state == "COMPLETED", logs
    record = json.loads((probes / "torchrun-0.json").read_text())
    record["probes"] = {p.name: json.loads(p.read_text()) for p in probes.glob("*.json")}
    record["out"] = out
    return record


def _site_space(name: str, gpu: object, workdir: Path) -> tuple[object, Candidate]:
    """The example's site and run block on the loopback cluster (one node, two GPUs, no accounting)."""
    example = load_space(data_dir("examples") / "sites" / f"{name}.prx")
    assert example.site is not None
    site = attrs.evolve(example.site, partition="", account="", qos="", gpu_request="none",
                        megatron_dir=str(workdir), primus_dir=str(workdir))
    sp = attrs.evolve(space("tiny", TINY, cluster(gpu, 1, 2)), site=site, run=example.run)  # type: ignore[arg-type]
    return sp, Candidate(tp=2, mbs=1, gbs=8, seq_len=512)


def test_pyxis_site_runs(slurm: dict[str, str], tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    sp, cand = _site_space("llama3_70b_h100_pyxis", H100, workdir)
    files = emit(sp, cand, "megatron+slurm", EmitContext(variables={"time_limit": "00:05:00"}))  # type: ignore[arg-type]
    record = _run(files, tmp_path, slurm, {"WANDB_API_KEY": "k-123"})
    srun = record["probes"]["srun.json"]  # type: ignore[index]
    assert any(a.endswith(",/lustre/fsw/datasets:/data:ro,/lustre/fsw/checkpoints:/checkpoints")
               for a in srun if a.startswith("--container-mounts="))
    assert "--container-image=nvcr.io#nvidia/nemo:25.09" in srun and "--container-env=WANDB_API_KEY" in srun
    env, argv = record["env"], record["argv"]
    assert env["NCCL_SOCKET_IFNAME"] == "ib0" and env["NCCL_IB_QPS_PER_CONNECTION"] == "2"  # type: ignore[index]
    assert env["NCCL_IB_HCA"].startswith("mlx5_0,") and env["WANDB_API_KEY"] == "k-123"  # type: ignore[index]
    assert record["cwd"] == str(workdir)
    i = argv.index("--data-path")  # type: ignore[union-attr]
    assert argv[i + 1:i + 5] == ["0.7", "/data/redpajama/arxiv_text_document", "0.3",  # type: ignore[index]
                                 "/data/redpajama/book_text_document"]
    assert argv[argv.index("--tokenizer-model") + 1] == "meta-llama/Meta-Llama-3-70B"  # type: ignore[union-attr,index]
    assert argv[argv.index("--tokenizer-type") + 1] == "HuggingFaceTokenizer"  # type: ignore[union-attr,index]
    assert argv[argv.index("--save") + 1] == "/checkpoints/llama3_70b"  # type: ignore[union-attr,index]


def test_docker_site_runs_primus(slurm: dict[str, str], tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    sp, cand = _site_space("llama3_1_8b_mi325x_docker", MI325X, workdir)
    files = emit(sp, cand, "primus+slurm", EmitContext(variables={"time_limit": "00:05:00"}))  # type: ignore[arg-type]
    record = _run(files, tmp_path, slurm, {"HF_TOKEN": "hf-9"})
    docker = record["probes"]["docker-0.json"]  # type: ignore[index]
    assert docker[:3] == ["run", "--name", f"primusc-{record['env']['SLURM_JOB_ID']}"]  # type: ignore[index]
    assert docker[3] == "--rm" and "rocm/primus:v26.5" in docker
    for pair in (["-v", "/shared/datasets:/data:ro"], ["-v", "/shared/checkpoints:/checkpoints"], ["-e", "HF_TOKEN"],
                 ["--device=/dev/infiniband", "--cap-add=IPC_LOCK"]):
        assert any(docker[i:i + 2] == pair for i in range(len(docker)))
    env = record["env"]
    assert env["NCCL_IB_GID_INDEX"] == "3" and env["HF_TOKEN"] == "hf-9"  # type: ignore[index]
    assert env["NCCL_SOCKET_IFNAME"] == "enp193s0f0" and env["GPU_MAX_HW_QUEUES"] == "2"  # type: ignore[index]
    experiment = (record["out"] / "experiment.yaml").read_text()  # type: ignore[operator]
    assert "train_data_path: 0.5 /data/fineweb/text_document 0.5 /data/stack/text_document" in experiment
    assert "tokenizer_model: meta-llama/Llama-3.1-8B" in experiment
