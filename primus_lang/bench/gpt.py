"""A small Megatron-style GPT in plain torch, built from a ``Model`` card at one rank's shapes.

It is both the reduced model the oracle runs for real (one layer per stage: downscale, measure,
upscale) and the reference training step the oracle's projections are checked against. With
``tp > 1`` the layer holds one tensor-parallel rank's slice (heads/tp, ffn/tp); the TP collectives
are not run here, the oracle adds them from its collective measurements.
"""

from __future__ import annotations

from typing import Any

from primus_lang.bench.runtime import torch
from primus_lang.ir import Model, derived


def _modules() -> Any:
    """Build the module classes on first use so importing this file never imports torch."""
    t = torch()
    nn, F = t.nn, t.nn.functional
    checkpoint = t.utils.checkpoint.checkpoint

    class Norm(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self, kind: str, hidden: int) -> None:
            super().__init__()
            self.kind, self.hidden = kind, hidden
            self.weight = nn.Parameter(t.ones(hidden))
            self.bias = nn.Parameter(t.zeros(hidden)) if kind == "layernorm" else None

        def forward(self, x: Any) -> Any:
            if self.kind == "layernorm":
                return F.layer_norm(x, (self.hidden,), self.weight, self.bias)
            return F.rms_norm(x, (self.hidden,), self.weight)

    def rotary(x: Any) -> Any:
        # Rotary position embedding over the last dim, (batch, heads, seq, dim) layout.
        seq, dim = x.shape[-2], x.shape[-1]
        half = dim // 2
        freq = 1.0 / (10000.0 ** (t.arange(half, dtype=t.float32, device=x.device) / half))
        angle = t.arange(seq, dtype=t.float32, device=x.device)[:, None] * freq[None, :]
        cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
        a, b = x[..., :half], x[..., half : 2 * half]
        return t.cat((a * cos - b * sin, a * sin + b * cos, x[..., 2 * half :]), dim=-1)

    class Layer(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self, m: Model, tp: int, selective: bool) -> None:
            super().__init__()
            self.heads, self.kv_heads = derived.heads_per_rank(m.heads, tp), derived.heads_per_rank(m.kv_heads, tp)
            self.head_dim, self.rope, self.selective = m.head_dim, m.position == "rope", selective
            self.tp, self.gathered, self.group = tp, bool(derived.qkv_gathered(m.kv_heads, tp)), m.heads // m.kv_heads
            self.activation, self.gated = m.activation, m.gated
            ffn = m.ffn_hidden // tp
            self.norm1, self.norm2 = Norm(m.norm, m.hidden), Norm(m.norm, m.hidden)
            self.qkv = nn.Linear(m.hidden, qkv_width(m, tp), bias=m.bias)
            self.proj = nn.Linear(self.heads * m.head_dim, m.hidden, bias=m.bias)
            self.fc1 = nn.Linear(m.hidden, ffn * (2 if self.gated else 1), bias=m.bias)
            self.fc2 = nn.Linear(ffn, m.hidden, bias=m.bias)

        def core(self, q: Any, k: Any, v: Any) -> Any:
            if self.rope:
                q, k = rotary(q), rotary(k)
            gqa = self.kv_heads != self.heads
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

        def forward(self, x: Any) -> Any:
            b, s, _ = x.shape
            qkv = self.qkv(self.norm1(x))
            d = self.head_dim
            if self.gathered:
                # every rank's share of the q|k|v groups gathered whole (a copy here, TP's all-gather in a
                # run), of which the rank keeps one group and its own query heads (megatron-core's layout)
                group = t.cat([qkv] * self.tp, dim=-1)[..., : (self.group + 2) * d]
                q, k, v = group.split((self.group * d, d, d), dim=-1)
                q = q[..., : self.heads * d]
            else:
                q, k, v = qkv.split((self.heads * d, self.kv_heads * d, self.kv_heads * d), dim=-1)
            q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
            k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
            v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
            if self.selective:  # Megatron's selective recompute: the attention core only
                ctx = checkpoint(self.core, q, k, v, use_reentrant=False)
            else:
                ctx = self.core(q, k, v)
            x = x + self.proj(ctx.transpose(1, 2).reshape(b, s, -1))
            h = self.fc1(self.norm2(x))
            if self.gated:
                gate, up = h.chunk(2, dim=-1)
                if self.activation == "swiglu":
                    gate = F.silu(gate)
                elif self.activation == "quick_geglu":
                    gate = gate * t.sigmoid(1.702 * gate)
                else:
                    gate = F.gelu(gate, approximate="tanh")
                h = gate * up
            elif self.activation == "squared_relu":
                h = t.square(F.relu(h))
            elif self.activation == "relu":
                h = F.relu(h)
            else:
                h = F.gelu(h, approximate="tanh")
            return x + self.fc2(h)

    class Gpt(nn.Module):  # type: ignore[misc,name-defined]
        """Embedding, ``layers`` layers (the first ``full_layers`` fully recomputed), norm, head, loss."""

        def __init__(self, m: Model, layers: int, tp: int = 1, recompute: str = "none", full_layers: int = 0):
            super().__init__()
            self.embed = nn.Embedding(derived.vocab_per_rank(m.vocab, tp), m.hidden)
            self.pos = nn.Embedding(m.max_position_embeddings, m.hidden) if m.position == "learned" else None
            self.layers = nn.ModuleList(Layer(m, tp, recompute == "selective") for _ in range(layers))
            self.full_layers = full_layers if recompute == "full" else 0
            self.norm = Norm(m.norm, m.hidden)
            self.head = nn.Linear(m.hidden, derived.vocab_per_rank(m.vocab, tp), bias=False)

        def forward(self, ids: Any, labels: Any) -> Any:
            x = self.embed(ids)
            if self.pos is not None:
                x = x + self.pos(t.arange(ids.shape[1], device=ids.device))[None]
            for i, layer in enumerate(self.layers):
                x = checkpoint(layer, x, use_reentrant=False) if i < self.full_layers else layer(x)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))

    return Layer, Gpt


