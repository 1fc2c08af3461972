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
    "--container-image nvcr.io/nvidia/nemo:25.11 --mount /lustre/data:/data --mount /lustre/me "
    "--recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --mode pretrain",
    "python scripts/performance/setup_experiment.py -a llm -p batch -t 02:00:00 -i nvcr.io/nvidia/nemo:25.11 "
    "-cm /lustre/data:/data,/lustre/me -m qwen -mr qwen3_30b_a3b -ng 16 -g h100 -c bf16",
], ids=["train.sh", "performance launcher"])
def test_bridges_launchers_own_slurm_options_become_the_site(tmp_path: Path, line: str) -> None:
    site = imported_site(tmp_path, line + "\n")
    assert (site.partition, site.account, site.time_limit, site.runtime, site.image) == (
        "batch", "llm", 7200.0, "pyxis", "nvcr.io/nvidia/nemo:25.11")
    assert [(m.host, m.path) for m in site.mounts] == [("/lustre/data", "/data"), ("/lustre/me", "/lustre/me")]


def test_what_a_site_cannot_hold_is_said_and_left_out(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n#SBATCH --account=$ACCOUNT\n#SBATCH --time=UNLIMITED\n#SBATCH --partition=gpu\n"
                      "srun --container-image=\"$IMAGE\" --container-mounts=data:/data,/lustre:/lustre "
                      f"torchrun --nproc_per_node 8 pretrain_gpt.py {FLAGS}\n")
    recipe = read_recipe(script)
    assert recipe.placement.fields == (("partition", "gpu"),)
    # the image is unknown, so its mounts would be an srun option of a launch run outside any container
    assert recipe.placement.mounts == ()
    said = " ".join(recipe.notes)
    assert "`#SBATCH --account=$ACCOUNT` is not carried to the site: `account` must be a Slurm name" in said
    assert "`#SBATCH --time=UNLIMITED` is not carried to the site, which holds a limit in [D-]HH:MM:SS" in said
    assert "the launch asks for 01:00:00" in said
    assert "`srun --container-image" in said and "known only when the script runs" in said
    assert "mount `data:/data` of `srun --container-mounts" in said
    assert "the container's mounts and switches are not carried: its image is not" in said


