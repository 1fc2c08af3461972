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
