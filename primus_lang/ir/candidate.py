"""One point of a space: every knob of a training recipe, fully decided.

The knob table (``KNOBS``) is the single list of axis names the language accepts, with each knob's
type and legal values; the checker, lowering, search and emitters all read it from here.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from typing import Any

import attrs
from attrs import field, frozen

from primus_lang.ir import derived
from primus_lang.ir.quantity import Kind, q

# ``op``: torchtitan's op-level selective activation checkpointing (each block keeps its input and the
# outputs of a save list of ops; memory/activations.py has the saved set and its source).
RECOMPUTE_KINDS = ("none", "selective", "op", "full")
RECOMPUTE_METHODS = ("uniform", "block")
# Megatron's --recompute-modules for selective recomputation (core_attn is its default).
RECOMPUTE_MODULES = ("core_attn", "mla_up_proj", "layernorm", "mlp", "moe_act", "moe", "shared_experts")
# ``fp4`` is NVFP4 (Transformer Engine's NVFP4BlockScaling: E2M1 values, an E4M3 scale per 16, an
# FP32 scale per tensor); ``fp8_recipe`` applies to ``fp8`` only.
PRECISIONS = ("bf16", "fp8", "fp4")
# ``rowwise`` is torchao's (torchtitan's float8 rowwise recipe), not Transformer Engine's blockwise.
FP8_RECIPES = ("tensorwise", "delayed", "blockwise", "mxfp8", "rowwise")
# Transformer Engine's FP8 formats as Megatron's --fp8-format names them: ``hybrid`` is E4M3 forward and
# E5M2 for gradients, ``e4m3`` E4M3 for both. Numerics only: the same kernels at the same rate and the
# same bytes, so nothing projected or accounted reads it; like ``fp8_recipe`` it applies to ``fp8`` only.
FP8_FORMATS = ("hybrid", "e4m3")
SHARDINGS = ("none", "dist_opt", "fsdp")
SCHEDULES = ("1f1b", "interleaved", "zero_bubble", "zbv")
# ``flash``: the framework's fused memory-efficient kernel (Transformer Engine's cuDNN attention, ROCm's
# CK kernels), which the profile's ``attention`` efficiency is read on; ``fa2``: FlashAttention-2's
# kernels (PyTorch SDPA's flash backend, the flash-attn package's v2), slower on Hopper and Blackwell
# (``Gpu.fa2_attention``); ``unfused``: batched GEMMs over the whole score square.
ATTENTIONS = ("flash", "fa2", "unfused")
CP_COMMS = ("p2p", "a2a", "allgather")
# The loss's cross-entropy kernel: Megatron's vocabulary-parallel one (``unfused``), its fused one
# (``native``, --cross-entropy-loss-fusion), both of which keep the softmax in FP32 for the backward, or
# Transformer Engine's (``te``, --cross-entropy-fusion-impl te), which keeps the BF16 logits and writes
# their gradient over them.
CROSS_ENTROPIES = ("unfused", "native", "te")
DISPATCHERS = ("alltoall", "allgather", "flex")
STATE_DTYPES = ("fp32", "bf16")
# Megatron's CUDA graphs (--cuda-graph-impl, --cuda-graph-scope): which launches replay from a
# captured graph instead of the host. ``attn``/``moe_router``/``attn_moe_router`` are per-layer
# Transformer Engine graphs of those scopes (``moe_router`` includes ``moe_preprocess``); ``layer``
# graphs whole layers (dense models: a dropless MoE layer syncs with the host); ``full`` is
# megatron-core's whole-iteration graph (``local`` implementation, scope ``full_iteration``).
CUDA_GRAPHS = ("none", "attn", "moe_router", "attn_moe_router", "layer", "full")


@frozen(order=True, cache_hash=True)
class Recompute:
    """Activation recomputation: ``full`` recomputes ``layers`` layers per stage (uniform or block);
    ``op`` is torchtitan's op-level selective checkpointing of every layer."""

    kind: str = field(
        default="none",
        metadata=q(Kind.ENUM, "none, selective, op (torchtitan's op-level checkpointing) or full", RECOMPUTE_KINDS),
    )
    layers: int = field(default=0, metadata=q(Kind.COUNT, "layers recomputed per stage (full only)"))
    method: str = field(default="block", metadata=q(Kind.ENUM, "uniform or block", RECOMPUTE_METHODS))
    modules: tuple[str, ...] = field(
        default=(),
        metadata=q(Kind.TEXT, "selective only: Megatron's --recompute-modules, a tuple (empty: core_attn)"),
    )

    def __str__(self) -> str:
        if self.kind == "full":
            return f"full({self.layers},{self.method})"
        if self.kind == "selective" and self.modules:
            return f"selective({','.join(self.modules)})"
        return self.kind


