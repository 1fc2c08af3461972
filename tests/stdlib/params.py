"""Closed-form parameter counts of a card, to check its numbers against published model sizes.

Deliberately independent of primus_lang.memory: it counts what the Hugging Face checkpoints hold
(no vocabulary padding), so a wrong width in a card shows up as a wrong total.
"""

from __future__ import annotations

from primus_lang.ir.model import Model


def attention_params(m: Model) -> int:
    h = m.hidden
    if m.mla is not None:
        a = m.mla
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = (
            h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.heads * qk
            if a.q_lora_rank
            else h * m.heads * qk
        )
        kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
        kv += a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim)
        return q + kv + m.heads * a.v_head_dim * h
    q = h * m.heads * m.head_dim
    kv = 2 * h * m.kv_heads * m.head_dim
    o = m.heads * m.head_dim * h
    biases = (m.heads + 2 * m.kv_heads) * m.head_dim if m.bias or m.qkv_bias else 0
    biases += h if m.bias else 0
    qk_norms = 0
    if m.qk_layernorm:
        qk_norms = (m.heads + m.kv_heads) * m.head_dim if m.qk_norm_whole else 2 * m.head_dim
    sinks = m.heads if m.attention_sinks else 0
    return q + kv + o + biases + qk_norms + sinks


def norms_per_layer(m: Model) -> int:
    """Pre-norm and post-norm layers have two norms, sandwich-norm layers (Gemma 2/3) four."""
    return 4 if m.norm_placement == "sandwich" else 2


def mlp_params(hidden: int, width: int, gated: bool, bias: bool = False) -> int:
    biases = ((2 if gated else 1) * width + hidden) if bias else 0
    return (3 if gated else 2) * hidden * width + biases


def mamba_params(m: Model) -> int:
    """One Mamba-2 mixer with its norm: in_proj to z, x, B, C, dt; conv1d over x, B, C with a bias;
    dt bias, A, D per head; the gated norm over d_inner; out_proj."""
    b = m.mamba
    assert b is not None
    inner, bc = b.heads * b.head_dim, 2 * b.groups * b.state_dim
    return (m.hidden * (2 * inner + bc + b.heads) + (inner + bc) * (b.conv_kernel + 1) + 3 * b.heads + inner
            + inner * m.hidden + m.hidden)


def moe_block_params(m: Model) -> int:
    """Router, latent projections, routed and shared experts, pre-MLP norm."""
    e = m.moe
    assert e is not None
    gated = m.gated
    width = e.latent or m.hidden
    shared = e.shared_experts * mlp_params(m.hidden, e.shared_ffn_hidden or e.ffn_hidden, gated)
    latent = 2 * m.hidden * e.latent
    return m.hidden * e.num_experts + latent + e.num_experts * mlp_params(width, e.ffn_hidden, gated) + shared + m.hidden


def hybrid_params(m: Model) -> int:
    """A hybrid model's decoder, layer by layer from its pattern, without MTP."""
    gated = m.gated
    per = {
        "M": mamba_params(m) if m.mamba is not None else 0,
        "*": attention_params(m) + m.hidden,
        "-": mlp_params(m.hidden, m.ffn_hidden, gated) + m.hidden,
        "E": moe_block_params(m) if m.moe is not None else 0,
    }
    embeddings = m.vocab * m.hidden * (1 if m.tied_embeddings else 2)
    return sum(per[c] for c in m.pattern) + embeddings + m.hidden


def total_params(m: Model) -> int:
    if m.pattern:
        return hybrid_params(m)
    gated = m.gated
    per_layer_common = attention_params(m) + norms_per_layer(m) * m.hidden
    dense = per_layer_common + mlp_params(m.hidden, m.ffn_hidden, gated, m.bias)
    total = m.dense_layers * dense
    if m.moe is not None:
        e = m.moe
        shared = e.shared_experts * mlp_params(m.hidden, e.shared_ffn_hidden or e.ffn_hidden, gated)
        moe = per_layer_common + e.num_experts * mlp_params(m.hidden, e.ffn_hidden, gated, e.expert_bias) + shared
        moe += (m.hidden + (1 if e.router_bias else 0)) * e.num_experts  # router
        total += m.moe_layers * moe
    embeddings = m.vocab * m.hidden * (1 if m.tied_embeddings else 2)
    return total + embeddings + m.hidden  # + final norm
