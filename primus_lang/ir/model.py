"""Model cards: the architecture facts every later stage needs (frozen, SI units, integer sizes)."""

from __future__ import annotations

from typing import Any

import attrs
from attrs import field, frozen

from primus_lang.ir.quantity import Kind, q
from primus_lang.ir.span import Span


@frozen
class Moe:
    """Mixture-of-experts block. ``dense_layers`` leading layers keep a dense MLP (DeepSeek-V3: 3)."""

    num_experts: int = field(metadata=q(Kind.COUNT, "routed experts per MoE layer"))
    top_k: int = field(metadata=q(Kind.COUNT, "experts each token is routed to"))
    ffn_hidden: int = field(metadata=q(Kind.COUNT, "intermediate width of one routed expert"))
    shared_experts: int = field(default=0, metadata=q(Kind.COUNT, "always-on shared experts"))
    shared_ffn_hidden: int = field(
        default=0, metadata=q(Kind.COUNT, "intermediate width of one shared expert (0: ffn_hidden)")
    )
    dense_layers: int = field(default=0, metadata=q(Kind.COUNT, "leading layers with a dense MLP"))
    router_bias: bool = field(default=False, metadata=q(Kind.FLAG, "router has a per-expert bias"))
    expert_bias: bool = field(default=False, metadata=q(Kind.FLAG, "expert linears carry biases"))


@frozen
class Mla:
    """Multi-head latent attention (DeepSeek-V2/V3). ``q_lora_rank`` 0 means no query compression."""

    kv_lora_rank: int = field(metadata=q(Kind.COUNT, "compressed KV latent width"))
    qk_nope_head_dim: int = field(metadata=q(Kind.COUNT, "per-head query/key width without RoPE"))
    qk_rope_head_dim: int = field(metadata=q(Kind.COUNT, "per-head query/key width with RoPE"))
    v_head_dim: int = field(metadata=q(Kind.COUNT, "per-head value width"))
    q_lora_rank: int = field(default=0, metadata=q(Kind.COUNT, "compressed query width (0: none)"))


ACTIVATIONS = ("swiglu", "gelu", "squared_relu", "relu")
NORMS = ("rmsnorm", "layernorm")
POSITIONS = ("rope", "learned", "none")


@frozen
class Model:
    """A decoder-only transformer. ``head_dim`` is Megatron's kv_channels (hidden/heads by default)."""

    name: str = field(metadata=q(Kind.TEXT, "the card's name"))
    num_layers: int = field(metadata=q(Kind.COUNT, "transformer layers"))
    hidden: int = field(metadata=q(Kind.COUNT, "model width"))
    ffn_hidden: int = field(metadata=q(Kind.COUNT, "dense MLP intermediate width (SwiGLU: gate and up each)"))
    heads: int = field(metadata=q(Kind.COUNT, "attention heads"))
    kv_heads: int = field(metadata=q(Kind.COUNT, "key/value heads (query groups); = heads without GQA"))
    head_dim: int = field(metadata=q(Kind.COUNT, "per-head width (kv_channels)"))
    vocab: int = field(metadata=q(Kind.COUNT, "vocabulary size (unpadded)"))
    seq_len: int = field(metadata=q(Kind.COUNT, "default training sequence length"))
    max_position_embeddings: int = field(metadata=q(Kind.COUNT, "longest position the model supports"))
    activation: str = field(
        default="swiglu", metadata=q(Kind.ENUM, "MLP activation", ACTIVATIONS)
    )
    norm: str = field(default="rmsnorm", metadata=q(Kind.ENUM, "normalization", NORMS))
    position: str = field(default="rope", metadata=q(Kind.ENUM, "position embedding", POSITIONS))
    rope_theta: float = field(
        default=10000.0, metadata=q(Kind.NUMBER, "RoPE base frequency (Megatron's --rotary-base; its default 10000)")
    )
    tied_embeddings: bool = field(default=False, metadata=q(Kind.FLAG, "output layer shares the embedding"))
    bias: bool = field(default=False, metadata=q(Kind.FLAG, "linear layers carry biases"))
    qk_layernorm: bool = field(default=False, metadata=q(Kind.FLAG, "norm on queries and keys"))
    moe: Moe | None = field(default=None, metadata=q(Kind.BLOCK, "mixture-of-experts block"))
    mla: Mla | None = field(default=None, metadata=q(Kind.BLOCK, "multi-head latent attention block"))
    mtp_layers: int = field(default=0, metadata=q(Kind.COUNT, "multi-token-prediction layers"))
    dropout: float = field(
        default=0.0, metadata=q(Kind.FRACTION, "hidden dropout probability (modern LLM recipes: 0)")
    )
    attention_dropout: float = field(
        default=0.0, metadata=q(Kind.FRACTION, "attention-probability dropout (modern LLM recipes: 0)")
    )
    sliding_window: int = field(
        default=0, metadata=q(Kind.COUNT, "sliding-window width on alternating layers (0: none)")
    )
    attention_sinks: bool = field(
        default=False, metadata=q(Kind.FLAG, "a learned softmax offset (sink logit) per head and layer")
    )
    source: str = field(default="", metadata=q(Kind.TEXT, "where the numbers come from"))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def moe_layers(self) -> int:
        return 0 if self.moe is None else self.num_layers - self.moe.dense_layers

    @property
    def dense_layers(self) -> int:
        return self.num_layers - self.moe_layers

    def replace(self, **changes: Any) -> Model:
        return attrs.evolve(self, **changes)
