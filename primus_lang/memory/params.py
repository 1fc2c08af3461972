"""The parameter tensors one rank holds, in megatron-core's module order and TP/EP split.

Counts follow megatron-core 0.16.1's GPTModel (checked against it in tests/memory): column-parallel
linears split their output rows by TP, row-parallel linears split their input columns and keep a full
bias, norms and the router are replicated, routed experts are split over EP (which experts) and ETP
(each expert's width), word embeddings and the output layer are vocabulary-parallel.
"""

from __future__ import annotations

from attrs import frozen

from primus_lang.ir import Candidate, Model, derived
from primus_lang.memory.knobs import Knobs
from primus_lang.memory.layout import (
    head_stage,
    model_split,
    mtp_stage,
    stage_dense_layers,
    stage_layers,
)


@frozen
class Tensor:
    name: str
    numel: int
    expert: bool = False  # lives in the expert-parallel grad buffer, sharded over expert DP
    gemm: bool = False  # a GEMM weight (FP8 recipes keep quantized copies of these)


def _norm(model: Model, prefix: str, width: int) -> list[Tensor]:
    out = [Tensor(f"{prefix}.weight", width)]
    if model.norm == "layernorm":
        out.append(Tensor(f"{prefix}.bias", width))
    return out


def _linear(model: Model, prefix: str, rows: int, cols: int, bias_len: int | None, *, expert: bool = False,
            bias: bool | None = None) -> list[Tensor]:
    out = [Tensor(f"{prefix}.weight", rows * cols, expert=expert, gemm=True)]
    if (model.bias if bias is None else bias) and bias_len is not None:
        out.append(Tensor(f"{prefix}.bias", bias_len, expert=expert))
    return out