NONE = Recompute()


# the hash is kept: a search keys its caches, landscapes and shared floors by candidates, millions of
# lookups of 34 fields each
@frozen(order=True, cache_hash=True)
class Candidate:
    """A training recipe. ``etp`` 0 means "equal to tp" (Megatron's default)."""

    tp: int = field(default=1, metadata=q(Kind.COUNT, "tensor-parallel size"))
    pp: int = field(default=1, metadata=q(Kind.COUNT, "pipeline-parallel size"))
    vpp: int = field(default=1, metadata=q(Kind.COUNT, "virtual stages per pipeline rank"))
    first_stage_layers: int = field(
        default=0, metadata=q(Kind.COUNT, "decoder layers on the first pipeline stage (0: even split)")
    )
    last_stage_layers: int = field(
        default=0, metadata=q(Kind.COUNT, "decoder layers on the last pipeline stage (0: even split)")
    )
    account_for_embedding: bool = field(
        default=False, metadata=q(Kind.FLAG, "the embedding counts as a layer in the even pipeline split")
    )
    account_for_loss: bool = field(
        default=False, metadata=q(Kind.FLAG, "the loss counts as a layer in the even pipeline split")
    )
    pipeline_layout: str = field(
        default="",
        # no `|` in the doc: it lands in a Markdown table (docs/language.md)
        metadata=q(Kind.TEXT, "Megatron's --pipeline-model-parallel-layout: the virtual stages' E, t, m and L "
                   "(\"\": split by the knobs above; see pipeline layouts below)"),
    )
    cp: int = field(default=1, metadata=q(Kind.COUNT, "context-parallel size"))
    ep: int = field(default=1, metadata=q(Kind.COUNT, "expert-parallel size"))
    etp: int = field(default=0, metadata=q(Kind.COUNT, "expert tensor-parallel size (0: = tp)"))
    mbs: int = field(default=1, metadata=q(Kind.COUNT, "micro-batch size"))
    gbs: int = field(default=1, metadata=q(Kind.COUNT, "global batch size (sequences per step)"))
    seq_len: int = field(default=4096, metadata=q(Kind.COUNT, "sequence length"))
    precision: str = field(default="bf16", metadata=q(Kind.ENUM, "GEMM precision (fp4: NVFP4)", PRECISIONS))
    fp8_recipe: str = field(default="tensorwise", metadata=q(Kind.ENUM, "FP8 scaling recipe", FP8_RECIPES))
    fp8_format: str = field(default="hybrid", metadata=q(
        Kind.ENUM, "FP8 formats: E4M3 forward and E5M2 gradients, or E4M3 for both (numerics only)", FP8_FORMATS))
    recompute: Recompute = field(factory=Recompute, metadata=q(Kind.BLOCK, "activation recomputation"))
    offload_layers: int = field(default=0, metadata=q(
        Kind.COUNT, "leading decoder layers whose activations go to host memory in the forward and come back for "
        "the backward (--cpu-offloading-num-layers; 0: none)"))
    sharding: str = field(default="dist_opt", metadata=q(Kind.ENUM, "optimizer/parameter sharding", SHARDINGS))
    schedule: str = field(default="1f1b", metadata=q(Kind.ENUM, "pipeline schedule", SCHEDULES))
    sequence_parallel: bool = field(default=True, metadata=q(Kind.FLAG, "sequence parallelism (TP > 1)"))
    attention: str = field(default="flash", metadata=q(
        Kind.ENUM, "attention kernel: the framework's fused kernel, FlashAttention-2's, or unfused", ATTENTIONS))
    cp_comm: str = field(default="p2p", metadata=q(Kind.ENUM, "context-parallel communication", CP_COMMS))
    cross_entropy: str = field(default="unfused", metadata=q(
        Kind.ENUM, "the loss's cross-entropy kernel: Megatron's unfused one, its fused one (native), or Transformer "
        "Engine's (te), which keeps the logits in BF16", CROSS_ENTROPIES))
    moe_dispatcher: str = field(default="alltoall", metadata=q(Kind.ENUM, "MoE token dispatcher", DISPATCHERS))
    tp_comm_overlap: bool = field(default=False, metadata=q(Kind.FLAG, "overlap TP communication with GEMMs"))
    overlap_grad_reduce: bool = field(default=True, metadata=q(Kind.FLAG, "overlap DP gradient reduction"))
    overlap_param_gather: bool = field(default=True, metadata=q(Kind.FLAG, "overlap parameter all-gather"))
    ep_comm_overlap: bool = field(default=False, metadata=q(Kind.FLAG, "overlap EP all-to-all with compute"))
    cuda_graph: str = field(default="none", metadata=q(Kind.ENUM, "what CUDA graphs capture (no host launches)",
                                                       CUDA_GRAPHS))
    fp8_param_gather: bool = field(default=False, metadata=q(
        Kind.FLAG, "FP8 primary weights: GEMM weights kept and data-parallel gathered in FP8 (--fp8-param-gather)"))
    main_grad_dtype: str = field(default="fp32", metadata=q(
        Kind.ENUM, "gradient buffer dtype (torch FSDP2, the primus target's FSDP, keeps BF16 whatever it says)",
        STATE_DTYPES))
    optimizer_dtype: str = field(default="fp32", metadata=q(Kind.ENUM, "Adam moment dtype", STATE_DTYPES))

    @property
    def expert_tp(self) -> int:
        return int(derived.expert_tp(self.etp, self.tp))

    @property
    def model_parallel(self) -> int:
        return int(derived.model_parallel(self.tp, self.pp, self.cp))

    @property
    def sp(self) -> bool:
        """Megatron switches sequence parallelism off at TP 1."""
        return self.sequence_parallel and self.tp > 1

    def dp(self, world: int) -> int:
        return int(derived.dp(world, self.tp, self.pp, self.cp))

    def expert_dp(self, world: int) -> int:
        return int(derived.edp(world, self.expert_tp, self.ep, self.pp))

    def microbatches(self, world: int) -> int:
        return int(derived.microbatches(self.gbs, self.mbs, self.dp(world)))

    def label(self, show: Collection[str] = ()) -> str:
        """A short, stable, human-readable identity: the non-default knobs, ``tp=2,pp=4,...``; ``show`` names
        the workload's knobs (``UNLABELLED``) to give too, those a space varies (``shown_workload``)."""
        default = _default()
        parts = [
            f"{f.name}={format_value(getattr(self, f.name))}"
            for f in attrs.fields(Candidate)
            if (f.name in show or f.name not in UNLABELLED) and getattr(self, f.name) != getattr(default, f.name)
        ]
        return ",".join(parts) or "defaults"

    def replace(self, **changes: Any) -> Candidate:
        return attrs.evolve(self, **changes)


# what a label leaves out: the batch and the sequence are the workload's, not the layout's
UNLABELLED = ("gbs", "seq_len")


def shown_workload(axes: Iterable[str]) -> tuple[str, ...]:
    """The workload's knobs a space varies (an axis of `seq_len`): its labels give them, or two of its
    points would share one."""
    names = set(axes)
    return tuple(n for n in UNLABELLED if n in names)


@functools.cache
def _default() -> Candidate:
    return Candidate()


KNOBS: dict[str, attrs.Attribute[Any]] = {f.name: f for f in attrs.fields(Candidate)}


def format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and "," in value:
        # a pipeline layout's cosmetic commas would split the label's pairs; `--point` reads it quoted
        return f'"{value}"'
    return str(value)
