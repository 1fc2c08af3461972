"""Primus experiment YAML parses, round-trips, and carries every knob, Primus-only ones included."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import yaml

from primus_lang.emit import emit
from primus_lang.frameworks import megatron, primus
from tests.emit.harness import all_cases, context, emissions

EXPERIMENTS = [pytest.param(c, f["experiment.yaml"], id=f"{c}-{t}") for c, t, f in emissions() if t == "primus+local"]


def overrides(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    trainer = data["modules"]["pre_trainer"]
    assert trainer["framework"] == "megatron"
    assert trainer["config"] == "pre_trainer.yaml"
    result: dict[str, Any] = trainer["overrides"]
    return result


@pytest.mark.parametrize(("case", "text"), EXPERIMENTS)
def test_yaml_round_trips(case: str, text: str) -> None:
    data = yaml.safe_load(text)
    assert yaml.safe_load(yaml.safe_dump(data, sort_keys=False)) == data
    space, cand = all_cases()[case]
    o = overrides(text)
    assert o["tensor_model_parallel_size"] == cand.tp
    assert o["pipeline_model_parallel_size"] == cand.pp
    assert o["micro_batch_size"] == cand.mbs and o["global_batch_size"] == cand.gbs
    assert o["num_layers"] == space.model.num_layers and o["hidden_size"] == space.model.hidden
    # Primus's base card defaults differ from Megatron's: these must always be explicit
    for key in ("swiglu", "untie_embeddings_and_output_weights", "normalization", "position_embedding_type",
                "sequence_parallel", "add_bias_linear", "use_distributed_optimizer"):
        assert key in o


@pytest.mark.parametrize(("schedule", "algorithm", "vpp"), [("zero_bubble", "zero-bubble", None), ("zbv", "zbv-formatted", 2)])
def test_zero_bubble_schedules_use_primus_pipeline(schedule: str, algorithm: str, vpp: int | None) -> None:
    space, cand = all_cases()["llama8b_zbv"]
    cand = cand.replace(schedule=schedule, vpp=1 if schedule == "zero_bubble" else 2)
    o = overrides(emit(space, cand, "primus+slurm", context())["experiment.yaml"])
    assert o["patch_primus_pipeline"] is True and o["pp_algorithm"] == algorithm
    assert o.get("num_virtual_stages_per_pipeline_rank") == vpp


def test_plain_schedules_leave_the_primus_pipeline_off() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    o = overrides(emit(space, cand, "primus+slurm", context())["experiment.yaml"])
    assert "pp_algorithm" not in o and o["num_virtual_stages_per_pipeline_rank"] == cand.vpp


def test_data_and_checkpoint_variables() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    o = overrides(emit(space, cand, "primus+local", context(
        data_path="/data/c4_text_document", tokenizer_model="meta-llama/Llama-3.1-70B",
        checkpoint_dir="/ckpt/run1"))["experiment.yaml"])
    assert o["train_data_path"] == "/data/c4_text_document" and "mock_data" not in o
    assert o["tokenizer_type"] == "HuggingFaceTokenizer" and o["tokenizer_model"] == "meta-llama/Llama-3.1-70B"
    # Primus saves under <workspace>/<work_group>/<user_name>/<exp_name>/checkpoints whatever `save` says: the
    # workspace is the checkpoint folder and the run loads there; a first run with nothing to load trains
    experiment = yaml.safe_load(emit(space, cand, "primus+local", context(checkpoint_dir="/ckpt/run1"))["experiment.yaml"])
    assert experiment["workspace"] == "/ckpt/run1"
    assert o["save"] == o["load"] == f"/ckpt/run1/primusc/primusc/{experiment['exp_name']}/checkpoints"
    assert o["exit_on_missing_checkpoint"] is False
    assert "vocab_size" not in o


def test_an_experiments_own_load_folder_is_read_where_it_is() -> None:
    """An imported experiment's `load` is where its checkpoints already are: Primus reads it as given and
    moves only `save` under the workspace (checkpoint_path_patches.py), so the launch does the same; a
    round-trip trial's resumed run had been pointed at a new, empty folder."""
    space, cand = all_cases()["llama70b_mi325x"]
    carried = attrs.evolve(space, passthrough=(*space.passthrough, ("save", "/lustre/ckpt"), ("load", "/lustre/ckpt")))
    experiment = yaml.safe_load(emit(carried, cand, "primus+local", context())["experiment.yaml"])
    o = experiment["modules"]["pre_trainer"]["overrides"]
    assert o["load"] == "/lustre/ckpt" and o["save"].startswith("/lustre/ckpt/primusc/primusc/")
    # the launch's own folder replaces it, and says so (W7025): the run resumes there, not from the recipe's
    from primus_lang.emit import left_out

    for target in ("primus+local", "megatron+local"):
        [said] = [d for d in left_out(carried, cand, target, context(checkpoint_dir="/ck")) if "`/ck`" in d.message]
        assert said.code.id == "W7025" and "/lustre/ckpt" in said.message
        assert not [d for d in left_out(carried, cand, target, context()) if "checkpoint_dir" in d.message]


# Keys Primus reads itself: its presets' own settings (frameworks/primus) and the model provider switch
# (model_type picks pretrain_mamba's providers, primus/backends/megatron/megatron_pretrain_trainer.py)
PRIMUS_KEYS = frozenset(primus.preset("modules", "pre_trainer", primus.DEFAULT_VERSION) or {}) | {"model_type"}


@pytest.mark.parametrize(("case", "text"), EXPERIMENTS)
def test_override_keys_are_megatron_dests(case: str, text: str) -> None:
    """Primus sets its overrides on Megatron's parsed arguments by dest and drops any other name
    (primus/backends/megatron/argument_builder.py): every key is a dest of the parser of the Megatron-LM
    Primus pins (frameworks/megatron) or a setting Primus reads itself."""
    dests = megatron.by_dest(primus.megatron_version(primus.DEFAULT_VERSION))
    assert [k for k in overrides(text) if k not in dests and k not in PRIMUS_KEYS] == []


def test_a_hybrid_on_gb200_starts_as_primus_and_megatron_read_it() -> None:
    """Nemotron 3 Nano (Mamba hybrid, no position embedding) on GB200 with the flex dispatcher (a new user's
    trial, run through Primus's own loader and Megatron-LM's validate_args):
    - Primus's generic card turns add_position_embedding off, which Megatron-LM refuses beside any position
      type but RoPE, so every such launch stopped at start; it is written on, as Primus's hybrid cards do;
    - the flex dispatcher's backend on an NVL72 rack is HybridEP (Bridge refuses DeepEP on GB200)."""
    space, cand = all_cases()["example_nemotron3_nano_gb200"]
    assert cand.moe_dispatcher == "flex" and space.cluster.gpu.scale_up_domain > 8
    o = overrides(emit(space, cand, "primus+local", context())["experiment.yaml"])
    assert o["position_embedding_type"] == "none" and o["add_position_embedding"] is True
    assert o["moe_flex_dispatcher_backend"] == "hybridep"
    assert "--moe-flex-dispatcher-backend hybridep" in emit(space, cand, "megatron+local", context())["node.sh"]
