"""Where an imported script's job runs (its Slurm settings, its container and mounts) is the space's site,
and the launch files run there: a trial found an import of a Slurm script emitted bare-metal, without its
partition, account or time limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.emit import emit
from primus_lang.emit.context import EmitContext
from primus_lang.ir.site import Mount, Site
from primus_lang.lower import load_space
from primus_lang.recipes import read_recipe

FLAGS = ("--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
         "--group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm "
         "--position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
         "--seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 128 --bf16 "
         "--tokenizer-type NullTokenizer --vocab-size 128256")
SBATCH = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --partition=batch\n#SBATCH -A llm\n#SBATCH --time=1-02:30:00\n"
          "#SBATCH --qos=high\n#SBATCH --ntasks-per-node=8\n")


def imported_site(tmp_path: Path, text: str, *extra: str) -> Site:
    script = tmp_path / "run.sh"
    script.write_text(text)
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--out", str(out), *extra]) == 0
    site = load_space(out).site
    assert site is not None
    return site


def test_sbatch_lines_and_pyxis_options_become_the_site(tmp_path: Path) -> None:
    site = imported_site(tmp_path, SBATCH + "export NCCL_DEBUG=WARN\n"
                         "srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 --no-container-mount-home "
                         "--container-mounts=/lustre/data:/data:ro,/scratch "
                         f"torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py {FLAGS}\n", "--gpu", "h100")
    assert (site.partition, site.account, site.qos, site.time_limit) == ("batch", "llm", "high", 95400.0)
    assert (site.runtime, site.image, site.srun_args) == ("pyxis", "nvcr.io/nvidia/pytorch:25.01-py3",
                                                           "--no-container-mount-home")
    assert [(m.name, m.host, m.path, m.read_only) for m in site.mounts] == [
        ("data", "/lustre/data", "/data", True), ("scratch", "/scratch", "/scratch", False)]
    assert site.values() == (("NCCL_DEBUG", "WARN"),)


def test_the_launch_files_run_where_the_script_did(tmp_path: Path) -> None:
    imported_site(tmp_path, SBATCH + "srun --container-image=nvcr.io/nvidia/pytorch:25.01-py3 "
                  f"--container-mounts=/lustre:/lustre torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py {FLAGS}\n",
                  "--gpu", "h100")
    space = load_space(tmp_path / "space.prx")
    cand = baseline_point(space)
    assert cand is not None
    files = emit(space, cand, "megatron+slurm", EmitContext())
    sbatch = files["launch.sbatch"]
    for line in ("#SBATCH --partition=batch", "#SBATCH --account=llm", "#SBATCH --qos=high", "#SBATCH --time=1-02:30:00"):
        assert line in sbatch.splitlines()
    assert "--container-image='nvcr.io#nvidia/pytorch:25.01-py3'" in sbatch and "/lustre:/lustre" in sbatch


def test_srun_around_bash_c_still_names_the_container(tmp_path: Path) -> None:
    """Megatron-Bridge's Slurm examples wrap the launch in `srun ... bash -c "..."`: srun's options were lost
    with the shell between them and the launch."""
    site = imported_site(tmp_path, SBATCH + "srun --container-image=/shared/nemo.sqsh --container-mounts=/lustre "
                         f"bash -c \"cd /workspace && torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py {FLAGS}\"\n",
                         "--gpu", "h100")
    assert (site.runtime, site.image, site.mounts) == ("pyxis", "/shared/nemo.sqsh",
                                                       (Mount("lustre", "/lustre", "/lustre"),))


@pytest.mark.parametrize("line", [
    "./scripts/training/train.sh --nodes 2 --gpus-per-node 8 --account llm --partition batch --time 02:00:00 "
    "--container-image nvcr.io/nvidia/nemo:25.11 --mount /lustre/data:/data --mount /home/me "
    "--recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --mode pretrain",
    "python scripts/performance/setup_experiment.py -a llm -p batch -t 02:00:00 -i nvcr.io/nvidia/nemo:25.11 "
    "-cm /lustre/data:/data,/home/me -m qwen -mr qwen3_30b_a3b -ng 16 -g h100 -c bf16",
], ids=["train.sh", "performance launcher"])
def test_bridges_launchers_own_slurm_options_become_the_site(tmp_path: Path, line: str) -> None:
    site = imported_site(tmp_path, line + "\n")
    assert (site.partition, site.account, site.time_limit, site.runtime, site.image) == (
        "batch", "llm", 7200.0, "pyxis", "nvcr.io/nvidia/nemo:25.11")
    assert [(m.host, m.path) for m in site.mounts] == [("/lustre/data", "/data"), ("/home/me", "/home/me")]


def test_what_a_site_cannot_hold_is_said_and_left_out(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n#SBATCH --account=$ACCOUNT\n#SBATCH --time=UNLIMITED\n#SBATCH --partition=gpu\n"
                      "srun --container-image=\"$IMAGE\" --container-mounts=data:/data,/lustre:/lustre "
                      f"torchrun --nproc_per_node 8 pretrain_gpt.py {FLAGS}\n")
    recipe = read_recipe(script)
    assert recipe.placement.fields == (("partition", "gpu"),)
    assert [(m.host, m.path) for m in recipe.placement.mounts] == [("/lustre", "/lustre")]
    said = " ".join(recipe.notes)
    assert "`#SBATCH --account=$ACCOUNT` is not carried to the site: `account` must be a Slurm name" in said
    assert "`#SBATCH --time=UNLIMITED` is not carried to the site: the time limit must be a Slurm time" in said
    assert "`srun --container-image" in said and "known only when the script runs" in said
    assert "mount `data:/data` of `srun --container-mounts" in said


def test_a_script_that_names_no_placement_writes_no_site(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {FLAGS}\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert load_space(out).site is None
