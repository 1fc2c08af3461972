"""What a Primus experiment trains beyond pretraining is refused, not launched as pretraining: the
launch primusc writes runs Primus's pretraining trainer, and its account counts full training."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.recipes.primus_files import experiment


def _import(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = main(["import-recipe", str(path), "--nodes", "1", "--out", str(tmp_path / "space.prx")])
    return code, capsys.readouterr().err


def test_another_trainer_and_lora_are_refused_at_their_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Primus's LoRA SFT experiments (`config: sft_trainer.yaml`, `lora: {enabled: true}`) were read as
    pretraining: the account counted the frozen weights' gradients and the launch ran pre_trainer.yaml."""
    path = experiment(tmp_path, {"lora": {"enabled": True, "dim": 16, "alpha": 32}}, config="sft_trainer.yaml")
    code, err = _import(tmp_path, capsys, path)
    assert code == 1 and err.count("P3125") == 2
    assert "`config: sft_trainer.yaml`" in err and "exp.yaml:" in err and "`lora`: LoRA freezes" in err


def test_a_disabled_lora_block_is_full_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _import(tmp_path, capsys, experiment(tmp_path, {"lora": {"enabled": False}}))
    assert code == 0, err


def test_zero_mtp_layers_is_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Megatron builds MTP only `if args.mtp_num_layers:`; Primus's kimi_k2 and glm5 presets say 0."""
    code, err = _import(tmp_path, capsys, experiment(tmp_path, {"mtp_num_layers": 0}))
    assert code == 0, err
    assert "mtp_layers =" not in (tmp_path / "space.prx").read_text()


def test_an_mxfp4_recipe_is_not_read_as_nvfp4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """AMD's MXFP4 experiment was read as NVFP4 and refused for the GPU's lack of NVFP4 tensor cores."""
    code, err = _import(tmp_path, capsys, experiment(tmp_path, {"fp8": None, "fp4": "e2m1", "fp4_recipe": "mxfp4"}))
    assert code == 1 and "P3125" in err and "FP4 recipe `mxfp4`" in err and "NVFP4 tensor cores" not in err
