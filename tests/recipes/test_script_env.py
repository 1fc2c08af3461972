"""What a launch script exports reaches the launch primusc writes, as the space's site environment
(Megatron-LM's Mamba example exports its NCCL and Triton cache settings; they were lost)."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.emit import emit
from primus_lang.lower import load_space
from tests.recipes.test_bad_recipes import LLAMA8B


def test_the_scripts_exports_are_the_sites_environment(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("export NCCL_IB_TIMEOUT=19\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\nexport IFS=,\n"
                      "export CUDA_VISIBLE_DEVICES=0,1,2,3\n"
                      'export TRITON_CACHE_DIR="./triton cache/"\nLOCAL_ONLY=1\n'
                      "torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    assert space.site is not None
    # CUDA_DEVICE_MAX_CONNECTIONS follows the candidate's rule in the launch files, the visible devices their
    # layout; IFS is bash's own; a variable the script does not export is its own
    assert dict(space.site.values()) == {"NCCL_IB_TIMEOUT": "19", "TRITON_CACHE_DIR": "./triton cache/"}
    cand = baseline_point(space)
    assert cand is not None
    node = emit(space, cand, "megatron+local")["node.sh"]
    assert "export NCCL_IB_TIMEOUT=${NCCL_IB_TIMEOUT:-19}" in node
    assert "export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-'./triton cache/'}" in node


def test_a_script_that_exports_nothing_gets_no_site(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert "\nsite " not in out.read_text() and load_space(out).site is None


def test_an_export_only_the_running_script_can_value_is_said(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's DeepSeek-V3 sbatch script exports a cache folder per node (`..._$SLURM_NODEID`): its value
    # is not known until the script runs, so it is left out of the environment, and the import says so
    script = tmp_path / "train.sh"
    script.write_text("export TRITON_CACHE_DIR=./triton_$SLURM_NODEID\nexport NCCL_IB_TIMEOUT=19\n"
                      "export MASTER_ADDR=$(hostname)\n"
                      "torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    capsys.readouterr()
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "`TRITON_CACHE_DIR` is not carried to the launch's environment" in err
    assert "(`--set SLURM_NODEID=VALUE` gives it)" in err
    assert "MASTER_ADDR" not in err  # the launch files set the rendezvous: nothing to say of it
    space = load_space(out)
    assert space.site is not None and dict(space.site.values()) == {"NCCL_IB_TIMEOUT": "19"}
    script.write_text(script.read_text())
    assert main(["import-recipe", str(script), "--gpu", "h100", "--set", "SLURM_NODEID=0", "--out",
                 str(tmp_path / "given.prx")]) == 0
    given = load_space(tmp_path / "given.prx")
    assert given.site is not None and dict(given.site.values())["TRITON_CACHE_DIR"] == "./triton_0"


def test_a_recipes_later_exit_is_replaced_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's Llama 3 FP8 example exits after 235 minutes; under the default limit of an hour the
    # launch must stop before the kill, and says it replaced the recipe's exit
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + " --exit-duration-in-mins 235\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--force",
                 "--out", str(tmp_path / "short")]) == 0
    err = capsys.readouterr().err
    assert "W7026" in err and "`exit_duration_in_mins` of 235 min" in err
    assert "--exit-duration-in-mins 54" in (tmp_path / "short" / "node.sh").read_text()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--var", "time_limit=05:00:00",
                 "--out", str(tmp_path / "long")]) == 0
    assert "W7026" not in capsys.readouterr().err
    assert "--exit-duration-in-mins 235" in (tmp_path / "long" / "node.sh").read_text()


def test_a_credential_the_script_exports_is_never_written_down(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's DeepSeek-V3 sbatch script exports WANDB_API_KEY with a placeholder default; a key given
    # with --set would otherwise land in the space, the launch files and a Kubernetes ConfigMap
    script = tmp_path / "train.sh"
    script.write_text('export WANDB_API_KEY=${WANDB_API_KEY:-"your_own_wandb_api_key"}\nexport HF_TOKEN=hf_q7zZx\n'
                      "export NCCL_IB_TIMEOUT=19\ntorchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    capsys.readouterr()
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert "`HF_TOKEN`, `WANDB_API_KEY`: a credential the script exports, not written" in capsys.readouterr().err
    text = out.read_text()
    assert "hf_q7zZx" not in text and "your_own" not in text
    space = load_space(out)
    assert space.site is not None and dict(space.site.values()) == {"NCCL_IB_TIMEOUT": "19"}
    assert main(["import-recipe", str(script), "--gpu", "h100", "--set", "WANDB_API_KEY=s3cr3t", "--out",
                 str(tmp_path / "given.prx")]) == 0
    assert "s3cr3t" not in (tmp_path / "given.prx").read_text()


def test_a_recipe_counted_in_samples_is_timed_by_its_samples(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's Llama 3 examples train for --train-samples 1953125000: that many samples over the batch
    # of 128 are iterations no time limit holds (W7022), where the launch variable's 100 would have fitted
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "--train-samples 1953125000\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--out", str(tmp_path / "e")]) == 0
    err = capsys.readouterr().err
    assert "W7022" in err and "15,258,790 iterations" in err
