"""The bridge framework: every emitted override names a ConfigContainer field the launched recipe's
model class has at the launch's Megatron-Bridge release (frameworks/bridge/recipes.json, read by
Bridge's own code), with a value of the kind the recipe holds there; what Bridge's recipe cannot take
is refused, not dropped."""

from __future__ import annotations

import functools
import re
import shlex

import attrs
import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.emit.arguments import Setting, nvfp4_values
from primus_lang.emit.bridge import (
    READ,
    paths,
    precision_name,
    precision_settings,
    recorded_fields,
)
from primus_lang.frameworks import bridge
from primus_lang.ir.candidate import FP8_RECIPES
from tests.emit.harness import emissions
from tests.emit.ir_cases import CASES


def overrides_of(node_sh: str) -> tuple[str, list[str]]:
    block = re.search(r"^ARGS=\(\n(.*?)^\)", node_sh, re.MULTILINE | re.DOTALL)
    assert block is not None
    words = shlex.split(block.group(1))
    assert words[:2] == ["--recipe", words[1]] and words[2:4] == ["--mode", "pretrain"]
    return words[1], words[4:]


@functools.cache
def held_kinds(path: str, version: str = bridge.DEFAULT_VERSION) -> frozenset[type]:
    """The kinds of value the release's recipes hold at ``path`` (a field may take text or a list)."""
    found = (bridge.recipe(n, version) for n in bridge.recipe_names(version))
    return frozenset(type(r.settings[path]) for r in found if r is not None and r.settings.get(path) is not None)


def kind_fits(kinds: frozenset[type], value: str) -> bool:
    """Whether Hydra's reading of ``value`` is of a kind some recipe holds at the field (a field every
    recipe leaves None takes anything)."""
    if value == "null" or not kinds:
        return True
    if value in ("true", "false"):
        return bool in kinds
    if value.startswith("["):
        return list in kinds
    if re.fullmatch(r"-?[0-9]+", value):
        return bool(kinds & {int, float})
    if re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", value):
        return float in kinds
    return str in kinds


BRIDGE = [(case, target, files) for case, target, files in emissions() if target.startswith("bridge+")]


def test_some_cases_emit_for_bridge() -> None:
    assert {case for case, _, _ in BRIDGE} >= {"llama3_8b_h100_fp8cs"}


@pytest.mark.parametrize(("case", "target", "files"), [pytest.param(*b, id=f"{b[0]}-{b[1]}") for b in BRIDGE])
def test_every_override_is_a_recorded_field_of_its_kind(case: str, target: str, files: dict[str, str]) -> None:
    name, words = overrides_of(files["node.sh"])
    recipe = bridge.recipe(name)
    assert recipe is not None, f"{name} is not a recipe of Megatron-Bridge {bridge.DEFAULT_VERSION}"
    fields = bridge.fields(bridge.DEFAULT_VERSION, recipe.model_class)
    seen = set()
    for word in words:
        path, eq, value = word.partition("=")
        assert eq, word
        assert path not in seen, f"{path} written twice"
        seen.add(path)
        if path == "mixed_precision":
            assert value in bridge.precisions()
            continue
        assert path in fields, f"{path} is not a field of {recipe.model_class}'s ConfigContainer"
        kinds = held_kinds(path)
        assert kind_fits(kinds, value), f"{path}={value} is none of the kinds the recipes hold there: {kinds}"


def test_the_table_names_recorded_fields_only() -> None:
    for version in bridge.version_names():
        fields = recorded_fields(version)
        assert [d for d in READ if not paths(d, version)] == [], version
        assert [p for d in READ for p in paths(d, version) if bridge.spelled(p, version) is None] == [], version
        assert [n for n in PRECISION_NAMES.values() if f"mixed_precision={n}" not in fields] == [], version


