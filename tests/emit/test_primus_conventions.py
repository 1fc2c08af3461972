"""Primus's own conventions (primus_lang/emit/primus_configs.py, read from AMD-AGI/Primus fd1eeab):
FSDP as torch FSDP2, the model's own Primus card, the Turbo switches of Primus's example for the
GPU and model, and W7001 for Primus on NVIDIA GPUs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from primus_lang.check import legal_points, parse_point
from primus_lang.cli import main
from primus_lang.diagnostics.codes_emit import PRIMUS_ON_NVIDIA
from primus_lang.emit import emit, target_warnings
from primus_lang.emit.frameworks import primus_card
from primus_lang.emit.primus_configs import (
    CARDS_NOT_USED,
    DEEPEP_SWITCHES,
    GENERIC_CARD,
    KERNEL_SWITCHES,
    PRIMUS_CARDS,
    PRIMUS_GPUS,
    TURBO_SWITCHES,
)
from primus_lang.ir import Space
from primus_lang.lower import load_space, loads_program
from primus_lang.resources import data_dir
from tests.emit.harness import all_cases, context

EXAMPLES = data_dir("examples")


def experiment(space: Space, point: str, target: str = "primus+local") -> dict[str, Any]:
    files = emit(space, parse_point(space, point), target, context())
    data: dict[str, Any] = yaml.safe_load(files["experiment.yaml"])["modules"]["pre_trainer"]
    return data


def on_gpu(space: Space, name: str) -> Space:
    cluster = attrs.evolve(space.cluster, gpu=attrs.evolve(space.cluster.gpu, name=name))
    return attrs.evolve(space, cluster=cluster)


def test_fsdp_is_torch_fsdp2_as_primus_configs_run_it() -> None:
    space = load_space(EXAMPLES / "llama3_1_70b_mi325x.prx")
    o = experiment(space, "tp=1,pp=1,sharding=fsdp,precision=fp8,mbs=4")["overrides"]
    # examples/megatron/configs/MI325X/llama3.1_70B-FP8-pretrain.yaml, and what Megatron's
    # validate_args asserts beside --use-torch-fsdp2 (arguments.py, core_v0.16.1)
    assert o["use_torch_fsdp2"] is True
    assert o["use_distributed_optimizer"] is False and o["overlap_param_gather"] is False
    assert o["gradient_accumulation_fusion"] is False and o["ckpt_format"] == "torch_dist"
    assert o["untie_embeddings_and_output_weights"] is True
    assert o["pipeline_model_parallel_size"] == 1
    assert "use_megatron_fsdp" not in o and "data_parallel_sharding_strategy" not in o


def test_megatron_keeps_megatron_fsdp() -> None:
    space = load_space(EXAMPLES / "llama3_1_70b_mi325x.prx")
    node = emit(space, parse_point(space, "tp=1,pp=1,sharding=fsdp,mbs=1"), "megatron+local", context())["node.sh"]
    assert "--use-megatron-fsdp" in node and "--use-torch-fsdp2" not in node


def test_fsdp_keeps_a_torch_dcp_checkpoint() -> None:
    space = load_space(EXAMPLES / "llama3_1_70b_mi325x.prx")
    assert space.run is None
    from primus_lang.ir.run import Run

    run_space = attrs.evolve(space, run=Run(ckpt_format="torch_dcp"))
    o = experiment(run_space, "tp=1,pp=1,sharding=fsdp,mbs=1")["overrides"]
    assert o["ckpt_format"] == "torch_dcp"


def test_the_experiment_builds_on_the_models_own_card() -> None:
    for name, card in (("llama3_1_70b_mi325x", "llama3.1_70B.yaml"), ("deepseek_v3_mi355x", "deepseek_v3.yaml"),
                       ("qwen3_235b_mi355x", "qwen3_235B_A22B.yaml"), ("mixtral_8x22b_mi355x", "mixtral_8x22B_v0.1.yaml"),
                       ("gpt_oss_120b_b200", GENERIC_CARD)):
        space = load_space(EXAMPLES / f"{name}.prx")
        assert primus_card(space.model) == card, name


def test_a_changed_or_unsourced_model_gets_the_generic_card(tmp_path: Path) -> None:
    path = tmp_path / "s.prx"
    path.write_text("import models.llama3 (llama3_1_70b)\nimport clusters.amd (mi325x_x8)\n"
                    "space s on mi325x_x8 {\n  model = llama3_1_70b { num_layers = 40 }\n  gbs = 256\n}\n",
                    encoding="utf-8")
    assert primus_card(load_space(path).model) == GENERIC_CARD
    path.write_text("import models.llama3 (llama3_1_70b)\nimport clusters.amd (mi325x_x8)\n"
                    "space s on mi325x_x8 {\n  model = llama3_1_70b { seq_len = 4096 }\n  gbs = 256\n}\n",
                    encoding="utf-8")
    assert primus_card(load_space(path).model) == "llama3.1_70B.yaml"  # the sequence length is the run's
    space, _ = all_cases()["llama70b_mi325x"]  # Python-built IR: no stdlib source
    assert primus_card(space.model) == GENERIC_CARD


def test_the_card_table_names_stdlib_models() -> None:
    modules = {"deepseek": "deepseek", "llama2": "llama2", "llama3": "llama3", "mixtral": "mixtral",
               "qwen3": "qwen3", "gpt_oss": "gpt_oss"}
    defined = set()
    for module in modules.values():
        text = (data_dir("stdlib") / "models" / f"{module}.prx").read_text(encoding="utf-8")
        defined |= {m.name for m in loads_program(text, f"<stdlib>/models/{module}.prx").models}
    assert set(PRIMUS_CARDS) <= defined and set(CARDS_NOT_USED) <= defined
    assert not set(PRIMUS_CARDS) & set(CARDS_NOT_USED)


def test_turbo_table_is_consistent() -> None:
    for (gpu, card, precision), (config, switches) in TURBO_SWITCHES.items():
        assert gpu in PRIMUS_GPUS and card in PRIMUS_CARDS.values() and precision in ("bf16", "fp8")
        assert config.startswith(PRIMUS_GPUS[gpu] + "/") and precision.upper() in config
        assert set(switches) <= set(KERNEL_SWITCHES) | set(DEEPEP_SWITCHES)


def test_turbo_switches_follow_primus_examples() -> None:
    space = load_space(EXAMPLES / "llama3_1_70b_mi325x.prx")
    # MI325X/llama3.1_70B-FP8-pretrain.yaml: Turbo on, its attention off
    o = experiment(space, "tp=1,pp=1,sharding=fsdp,precision=fp8,mbs=4")["overrides"]
    assert o["enable_primus_turbo"] is True and o["use_turbo_attention"] is False
    # MI300X/llama3.1_70B-BF16-pretrain.yaml: Turbo's attention on, a flash kernel
    mi300x = on_gpu(space, "mi300x")
    assert experiment(mi300x, "tp=1,pp=1,sharding=fsdp,mbs=1")["overrides"]["use_turbo_attention"] is True
    unfused = parse_point(mi300x, "tp=1,pp=1,sharding=fsdp,mbs=1").replace(attention="unfused")
    files = emit(mi300x, unfused, "primus+local", context())
    overrides = yaml.safe_load(files["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert "use_turbo_attention" not in overrides and overrides["enable_primus_turbo"] is True
    # no example on NVIDIA GPUs, nor an unknown AMD part
    assert "enable_primus_turbo" not in experiment(on_gpu(space, "mi250x"), "tp=1,pp=1,mbs=1")["overrides"]


def test_deepep_switches_only_with_deepep() -> None:
    space = load_space(EXAMPLES / "qwen3_235b_mi355x.prx")
    flex = [c for c in legal_points(space) if c.moe_dispatcher == "flex" and c.tp == 1 and c.precision == "bf16"][:1]
    alltoall = [c for c in legal_points(space) if c.moe_dispatcher == "alltoall" and c.precision == "bf16"][:1]
    assert flex and alltoall
    o = yaml.safe_load(emit(space, flex[0], "primus+local", context())["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    # MI355X/qwen3_235B_A22B-BF16-pretrain.yaml
    assert o["use_turbo_deepep"] is True and o["turbo_sync_free_moe_stage"] == 1
    assert o.get("turbo_deepep_num_cu") == (80 if flex[0].ep < 16 else None)
    o = yaml.safe_load(emit(space, alltoall[0], "primus+local", context())["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert not set(DEEPEP_SWITCHES) & set(o) and o["enable_primus_turbo"] is True


def test_deepseek_card_shared_expert_overlap_is_off() -> None:
    space = load_space(EXAMPLES / "deepseek_v3_mi355x.prx")
    cand = next(iter(legal_points(space)))
    o = yaml.safe_load(emit(space, cand, "primus+local", context())["experiment.yaml"])["modules"]["pre_trainer"]
    assert o["model"] == "deepseek_v3.yaml" and o["overrides"]["moe_shared_expert_overlap"] is False


def test_primus_on_nvidia_is_w7001(tmp_path: Path) -> None:
    space, _ = all_cases()["llama8b_h100_fsdp"]
    found = target_warnings(space, "primus+slurm")
    assert [d.code for d in found] == [PRIMUS_ON_NVIDIA] and found[0].code.id == "W7001"
    assert target_warnings(space, "megatron+slurm") == []
    amd, _ = all_cases()["llama70b_mi325x"]
    assert target_warnings(amd, "primus+slurm") == []
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "primus_lang.cli", "emit", str(EXAMPLES / "llama3_70b_h100.prx"), "--point", "tp=8,pp=4",
         "--target", "primus+local", "--out", str(out)], capture_output=True, text=True, check=False, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "W7001" in result.stderr and (out / "experiment.yaml").exists()


def test_a_mistyped_passthrough_name_is_said_with_the_nearest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's `turbo_deepep_num_cus = 64` reached the experiment, which Primus's argument builder drops without a
    word (and the megatron target called it a Primus setting)."""
    space = tmp_path / "pt.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
                     "space pt on mi325x_x8 { model = llama3_1_8b; seq_len = 8192; gbs = 64; target primus + local\n"
                     "  passthrough { turbo_deepep_num_cus = 64; use_turbo_attention = false; lr = 0.0003 } }\n")
    assert main(["emit", str(space), "--point", "tp=1", "--out", str(tmp_path / "o")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert err.count("W7028") == 1 and "passthrough `turbo_deepep_num_cus` is no Megatron-LM argument" in err
    assert "did you mean `turbo_deepep_num_cu`?" in err


def test_check_says_plan_stops_where_no_legal_point_can_be_launched(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`check` said `plan` would launch the best recipe the target can express, and `plan` stopped on P7001:
    the megatron target refuses every point of a space whose passthrough no Megatron-LM release has."""
    space = tmp_path / "pt.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
                     "space pt on mi325x_x8 { model = llama3_1_8b; seq_len = 8192; gbs = 64; target megatron + local\n"
                     "  tp : 1 | 2\n  passthrough { turbo_deepep_num_cus = 64 } }\n")
    assert main(["check", str(space)]) == 1  # the pre-commit hook runs check: it must not pass what plan stops on
    said = capsys.readouterr()
    out = " ".join(said.out.split())
    assert "every legal point: Megatron-LM" in out and "`plan` stops on it before it launches anything" in out
    assert "P7001" in said.err and "can launch none of its legal points" in said.err
    assert "`plan` launches the best" not in out
    assert main(["plan", str(space), "--out", str(tmp_path / "o"), "--budget", "4"]) == 1
    assert "correct its name" in " ".join(capsys.readouterr().err.split())
