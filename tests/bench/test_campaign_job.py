"""The benchmark job as written: deterministic, quoted, never over the user's files without --force;
and the refusals of its variables and of its steps' inputs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from primus_lang.bench.campaign import campaign_files
from primus_lang.bench.kernels import KernelSpec
from primus_lang.bench.netstep import rank_environment
from primus_lang.cli import main
from primus_lang.commands._bench_campaign import read_kernels
from primus_lang.diagnostics import CompileError
from tests.bench.test_campaign_slurm import SPACE

SPECS = [KernelSpec("gemm", (64, 64, 64, 1), "bf16"), KernelSpec("rmsnorm", (64, 64), "bf16")]
HOSTILE = "/opt/my tools/$(touch pwned)/primusc"


def files(launcher: str = "slurm", **variables: str) -> dict[str, str]:
    return campaign_files(launcher, SPECS, space="s", target="h200", device="cuda", vendor="nvidia",
                          gpus_per_node=8, variables=variables, source="s.prx")


def code_of(launcher: str = "slurm", **variables: str) -> str:
    with pytest.raises(CompileError) as err:
        files(launcher, **variables)
    return err.value.diagnostics[0].code.id


def test_the_job_is_deterministic_and_quotes_what_reaches_a_shell(tmp_path: Path) -> None:
    first = files(primusc=HOSTILE, db="out dir/p'q.sqlite")
    assert first == files(primusc=HOSTILE, db="out dir/p'q.sqlite")
    script = first["bench.sh"]
    assert f"PRIMUSC=${{PRIMUSC:-{shlex.quote(HOSTILE)}}}" in script
    # a comma is quoted like any other shell-special character (the emitters' one quoting rule)
    assert "--ranks '2,4,8'" in script and "--target h200" in script
    sbatch = first["bench.sbatch"]
    assert "#SBATCH --nodes=2" in sbatch and "#SBATCH --gpus-per-node=8" in sbatch
    for name, text in first.items():
        if name.endswith((".sh", ".sbatch")):
            (tmp_path / name).write_text(text)
            assert subprocess.run(["bash", "-n", str(tmp_path / name)], timeout=600).returncode == 0
            if shutil.which("shellcheck"):
                check = subprocess.run(["shellcheck", "-s", "bash", str(tmp_path / name)], capture_output=True,
                                       text=True, timeout=600)
                assert check.returncode == 0, check.stdout


def test_the_kubernetes_job_is_a_configmap_and_a_pytorchjob_of_one_pod_per_node() -> None:
    docs = list(yaml.safe_load_all(files("k8s", container_image="registry/img:1", nodes="3")["bench-job.yaml"]))
    config, job = docs
    assert config["kind"] == "ConfigMap" and set(config["data"]) == {"bench.sh", "kernels.json"}
    replicas = job["spec"]["pytorchReplicaSpecs"]
    assert replicas["Master"]["replicas"] == 1 and replicas["Worker"]["replicas"] == 2
    pod = replicas["Master"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8}
    assert pod["volumes"][1]["persistentVolumeClaim"]["claimName"] == "primusc-bench"


@pytest.mark.parametrize(("launcher", "variables"), [
    ("slurm", {"colour": "red"}),  # unknown
    ("slurm", {"partition": "gpu; rm -rf /"}),  # reaches an #SBATCH line
    ("slurm", {"nodes": "0"}),
    ("slurm", {"nodes": "1", "tasks_per_node": "1"}),  # one rank has nothing to exchange with
    ("slurm", {"primusc": "primusc\nrm -rf /"}),
    ("k8s", {}),  # no image
])
def test_bad_job_variables_are_refused(launcher: str, variables: dict[str, str]) -> None:
    assert code_of(launcher, **variables) == "P6814"


def test_the_command_writes_the_job_and_keeps_the_users_files_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    out = tmp_path / "job"
    argv = ["bench", str(space), "--job", "slurm", "--out", str(out)]
    assert main(argv) == 0
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(written) == {"bench.sbatch", "bench.sh", "kernels.json"}
    assert len(read_kernels(str(out / "kernels.json"))) > 0
    (out / "bench.sh").write_text("# mine\n")
    capsys.readouterr()
    assert main(argv) == 1
    assert "already exists" in capsys.readouterr().err and (out / "bench.sh").read_text() == "# mine\n"
    assert main([*argv, "--force"]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == written
    assert main(["bench", str(space), "--job", "slurm", "--out", str(out), "--var", "nodes"]) == 1
    assert "P6814" in capsys.readouterr().err


@pytest.mark.parametrize("text", [
    "[1, 2]", '{"kernels": [{"op": "gemm", "shape": [1, 2], "dtype": "bf16"}]}',
    '{"kernels": [{"op": "warp", "shape": [1], "dtype": "bf16"}]}',
    '{"kernels": [{"op": "gemm", "shape": [1, 2, 3, true], "dtype": "bf16"}]}', "{",
])
def test_a_bad_kernel_list_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "kernels.json"
    path.write_text(text)
    with pytest.raises(CompileError) as err:
        read_kernels(str(path))
    assert err.value.diagnostics[0].code.id == "P6816"


def test_the_net_step_needs_a_rank_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rendezvous = {"MASTER_ADDR": "node1", "MASTER_PORT": "29631"}
    assert rank_environment({"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "RANK": "7",
                             **rendezvous}) == (1, 2, 0)
    assert rank_environment({"RANK": "0", "WORLD_SIZE": "2", **rendezvous}) == (0, 2, 0)
    for env in ({}, {"RANK": "0", "WORLD_SIZE": "1", **rendezvous}, {"RANK": "0", "WORLD_SIZE": "2"},
                {"RANK": "x", "WORLD_SIZE": "2", **rendezvous}):
        with pytest.raises(CompileError) as err:
            rank_environment(env)
        assert err.value.diagnostics[0].code.id == "P6815"
    assert main(["bench", "--collectives", "net", "--db", str(tmp_path / "p.sqlite")]) == 1
    assert "P6815" in capsys.readouterr().err


def test_the_sbatch_script_dry_runs_and_refuses_an_unknown_argument(tmp_path: Path) -> None:
    for name, text in files().items():
        (tmp_path / name).write_text(text)
    env = {"PATH": "/usr/bin:/bin", "PRIMUSC_DIR": str(tmp_path)}  # no srun here: a launch would fail
    dry = subprocess.run(["bash", str(tmp_path / "bench.sbatch"), "--dry-run"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("srun ") and "bench.sh" in dry.stdout
    bad = subprocess.run(["bash", str(tmp_path / "bench.sbatch"), "--bogus"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=60)
    assert bad.returncode == 2 and "unknown argument" in bad.stderr
