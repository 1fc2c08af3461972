"""The stdlib loads, holds every card validation needs, and its numbers add up to the published sizes."""

from __future__ import annotations

import functools
from pathlib import Path

import attrs
import pytest

from primus_lang.ir import Gpu, Model, Program
from primus_lang.resources import data_dir

from .params import total_params

lower = pytest.importorskip("primus_lang.lower")
if not hasattr(lower, "load_program"):
    pytest.skip("the loader (primus_lang.lower.load_program) has not landed yet", allow_module_level=True)

STDLIB = data_dir("stdlib")

# The `model_card` keys of the compiled rows of the validation corpus (published_runs.yaml).
VALIDATION_CARDS = {
    "llama2_7b", "llama2_13b", "llama2_70b", "llama3_8b", "llama3_70b", "llama3_1_8b", "llama3_1_70b",
    "llama3_1_405b", "gpt3_175b", "nemotron4_15b", "nemotron4_340b", "mixtral_8x7b", "mixtral_8x22b",
    "deepseek_v3", "qwen3_30b_a3b", "qwen3_235b_a22b", "gpt_oss_120b", "gpt_oss_20b",
    "nemotron_3_nano_30b_a3b", "nemotron_3_super_120b_a12b", "llama4_maverick",
}  # fmt: skip
# The corpus's GPU keys, lowercased, plus the alias and the torchtitan variant.
HARDWARE = {
    "a100_80gb",
    "a100_40gb",
    "mi300x",
    "mi325x",
    "mi355x",
    "h100_sxm",
    "h100",
    "h100_96gb",
    "h200",
    "b200",
    "gb200",
    "b300",
    "gb300",
}


@functools.cache
def programs(folder: str) -> tuple[Program, ...]:
    return tuple(lower.load_program(p) for p in sorted((STDLIB / folder).glob("*.prx")))


def models() -> dict[str, Model]:
    return {m.name: m for p in programs("models") for m in p.models}


def gpus() -> dict[str, Gpu]:
    return {g.name: g for p in programs("hardware") for g in p.gpus}


def test_every_validation_card_is_defined() -> None:
    assert set(models()) >= VALIDATION_CARDS


def test_every_card_names_its_source() -> None:
    for name, m in models().items():
        assert m.source, name


@pytest.mark.parametrize(
    ("card", "params"),
    [
        # Hugging Face checkpoint totals (safetensors metadata).
        ("llama3_1_8b", 8_030_261_248),
        ("llama3_8b", 8_030_261_248),
        ("llama3_1_70b", 70_553_706_496),
        ("mixtral_8x7b", 46_702_792_704),
        # DeepSeek-V3's 671,026,419,200 main-model weights include a 256-entry routing-correction
        # buffer in each of the 58 MoE layers, which the card deliberately does not count.
        ("deepseek_v3", 671_026_419_200 - 58 * 256),
    ],
)
def test_cards_add_up_to_published_sizes(card: str, params: int) -> None:
    assert total_params(models()[card]) == params


def test_hybrid_cards_add_up() -> None:
    """Nemotron 3 Nano is published as 31.6B parameters (its technical report, arXiv:2512.20848), Super
    as 120B; the closed form here and the memory account's tensor list agree to the parameter."""
    from primus_lang.memory.params import embedding_tensors, head_tensors, hybrid_layer_tensors

    m = models()
    nano, sup = m["nemotron_3_nano_30b_a3b"], m["nemotron_3_super_120b_a12b"]
    assert round(total_params(nano) / 1e8) == 316
    assert 120e9 <= total_params(sup) < 121e9
    for card in (nano, sup):
        listed = sum(t.numel for t in embedding_tensors(card, 1))
        listed += sum(t.numel for ch in card.pattern for t in hybrid_layer_tensors(card, ch, 1, 1, 1))
        listed += sum(t.numel for t in head_tensors(card, 1, 1, 1, 1, mtp=False))
        assert listed == total_params(card)
    assert (nano.mamba_layers, nano.attention_layers, nano.moe_layers) == (23, 6, 23)
    assert (sup.mamba_layers, sup.attention_layers, sup.moe_layers) == (40, 8, 40)


def test_inheritance_keeps_the_shapes() -> None:
    m = models()
    # Llama 3.1 changes the longest position and scales RoPE's frequencies, nothing else
    assert m["llama3_1_70b"].replace(name="x", source="", max_position_embeddings=0, rope_scaling=0.0) == m[
        "llama3_70b"
    ].replace(name="x", source="", max_position_embeddings=0)
    assert m["gpt_oss_20b"].moe is not None and m["gpt_oss_20b"].moe.num_experts == 32
    assert m["gpt_oss_20b"].moe.router_bias and m["gpt_oss_20b"].num_layers == 24


def test_model_specifics() -> None:
    m = models()
    assert (m["gpt3_175b"].activation, m["gpt3_175b"].position, m["gpt3_175b"].vocab) == (
        "gelu",
        "learned",
        50257,
    )
    assert m["gpt3_175b"].tied_embeddings and m["gpt3_175b"].bias
    assert m["nemotron4_340b"].activation == "squared_relu" and m["nemotron4_340b"].norm == "layernorm"
    assert m["qwen3_235b_a22b"].qk_layernorm and m["qwen3_235b_a22b"].moe_layers == 94
    assert m["deepseek_v3"].mtp_layers == 1 and m["deepseek_v3"].moe_layers == 58
    assert m["gpt_oss_120b"].sliding_window == 128 and m["gpt_oss_120b"].bias


