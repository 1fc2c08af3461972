"""import-hf maps each supported family's config.json to the numbers of the stdlib card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.hfimport import card_name, map_config, read_config, render_card
from primus_lang.ir.model import Mla, Moe
from primus_lang.syntax import parse
from primus_lang.syntax.format import format_source

FIXTURES = Path(__file__).parent / "fixtures"


def imported(stem: str, name: str | None = None, seq_len: int | None = None):  # type: ignore[no-untyped-def]
    config = read_config(FIXTURES / f"{stem}.json")
    return map_config(config, name or stem, seq_len=seq_len)


def test_llama3_1_70b_numbers() -> None:
    m = imported("llama3_1_70b").model
    assert (m.num_layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.head_dim) == (
        80,
        8192,
        28672,
        64,
        8,
        128,
    )
    assert (m.vocab, m.max_position_embeddings, m.seq_len) == (128256, 131072, 8192)
    assert (m.activation, m.norm, m.position, m.tied_embeddings, m.bias) == (
        "swiglu",
        "rmsnorm",
        "rope",
        False,
        False,
    )
    assert m.moe is None and m.mla is None


def test_mixtral_every_layer_moe() -> None:
    m = imported("mixtral_8x7b").model
    assert m.moe == Moe(num_experts=8, top_k=2, ffn_hidden=14336, aux_loss=0.02)  # router_aux_loss_coef
    assert m.ffn_hidden == 14336
    assert m.seq_len == 4096  # no RoPE scaling: the 4096-token default


def test_qwen3_moe_head_dim_and_qk_norm() -> None:
    m = imported("qwen3_235b_a22b").model
    assert m.heads * m.head_dim == 8192 != m.hidden
    assert m.qk_layernorm is True
    assert m.moe == Moe(num_experts=128, top_k=8, ffn_hidden=1536, aux_loss=0.001)
    assert m.ffn_hidden == 12288


def test_deepseek_v3_mla_moe_mtp() -> None:
    m = imported("deepseek_v3").model
    assert m.mla == Mla(
        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, q_lora_rank=1536
    )
    assert m.moe == Moe(
        num_experts=256, top_k=8, ffn_hidden=2048, shared_experts=1, shared_ffn_hidden=2048, dense_layers=3,
        router_score="sigmoid", bias_balancing=True,  # scoring_func sigmoid, topk_method noaux_tc
        topk_scaling=2.5, router_groups=8, router_group_topk=4,  # routed_scaling_factor, n_group, topk_group
    )
    assert (m.mtp_layers, m.ffn_hidden, m.seq_len, m.moe_layers) == (1, 18432, 4096, 58)


def test_gpt_oss_biases_and_window() -> None:
    result = imported("gpt_oss_120b")
    m = result.model
    assert m.bias is True and m.sliding_window == 128
    assert m.moe == Moe(num_experts=128, top_k=4, ffn_hidden=2880, router_bias=True, expert_bias=True,
                        aux_loss=0.9)
    assert m.head_dim == 64 and m.heads * m.head_dim == 4096
    assert m.attention_sinks and not any("sinks" in note for note in result.notes)
    # its config says silu, its MLP runs (up + 1) * gate * sigmoid(1.702 gate), clamped: Megatron's quick GeGLU
    assert (m.activation, m.glu_offset, m.activation_clamp) == ("quick_geglu", 1.0, 7.0) and m.gated


def test_nemotron_squared_relu_layernorm() -> None:
    m = imported("nemotron4_15b").model
    assert (m.activation, m.norm, m.ffn_hidden, m.vocab) == ("squared_relu", "layernorm", 24576, 256000)


def test_seq_len_override() -> None:
    assert imported("mixtral_8x7b", seq_len=8192).model.seq_len == 8192
    # a training length beyond the positions the checkpoint was trained for is said (a new user's trial)
    longer = imported("llama3_1_70b", seq_len=1_000_000)
    assert longer.model.seq_len == 1_000_000
    assert any(n.startswith("seq_len 1,000,000 is beyond max_position_embeddings 131,072") for n in longer.notes)
    assert not any("beyond max_position_embeddings" in n for n in imported("llama3_1_70b", seq_len=8192).notes)


@pytest.mark.parametrize(
    "stem",
    ["llama3_1_70b", "mixtral_8x7b", "qwen3_235b_a22b", "deepseek_v3", "gpt_oss_120b", "nemotron4_15b"],
)
def test_rendered_card_parses(stem: str) -> None:
    result = imported(stem)
    text = render_card(result, f"{stem}.json")
    assert parse(text, f"{stem}.prx") is not None
    assert format_source(text, f"{stem}.prx") == text  # already in `primusc fmt` layout
    assert f"model {stem} {{" in text
    for note in result.notes:
        assert note in text


def test_card_name_from_hub_id_and_file() -> None:
    assert card_name(read_config(FIXTURES / "llama3_1_70b.json")) == "llama_3_1_70b"
    assert card_name(read_config(FIXTURES / "deepseek_v3.json")) == "deepseek_v3"


def test_card_name_of_a_config_json_is_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "Qwen3-30B-A3B"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "qwen3_moe"}')
    assert card_name(read_config(folder / "config.json")) == "qwen3_30b_a3b"


def write(tmp_path: Path, data: dict[str, object]) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def test_a_mistral_window_is_kept_where_a_longer_sequence_would_meet_it(tmp_path: Path) -> None:
    """Mistral 7B v0.1's 4,096-token window on every layer was left out of a card whose seq_len is 4,096:
    a space training at 16k then projected and launched full attention."""
    llama = json.loads((FIXTURES / "llama3_1_70b.json").read_text())
    data = llama | {"model_type": "mistral", "sliding_window": 8192, "rope_scaling": None}
    result = map_config(read_config(write(tmp_path, data)), "m")
    assert (result.model.sliding_window, result.model.full_attention_every, result.model.seq_len) == (8192, 0, 4096)


def test_a_window_no_shorter_than_the_longest_context_is_noted(tmp_path: Path) -> None:
    llama = json.loads((FIXTURES / "llama3_1_70b.json").read_text())
    longest = llama["max_position_embeddings"]
    data = llama | {"model_type": "mistral", "sliding_window": longest, "rope_scaling": None}
    result = map_config(read_config(write(tmp_path, data)), "m")
    assert result.model.sliding_window == 0
    assert any(f"sliding_window {longest} left out: no shorter than max_position_embeddings" in n for n in result.notes)


def test_qwen3_dense_has_qk_norm_and_no_moe(tmp_path: Path) -> None:
    qwen = json.loads((FIXTURES / "qwen3_235b_a22b.json").read_text())
    data = {k: v for k, v in qwen.items() if "expert" not in k and k != "moe_intermediate_size"}
    model = map_config(read_config(write(tmp_path, data | {"model_type": "qwen3"})), "q").model
    assert model.qk_layernorm and model.moe is None and model.ffn_hidden == 12288


def test_deepseek_without_query_compression(tmp_path: Path) -> None:
    ds = json.loads((FIXTURES / "deepseek_v3.json").read_text())
    data = ds | {"model_type": "deepseek_v2", "q_lora_rank": None, "num_nextn_predict_layers": None}
    model = map_config(read_config(write(tmp_path, data)), "d").model
    assert model.mla is not None and model.mla.q_lora_rank == 0 and model.mtp_layers == 0


def test_kimi_k2_maps_like_deepseek_v3(tmp_path: Path) -> None:
    ds = json.loads((FIXTURES / "deepseek_v3.json").read_text())
    model = map_config(read_config(write(tmp_path, ds | {"model_type": "kimi_k2"})), "k").model
    reference = map_config(read_config(FIXTURES / "deepseek_v3.json"), "k").model
    assert model.replace(source="") == reference.replace(source="")


def test_qwen2_has_qkv_bias_not_qk_norms() -> None:
    """issue 20: a Qwen2.5 config imported as qwen3 came out with QK norms and without its QKV bias."""
    m = imported("qwen2_5_72b").model
    assert (m.qkv_bias, m.bias, m.qk_layernorm) == (True, False, False)


def test_gemma2_features() -> None:
    result = imported("gemma2_2b", seq_len=8192)
    m = result.model
    assert (m.activation, m.norm_placement, m.tied_embeddings, m.norm_epsilon) == ("geglu", "sandwich", True, 1e-6)
    assert (m.attention_softcap, m.logit_softcap) == (50.0, 30.0)
    assert (m.sliding_window, m.full_attention_every, m.windowed_layers) == (4096, 2, 13)
    assert any("query_pre_attn_scalar" in note for note in result.notes)


def test_gemma3_window_period_and_olmo2_norms() -> None:
    g = imported("gemma3_27b").model
    assert (g.full_attention_every, g.qk_layernorm, g.attention_softcap) == (6, True, 0.0)
    o = imported("olmo2_7b").model
    assert (o.norm_placement, o.qk_layernorm, o.qk_norm_whole) == ("post", True, True)


def test_window_on_every_layer_shorter_than_seq_len(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "mixtral_8x7b.json").read_text()) | {"sliding_window": 1024}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    m = map_config(read_config(path), "m").model
    assert (m.sliding_window, m.full_attention_every, m.windowed_layers) == (1024, 0, m.num_layers)


def test_layer_types_give_the_full_attention_period(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "gpt_oss_120b.json").read_text())
    data["layer_types"] = (["sliding_attention"] * 5 + ["full_attention"]) * 6
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    m = map_config(read_config(path), "m").model
    assert (m.full_attention_every, m.windowed_layers) == (6, 30)


def test_a_gemma3_text_config_takes_its_class_defaults_for_what_it_leaves_out(tmp_path: Path) -> None:
    """google/gemma-3-27b's text_config omits what Gemma3TextConfig defaults (vocab_size, the context,
    the RoPE base, the epsilon, the window period): refused for the vocabulary, and once patched read with
    the defaults of other classes (a period of 2, a base of 10,000, an epsilon of 1e-5)."""
    data = {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], "head_dim": 128,
            "hidden_size": 5376, "intermediate_size": 21504, "num_attention_heads": 32, "num_hidden_layers": 62,
            "num_key_value_heads": 16, "query_pre_attn_scalar": 168, "sliding_window": 1024}
    result = map_config(read_config(write(tmp_path, data)), "g")
    m = result.model
    assert (m.vocab, m.max_position_embeddings, m.rope_theta, m.norm_epsilon) == (262_208, 131_072, 1e6, 1e-6)
    assert (m.sliding_window, m.full_attention_every, m.tied_embeddings) == (1024, 6, True)
    assert any("Gemma3TextConfig defaults" in n and "vocab_size 262208" in n for n in result.notes)
    # gemma-3-4b's text_config leaves out its heads too: the class's 8 and 4
    small = {k: v for k, v in data.items() if k not in ("num_attention_heads", "num_key_value_heads")}
    assert (map_config(read_config(write(tmp_path, small)), "g").model.heads,
            map_config(read_config(write(tmp_path, small)), "g").model.kv_heads) == (8, 4)
    stated = map_config(read_config(write(tmp_path, data | {"rope_theta": 500_000.0})), "g")
    assert stated.model.rope_theta == 500_000.0
    assert not any("rope_theta" in n for n in stated.notes if "defaults" in n)


def _variant(tmp_path: Path, stem: str, change: dict[str, object], drop: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """A fixture's config with some fields changed or left out."""
    data = {k: v for k, v in json.loads((FIXTURES / f"{stem}.json").read_text()).items() if k not in drop}
    path = tmp_path / f"{stem}.json"
    path.write_text(json.dumps({**data, **change}))
    return map_config(read_config(path), stem)


