"""Multi-latent attention and multi-token prediction through import-recipe: a DeepSeek launch reads
into the stdlib card (emit/arguments.py's MLA_ARGUMENTS and CARD_ARGUMENTS, the tables emission
writes them from), and every MLA or MTP card's emitted arguments read back as the same card. The
flag-by-flag emission of the fixtures is in test_round_trip.py's CASES."""

from __future__ import annotations

import shlex
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit.arguments import MLA_ARGUMENTS, Settings, balancing_settings, model_settings
from primus_lang.emit.profiles import CORE_V0_16
from primus_lang.frameworks import megatron
from primus_lang.ir.model import Mla, card_fields
from primus_lang.lower import load_space, stdlib_cards
from primus_lang.recipes import interpret
from primus_lang.recipes.flags import MODELLED
from primus_lang.recipes.megatron import read_command_text

FIXTURES = Path(__file__).parent / "fixtures"
V2_LITE = (FIXTURES / "megatron_deepseek_v2_lite.sh").read_text().rstrip()
MLA_CARDS = sorted(n for n, (_, m) in stdlib_cards().items() if (m.mla is not None or m.mtp_layers) and not m.pattern)


def _line(settings: Settings) -> str:
    """Settings as the Megatron-LM 0.16 launch files spell them (emit/profiles.py)."""
    return " ".join(shlex.join([flag, *values]) for flag, values in CORE_V0_16.argv(settings))


def test_mla_flags_are_modelled_not_carried() -> None:
    for a in MLA_ARGUMENTS.values():
        assert a.dest in MODELLED and f"--{a.dest.replace('_', '-')}" in megatron.flags(megatron.DEFAULT_VERSION)
    assert "multi_latent_attention" in MODELLED and "mtp_num_layers" in MODELLED


def test_the_cards_found_are_the_mla_and_mtp_families() -> None:
    assert {"deepseek_v2", "deepseek_v2_lite", "deepseek_v3", "kimi_k2"} <= set(MLA_CARDS)


@pytest.mark.parametrize("name", MLA_CARDS)
def test_every_mla_or_mtp_card_reads_back_from_its_emitted_arguments(name: str) -> None:
    card = stdlib_cards()[name][1]
    settings: Settings = {**model_settings(card, card.seq_len), "global_batch_size": 8}
    if card.moe is not None:
        settings.update(balancing_settings(card))
    imp = interpret(read_command_text(_line(settings), "emitted.sh"), card_fields(card))
    assert imp.model["mla"] == card.mla
    assert imp.model["mtp_layers"] == card.mtp_layers
    assert imp.model["moe"] == card.moe
    assert not {k for k, _ in imp.passthrough} & {a.dest for a in MLA_ARGUMENTS.values()}


@pytest.mark.parametrize(("fixture", "card"), [("megatron_deepseek_v2_lite.sh", "deepseek_v2_lite"),
                                               ("megatron_deepseek_v3.sh", "deepseek_v3")])
def test_a_deepseek_command_line_is_the_stdlib_card_as_written(tmp_path: Path, fixture: str, card: str) -> None:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(FIXTURES / fixture), "--gpu", "h100", "--out", str(out)]) == 0
    assert f"= {card} {{ }}" in out.read_text()  # no override of the card
    space = load_space(out)
    stdlib = stdlib_cards()[card][1]
    assert card_fields(space.model) == card_fields(stdlib)


def test_mla_without_its_widths_takes_megatrons_defaults() -> None:
    line = V2_LITE.replace("--kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128", "")
    imp = interpret(read_command_text(line, "d.sh"), {"vocab": 102400})
    assert imp.model["mla"] == Mla(kv_lora_rank=32, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)


def test_a_new_mla_shape_is_written_as_a_card_of_its_own(tmp_path: Path) -> None:
    recipe = tmp_path / "wide.sh"
    recipe.write_text(V2_LITE.replace("--kv-lora-rank 512", "--kv-lora-rank 256").replace(
        "--num-layers 27", "--num-layers 27 --vocab-size 102400"))
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(out)]) == 0
    text = out.read_text()
    assert "mla { kv_lora_rank = 256" in text and "deepseek_v2_lite" not in text
    mla = load_space(out).model.mla
    assert mla is not None and (mla.kv_lora_rank, mla.q_lora_rank) == (256, 0)


@pytest.mark.parametrize(("freq", "dense", "cycle"), [
    ("2", 0, "E-"),  # megatron-core: layers 0, 2, 4, ... route to experts
    ("'([0,1]*13+[0])'", 0, "-E"),  # Llama 4 Maverick's phase, written as a repeated list
    ("'([0]*3+[1,0]*12)'", 3, "E-"),  # a dense prefix, then the cycle
])
def test_an_interleaved_moe_reads_as_its_cycle(freq: str, dense: int, cycle: str) -> None:
    line = V2_LITE.replace("'([0]*1+[1]*26)'", freq)
    moe = interpret(read_command_text(line, "d.sh"), {"vocab": 102400}).model["moe"]
    assert (moe.dense_layers, moe.layer_cycle) == (dense, cycle)


def test_a_dense_prefix_written_as_a_list_reads_the_same() -> None:
    line = V2_LITE.replace("'([0]*1+[1]*26)'", "'[" + ",".join(["0"] + ["1"] * 26) + "]'")
    imp = interpret(read_command_text(line, "d.sh"), {"vocab": 102400})
    assert imp.model["moe"].dense_layers == 1