def build_layer(model: Model, tp: int, selective: bool, dtype: Any, device: str) -> Any:
    layer_cls, _ = _modules()
    with torch().device(device):  # initialise on the device: a 1B model's init on the host takes long
        return layer_cls(model, tp, selective).to(dtype=dtype)


def build_gpt(
    model: Model, layers: int, dtype: Any, device: str, *, tp: int = 1, recompute: str = "none", full_layers: int = 0
) -> Any:
    _, gpt_cls = _modules()
    t = torch()
    t.manual_seed(0)
    with t.device(device):
        net = gpt_cls(model, layers, tp, recompute, full_layers)
    return net.to(dtype=dtype)


def qkv_width(model: Model, tp: int) -> int:
    """The fused QKV projection's output on one TP rank: its heads' q, k and v, or, past TP = kv_heads,
    a TP-th of every head's (``derived.qkv_gathered``)."""
    if derived.qkv_gathered(model.kv_heads, tp):
        return int(derived.qkv_width(model.heads, model.kv_heads, model.head_dim, tp))
    heads, kv = derived.heads_per_rank(model.heads, tp), derived.heads_per_rank(model.kv_heads, tp)
    return int((heads + 2 * kv) * model.head_dim)


def layer_params(model: Model, tp: int = 1) -> int:
    """Parameters of one layer slice as built here (cross-checked against ``build_layer`` in tests)."""
    heads = derived.heads_per_rank(model.heads, tp)
    ffn = model.ffn_hidden // tp
    h, d = model.hidden, model.head_dim
    norms = 2 * h * (2 if model.norm == "layernorm" else 1)
    width = qkv_width(model, tp)
    qkv = h * width + ((model.bias and width) or 0)
    proj = heads * d * h + ((model.bias and h) or 0)
    up = ffn * (2 if model.gated else 1)
    mlp = h * up + ((model.bias and up) or 0) + ffn * h + ((model.bias and h) or 0)
    return int(norms + qkv + proj + mlp)


def outer_params(model: Model, tp: int = 1) -> int:
    """Embedding(s), final norm and output layer as built here."""
    h = model.hidden
    pos = model.max_position_embeddings * h if model.position == "learned" else 0
    norm = h * (2 if model.norm == "layernorm" else 1)
    return int(2 * derived.vocab_per_rank(model.vocab, tp) * h + pos + norm)


def model_params(model: Model, layers: int, tp: int = 1) -> int:
    return layers * layer_params(model, tp) + outer_params(model, tp)


def tokens_per_microbatch(mbs: int, seq: int) -> int:
    return mbs * seq


def flops_per_token(model: Model, layers: int) -> float:
    """Forward FLOPs per token: 2 per weight in the GEMMs plus causal attention (for efficiency tables)."""
    attention = 2.0 * model.heads * model.head_dim * model.seq_len  # QK^T + PV, halved by causality
    return 2.0 * (layers * layer_params(model) + model.hidden * model.vocab) + layers * attention