# the registered recipe a launch names for each GEMM precision primusc plans (rowwise FP8: none); a model
# family's copy of one (nemotron_h_..., nanov2_...) is named only where the plain one lacks the candidate's fields
PRECISION_NAMES = {
    ("bf16", ""): "bf16_mixed",
    ("fp8", "tensorwise"): "bf16_with_fp8_current_scaling_mixed",
    ("fp8", "delayed"): "bf16_with_fp8_delayed_scaling_mixed",
    ("fp8", "mxfp8"): "bf16_with_mxfp8_mixed",
    ("fp8", "blockwise"): "bf16_with_fp8_subchannel_scaling_mixed",
    ("fp4", "nvfp4"): "bf16_with_nvfp4_mixed",
}


@pytest.mark.parametrize("version", bridge.version_names())
def test_each_precision_primusc_plans_is_named_as_bridge_registers_it_and_read_back(version: str) -> None:
    fp4, fp4_recipe = nvfp4_values()
    plans: list[dict[str, Setting]] = [{}, {"fp4": fp4, "fp4_recipe": fp4_recipe}]
    plans += [{"fp8": "hybrid", "fp8_recipe": r, "fp8_param_gather": r != "blockwise"} for r in FP8_RECIPES]
    for settings in plans:
        name = precision_name(settings, version)
        assert name == PRECISION_NAMES.get(bridge.gemm_precision(settings)), settings
        if name is not None:
            back = precision_settings(name, version)
            assert back is not None and bridge.gemm_precision(back) == bridge.gemm_precision(settings)
    # FP8 weights gathered with blockwise scaling: only nanov2's registered recipe (named "current scaling") has them
    blockwise = {"fp8": "hybrid", "fp8_recipe": "blockwise", "fp8_param_gather": True}
    assert precision_name(blockwise, version) == "nanov2_bf16_with_fp8_current_scaling_mixed"
    # the precision a recipe already runs is named over another of the same fields
    tensorwise = {"fp8": "hybrid", "fp8_recipe": "tensorwise", "fp8_param_gather": True}
    nemotron_h = "nemotron_h_bf16_with_fp8_current_scaling_mixed"
    assert precision_name(tensorwise, version, launched=nemotron_h) == nemotron_h


@pytest.mark.parametrize("version", bridge.version_names())
def test_every_precision_a_recipe_records_is_read_or_refused(version: str) -> None:
    """nemotronh and nemotron_nano_12b_v2's recipes name their families' precisions (``nemotron_h_...``,
    ``nanov2_...``), which a hand table of six names had read as none."""
    seen = set()
    for recipe in filter(None, (bridge.recipe(n, version) for n in bridge.recipe_names(version))):
        name = recipe.settings.get("mixed_precision")
        if isinstance(name, str):
            seen.add(name)
            fields = bridge.precisions(version)[name]
            settings = precision_settings(name, version)
            assert settings is not None and bridge.gemm_precision(settings) == bridge.gemm_precision(fields), name
    assert {"nemotron_h_bf16_with_fp8_current_scaling_mixed", "nanov2_bf16_with_fp8_current_scaling_mixed"} <= seen
    nanov2 = precision_settings("nanov2_bf16_with_fp8_current_scaling_mixed", version)
    assert nanov2 == {"fp8": "hybrid", "fp8_recipe": "blockwise"}


def test_the_candidate_reaches_the_overrides() -> None:
    space, cand = CASES["llama3_8b_h100_fp8cs"]
    recipe, words = overrides_of(emit(space, cand, "bridge+slurm")["node.sh"])
    assert recipe == "llama3_8b_pretrain_config"
    for expected in ("mixed_precision=bf16_with_fp8_current_scaling_mixed", "model.recompute_granularity=full",
                     "model.recompute_method=block", "model.recompute_num_layers=5", "train.global_batch_size=128",
                     "dataset.seq_length=8192", "model.virtual_pipeline_model_parallel_size=null",
                     "model.cuda_graph_impl=none"):
        assert expected in words


