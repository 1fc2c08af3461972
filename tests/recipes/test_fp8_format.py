"""The FP8 formats (Megatron's --fp8-format, Primus's `fp8:`, Bridge's `mixed_precision.fp8`) are read
into the `fp8_format` knob and written back as the recipe had them: AMD's MI355X MXFP8, DeepSeek-V2-Lite
FP8 and gpt-oss MLPerf experiments run E4M3 for gradients too, which primusc used to refuse."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.lower import load_space
from primus_lang.recipes import interpret
from primus_lang.recipes.megatron import read_command_text
from tests.recipes.primus_files import experiment
from tests.recipes.test_bad_recipes import LLAMA8B

LAUNCH = "torchrun pretrain_gpt.py " + LLAMA8B + "--tensor-model-parallel-size 1 "


@pytest.mark.parametrize("fmt", ["e4m3", "hybrid"])
def test_a_megatron_format_is_read_and_written_back(tmp_path: Path, fmt: str) -> None:
    launch = tmp_path / "run.sh"
    launch.write_text(LAUNCH + f"--fp8-format {fmt} --fp8-recipe mxfp8\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(launch), "--gpu", "b200", "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None and (cand.precision, cand.fp8_recipe, cand.fp8_format) == ("fp8", "mxfp8", fmt)
    assert f"--fp8-format {fmt}" in emit(space, cand, "megatron+local")["node.sh"]


def test_a_format_transformer_engine_cannot_train_with_points_at_the_flag() -> None:
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(LAUNCH + "--fp8-format e5m2", "run.sh"))
    [d] = err.value.diagnostics
    # the release's own parser's choices (generated from Megatron-LM's arguments)
    assert d.code.id == "P3123" and "expected one of e4m3, hybrid" in d.message and d.span is not None


def _primus(tmp_path: Path, **overrides: object) -> tuple[Path, dict[str, object]]:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(experiment(tmp_path, overrides)), "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    back = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    return out, back


def test_a_primus_e4m3_experiment_imports_and_launches_e4m3(tmp_path: Path) -> None:
    out, back = _primus(tmp_path, fp8="e4m3", fp8_recipe="mxfp8")
    assert "  fp8_format = e4m3" in out.read_text()
    assert (back["fp8"], back["fp8_recipe"]) == ("e4m3", "mxfp8")
    # the knob changes numerics, not what is projected
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    hybrid = attrs.evolve(cand, fp8_format="hybrid")
    from primus_lang.project import project
    assert project(space.model, space.cluster, cand, space.settings) == \
        project(space.model, space.cluster, hybrid, space.settings)


def test_primus_window_lists_read_as_megatron_core_reads_them(tmp_path: Path) -> None:
    """The gpt-oss MLPerf experiment writes its window as a YAML pair and its pattern per layer."""
    _, back = _primus(tmp_path, window_size=[128, 0], window_attn_skip_freq=[1, 0] * 40)
    assert back["window_size"] == [128, 0]
    assert back["window_attn_skip_freq"] == 2  # layer i full exactly where i is even, as the list says


@pytest.mark.parametrize(("written", "period"), [
    ("'([1]*5+[0])*16'", 6),  # Gemma 3's five windowed layers to one full
    ("'[1,1,1]'", 0),  # every layer windowed
    ("'([1,0])*40'", 2),
])
def test_a_per_layer_pattern_with_a_period_is_the_cards_period(written: str, period: int) -> None:
    line = LAUNCH.replace("--num-layers 32", "--num-layers 96") + f"--window-size '(127,0)' --window-attn-skip-freq {written}"
    imp = interpret(read_command_text(line, "run.sh"))
    assert (imp.model["sliding_window"], imp.model["full_attention_every"]) == (128, period)


def test_a_bridge_precision_recipe_brings_its_registered_formats(tmp_path: Path) -> None:
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_b200_bf16_config "
                      "mixed_precision=bf16_with_mxfp8_mixed\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(launch), "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None and (cand.fp8_recipe, cand.fp8_format) == ("mxfp8", "e4m3")
    # written back as the same registered recipe, whose formats need no override
    node = emit(space, cand, "bridge+local")["node.sh"]
    assert "mixed_precision=bf16_with_mxfp8_mixed" in node and "mixed_precision.fp8=" not in node