def test_the_jobs_own_lines_decide_over_srun_and_every_form_sbatch_takes_is_read(tmp_path: Path) -> None:
    """A reviewer's case: `srun -t 00:10:00` inside a 4-hour job had become the launch's limit; sbatch reads
    every option of a line, attached short forms, quotes and lists of partitions (AMD's Primus writes
    `#SBATCH --qos="perf"`)."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2 -pbatch,backfill -t 4:00:00 -Aacct  # the job\n"
                      "#SBATCH --qos=\"perf\"\n#SBATCH --constraint='h100|a100'\n"
                      f"srun -t 00:10:00 -p other torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py {FLAGS}\n")
    recipe = read_recipe(script)
    assert dict(recipe.placement.fields) == {"partition": "batch,backfill", "account": "acct", "qos": "perf",
                                             "constraint": "h100|a100", "time_limit": 14400.0}
    assert recipe.nodes is not None and recipe.nodes.value == "2"
    assert "`srun -t 00:10:00` is the step's, inside the job's `#SBATCH -t 4:00:00`: the job's is carried" in recipe.notes


def test_sbatch_options_before_a_here_document_decide_over_its_lines(tmp_path: Path) -> None:
    script = tmp_path / "submit.sh"
    script.write_text("sbatch -p override --time=2:00:00 <<EOF\n#!/bin/bash\n#SBATCH -p batch\n#SBATCH -N 2\n"
                      f"srun torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py {FLAGS}\nEOF\n")
    recipe = read_recipe(script)
    assert dict(recipe.placement.fields) == {"partition": "override", "time_limit": 7200.0}
    assert "`sbatch -p override` decides over the script's `#SBATCH -p batch`" in recipe.placement.notes


def test_bridges_train_sh_falls_back_as_it_does(tmp_path: Path) -> None:
    """train.sh takes its image and account from CONTAINER_IMAGE and SLURM_ACCOUNT where its line does not
    (setup_experiment.py), and asks for 4 hours; its extra sbatch parameters and srun arguments are read."""
    script = tmp_path / "train.sh"
    script.write_text("export CONTAINER_IMAGE=/lustre/img/nemo.sqsh\nexport SLURM_ACCOUNT=env_acct\n"
                      "./scripts/training/train.sh --nodes 2 --gpus-per-node 8 --partition=batch --mount /lustre/data "
                      "--srun-arg=--no-container-mount-home --additional-slurm-params \"qos=high;reservation=r1\" "
                      "--recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --mode pretrain\n")
    placement = read_recipe(script).placement
    assert dict(placement.fields) == {"partition": "batch", "account": "env_acct", "qos": "high", "reservation": "r1",
                                      "time_limit": 14400.0, "runtime": "pyxis", "image": "/lustre/img/nemo.sqsh"}
    assert placement.srun_args == ("--no-container-mount-home",)
    assert [(m.host, m.path) for m in placement.mounts] == [("/lustre/data", "/lustre/data")]


def test_a_value_with_a_newline_stays_inside_its_note(tmp_path: Path) -> None:
    """A partition holding a newline was echoed into the written space's `# - ` notes, and the next line
    read as the language (a reviewer's `let pwned = 1`)."""
    script = tmp_path / "run.sh"
    script.write_text("srun --partition='gpu\nlet pwned = 1 #' --container-mounts=/c:/d:/e "
                      f"torchrun --nproc_per_node 8 pretrain_gpt.py {FLAGS}\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert load_space(out).site is None
    notes = [line for line in out.read_text().splitlines() if "pwned" in line]
    assert notes and all(line.startswith("# - ") for line in notes)
    assert any("mount `/c:/d:/e`" in line for line in out.read_text().splitlines())


def test_a_script_that_names_no_placement_writes_no_site(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {FLAGS}\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert load_space(out).site is None


def test_train_sh_names_its_recipe_by_the_models_stem_too(tmp_path: Path) -> None:
    """Megatron-Bridge's README launches train.sh with `--model STEM --mode pretrain` (setup_experiment.py
    builds `<stem>_pretrain_config`): it was `the script runs no training command`."""
    script = tmp_path / "train.sh"
    script.write_text("./scripts/training/train.sh --nodes 1 --gpus-per-node 8 --account a --partition p "
                      "--container-image nvcr.io/nvidia/nemo:25.11 --model llama3_8b --mode pretrain\n")
    recipe = read_recipe(script)
    assert recipe.entries["bridge__recipe"].value == "llama3_8b_pretrain_config"
    assert dict(recipe.placement.fields)["account"] == "a"


def test_the_performance_launchers_extra_sbatch_parameters_split_as_it_splits_them(tmp_path: Path) -> None:
    """Its parse_additional_slurm_params takes `;`, else spaces, else one parameter (a re-trial's
    `"qos=high reservation=r1"` had been read as one qos)."""
    script = tmp_path / "perf.sh"
    script.write_text("python scripts/performance/setup_experiment.py -a acct -p batch -m llama -mr llama3_8b "
                      "-ng 8 -g h100 -c bf16 --additional_slurm_params \"qos=high reservation=r1\"\n")
    fields = dict(read_recipe(script).placement.fields)
    assert (fields["qos"], fields["reservation"]) == ("high", "r1")


def test_a_launchers_own_default_decides_over_the_scripts_sbatch_lines(tmp_path: Path) -> None:
    """train.sh submits a job of its own: its 4 hours stand over an `#SBATCH --time` of the script around it
    (a reviewer's find)."""
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n#SBATCH --time=00:20:00\n./scripts/training/train.sh --nodes 1 --gpus-per-node 8 "
                      "--account a --partition p --container-image nvcr.io/nvidia/nemo:25.11 --model llama3_8b "
                      "--mode pretrain\n")
    assert dict(read_recipe(script).placement.fields)["time_limit"] == 14400.0


def test_the_performance_launchers_hand_tables_name_only_its_options() -> None:
    """emit/bridge_recipes.py still says which of the performance launcher's options select the recipe, set
    a field or only say where the job runs: every spelling it names is one of the launcher's own, at every
    release (frameworks/bridge/launchers.json)."""
    from primus_lang.emit import LAUNCHERS
    from primus_lang.frameworks import bridge

    named = {*LAUNCHERS.perf_selectors, *LAUNCHERS.perf_options, *LAUNCHERS.perf_site_values,
             *LAUNCHERS.perf_site_switches}
    for version in bridge.version_names():
        spelled = {s for o in bridge.launcher_options("performance", version) for s in o.options}
        assert named <= spelled, sorted(named - spelled)


def test_a_launcher_that_submits_its_own_job_takes_nothing_from_the_scripts_sbatch_lines(tmp_path: Path) -> None:
    """The `#SBATCH` lines of a script that runs train.sh are its outer job's (a re-trial's partition `small`
    had been carried); train.sh's own options and defaults say where its job runs."""
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n#SBATCH -p small\n#SBATCH -A acct0\n./scripts/training/train.sh --nodes 1 "
                      "--gpus-per-node 8 --account a --container-image nvcr.io/nvidia/nemo:25.11 --model llama3_8b "
                      "--mode pretrain\n")
    recipe = read_recipe(script)
    assert dict(recipe.placement.fields).get("partition") is None and dict(recipe.placement.fields)["account"] == "a"
    assert any("`#SBATCH` lines are those of the job that runs" in n for n in recipe.notes)