def attention_tensors(model: Model, tp: int) -> list[Tensor]:
    h, a = model.hidden, model.heads
    out: list[Tensor] = []
    if model.mla is not None:
        m = model.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        a_t = a // tp
        out += _linear(model, "self_attention.linear_proj", h, a_t * m.v_head_dim, h)
        if m.q_lora_rank:
            out += _linear(model, "self_attention.linear_q_down_proj", m.q_lora_rank, h, m.q_lora_rank)
            out += _linear(model, "self_attention.linear_q_up_proj", a_t * qk, m.q_lora_rank, a_t * qk)
            out += _norm(model, "self_attention.q_layernorm", m.q_lora_rank)
        else:
            out += _linear(model, "self_attention.linear_q_proj", a_t * qk, h, a_t * qk)
        kv_down = m.kv_lora_rank + m.qk_rope_head_dim
        out += _linear(model, "self_attention.linear_kv_down_proj", kv_down, h, kv_down)
        kv_up = a_t * (m.qk_nope_head_dim + m.v_head_dim)
        out += _linear(model, "self_attention.linear_kv_up_proj", kv_up, m.kv_lora_rank, kv_up)
        out += _norm(model, "self_attention.kv_layernorm", m.kv_lora_rank)
        return out
    dh = model.head_dim
    qkv = derived.qkv_width(a, model.kv_heads, dh, tp)
    out += _linear(model, "self_attention.linear_proj", h, a * dh // tp, h)
    # --add-qkv-bias: linear_qkv alone has a bias (attention.py: add_bias_linear or add_qkv_bias)
    out += _linear(model, "self_attention.linear_qkv", qkv, h, qkv, bias=model.bias or model.qkv_bias)
    if model.qk_layernorm:
        # OLMo 2 normalizes all heads' queries (keys) at once: one weight per channel of the rank
        q_width, k_width = (a * dh // tp, model.kv_heads * dh // tp) if model.qk_norm_whole else (dh, dh)
        out += _norm(model, "self_attention.q_layernorm", q_width)
        out += _norm(model, "self_attention.k_layernorm", k_width)
    if model.attention_sinks:
        # megatron-core's --softmax-type learnable: one offset per head of the rank
        out.append(Tensor("self_attention.core_attention.softmax_offset", a // tp, gemm=False))
    return out


def _gated(model: Model) -> int:
    return 2 if model.gated else 1


def mlp_tensors(model: Model, prefix: str, ffn: int, tp: int, *, expert: bool = False,
                bias: bool | None = None, width: int = 0) -> list[Tensor]:
    """FC1 and FC2 of an MLP between ``width`` (the hidden size unless given) and ``ffn``."""
    h = width or model.hidden
    fc1 = _gated(model) * ffn // tp
    return _linear(model, f"{prefix}.linear_fc1", fc1, h, fc1, expert=expert, bias=bias) + _linear(
        model, f"{prefix}.linear_fc2", h, ffn // tp, h, expert=expert, bias=bias
    )


def moe_tensors(model: Model, tp: int, ep: int, etp: int) -> list[Tensor]:
    moe = model.moe
    assert moe is not None
    h = model.hidden
    out = [Tensor("mlp.router.weight", moe.num_experts * h)]
    if moe.router_bias:
        out.append(Tensor("mlp.router.bias", moe.num_experts))
    if moe.latent:
        # LatentMoE: routed tokens travel and are computed at the latent width; the two projections
        # are whole on every TP rank (TE's "duplicated" linears)
        out += _linear(model, "mlp.fc1_latent_proj", moe.latent, h, moe.latent)
        out += _linear(model, "mlp.fc2_latent_proj", h, moe.latent, h)
    for e in range(moe.num_experts // ep):
        out += mlp_tensors(model, f"mlp.experts.local_experts.{e}", moe.ffn_hidden, etp, expert=True,
                           bias=moe.expert_bias, width=moe.latent)
    if moe.shared_experts:
        width = moe.shared_experts * (moe.shared_ffn_hidden or moe.ffn_hidden)
        out += mlp_tensors(model, "mlp.shared_experts", width, tp, bias=False)
    return out


def layer_tensors(model: Model, tp: int, ep: int, etp: int, moe_layer: bool) -> list[Tensor]:
    h = model.hidden
    before = model.norm_placement != "post"
    after = model.norm_placement != "pre"  # Gemma 2/3's and OLMo 2's norms on each sublayer's output
    out = _norm(model, "input_layernorm", h) if before else []
    out += attention_tensors(model, tp)
    if after:
        out += _norm(model, "post_self_attn_layernorm", h)
    if before:
        out += _norm(model, "pre_mlp_layernorm", h)
    out += moe_tensors(model, tp, ep, etp) if moe_layer else mlp_tensors(model, "mlp", model.ffn_hidden, tp)
    if after:
        out += _norm(model, "post_mlp_layernorm", h)
    return out


def mamba_tensors(model: Model, tp: int) -> list[Tensor]:
    """megatron-core's MambaMixer on one TP rank: in_proj to z, x, B, C and dt, the depthwise causal
    convolution over x, B and C, per-head dt bias, A and D, the gated RMSNorm and out_proj."""
    m = model.mamba
    assert m is not None
    h = model.hidden
    inner, bc = m.inner // tp, 2 * derived.heads_per_rank(m.groups, tp) * m.state_dim
    heads = derived.heads_per_rank(m.heads, tp)
    in_proj = 2 * inner + bc + heads
    return [
        *_linear(model, "mixer.in_proj", in_proj, h, None),
        Tensor("mixer.conv1d.weight", (inner + bc) * m.conv_kernel),
        Tensor("mixer.conv1d.bias", inner + bc),
        Tensor("mixer.dt_bias", heads),
        Tensor("mixer.A_log", heads),
        Tensor("mixer.D", heads),
        Tensor("mixer.norm.weight", inner),
        *_linear(model, "mixer.out_proj", h, inner, None),
    ]


def hybrid_layer_tensors(model: Model, kind: str, tp: int, ep: int, etp: int) -> list[Tensor]:
    """One layer of a hybrid model (megatron-core's MambaStack): each holds its norm and one block."""
    h = model.hidden
    if kind == "M":
        return _norm(model, "norm", h) + mamba_tensors(model, tp)
    if kind == "*":
        return _norm(model, "input_layernorm", h) + attention_tensors(model, tp)
    out = _norm(model, "pre_mlp_layernorm", h)
    return out + (moe_tensors(model, tp, ep, etp) if kind == "E" else mlp_tensors(model, "mlp", model.ffn_hidden, tp))


def layer_units(model: Model, tp: int, ep: int, etp: int) -> list[list[Tensor]]:
    """One layer of each kind the model has (FSDP gathers a layer at a time)."""
    if model.hybrid:
        return [hybrid_layer_tensors(model, kind, tp, ep, etp) for kind in sorted(set(model.pattern))]
    return [layer_tensors(model, tp, ep, etp, moe) for moe in {False, model.moe is not None}]


def _stage_layer_kinds(model: Model, k: Knobs, stage: int) -> list[str]:
    """The pattern characters of the layers ``stage`` holds, chunk by chunk."""
    split = model_split(model, k)
    out: list[str] = []
    for c in range(max(int(k.vpp), 1)):
        start, n = int(split.chunk_start(stage, c)), int(split.chunk_layers(stage, c))
        out += list(model.pattern[start:start + n])
    return out


def embedding_tensors(model: Model, tp: int) -> list[Tensor]:
    out = [Tensor("embedding.word_embeddings.weight", derived.vocab_per_rank(model.vocab, tp) * model.hidden, gemm=False)]
    if model.position == "learned":
        out.append(Tensor("embedding.position_embeddings.weight", model.max_position_embeddings * model.hidden))
    return out


def mtp_tensors(model: Model, tp: int, ep: int, etp: int) -> list[Tensor]:
    """The MTP layers (on the last stage, or where an explicit pipeline layout puts them)."""
    h = model.hidden
    out: list[Tensor] = []
    for i in range(model.mtp_layers):
        p = f"mtp.layers.{i}"
        out += _norm(model, f"{p}.enorm", h) + _norm(model, f"{p}.hnorm", h)
        out += _linear(model, f"{p}.eh_proj", h // tp, 2 * h, None)
        out += [Tensor(f"{p}.{t.name}", t.numel, t.expert, t.gemm)
                for t in layer_tensors(model, tp, ep, etp, model.moe is not None)]
        out += _norm(model, f"{p}.final_layernorm", h)
    return out


def head_tensors(model: Model, tp: int, pp: int, ep: int, etp: int, mtp: bool = True) -> list[Tensor]:
    """The last stage's final norm, MTP layers (unless a layout puts them on another stage) and output
    layer (a copy of the embedding when tied)."""
    h = model.hidden
    out = _norm(model, "decoder.final_layernorm", h)
    if mtp:
        out += mtp_tensors(model, tp, ep, etp)
    if not model.tied_embeddings or pp > 1:
        out.append(Tensor("output_layer.weight", derived.vocab_per_rank(model.vocab, tp) * h, gemm=True))
    return out


def stage_tensors(model: Model, k: Knobs, stage: int) -> list[Tensor]:
    """Every parameter tensor on pipeline stage ``stage`` in registration order (embedding first)."""
    tp, pp, ep, etp = int(k.tp), int(k.pp), int(k.ep), int(k.etp)
    out: list[Tensor] = []
    if stage == 0:
        out += embedding_tensors(model, tp)
    if model.hybrid:
        layers = [hybrid_layer_tensors(model, kind, tp, ep, etp) for kind in _stage_layer_kinds(model, k, stage)]
    else:
        dense = int(stage_dense_layers(model, k, stage))
        layers = [layer_tensors(model, tp, ep, etp, i >= dense) for i in range(int(stage_layers(model, k, stage)))]
    for i, tensors in enumerate(layers):
        out += [Tensor(f"decoder.layers.{i}.{t.name}", t.numel, t.expert, t.gemm) for t in tensors]
    mtp_here = stage == int(mtp_stage(k))
    if stage == int(head_stage(k)):
        out += head_tensors(model, tp, pp, ep, etp, mtp=mtp_here)
    elif mtp_here:
        out += mtp_tensors(model, tp, ep, etp)
    if model.mtp_layers and mtp_here and (stage != 0 or int(k.vpp) > 1):
        # megatron-core's GPTModel builds an embedding in every model chunk that runs MTP but is not
        # the first virtual stage (gpt_model.py: `if self.pre_process or self.mtp_process`), a copy
        # tied to the first stage's; MTP sits on its stage's last chunk, so only a one-chunk stage 0
        # is also the first virtual stage
        out += [Tensor(f"mtp_embedding_copy.{t.name}", t.numel, t.expert, t.gemm)
                for t in embedding_tensors(model, tp)]
    return out


@frozen
class ModelSize:
    """A model's parameters as megatron-core builds it whole (TP, PP and EP 1: the vocabulary padded to
    128), what a user compares with a model card's published size."""

    total: int  # without the multi-token-prediction layers, which published sizes leave out
    active: int  # a token's, without them: the dense parameters and top_k of each MoE layer's routed experts
    mtp: int  # in the multi-token-prediction layers
    # the input embedding table and the output layer (0 where it is the embedding, tied): published active
    # counts differ in which they include (Qwen's both; OpenAI's the output layer; DeepSeek's and GLM's neither)
    embedding: int = 0
    output: int = 0


def model_size(model: Model, cand: Candidate) -> ModelSize:
    """``cand``'s model built on one rank: every tensor the memory account holds, counted once."""
    from primus_lang.memory.knobs import from_candidate

    whole = cand.replace(tp=1, pp=1, vpp=1, cp=1, ep=1, etp=1, first_stage_layers=0, last_stage_layers=0,
                         pipeline_layout="", schedule="1f1b")
    tensors = stage_tensors(model, from_candidate(whole, world=1), 0)
    main = [t for t in tensors if not t.name.startswith("mtp")]
    total = sum(t.numel for t in main)
    routed = sum(t.numel for t in main if t.expert)
    share = model.moe.top_k / model.moe.num_experts if model.moe is not None else 0.0
    table = {t.name: t.numel for t in main}
    return ModelSize(total, total - routed + round(routed * share), sum(t.numel for t in tensors) - total,
                     table.get("embedding.word_embeddings.weight", 0), table.get("output_layer.weight", 0))
