"""Primus experiment YAML parses, round-trips, and carries every knob, Primus-only ones included."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from primus_lang.emit import emit
from primus_lang.emit.primus_configs import DEEPEP_SWITCHES, KERNEL_SWITCHES
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
    assert o["save"] == o["load"] == "/ckpt/run1"
    assert "vocab_size" not in o


# Keys Primus adds to Megatron's (primus/configs/modules/megatron/primus_pipeline.yaml), and the
# training corpus key its trainer config uses.
# model_type picks pretrain_mamba's providers (primus/backends/megatron/megatron_pretrain_trainer.py)
# Primus's own switches (its trainer config and patches): the pipeline algorithms, the corpus, the
# model provider, and Primus Turbo's ROCm DeepEP dispatcher
PRIMUS_KEYS = {"patch_primus_pipeline", "pp_algorithm", "train_data_path", "model_type", *KERNEL_SWITCHES,
               *DEEPEP_SWITCHES}
# Megatron argparse dests outside the config classes: torch FSDP2's switch (arguments.py, core_v0.16.1)
MEGATRON_ONLY_DESTS = {"use_torch_fsdp2"}


@pytest.mark.parametrize(("case", "text"), EXPERIMENTS)
def test_override_keys_are_megatron_dests(case: str, text: str) -> None:
    """Primus merges overrides onto Megatron's argument namespace: a key that is no Megatron dest
    (a config field or one of the run arguments) would be carried along and do nothing."""
    pytest.importorskip("megatron.core")
    import dataclasses

    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer.transformer_config import MLATransformerConfig

    from tests.emit.test_megatron_config import RUN_ARGS

    # argparse dests that core_transformer_config_from_args renames into config fields
    known = set(RUN_ARGS) | PRIMUS_KEYS | MEGATRON_ONLY_DESTS | {"num_experts", "num_virtual_stages_per_pipeline_rank",
                                           "swiglu", "squared_relu", "multi_latent_attention",
                                           "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
                                           # --norm-epsilon's dest (TransformerConfig's layernorm_epsilon);
                                           # Primus's own model cards set it under this name
                                           "norm_epsilon"}
    for cls in (MLATransformerConfig, DistributedDataParallelConfig, OptimizerConfig):
        known |= {f.name for f in dataclasses.fields(cls)}
    assert set(overrides(text)) - known == set()
