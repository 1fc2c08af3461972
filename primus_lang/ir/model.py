"""Model cards: the architecture facts every later stage needs (frozen, SI units, integer sizes)."""

from __future__ import annotations

import functools
from typing import Any

import attrs
from attrs import field, frozen

from primus_lang.ir.quantity import Kind, q
from primus_lang.ir.span import Span

ROUTER_SCORES = ("softmax", "sigmoid")
AUX_LOSS_TYPES = ("aux_loss", "seq_aux_loss", "global_aux_loss")


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
    # Llama 4 Maverick alternates dense and MoE layers (interleave_moe_layer_step 2): "-E", its second layer of
    # each two the MoE one; Megatron's `--moe-layer-freq 2` is "E-" (layers 0, 2, ... route to experts)
    layer_cycle: str = field(
        default="E", metadata=q(Kind.TEXT, "the MLPs of consecutive layers after the dense ones, repeated: "
                                "`E` experts, `-` a dense MLP (Llama 4 Maverick: \"-E\")"))
    router_bias: bool = field(default=False, metadata=q(Kind.FLAG, "router has a per-expert bias"))
    expert_bias: bool = field(default=False, metadata=q(Kind.FLAG, "expert linears carry biases"))
    latent: int = field(
        default=0, metadata=q(Kind.COUNT, "LatentMoE: width routed experts work in, projected from hidden (0: none)")
    )
    # How training keeps the experts' load even (Megatron's defaults balance nothing: a coefficient of 0)
    router_score: str = field(
        default="softmax", metadata=q(Kind.ENUM, "router score function (--moe-router-score-function)", ROUTER_SCORES)
    )
    aux_loss: float = field(
        default=0.0, metadata=q(Kind.NUMBER, "load-balancing loss coefficient (0: none; --moe-aux-loss-coeff)")
    )
    aux_loss_type: str = field(
        default="aux_loss",
        metadata=q(Kind.ENUM, "where the balancing loss is computed: the micro-batch, each sequence or the global "
                   "batch (--moe-router-load-balancing-type)", AUX_LOSS_TYPES),
    )
    bias_balancing: bool = field(
        default=False,
        metadata=q(Kind.FLAG, "aux-loss-free balancing by a per-expert routing bias (--moe-router-enable-expert-bias; "
                   "sigmoid scores)"),
    )
    # How a token's experts are picked and weighted: numerics, not cost (the dispatch is projected as
    # routing spread evenly over the expert ranks whatever the groups)
    router_pre_softmax: bool = field(
        default=False,
        metadata=q(Kind.FLAG, "softmax over every expert before the top-k, the weights not renormalized "
                   "(--moe-router-pre-softmax; DeepSeek-V2, whose norm_topk_prob is false)"),
    )
    topk_scaling: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "the routing weights' scale (--moe-router-topk-scaling-factor; 0: none; "
                   "DeepSeek-V3: 2.5)"),
    )
    router_groups: int = field(
        default=0,
        metadata=q(Kind.COUNT, "group-limited routing: the experts split into this many groups "
                   "(--moe-router-num-groups; 0: none; DeepSeek-V3: 8)"),
    )
    router_group_topk: int = field(
        default=0,
        metadata=q(Kind.COUNT, "with `router_groups`: the groups a token's experts come from "
                   "(--moe-router-group-topk; DeepSeek-V3: 4)"),
    )


@frozen
class Mla:
    """Multi-head latent attention (DeepSeek-V2/V3). ``q_lora_rank`` 0 means no query compression."""

    kv_lora_rank: int = field(metadata=q(Kind.COUNT, "compressed KV latent width"))
    qk_nope_head_dim: int = field(metadata=q(Kind.COUNT, "per-head query/key width without RoPE"))
    qk_rope_head_dim: int = field(metadata=q(Kind.COUNT, "per-head query/key width with RoPE"))
    v_head_dim: int = field(metadata=q(Kind.COUNT, "per-head value width"))
    q_lora_rank: int = field(default=0, metadata=q(Kind.COUNT, "compressed query width (0: none)"))