def test_what_bridge_cannot_take_is_refused() -> None:
    space, cand = CASES["llama3_8b_h100_fp8cs"]
    with pytest.raises(CompileError) as err:
        emit(space, attrs.evolve(cand, attention="unfused"), "bridge+slurm")
    assert "P7001" in str(err.value.diagnostics[0].code.id) and "attention_backend" in err.value.diagnostics[0].message
    mixtral, mcand = CASES["mixtral_h100"]
    with pytest.raises(CompileError) as err:
        emit(mixtral, mcand, "bridge+local")
    assert "Bridge builds the model from its recipe" in err.value.diagnostics[0].message
    changed = attrs.evolve(space, model=attrs.evolve(space.model, num_layers=16))
    with pytest.raises(CompileError):
        emit(changed, cand, "bridge+slurm")


def test_a_run_blocks_init_std_overrides_the_cards_in_every_framework() -> None:
    """The model card's initialisation (Primus's card YAML, Bridge's Hugging Face config) is the
    default; a run block's init std is written over it for all three frameworks."""
    import yaml

    space, cand = CASES["llama3_8b_run"]
    assert space.run is not None and space.run.init_std == 0.008
    assert "--init-method-std 0.008" in emit(space, cand, "megatron+local")["node.sh"]
    experiment = yaml.safe_load(emit(space, cand, "primus+local")["experiment.yaml"])
    assert experiment["modules"]["pre_trainer"]["overrides"]["init_method_std"] == 0.008
    _, words = overrides_of(emit(space, cand, "bridge+local")["node.sh"])
    assert "model.init_method_std=0.008" in words and "optimizer.adam_beta2=0.999" in words


def test_bridge_on_amd_is_written_with_a_warning_and_deepep_refused() -> None:
    from primus_lang.emit import target_warnings

    space = CASES["llama70b_mi325x"][0]
    assert [w.code.id for w in target_warnings(space, "bridge+slurm")] == ["W7021"]
    assert target_warnings(CASES["llama3_8b_h100_fp8cs"][0], "bridge+slurm") == []
    ds, dcand = CASES["deepseek_v3_b200"]
    amd = attrs.evolve(ds, cluster=CASES["llama70b_mi325x"][0].cluster)
    with pytest.raises(CompileError) as err:
        emit(amd, attrs.evolve(dcand, moe_dispatcher="flex"), "bridge+slurm")
    assert any("DeepEP backend is CUDA-only" in d.message for d in err.value.diagnostics)


def test_a_value_hydra_would_interpolate_is_refused() -> None:
    from primus_lang.emit import EmitContext

    space, cand = CASES["llama3_8b_h100_fp8cs"]
    ctx = EmitContext(variables={"data_path": "/data/${USER}/corpus", "tokenizer_model": "meta-llama/Meta-Llama-3-8B"})
    with pytest.raises(CompileError) as err:
        emit(space, cand, "bridge+slurm", ctx)
    assert "interpolation" in err.value.diagnostics[0].message
    ctx = EmitContext(variables={"data_path": "0.7 /data/a 0.3 /data/b", "tokenizer_model": "meta-llama/Meta-Llama-3-8B"})
    _, words = overrides_of(emit(space, cand, "bridge+slurm", ctx)["node.sh"])
    assert 'dataset.data_path="0.7 /data/a 0.3 /data/b"' in words and "dataset.mock=true" not in words


@pytest.mark.parametrize("value", ['/data/"a"_b\'s', "/data/a\\b"])
def test_a_value_hydra_cannot_spell_is_refused(value: str) -> None:
    from primus_lang.emit import EmitContext

    space, cand = CASES["llama3_8b_h100_fp8cs"]
    ctx = EmitContext(variables={"data_path": value, "tokenizer_model": "meta-llama/Meta-Llama-3-8B"})
    with pytest.raises(CompileError) as err:
        emit(space, cand, "bridge+local", ctx)
    assert "Hydra override spelling" in err.value.diagnostics[0].message
    _, words = overrides_of(emit(space, cand, "bridge+local", EmitContext(variables={
        "data_path": "/data/it's_here", "tokenizer_model": "meta-llama/Meta-Llama-3-8B"}))["node.sh"])
    assert "dataset.data_path=\"/data/it's_here\"" in words
