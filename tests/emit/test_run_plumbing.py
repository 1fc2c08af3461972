"""What a launch needs besides the layout: a checkpoint cadence Megatron accepts, the same training
schedule on both frameworks, and a dispatcher that exists on the cluster's GPUs."""

from __future__ import annotations

import yaml

from primus_lang.check import parse_point
from primus_lang.emit import emit, unsupported
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from tests.emit.harness import context


def _h100() -> tuple[object, object]:
    space = load_space(data_dir("examples") / "llama3_70b_h100.prx")
    return space, parse_point(space, "tp=4,pp=4,cp=2,precision=fp8")


def test_a_checkpointed_run_saves_on_a_cadence_and_resumes_rather_than_fine_tunes() -> None:
    space, cand = _h100()
    node = emit(space, cand, "megatron+local", context(checkpoint_dir="/ckpt", train_iters="500"))["node.sh"]
    assert "--save /ckpt" in node and "--save-interval 500" in node  # Megatron asserts an interval with --save
    ctx = context(checkpoint_dir="/ckpt", save_interval="50")
    pre = yaml.safe_load(emit(space, cand, "primus+local", ctx)["experiment.yaml"])["modules"]["pre_trainer"]
    # Primus's trainer config would restart a checkpointed run as a fine-tune at iteration 0
    assert pre["overrides"]["save_interval"] == 50 and pre["overrides"]["finetune"] is False


def test_both_frameworks_train_the_same_schedule_and_log_every_step() -> None:
    space, cand = _h100()
    node = emit(space, cand, "megatron+local", context())["node.sh"]
    pre = yaml.safe_load(emit(space, cand, "primus+local", context())["experiment.yaml"])["modules"]["pre_trainer"]
    for key, value in (("lr_warmup_iters", 0), ("weight_decay", 0.01), ("log_interval", 1), ("eval_iters", 0)):
        assert pre["overrides"][key] == value
        assert f"--{key.replace('_', '-')} {value}" in node


def test_deepep_on_amd_is_primus_turbos_at_tp_1_and_refused_elsewhere() -> None:
    space = load_space(data_dir("examples") / "qwen3_235b_mi355x.prx")
    one = parse_point(space, "ep=16,moe_dispatcher=flex")
    assert any("CUDA-only" in why for why in unsupported(space, one, "megatron+local"))
    pre = yaml.safe_load(emit(space, one, "primus+local", context())["experiment.yaml"])["modules"]["pre_trainer"]
    assert pre["overrides"]["enable_primus_turbo"] is True and pre["overrides"]["use_turbo_deepep"] is True
    assert pre["overrides"]["moe_router_dtype"] == "fp32"
    two = parse_point(space, "tp=2,ep=16,moe_dispatcher=flex")
    assert any("tensor-parallel size 1" in why for why in unsupported(space, two, "primus+local"))
    assert unsupported(space, parse_point(space, "tp=2,ep=16"), "megatron+local") == []  # the all-to-all runs


def test_the_router_balances_the_experts_as_the_card_says() -> None:
    """Megatron's defaults balance nothing (a loss coefficient of 0): the card's balancing is written out."""
    from primus_lang.emit.arguments import balancing_settings
    from primus_lang.validate.runs import stdlib_definitions

    models, _ = stdlib_definitions()
    mixtral = balancing_settings(models["mixtral_8x7b"])
    assert mixtral == {"moe_router_score_function": "softmax", "moe_router_load_balancing_type": "aux_loss",
                       "moe_aux_loss_coeff": 0.02}
    deepseek = balancing_settings(models["deepseek_v3"])
    assert deepseek == {"moe_router_score_function": "sigmoid", "moe_router_load_balancing_type": "none",
                        "moe_router_enable_expert_bias": True, "moe_router_topk_scaling_factor": 2.5,
                        "moe_router_num_groups": 8, "moe_router_group_topk": 4}


def test_bias_balancing_needs_sigmoid_scores() -> None:
    import pytest

    from primus_lang.diagnostics import CompileError
    from primus_lang.lower import loads_program

    text = "import models.mixtral (mixtral_8x7b)\nmodel m = mixtral_8x7b {\n  moe { bias_balancing = true }\n}\n"
    with pytest.raises(CompileError) as err:
        loads_program(text)
    assert err.value.diagnostics[0].code.id == "P3009" and "sigmoid" in err.value.diagnostics[0].message
