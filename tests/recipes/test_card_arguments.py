"""The card features Megatron sets with one argument each (emit/arguments.py's CARD_ARGUMENTS:
--norm-epsilon, --add-qkv-bias, --window-size, --window-attn-skip-freq, --softmax-type) are read
into the model card by import-recipe, from a command line and from a Primus experiment, and
emission writes them back: nothing about the architecture is left to passthrough."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.emit.arguments import CARD_ARGUMENTS, model_settings
from primus_lang.frameworks import megatron
from primus_lang.lower import load_space, stdlib_cards
from primus_lang.recipes import interpret
from primus_lang.recipes.flags import MODELLED
from primus_lang.recipes.megatron import read_command_text

FIXTURES = Path(__file__).parent / "fixtures"
# one command line: what is appended must continue it, not start a command of its own
QWEN = (FIXTURES / "megatron_qwen2_5_7b.sh").read_text().rstrip()


def test_every_card_argument_is_modelled_not_carried() -> None:
    for a in CARD_ARGUMENTS.values():
        assert a.dest in MODELLED and f"--{a.dest.replace('_', '-')}" in megatron.flags(megatron.DEFAULT_VERSION)


def test_qwen2_5_command_line_is_the_stdlib_card_as_written(tmp_path: Path) -> None:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(FIXTURES / "megatron_qwen2_5_7b.sh"), "--gpu", "h100", "--out", str(out)]) == 0
    text = out.read_text()
    assert "model megatron_qwen2_5_7b_model = qwen2_5_7b { }" in text
    assert "norm_epsilon" not in text and "qkv_bias" not in text  # in the card, not passthrough or overrides
    space = load_space(out)
    card = stdlib_cards()["qwen2_5_7b"][1]
    assert space.model.qkv_bias and card.qkv_bias
    assert space.model.norm_epsilon == card.norm_epsilon == 1e-6


def test_a_command_line_without_the_flags_takes_megatrons_defaults() -> None:
    line = QWEN.replace("--add-qkv-bias", "").replace("--norm-epsilon 1e-6", "")
    imp = interpret(read_command_text(line, "q.sh"), {"vocab": 152064})
    assert imp.model["qkv_bias"] is False and imp.model["norm_epsilon"] == 1e-5
    assert not {"norm_epsilon", "add_qkv_bias"} & {k for k, _ in imp.passthrough}


def test_with_every_linear_biased_the_qkv_bias_is_the_cards() -> None:
    line = QWEN.replace("--disable-bias-linear --add-qkv-bias", "")  # Megatron biases every linear by default
    imp = interpret(read_command_text(line, "q.sh"), {"vocab": 152064})
    assert imp.model["bias"] is True and "qkv_bias" not in imp.model


def test_sliding_window_and_sinks_read_as_emission_writes_them() -> None:
    line = QWEN + " --window-size '(127,0)' --window-attn-skip-freq 2 --softmax-type learnable"
    imp = interpret(read_command_text(line, "q.sh"), {"vocab": 152064})
    assert (imp.model["sliding_window"], imp.model["full_attention_every"], imp.model["attention_sinks"]) == \
        (128, 2, True)
    # back through emission's table: the same three flags
    card = stdlib_cards()["qwen2_5_7b"][1]
    model = attrs.evolve(card, sliding_window=128, full_attention_every=2, attention_sinks=True)
    s = model_settings(model, 4096)
    assert (s["window_size"], s["window_attn_skip_freq"], s["softmax_type"]) == ("(127,0)", 2, "learnable")
    # a window without a period windows every layer, as megatron-core does
    alone = interpret(read_command_text(QWEN + " --window-size 4095,0", "q.sh"), {"vocab": 152064})
    assert (alone.model["sliding_window"], alone.model["full_attention_every"]) == (4096, 0)


@pytest.mark.parametrize(("extra", "flag"), [
    ("--window-size '(127,5)'", "--window-size"),
    ("--window-size '(127,0)' --window-attn-skip-freq '([0]*3+[1])*7'", "--window-attn-skip-freq"),
    ("--softmax-type off-by-one", "--softmax-type"),
    ("--norm-epsilon tiny", "--norm-epsilon"),
])
def test_values_the_card_cannot_hold_point_at_the_flag(extra: str, flag: str) -> None:
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(QWEN.replace("--norm-epsilon 1e-6", "") + " " + extra, "q.sh"),
                  {"vocab": 152064})
    [d] = err.value.diagnostics
    assert d.code.id == "P3123" and flag in d.message and d.span is not None


def test_primus_experiment_overrides_reach_the_card_and_come_back(tmp_path: Path) -> None:
    """Primus has no Qwen2.5-7B card (its qwen2.5 cards are 3B, 14B, 32B), so the keys are checked as
    overrides of a card both sides have: llama3.1_8B with Qwen's QKV bias and epsilon."""
    source = yaml.safe_load((FIXTURES / "MI300X" / "llama3.1_8B-BF16-pretrain.yaml").read_text())
    overrides = source["modules"]["pre_trainer"]["overrides"]
    # Primus sets Megatron's arguments by dest: the epsilon of --norm-epsilon is `layernorm_epsilon`
    overrides.update({"add_qkv_bias": True, "layernorm_epsilon": 1.0e-6})
    gpu_dir = tmp_path / "MI300X"
    gpu_dir.mkdir()
    experiment = gpu_dir / "exp.yaml"
    experiment.write_text(yaml.safe_dump(source, sort_keys=False))
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(experiment), "--nodes", "1", "--gpus-per-node", "8", "--out", str(out)]) == 0
    text = out.read_text()
    assert "  qkv_bias = true" in text and "  norm_epsilon = 1e-06" in text
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    back = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert back["add_qkv_bias"] is True and back["layernorm_epsilon"] == 1.0e-6 and "norm_epsilon" not in back
