"""The card features of issue 20 item 2 (QKV bias, norm epsilon, soft-capping, windowed-layer
patterns, GeGLU, norm placement) reach the memory account, the projection and emission."""

from __future__ import annotations

import pytest

from primus_lang.emit.arguments import model_feature_problems, model_settings
from primus_lang.ir.model import Model
from primus_lang.memory.params import layer_tensors
from primus_lang.project.features import feature_warnings, ignored_features

BASE = Model(name="m", num_layers=12, hidden=256, ffn_hidden=512, heads=8, kv_heads=2, head_dim=64,
             vocab=1000, seq_len=512, max_position_embeddings=512)


def _numel(m: Model, tp: int = 1) -> int:
    return sum(t.numel for t in layer_tensors(m, tp, 1, 1, False))


def test_qkv_bias_is_the_qkv_projection_only() -> None:
    for tp in (1, 2):
        added = _numel(BASE.replace(qkv_bias=True), tp) - _numel(BASE, tp)
        assert added == (8 + 2 * 2) * 64 // tp
    both = _numel(BASE.replace(bias=True, qkv_bias=True)) - _numel(BASE.replace(bias=True))
    assert both == 0  # `bias` already covers the QKV projection


def test_norm_placement_counts() -> None:
    assert _numel(BASE.replace(norm_placement="sandwich")) - _numel(BASE) == 2 * 256
    assert _numel(BASE.replace(norm_placement="post")) == _numel(BASE)


def test_whole_qk_norm_spans_every_head() -> None:
    per_head = _numel(BASE.replace(qk_layernorm=True))
    whole = _numel(BASE.replace(qk_layernorm=True, qk_norm_whole=True))
    assert per_head - _numel(BASE) == 2 * 64
    assert whole - _numel(BASE) == (8 + 2) * 64


def test_geglu_has_swiglu_shapes() -> None:
    assert _numel(BASE.replace(activation="geglu")) == _numel(BASE)
    assert BASE.replace(activation="geglu").gated and not BASE.replace(activation="gelu").gated


@pytest.mark.parametrize(("every", "windowed"), [(2, 6), (6, 10), (0, 12), (1, 0)])
def test_windowed_layers_follow_megatron(every: int, windowed: int) -> None:
    # megatron-core windows layer i (1-based) unless i % every == 0; Gemma 3 (every 6): 10 of 12
    m = BASE.replace(sliding_window=128, full_attention_every=every)
    assert m.windowed_layers == windowed
    assert BASE.windowed_layers == 0


def test_emission_flags() -> None:
    s = model_settings(BASE.replace(qkv_bias=True, norm_epsilon=1e-6, sliding_window=1024,
                                    full_attention_every=6), 512)
    assert s["add_qkv_bias"] is True and s["add_bias_linear"] is False
    assert s["norm_epsilon"] == 1e-6
    assert (s["window_size"], s["window_attn_skip_freq"]) == ("(1023,0)", 6)
    plain = model_settings(BASE, 512)
    assert "norm_epsilon" not in plain and "add_qkv_bias" not in plain  # Megatron's defaults
    every = model_settings(BASE.replace(sliding_window=4096, full_attention_every=0), 512)
    assert "window_attn_skip_freq" not in every and every["window_size"] == "(4095,0)"


def test_emission_refuses_what_megatron_cannot_build() -> None:
    assert model_feature_problems(BASE) == []
    gemma = BASE.replace(attention_softcap=50.0, logit_softcap=30.0, norm_placement="sandwich")
    problems = model_feature_problems(gemma)
    assert len(problems) == 2
    assert "`attention_softcap` = 50 and `logit_softcap` = 30" in problems[0]
    assert "sandwich" in problems[1]
    assert "qk_norm_whole" in model_feature_problems(BASE.replace(qk_layernorm=True, qk_norm_whole=True))[0]


def test_rope_is_written_as_the_card_says_and_a_factor_megatron_ignores_is_refused() -> None:
    plain = model_settings(BASE, 512)
    assert "rotary_percent" not in plain and "use_rope_scaling" not in plain  # Megatron's defaults
    half = model_settings(BASE.replace(rotary_percent=0.5, rope_scaling=8.0), 512)
    assert half["rotary_percent"] == 0.5 and half["use_rope_scaling"] is True
    assert "rope_scaling_factor" not in half  # never read by Megatron-LM's GPT builder: not written
    assert model_feature_problems(BASE.replace(rope_scaling=8.0)) == []
    (why,) = model_feature_problems(BASE.replace(rope_scaling=32.0))  # Llama 3.2's
    assert "`rope_scaling` = 32" in why and "gpt_builders.py" in why and "`rope_scaling = 0`" in why


def test_w6010_names_uncosted_features() -> None:
    assert feature_warnings(BASE) == [] and ignored_features(BASE.replace(logit_softcap=30.0))
    (w,) = feature_warnings(BASE.replace(attention_softcap=50.0, logit_softcap=30.0))
    assert w.code.id == "W6010" and len(w.notes) == 2


def _attention_tasks(m: Model) -> list[tuple[int, float]]:
    from primus_lang.ir import Candidate
    from primus_lang.project import stage_ops
    from primus_lang.project.ops import Attention
    from tests.project.fixtures import cluster

    cand = Candidate(tp=1, mbs=1, gbs=8, seq_len=4096)
    ops = [(t.op, t.times) for st in stage_ops(m, cluster(), cand) for ch in st.chunks for b in ch
           for t in b.tasks if t.phase == "F"]
    return sorted({(op.window, round(times, 12)) for op, times in ops if isinstance(op, Attention) and not op.backward})


def test_projection_windows_the_cards_share_of_layers() -> None:
    # megatron-core windows 10 of 12 layers at every 6 (Gemma 3's pattern), 6 of 12 alternating, all at 0
    m = BASE.replace(seq_len=4096, max_position_embeddings=8192, sliding_window=1024)
    assert _attention_tasks(m.replace(full_attention_every=6)) == [(0, round(2 / 12, 12)), (1024, round(10 / 12, 12))]
    assert _attention_tasks(m) == [(0, 0.5), (1024, 0.5)]
    assert _attention_tasks(m.replace(full_attention_every=0)) == [(1024, 1.0)]


def test_projection_costs_sandwich_norms_and_logit_capping() -> None:
    from primus_lang.ir import Candidate
    from primus_lang.project import project
    from tests.project.fixtures import cluster

    cand = Candidate(tp=1, mbs=1, gbs=8, seq_len=512)
    plain = project(BASE, cluster(), cand).step_time
    assert project(BASE.replace(norm_placement="sandwich"), cluster(), cand).step_time > plain
    assert project(BASE.replace(logit_softcap=30.0), cluster(), cand).step_time > plain
    # GeGLU has SwiGLU's shapes and costs; the attention soft-cap is not costed (W6010 says so)
    assert project(BASE.replace(activation="geglu"), cluster(), cand).step_time == pytest.approx(plain, rel=1e-12)
    assert project(BASE.replace(attention_softcap=50.0), cluster(), cand).step_time == pytest.approx(plain, rel=1e-12)