@pytest.mark.parametrize(("change", "code", "flag", "words"), [
    # a width without the switch is a width Megatron never builds
    ("--multi-latent-attention ", "P3125", "--kv-lora-rank", "without `multi_latent_attention`"),
    ("--kv-channels 128", "P3124", "--group-query-attention", "multi-latent"),
    ("--kv-lora-rank 512", "P3123", "--kv-lora-rank", "whole number"),
    # MoE layers first, then dense ones: no dense prefix and no short cycle
    ("'([0]*1+[1]*26)'", "P3125", "--moe-layer-freq", "short repeating cycle"),
    ("'([0]*1+[1]*26)'", "P3123", "--moe-layer-freq", "one entry per layer"),
    ("--v-head-dim 128", "P3123", "--v-head-dim", "whole number"),
])
def test_what_the_card_cannot_hold_points_at_the_flag(change: str, code: str, flag: str, words: str) -> None:
    replacement = {
        ("--multi-latent-attention ", "P3125"): "",
        ("--kv-channels 128", "P3124"): "--kv-channels 128 --group-query-attention --num-query-groups 16",
        ("--kv-lora-rank 512", "P3123"): "--kv-lora-rank wide",
        ("'([0]*1+[1]*26)'", "P3125"): "'([1]*13+[0]*14)'",
        ("'([0]*1+[1]*26)'", "P3123"): "'([0]*1+[1]*25)'",
        ("--v-head-dim 128", "P3123"): "--v-head-dim 0",
    }[(change, code)]
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(V2_LITE.replace(change, replacement, 1), "d.sh"), {"vocab": 102400})
    found = [d for d in err.value.diagnostics if d.code.id == code]
    assert found, [d.message for d in err.value.diagnostics]
    d = found[0]
    assert flag in d.message and words in d.message and d.span is not None


def test_an_experiment_cannot_switch_its_cards_mla_off() -> None:
    card = card_fields(stdlib_cards()["deepseek_v2_lite"][1])
    recipe = read_command_text(V2_LITE, "d.sh")
    entries = dict(recipe.entries)
    entries["multi_latent_attention"] = attrs.evolve(entries["multi_latent_attention"], value=False)
    with pytest.raises(CompileError) as err:
        interpret(attrs.evolve(recipe, entries=entries), card, fill_all=True)
    [d] = [d for d in err.value.diagnostics if d.code.id == "P3125"]
    assert "--multi-latent-attention" in d.message and d.span is not None


def test_a_forced_even_routing_is_read_as_no_busiest_expert_rank(tmp_path: Path) -> None:
    """`--moe-router-force-load-balancing` (a benchmark's even split of tokens) becomes the space's
    `assume moe_imbalance = 1`: the busiest expert rank holds the mean share, in memory and in time."""
    plain, forced = tmp_path / "plain.prx", tmp_path / "forced.prx"
    recipe = tmp_path / "forced.sh"
    recipe.write_text(V2_LITE + " --moe-router-force-load-balancing\n")
    assert main(["import-recipe", str(FIXTURES / "megatron_deepseek_v2_lite.sh"), "--gpu", "h100", "--out",
                 str(plain)]) == 0
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(forced)]) == 0
    assert "moe_imbalance" not in plain.read_text()
    assert "  assume moe_imbalance = 1  #" in forced.read_text()
    assert load_space(plain).settings.moe_imbalance == 1.1 and load_space(forced).settings.moe_imbalance == 1.0


def test_a_layout_without_the_presets_mtp_layer_names_where_it_comes_from(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's MI355X DeepSeek-V3 experiment: its layout has no `m`, its preset `deepseek_v3.yaml` one
    # MTP layer; megatron-core's layout check refuses that, and the refusal says where the layer is set
    layout = "Et*1|t*1|" + "t*2|" * 29 + "t*1,L"
    text = ("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
            "    model: deepseek_v3.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 256\n"
            "      seq_length: 4096\n      max_position_embeddings: 4096\n      mock_data: true\n"
            "      pipeline_model_parallel_size: 16\n      expert_model_parallel_size: 8\n"
            f'      pipeline_model_parallel_layout: "{layout}"\n')
    experiment = tmp_path / "MI355X" / "dsv3.yaml"
    experiment.parent.mkdir()
    experiment.write_text(text)
    assert main(["import-recipe", str(experiment), "--out", str(tmp_path / "a.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3129" in err and "`deepseek_v3.yaml: mtp_num_layers` = 1" in err and "`mtp_num_layers: null`" in err
    experiment.write_text(text + "      mtp_num_layers: null\n")
    assert main(["import-recipe", str(experiment), "--out", str(tmp_path / "b.prx")]) == 0


def test_rope_settings_are_read_as_megatron_runs_them() -> None:
    # --rotary-percent into the card; --use-rope-scaling at the factor megatron-core applies (8), whatever
    # --rope-scaling-factor says, since Megatron-LM's GPT builder never hands it to GPTModel
    line = V2_LITE.replace("--num-layers 27", "--num-layers 27 --rotary-percent 0.5 --use-rope-scaling "
                           "--rope-scaling-factor 32")
    imp = interpret(read_command_text(line, "d.sh"), {"vocab": 102400})
    assert (imp.model["rotary_percent"], imp.model["rope_scaling"]) == (0.5, 8.0)
    assert any("--rope-scaling-factor 32` is read as 8" in n for n in imp.notes)
    plain = interpret(read_command_text(V2_LITE.replace("--num-layers 27", "--num-layers 27 --rope-scaling-factor 32"),
                                        "d.sh"), {"vocab": 102400})
    assert plain.model["rope_scaling"] == 0.0  # the factor without the switch scales nothing