def test_a_transformers_v5_config_reads_its_rope_parameters(tmp_path: Path) -> None:
    # transformers v5 writes RoPE's base, scaling and rotary share into one `rope_parameters` object
    v4 = imported("llama3_1_70b").model
    scaling = json.loads((FIXTURES / "llama3_1_70b.json").read_text())["rope_scaling"]
    v5 = _variant(tmp_path, "llama3_1_70b", {"rope_parameters": {"rope_theta": 500000.0, **scaling}},
                  drop=("rope_theta", "rope_scaling")).model
    assert v5 == v4 and (v5.rope_theta, v5.rope_scaling, v5.seq_len) == (500000.0, 8.0, 8192)
    glm = _variant(tmp_path, "glm4_5_air", {"rope_parameters": {"rope_theta": 1e6, "rope_type": "default",
                                                                "partial_rotary_factor": 0.5}},
                   drop=("rope_theta", "partial_rotary_factor")).model
    assert (glm.rope_theta, glm.rotary_percent) == (1e6, 0.5)
    # every family's RoPE rotates the share its config names (transformers' RoPE init reads it for all)
    part = _variant(tmp_path, "llama3_1_70b", {"rope_parameters": {"rope_theta": 1e6, "rope_type": "default",
                                                                   "partial_rotary_factor": 0.25}})
    assert (part.model.rotary_percent, part.model.rope_theta) == (0.25, 1e6)  # the newer object over rope_theta
    assert any("rope_theta 1000000.0 read from rope_parameters, over the top-level" in n for n in part.notes)


