"""Every emitted shell script passes `bash -n` and shellcheck, and its --dry-run prints each rank."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.emit.harness import SHELLCHECK, all_cases, emissions, write

SCRIPTS = [
    pytest.param(files, path, id=f"{case}-{target.replace('+', '_')}-{path}")
    for case, target, files in emissions()
    for path in files
    if path.endswith((".sh", ".sbatch"))
]


@pytest.mark.parametrize(("files", "path"), SCRIPTS)
def test_bash_parses(files: dict[str, str], path: str, tmp_path: Path) -> None:
    write(files, tmp_path)
    result = subprocess.run(["bash", "-n", str(tmp_path / path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (apt-get install shellcheck)")
@pytest.mark.parametrize("case", sorted(all_cases()))
def test_shellcheck_clean(case: str, tmp_path: Path) -> None:
    """One shellcheck run per case over every target's scripts (its start-up dominates the cost)."""
    scripts = []
    for c, target, files in emissions():
        if c == case:
            folder = write(files, tmp_path / target.replace("+", "_"))
            scripts += [str(folder / p) for p in files if p.endswith((".sh", ".sbatch"))]
    assert scripts
    result = subprocess.run([str(SHELLCHECK), "--shell=bash", "--severity=style", *scripts],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout


def dry_run(folder: Path, script: str, env: dict[str, str] | None = None) -> list[str]:
    result = subprocess.run(
        ["bash", str(folder / script), "--dry-run"], capture_output=True, text=True, env=env or {"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


LAUNCH = {"slurm": "launch.sbatch", "local": "launch.sh", "k8s": "node.sh"}


@pytest.mark.parametrize(
    ("case", "target", "files"),
    [pytest.param(c, t, f, id=f"{c}-{t.replace('+', '_')}") for c, t, f in emissions()],
)
def test_dry_run_prints_every_rank(case: str, target: str, files: dict[str, str], tmp_path: Path) -> None:
    space, cand = all_cases()[case]
    cluster = space.cluster
    lines = dry_run(write(files, tmp_path), LAUNCH[target.split("+")[1]])
    ranks = [line for line in lines if line.startswith("rank ")]
    # k8s prints one pod's share (node rank 0); the others print every node's.
    expected = cluster.gpus_per_node if target.endswith("k8s") else cluster.world
    assert len(ranks) == expected
    assert ranks[0].startswith("rank 0: env RANK=0 LOCAL_RANK=0 ")
    argv = shlex.split(ranks[-1].split(":", 1)[1])
    assert f"WORLD_SIZE={cluster.world}" in argv
    if target.startswith("megatron"):
        assert argv[argv.index("--tensor-model-parallel-size") + 1] == str(cand.tp)
        assert argv[argv.index("--global-batch-size") + 1] == str(cand.gbs)
    elif target.startswith("bridge"):
        assert argv[argv.index("--recipe") + 1].endswith("_config")
        assert f"model.tensor_model_parallel_size={cand.tp}" in argv and f"train.global_batch_size={cand.gbs}" in argv
    else:
        assert argv[-3:-1] == ["pretrain", "--config"] and argv[-1].endswith("/experiment.yaml")


def test_node_rank_comes_from_the_launcher(tmp_path: Path) -> None:
    files = dict(next(f for c, t, f in emissions() if c == "llama70b_mi325x" and t == "megatron+slurm"))
    folder = write(files, tmp_path)
    env = {"PATH": "/usr/bin:/bin", "SLURM_NODEID": "3", "MASTER_ADDR": "10.0.0.7"}
    lines = dry_run(folder, "node.sh", env)
    assert lines[0].startswith("node 3: ")
    assert "--node_rank 3" in lines[0] and "--master_addr 10.0.0.7" in lines[0]
    assert lines[1].startswith("rank 24: ")
    env = {"PATH": "/usr/bin:/bin", "RANK": "2"}  # a PyTorchJob pod
    assert dry_run(folder, "node.sh", env)[1].startswith("rank 16: ")


@pytest.mark.parametrize("container", ["pyxis", "docker", "podman"])
@pytest.mark.parametrize("case", ["llama70b_mi325x", "mixtral_h100"])
def test_slurm_containers(case: str, container: str, tmp_path: Path) -> None:
    from primus_lang.emit import emit
    from tests.emit.harness import IMAGE, context

    space, _ = all_cases()[case]
    cand = all_cases()[case][1]
    files = emit(space, cand, "primus+slurm", context(container=container, slurm_gpus="gres", partition="gpu",
                                                      account="proj-1", time_limit="2-00:00:00"))
    folder = write(files, tmp_path)
    text = files["launch.sbatch"]
    assert f"#SBATCH --gres=gpu:{space.cluster.gpus_per_node}" in text
    assert "#SBATCH --partition=gpu" in text and "#SBATCH --account=proj-1" in text
    assert "#SBATCH --time=2-00:00:00" in text
    if SHELLCHECK:
        check = subprocess.run([SHELLCHECK, str(folder / "launch.sbatch")], capture_output=True, text=True, timeout=600)
        assert check.returncode == 0, check.stdout
    lines = dry_run(folder, "launch.sbatch")
    srun = shlex.split(lines[0].split(":", 1)[1])
    assert srun[:5] == ["srun", "--export=ALL", f"--nodes={space.cluster.nodes}", "--ntasks-per-node=1",
                        "--kill-on-bad-exit=1"]
    if container == "pyxis":
        assert f"--container-image={IMAGE.replace('/', '#', 1)}" in srun  # the registry as enroot reads it
    else:
        # a wrapper that stops the named container on SIGTERM runs `CONTAINER run --name NAME ...`
        assert srun[5:7] == ["bash", "-c"] and srun[8] == "run-container" and srun[10] == container and IMAGE in srun
        assert srun[9].startswith("primusc-") and '"$runtime" stop --time 30 "$name"' in srun[7]
        gpu_flags = ["--device=/dev/kfd", "--device=/dev/dri"] if space.cluster.gpu.vendor == "amd" else ["--gpus"]
        assert all(flag in srun for flag in gpu_flags)
    assert srun[-2:] == ["bash", f"{folder}/node.sh"]
    assert sum(line.startswith("node ") for line in lines) == space.cluster.nodes


def test_a_container_job_stops_its_named_container_when_slurm_signals_it(tmp_path: Path) -> None:
    """Issue 31: scancel reached only the docker client and left the container running."""
    import signal
    import time

    from primus_lang.check import legal_points
    from primus_lang.emit import EmitContext, emit
    from primus_lang.lower import load_space
    from primus_lang.resources import data_dir

    space_ = load_space(data_dir("examples") / "sites" / "llama3_1_8b_mi325x_docker.prx")
    files = emit(space_, next(iter(legal_points(space_))), "primus+slurm", EmitContext())
    wrapper = next(line for line in files["launch.sbatch"].splitlines() if line.startswith("RUN_CONTAINER="))
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls"
    (fake / "docker").write_text(f'#!/usr/bin/env bash\necho "$*" >> {calls}\n'
                                 'if [[ $1 == run ]]; then touch "$STARTED"; sleep 60; fi\n')
    (fake / "docker").chmod(0o755)
    started = tmp_path / "started"
    env = {"PATH": f"{fake}:/usr/bin:/bin", "STARTED": str(started)}
    job = subprocess.Popen(["bash", "-c", f'{wrapper}\nexec bash -c "$RUN_CONTAINER" run-container primusc-7 docker '
                            "--rm img bash node.sh"], env=env)
    guard = 600  # polls of the hang guard, not a timing: the run ends on the marker
    while not started.exists() and guard:
        time.sleep(0.1)
        guard -= 1
    job.send_signal(signal.SIGTERM)
    assert job.wait(timeout=60) == 143
    assert calls.read_text().splitlines() == ["run --name primusc-7 --rm img bash node.sh", "stop --time 30 primusc-7"]