def test_hardware_profiles() -> None:
    g = gpus()
    # hardware/<vendor>_spec.prx holds the spec sheets as `X_spec`; hardware/calibrated.prx derives
    # `X_calibrated` from each, and hardware/<vendor>.prx names it plainly `X`: only the efficiencies
    # and their provenance (and name, source) may differ from the sheet
    spec = {n.removesuffix("_spec"): x for n, x in g.items() if n.endswith("_spec")}
    assert set(spec) == HARDWARE
    calibrated = {n for n in g if n.endswith("_calibrated")}
    assert calibrated and all(n.removesuffix("_calibrated") in HARDWARE for n in calibrated)
    for name in calibrated | HARDWARE:
        base = spec[name.removesuffix("_calibrated")]
        same = {"name": base.name, "source": base.source, "efficiency": base.efficiency, "provenance": base.provenance}
        assert attrs.evolve(g[name], **same) == base, name
        assert g[name].provenance.basis in ("fitted", "pooled"), name
    assert all(x.provenance.basis == "spec" for x in spec.values())
    # every plain name is the best-informed profile: fitted or pooled, never the bare sheet
    assert all(g[n].provenance.basis in ("fitted", "pooled") for n in HARDWARE)
    assert g["h100"].efficiency == g["h100_sxm"].efficiency
    g = spec
    assert g["h100_sxm"].hbm_capacity == 81559 * 2**20
    assert g["mi300x"].hbm_capacity == 206_141_652_992
    assert g["mi325x"].scale_up_bandwidth == 448e9 and g["mi325x"].scale_up_topology == "mesh"
    assert g["mi355x"].peak_fp8 == pytest.approx(5033.2e12)
    assert g["h200"].nic_bandwidth == 50e9
    assert g["b300"].nic_bandwidth == 100e9
    assert g["gb200"].scale_up_domain == 72 and g["gb300"].scale_up_domain == 72
    assert {n for n, x in g.items() if x.confidence == "low"} == {"b300", "gb300", "h100_96gb"}
    assert g["a100_80gb"].peak_fp8 == 0 and g["a100_40gb"].hbm_bandwidth == pytest.approx(1.555e12)
    assert attrs.evolve(g["h100"], name="h100_sxm_spec", source="") == attrs.evolve(g["h100_sxm"], source="")
    assert g["h100_96gb"].hbm_bandwidth == 2.4e12 and g["h100_96gb"].peak_bf16 == g["h100_sxm"].peak_bf16


def test_clusters() -> None:
    clusters = {c.name: c for p in programs("clusters") for c in p.clusters}
    assert clusters["mi325x_x8"].world == 64
    assert clusters["mi355x_x128"].world == 1024
    assert clusters["gb200_nvl72"].world == 72 and clusters["gb200_nvl72"].domain == 72
    assert clusters["b300_x8"].nic_bandwidth_per_gpu == 100e9


def test_an_eight_gpu_boards_nvlink_ends_at_a_node_of_four() -> None:
    """An H100 board's NVLink joins the 8 GPUs of a node: a cluster of 4-GPU nodes talks across them over
    the NICs (a trial found 2 x 4 projected as one 8-GPU domain), where an NVL72 rack's trays of 4 share
    one; a cluster that states its domain keeps it."""
    import attrs

    clusters = {c.name: c for p in programs("clusters") for c in p.clusters}
    h100, gb200 = clusters["h100_x8"], clusters["gb200_nvl72"]
    assert attrs.evolve(h100, nodes=2, gpus_per_node=4).domain == 4
    assert attrs.evolve(h100, nodes=2, gpus_per_node=4, scale_up_domain=8).domain == 8
    assert attrs.evolve(gb200, nodes=2).domain == 8 and gb200.gpu.scale_up_spans_nodes
    assert h100.domain == 8 and not h100.gpu.scale_up_spans_nodes


def test_examples_load_one_space_each() -> None:
    for path in sorted(data_dir("examples").glob("*.prx")):
        program = lower.load_program(Path(path))
        assert len(program.spaces) == 1, path
        assert program.spaces[0].name == path.stem


def test_docs_table_every_definition() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "stdlib.md").read_text()
    names = set(models()) | set(gpus()) | {c.name for p in programs("clusters") for c in p.clusters}
    assert {n for n in names if f"`{n}`" not in docs} == set()


# LayerNorm's biases, which the closed form leaves out (the memory account's are checked against
# megatron-core on CPU, tests/memory/test_ground_truth.py)
LAYERNORM_CARDS = {"gpt3_175b", "nemotron4_15b", "nemotron4_340b"}


@pytest.mark.parametrize("card", sorted(VALIDATION_CARDS - LAYERNORM_CARDS))
def test_the_size_explain_reports_is_the_cards_closed_form(card: str) -> None:
    """`explain`'s model size (the memory account's tensors of the model built whole) against this
    file's independent closed form: equal but for the vocabulary's padding to 128 (a new user's trial
    found no command reporting a card's parameter count)."""
    from primus_lang.ir import Candidate
    from primus_lang.ir.derived import padded_vocab
    from primus_lang.memory import model_size

    m = models()[card]
    size = model_size(m, Candidate(seq_len=m.seq_len, gbs=64))
    padding = (padded_vocab(m.vocab, 1) - m.vocab) * m.hidden * (1 if m.tied_embeddings else 2)
    assert size.total == total_params(m) + padding
    assert (size.active < size.total) == (m.moe is not None)