def test_qwen3_windows_the_layers_from_max_window_layers_on(tmp_path: Path) -> None:
    # transformers' Qwen3Config: layer i is windowed where use_sliding_window and i >= max_window_layers (28)
    window = {"use_sliding_window": True, "sliding_window": 4096}
    none = _variant(tmp_path, "qwen3_235b_a22b", {**window, "max_window_layers": 94})
    assert none.model.sliding_window == 0 and any("no layer is windowed" in n for n in none.notes)
    every = _variant(tmp_path, "qwen3_235b_a22b", {**window, "max_window_layers": 0}).model
    assert (every.sliding_window, every.full_attention_every) == (4096, 0)
    from primus_lang.diagnostics import CompileError

    with pytest.raises(CompileError, match=r"layers 28\.\.93 of 94 only"):
        _variant(tmp_path, "qwen3_235b_a22b", window, drop=("max_window_layers",))  # the default 28
    with pytest.raises(CompileError, match="layer_types lists 93 layers; num_hidden_layers is 94"):
        _variant(tmp_path, "qwen3_235b_a22b", {**window, "layer_types": ["full_attention"] * 93})


def test_deepseeks_routing_and_balancing_are_the_cards(tmp_path: Path) -> None:
    # DeepSeek-V2's group-limited routing, its weights' scale and its per-sequence balancing loss
    v2 = _variant(tmp_path, "deepseek_v3", {"scoring_func": "softmax", "topk_method": "group_limited_greedy",
                                            "n_group": 8, "topk_group": 3, "routed_scaling_factor": 16.0,
                                            "num_experts_per_tok": 6, "aux_loss_alpha": 0.003, "seq_aux": True,
                                            "norm_topk_prob": False})
    moe = v2.model.moe
    assert moe is not None and (moe.router_score, moe.bias_balancing) == ("softmax", False)
    assert (moe.topk_scaling, moe.router_groups, moe.router_group_topk) == (16.0, 8, 3)
    assert (moe.aux_loss, moe.aux_loss_type) == (0.003, "seq_aux_loss")
    # norm_topk_prob false (DeepseekV2Config's default): a softmax over every expert, the top-k not renormalized
    assert moe.router_pre_softmax and v2.model.qk_layernorm
    normed = _variant(tmp_path, "deepseek_v3", {"scoring_func": "softmax", "norm_topk_prob": True}).model.moe
    assert normed is not None and not normed.router_pre_softmax
    one = _variant(tmp_path, "deepseek_v3", {"n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0}).model.moe
    assert one is not None and (one.topk_scaling, one.router_groups, one.router_group_topk) == (0.0, 0, 0)


def test_routing_and_checkpoint_facts_the_card_leaves_out_are_said(tmp_path: Path) -> None:
    """A new user's trial: norm_topk_prob said for Qwen3 but not DeepSeek-V3, a checkpoint's
    quantization_config dropped silently, and DeepSeek's groups kept under `topk_method: greedy`,
    whose router picks from every expert."""
    # DeepSeek-V3's sigmoid router renormalizes (norm_topk_prob true), as Megatron's does: nothing to say
    assert not any("norm_topk_prob" in n for n in imported("deepseek_v3").notes)
    config = json.loads((FIXTURES / "deepseek_v3.json").read_text())
    config |= {"quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
               "topk_method": "greedy", "scoring_func": "softmax"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    got = map_config(read_config(str(path)), "ds")
    assert got.model.moe is not None and got.model.moe.router_groups == 0
    assert any(n.startswith("n_group 8 and topk_group left out: topk_method greedy") for n in got.notes)
    assert any(n.startswith("the checkpoint's quantization_config (fp8) not represented") for n in got.notes)


@pytest.mark.parametrize(("stem", "dropped"), [
    ("deepseek_v3", ("n_shared_experts", "first_k_dense_replace", "q_lora_rank", "n_group", "topk_group",
                     "routed_scaling_factor", "scoring_func", "topk_method")),
    ("gpt_oss_120b", ("sliding_window", "layer_types", "head_dim", "swiglu_limit")),
    ("glm4_5_air", ("partial_rotary_factor", "n_shared_experts", "first_k_dense_replace")),
    ("gemma2_2b", ("sliding_window", "attn_logit_softcapping", "final_logit_softcapping", "head_dim")),
    ("llama4_scout", ("attention_chunk_size",)),
])
def test_a_field_left_out_takes_its_configuration_class_default(tmp_path: Path, stem: str,
                                                                 dropped: tuple[str, ...]) -> None:
    """config.json leaves out what equals the class default (a trial's DeepSeek-V3 without its shared expert,
    dense first layers and query LoRA read as a 709B model): the card is transformers' model, and says so.
    Every fixture states these fields at the defaults, so dropping them changes nothing."""
    data = json.loads((FIXTURES / f"{stem}.json").read_text())
    whole = map_config(read_config(write(tmp_path, data)), "m")
    present = [k for k in dropped if k in data]
    assert present, "the fixture states the fields the test drops"
    lean = map_config(read_config(write(tmp_path, {k: v for k, v in data.items() if k not in dropped})), "m")
    assert lean.model == whole.model
    assert any("defaults, which config.json leaves out" in n and present[0] in n for n in lean.notes)


def test_moe_layers_listing_fewer_layers_is_refused(tmp_path: Path) -> None:
    """Llama4TextConfig builds MoE on the layers `moe_layers` lists, over its period: the card had made every
    layer MoE."""
    data = json.loads((FIXTURES / "llama4_scout.json").read_text())
    every = data | {"moe_layers": list(range(data["num_hidden_layers"]))}
    assert map_config(read_config(write(tmp_path, every)), "m").model.moe is not None
    with pytest.raises(CompileError, match="MoE on listed layers that are not every"):
        map_config(read_config(write(tmp_path, data | {"moe_layers": list(range(1, data["num_hidden_layers"], 2))})), "m")


def test_llama4_maverick_s_interleaving_is_its_cycle(tmp_path: Path) -> None:
    """Llama 4 Maverick: a MoE on every second layer (interleave_moe_layer_step 2), the layers between dense
    (intermediate_size_mlp wide); was refused before the IR's `moe.layer_cycle`."""
    from primus_lang.lower import stdlib_cards

    data = json.loads((FIXTURES / "llama4_scout.json").read_text())
    data |= {"interleave_moe_layer_step": 2, "num_local_experts": 128, "use_qk_norm": False,
             "moe_layers": list(range(1, data["num_hidden_layers"], 2))}
    model = map_config(read_config(write(tmp_path, data)), "m").model
    assert model.moe is not None and model.moe.layer_cycle == "-E" and (model.moe_layers, model.dense_layers) == (24, 24)
    card = stdlib_cards()["llama4_maverick"][1]
    assert (card.moe, card.ffn_hidden, card.num_layers) == (model.moe, model.ffn_hidden, model.num_layers)


@pytest.mark.parametrize("change", [{"sliding_window": "4096"}, {"sliding_window": -1}, {"layer_types": "sliding_attention"}])
def test_a_window_of_the_wrong_type_is_refused_not_dropped(tmp_path: Path, change: dict[str, object]) -> None:
    data = json.loads((FIXTURES / "gpt_oss_120b.json").read_text()) | change
    with pytest.raises(CompileError) as err:
        map_config(read_config(write(tmp_path, data)), "m")
    assert any(next(iter(change)) in d.message for d in err.value.diagnostics)


def test_a_rope_scaling_without_a_type_is_noted(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "llama3_1_70b.json").read_text()) | {"rope_scaling": {"factor": 8.0}}
    assert any("names no `rope_type`" in n for n in map_config(read_config(write(tmp_path, data)), "m").notes)