@frozen
class Mamba:
    """The Mamba-2 mixer of a hybrid model (megatron-core's MambaMixer): ``heads`` heads of width
    ``head_dim`` (d_inner = heads·head_dim), B and C shared by ``groups`` groups of ``state_dim``."""

    heads: int = field(metadata=q(Kind.COUNT, "SSM heads (Megatron's --mamba-num-heads)"))
    head_dim: int = field(metadata=q(Kind.COUNT, "width of one SSM head (--mamba-head-dim)"))
    state_dim: int = field(metadata=q(Kind.COUNT, "SSM state size per group (--mamba-state-dim)"))
    groups: int = field(metadata=q(Kind.COUNT, "B/C groups (--mamba-num-groups)"))
    conv_kernel: int = field(default=4, metadata=q(Kind.COUNT, "causal depthwise convolution width"))
    chunk: int = field(default=128, metadata=q(Kind.COUNT, "SSD scan chunk length"))

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim


# Megatron's hybrid layer symbols (--hybrid-override-pattern): each character is one layer.
HYBRID_LAYERS = {"M": "Mamba-2 mixer", "*": "self-attention", "-": "dense MLP", "E": "mixture of experts"}

ACTIVATIONS = ("swiglu", "geglu", "quick_geglu", "gelu", "squared_relu", "relu")
# Gated activations: FC1 computes gate and up halves, each ``ffn_hidden`` wide (GeGLU has SwiGLU's shapes).
# quick_geglu is Megatron's --quick-geglu, the gate through GELU's sigmoid approximation x·σ(1.702x):
# gpt-oss's MLP (whose clamp and +1 on the up half, --activation-func-clamp-value and
# --glu-linear-offset, change no shape).
GATED_ACTIVATIONS = ("swiglu", "geglu", "quick_geglu")
NORMS = ("rmsnorm", "layernorm")
# Where each sublayer's norms sit: before it (pre, Llama), before and after it (sandwich, Gemma 2/3),
# or only after it, on its output before the residual add (post, OLMo 2).
NORM_PLACEMENTS = ("pre", "sandwich", "post")
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
    glu_offset: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "added to a gated MLP's up half before the product (gpt-oss: 1; Megatron's "
                   "--glu-linear-offset)"),
    )
    activation_clamp: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "a gated MLP's halves clamped at this value, the up half at ± it (0: none; gpt-oss: "
                   "7; Megatron's --activation-func-clamp-value)"),
    )
    norm: str = field(default="rmsnorm", metadata=q(Kind.ENUM, "normalization", NORMS))
    norm_epsilon: float = field(
        default=1e-5, metadata=q(Kind.NUMBER, "the norms' epsilon (Megatron's --norm-epsilon; its default 1e-5)")
    )
    norm_placement: str = field(
        default="pre",
        metadata=q(Kind.ENUM, "where each sublayer's norms sit: pre (before), sandwich (before and after, "
                   "Gemma 2/3), post (after only, OLMo 2)", NORM_PLACEMENTS),
    )
    position: str = field(default="rope", metadata=q(Kind.ENUM, "position embedding", POSITIONS))
    rope_theta: float = field(
        default=10000.0, metadata=q(Kind.NUMBER, "RoPE base frequency (Megatron's --rotary-base; its default 10000)")
    )
    rotary_percent: float = field(
        default=1.0,
        metadata=q(Kind.FRACTION, "the share of each head's width RoPE rotates (Megatron's --rotary-percent; "
                   "GLM-4.5 and Nemotron-4: 0.5)"),
    )
    rope_scaling: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "Llama 3.1's RoPE frequency scaling, its factor (low/high frequency factors 1 "
                   "and 4 over an 8192-token context; Megatron's --use-rope-scaling, whose GPT builder scales by "
                   "8 only; 0: none; Llama 3.1: 8, Llama 3.2: 32)"),
    )
    tied_embeddings: bool = field(default=False, metadata=q(Kind.FLAG, "output layer shares the embedding"))
    bias: bool = field(default=False, metadata=q(Kind.FLAG, "linear layers carry biases"))
    qkv_bias: bool = field(
        default=False,
        metadata=q(Kind.FLAG, "the query/key/value projection carries a bias even without `bias` (Qwen2; "
                   "Megatron's --add-qkv-bias)"),
    )
    qk_layernorm: bool = field(default=False, metadata=q(Kind.FLAG, "norm on queries and keys"))
    qk_norm_whole: bool = field(
        default=False,
        metadata=q(Kind.FLAG, "the query/key norms span every head's width at once (OLMo 2), not one head's"),
    )
    attention_softcap: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "attention logits soft-capped as cap·tanh(x/cap) (0: none; Gemma 2: 50)"),
    )
    logit_softcap: float = field(
        default=0.0,
        metadata=q(Kind.NUMBER, "final (vocabulary) logits soft-capped as cap·tanh(x/cap) (0: none; Gemma 2: 30)"),
    )
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
        default=0, metadata=q(Kind.COUNT, "sliding-window width of the windowed layers (0: none)")
    )
    full_attention_every: int = field(
        default=2,
        metadata=q(Kind.COUNT, "with `sliding_window`: every n-th layer attends in full, the others over the "
                   "window (Megatron's --window-attn-skip-freq; 2 alternates, Gemma 3 is 6; 0: every layer "
                   "windowed)", zero_ok=True),
    )
    attention_chunk: int = field(
        default=0, metadata=q(Kind.COUNT, "chunked local attention width (Llama 4's attention_chunk_size); a "
                              "longer sequence is refused (P4049): chunked attention is not modelled (0: none)",
                              zero_ok=True),
    )
    attention_sinks: bool = field(
        default=False, metadata=q(Kind.FLAG, "a learned softmax offset (sink logit) per head and layer")
    )
    pattern: str = field(
        default="",
        metadata=q(Kind.TEXT, "hybrid layer pattern, one character a layer: M Mamba, * attention, - MLP, "
                              "E MoE (\"\": every layer attention + MLP)"),
    )
    mamba: Mamba | None = field(default=None, metadata=q(Kind.BLOCK, "Mamba-2 mixer of a hybrid model"))
    source: str = field(default="", metadata=q(Kind.TEXT, "where the numbers come from"))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))

    def __attrs_post_init__(self) -> None:
        if not self.pattern:
            return
        bad = sorted(set(self.pattern) - set(HYBRID_LAYERS))
        if bad:
            known = ", ".join(f"{c} ({what})" for c, what in HYBRID_LAYERS.items())
            raise ValueError(f"pattern holds {', '.join(repr(c) for c in bad)}; layers are {known}")
        if len(self.pattern) != self.num_layers:
            raise ValueError(f"pattern has {len(self.pattern)} layers, num_layers is {self.num_layers}")
        if "M" in self.pattern and self.mamba is None:
            raise ValueError("pattern has Mamba layers (M) but the model has no `mamba` block")
        if "E" in self.pattern and self.moe is None:
            raise ValueError("pattern has MoE layers (E) but the model has no `moe` block")
        if self.moe is not None and (self.moe.dense_layers or self.moe.layer_cycle != "E"):
            raise ValueError("a hybrid model says which layers are dense in its pattern, not moe.dense_layers "
                             "or moe.layer_cycle")

    @property
    def gated(self) -> bool:
        """FC1 computes a gate and an up projection (SwiGLU, GeGLU)."""
        return self.activation in GATED_ACTIVATIONS

    @property
    def windowed_layers(self) -> int:
        """Attention layers over the sliding window; megatron-core windows layer ``i`` (from 1) unless
        ``i`` is a multiple of ``full_attention_every`` (transformer/utils.py, is_layer_window_attention)."""
        if not self.sliding_window:
            return 0
        every = self.full_attention_every
        return self.num_layers - (self.num_layers // every if every else 0)

    @property
    def windowed_share(self) -> float:
        """The share of attention layers that attend over the sliding window."""
        return self.windowed_layers / self.num_layers if self.num_layers else 0.0

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    def idle_recompute_module(self, module: str) -> str:
        """Why Megatron's selective recompute module ``module`` finds nothing to recompute in this model
        ("" where it does): `mlp` in a model whose every layer is MoE, `mla_up_proj` without MLA."""
        if module == "mlp" and self.dense_layers == 0:
            return "every layer's MLP is a mixture of experts: `moe` recomputes those"
        if module in ("moe", "moe_act") and not self.is_moe:
            return "the model has no mixture-of-experts layer"
        if module == "shared_experts" and (self.moe is None or not self.moe.shared_experts):
            return "the model has no shared experts"
        if module == "mla_up_proj" and self.mla is None:
            return "the model has no multi-latent attention"
        return ""

    @property
    def fa2_unsupported(self) -> str:
        """Why FlashAttention-2's kernels cannot run this model's attention (empty: they can):
        flash-attn v2 takes one head width for queries, keys and values, at most 256, and has no
        learnable softmax offset (attention sinks)."""
        if self.attention_sinks:
            return "learnable attention sinks"
        width = self.head_dim
        if self.mla is not None:
            width = self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim
            if width != self.mla.v_head_dim:
                return f"MLA's {width}-wide query and key heads beside {self.mla.v_head_dim}-wide value heads"
        if width > 256:
            return f"{width}-wide heads (at most 256)"
        return ""

    @property
    def hybrid(self) -> bool:
        return bool(self.pattern)

    @property
    def moe_layers(self) -> int:
        if self.hybrid:
            return self.pattern.count("E")
        if self.moe is None:
            return 0
        # a dense prefix alone (every MoE card but an interleaved one) needs no per-layer string
        return self.num_layers - self.moe.dense_layers if self.moe.layer_cycle == "E" else self.mlp_kinds.count("E")

    @property
    def mlp_kinds(self) -> str:
        """A transformer's MLP per layer, ``-`` dense or ``E`` experts (a dense model's all ``-``; a hybrid
        model's pattern says its own): the dense prefix, then the MoE block's ``layer_cycle`` repeated."""
        return _mlp_kinds(self.num_layers, self.moe.dense_layers, self.moe.layer_cycle) if self.moe is not None \
            else "-" * self.num_layers

    @property
    def interleaved(self) -> bool:
        """Dense layers among the MoE ones (a cycle other than every layer's experts), not a prefix only."""
        return self.moe is not None and not self.hybrid and self.moe.layer_cycle != "E"

    @property
    def dense_layers(self) -> int:
        """Layers with a dense MLP (a hybrid model's ``-`` layers)."""
        if self.hybrid:
            return self.pattern.count("-")
        return self.num_layers - self.moe_layers

    @property
    def attention_layers(self) -> int:
        return self.pattern.count("*") if self.hybrid else self.num_layers

    @property
    def mamba_layers(self) -> int:
        return self.pattern.count("M")

    def kind_prefix(self, kind: str) -> tuple[int, ...]:
        """How many of a hybrid model's first ``i`` layers are of ``kind`` (``M``, ``*``, ``-``,
        ``E``), for ``i`` in 0..num_layers."""
        return _kind_prefix(self.pattern, kind)

    def dense_prefix(self) -> tuple[int, ...]:
        """How many of a transformer's first ``i`` layers have a dense MLP (``mlp_kinds``), for ``i`` in
        0..num_layers."""
        return _kind_prefix(self.mlp_kinds, "-")

    def replace(self, **changes: Any) -> Model:
        return attrs.evolve(self, **changes)


@functools.lru_cache(maxsize=256)
def _mlp_kinds(layers: int, dense: int, cycle: str) -> str:
    rest = max(layers - dense, 0)
    return "-" * min(dense, layers) + (cycle * (rest // max(len(cycle), 1) + 1))[:rest]


@functools.lru_cache(maxsize=256)
def _kind_prefix(pattern: str, kind: str) -> tuple[int, ...]:
    out = [0]
    for ch in pattern:
        out.append(out[-1] + (ch == kind))
    return tuple(out)


def card_fields(model: Model) -> dict[str, Any]:
    """What makes a card the model it is: every field but its name, its source and where it was written."""
    return {f.name: getattr(model, f.name) for f in attrs.fields(Model) if f.name not in ("name", "source", "span")}
