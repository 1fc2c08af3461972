"""Per-stage operator lists for a candidate: what each rank computes and communicates.

Shapes are per rank. A forward GEMM ``Y[m,n] = X[m,k] W[k,n]`` has a backward input-gradient GEMM
``dX = dY W^T`` (``m x n x k``, phase B) and a weight-gradient GEMM ``dW = X^T dY`` (``k x m x n``,
phase W), so zero-bubble schedules can move W. Layer placement follows Megatron: virtual stage
``j = chunk * pp + stage`` (interleaved) or the V shape for ZBV; the embedding sits on virtual stage
0 and the output layer on the last one. Communicator layouts follow Megatron's rank order (TP
innermost, then CP, then DP, then PP; experts: ETP, then EP).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from operator import attrgetter
from typing import Any, TypeVar

import attrs
from attrs import frozen

from primus_lang.ir import Candidate, Cluster, Efficiency, Gpu, Model, derived, pipeline
from primus_lang.ir.candidate import KNOBS
from primus_lang.memo import remembered
from primus_lang.project.collectives import group_layout
from primus_lang.project.ops import (
    Attention,
    Block,
    Collective,
    Gemm,
    GroupedGemm,
    MemoryOp,
    Op,
    SsmScan,
    Stage,
    Task,
)

BF16 = derived.dtype_bytes("bf16")
# Bytes moved per element by the quantize kernels of each FP8 recipe (read BF16, write FP8), on a
# part whose FP8 tensor cores take the TN layout only (Hopper, MI300): delayed scaling casts with last
# step's amax and writes a transposed copy for the backward (2+1+1);
# tensorwise (current) scaling first reads the tensor for its amax (+2); blockwise and MXFP8 write
# row- and column-wise copies with their block scales (MXFP8: one E8M0 scale per 32 values, x2).
# torchao's rowwise recipe (torchtitan) scales each operand along the GEMM's reduction axis, which is
# a different axis for the forward and for the backward GEMM that reads it transposed: an activation
# is cast along its rows while a BF16 transposed copy is written (2+1+2), then that copy is cast (2+1);
# a weight is cast (2+1), transposed in BF16 (2+2) and cast again (2+1). These are torchao's own
# roofline counts (torchao/testing/training/roofline_utils.py, get_tensor_memory_traffic_ovhd_s, pytorch/ao
# at 36027d8, Aug 2026). Its GEMMs run at the FP8 rate: on large H100 shapes the CUTLASS rowwise kernel
# matches cuBLAS's tensorwise one (FBGEMM PR #2546: 1083-1141 against BF16's 546-585 TFLOP/s; pytorch/ao
# PR #2185), so what sets it apart from tensorwise is this traffic, not the GEMM.
FP8_CAST_BYTES = {"delayed": 4.0, "tensorwise": 6.0, "blockwise": 4.0 + 2 / 128, "mxfp8": 4.0 + 2 / 32,
                  "rowwise": 8.0}
FP8_WEIGHT_CAST_BYTES = {**FP8_CAST_BYTES, "rowwise": 10.0}
# torchao runs the rowwise recipe's two backward GEMMs (no fast accumulation) as cuBLAS tensorwise GEMMs
# and applies the row and column scales to their BF16 outputs in a separate kernel, read and written
# (2+2 per output element): its CUTLASS rowwise kernel was slower without fast accumulation
# (torchao/float8/float8_ops.py, addmm_float8_unwrapped; pytorch/ao issue #2184).
ROWWISE_RESCALE_BYTES = 4.0
# Where the tensor cores read a per-tensor FP8 operand transposed in place (``Gpu.fp8_transposes``),
# the transposed copy's byte is not written.
TRANSPOSED_COPY_BYTES = 1.0
# NVFP4 is current-scaled too (an FP32 scale per tensor from a first amax pass, +2) and writes row-
# and column-wise copies of half a byte per value, each with an E4M3 scale per 16 values.
NVFP4_CAST_BYTES = 2.0 + 2.0 + 2 * (0.5 + 1 / 16)


# Bytes per element of an activation that sequence parallelism all-gathers into a low-precision linear.
# Transformer Engine quantizes before it gathers (transformer_engine/pytorch/distributed.py,
# gather_along_first_dim, at d0067d0, Aug 2026; TE 1.x cast before gathering too): the forward's
# input gather, the backward's gather of the output gradient and the input's re-gather for the weight
# gradient move FP8 (blockwise and MXFP8 with their block scales: FP32 per 128 values, E8M0 per 32) or
# NVFP4 (half a byte, an E4M3 scale per 16 values). torchao's float8 tensor parallelism does the same
# for its tensorwise recipe (Float8ColwiseParallel, Float8RowwiseParallel, PrepareFloat8ModuleInput:
# the input cast before its gather, the gradient cast before the reduce-scatter's backward gather) and
# torchtitan turns it off for rowwise, which gathers BF16. Reduce-scatters and all-reduces carry the
# linears' BF16 outputs and input gradients.
SP_GATHER_BYTES = {"delayed": 1.0, "tensorwise": 1.0, "blockwise": 1 + 4 / 128, "mxfp8": 1 + 1 / 32,
                   "rowwise": float(BF16)}
NVFP4_GATHER_BYTES = 0.5 + 1 / 16


def sp_gather_bytes(cand: Candidate) -> float:
    """Bytes per element of a sequence-parallel all-gather into ``cand``'s linear layers."""
    if cand.precision == "fp8":
        return SP_GATHER_BYTES[cand.fp8_recipe]
    if cand.precision == "fp4":
        return NVFP4_GATHER_BYTES
    return float(BF16)


def cast_bytes(cand: Candidate, gpu: Gpu) -> float:
    """Bytes the quantize kernels move per element of a low-precision GEMM operand on ``gpu`` (0: BF16)."""
    if cand.precision == "fp8":
        return FP8_CAST_BYTES[cand.fp8_recipe] - _untransposed(cand, gpu)
    return NVFP4_CAST_BYTES if cand.precision == "fp4" else 0.0


def _untransposed(cand: Candidate, gpu: Gpu) -> float:
    return 0.0 if gpu.fp8_transposes(cand.fp8_recipe) else TRANSPOSED_COPY_BYTES


def gathered_bytes(cand: Candidate) -> int:
    """Bytes a data-parallel parameter all-gather moves per parameter: FP8 primary weights gather in FP8.
    The GEMM weights, which FP8 holds, are nearly all of a layer's parameters; the rest is counted at one
    byte too (BF16 embeddings gather in FP8 nowhere, but a layer's norms are a rounding error)."""
    return 1 if cand.fp8_param_gather and cand.precision == "fp8" else BF16


def weight_cast_bytes(cand: Candidate, gpu: Gpu) -> float:
    """Bytes the quantize kernels move per weight element once a step on ``gpu`` (0: BF16)."""
    if cand.precision == "fp8":
        return FP8_WEIGHT_CAST_BYTES[cand.fp8_recipe] - _untransposed(cand, gpu)
    return cast_bytes(cand, gpu)


def _backward(op: Gemm | GroupedGemm) -> tuple[Gemm | GroupedGemm, Gemm | GroupedGemm]:
    """The input-gradient GEMM ``dX = dY W^T`` and the weight-gradient GEMM ``dW = X^T dY``."""
    if isinstance(op, Gemm):
        return Gemm(op.m, op.k, op.n, op.dtype, op.batch), Gemm(op.k, op.n, op.m, op.dtype, op.batch)
    return (GroupedGemm(op.groups, op.m, op.k, op.n, op.dtype),
            GroupedGemm(op.groups, op.k, op.n, op.m, op.dtype))


class _Shapes:
    """Everything about one candidate that the per-layer op lists need."""

    def __init__(self, model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> None:
        self.model, self.cluster, self.cand = model, cluster, cand
        # FSDP launched as torch FSDP2 (``Settings.torch_fsdp2``), which reduce-scatters each micro-batch's
        # gradients (Megatron's no_sync is a no-op for it) where Megatron-FSDP and DDP reduce once a step
        self.torch_fsdp2 = torch_fsdp2 and cand.sharding == "fsdp"
        world = cluster.world
        self.world = world
        self.tp, self.cp, self.pp = cand.tp, cand.cp, cand.pp
        self.vpp = derived.virtual_stages(cand.schedule, cand.vpp)
        self.ep, self.etp = cand.ep, cand.expert_tp
        self.dp = derived.at_least_one(cand.dp(world))
        self.edp = derived.at_least_one(cand.expert_dp(world))
        self.b, self.s = cand.mbs, cand.seq_len
        self.tokens = self.b * (self.s // self.cp)  # tokens of one micro-batch on one CP rank
        self.sp = cand.sp
        self.tokens_sp = self.tokens // self.tp if self.sp else self.tokens
        self.dtype = cand.precision  # the dtype of the linear layers' GEMMs
        self.cast = cast_bytes(cand, cluster.gpu)
        self.gather = sp_gather_bytes(cand)
        self.weight_cast = weight_cast_bytes(cand, cluster.gpu)
        self.h = model.hidden
        self.heads = derived.heads_per_rank(model.heads, self.tp)
        self.kv_heads = derived.heads_per_rank(model.kv_heads, self.tp)
        self.vocab = derived.vocab_per_rank(model.vocab, self.tp)
        domain = cluster.domain
        self.tp_group = group_layout(self.tp, 1, domain)
        self.cp_group = group_layout(self.cp, self.tp, domain)
        self.dp_group = group_layout(self.dp * self.cp, self.tp, domain)
        self.ep_group = group_layout(self.ep, self.etp, domain)
        self.etp_group = group_layout(self.etp, 1, domain)
        self.edp_group = group_layout(self.edp, self.etp * self.ep, domain)
        stride = world // self.pp
        self.pp_group = group_layout(2, stride, domain) if self.pp > 1 else group_layout(1, 1, domain)
        self.grad_bytes = derived.dtype_bytes(cand.main_grad_dtype)
        rc = cand.recompute
        # Megatron's --recompute-modules; selective without modules is core_attn
        self.recomputed = frozenset(rc.modules or ("core_attn",)) if rc.kind == "selective" else frozenset()

    def gemm(self, n: int, k: int, m: int | None = None, dtype: str | None = None) -> Gemm:
        return Gemm(self.tokens if m is None else m, max(1, n), max(1, k), dtype or self.dtype)


class _Tasks(list[Task]):
    """A block's tasks as its builders add them, each in the layer part its builder works in
    (``Task.part``, what a CUDA graph scope captures): the caller sets the part where one starts,
    rather than each task being copied into it afterwards."""

    def __init__(self, part: str = "") -> None:
        super().__init__()
        self.part = part

    def add(self, op: Op, phase: str, kind: str = "compute", *, times: float = 1.0, model_flops: bool = True,
            routed: bool = False, hides_under: str = "", model_share: float = 1.0, part: str | None = None) -> None:
        self.append(Task(op, phase, kind, times, model_flops, routed, hides_under, model_share,
                         self.part if part is None else part))


def _linear(sh: _Shapes, tasks: _Tasks, params: list[int], op: Gemm | GroupedGemm,
            routed: bool = False, linears: int = 1) -> None:
    """A linear layer's forward, its two backward GEMMs, and the FP8 quantize kernels. ``linears``: how
    many separate linears of torchtitan's models this fused one is (Q, K and V; a gated MLP's gate and
    up projections), which under torchao's rowwise recipe each cast the input they share (below)."""
    tasks.add(op, "F", routed=routed)
    b, w = _backward(op)
    tasks.add(b, "B", routed=routed)
    tasks.add(w, "W", routed=routed)
    groups = op.groups if isinstance(op, GroupedGemm) else op.batch
    params.append(groups * op.k * op.n)
    if op.dtype != "bf16" and sh.cast > 0:
        rows = op.m * groups
        rowwise = sh.cand.fp8_recipe == "rowwise"
        # torchao's rowwise recipe is torchtitan's, whose models keep wq, wk and wv (w1 and w3) as
        # separate linears, and under TP torchtitan runs it without float8 tensor parallelism: no module
        # casts the shared input once for all of them (PrepareFloat8ModuleInput, which its per-tensor
        # recipe uses), so each linear casts the whole gathered input and rescales its own input
        # gradient. Leaving wk and wv in BF16 recovered 10% of Llama 3 70B's tokens/s at TP 8
        # (pytorch/torchtitan PR #1319, issue #1207), where their GEMMs are under 2% of the layer's
        # FLOPs. Without TP both recipes cast a plain tensor that torch.compile can share, and the
        # corpus's per-tensor pairs there fit one cast.
        readers = linears if rowwise and sh.tp > 1 else 1
        tasks.add(MemoryOp(f"{op.dtype}_cast_input", int(readers * rows * op.k * sh.cast), readers), "F",
                  routed=routed)
        tasks.add(MemoryOp(f"{op.dtype}_cast_grad", int(rows * op.n * sh.cast)), "B", routed=routed)
        if rowwise:
            tasks.add(MemoryOp("fp8_rescale_dgrad", int(readers * rows * op.k * ROWWISE_RESCALE_BYTES), readers),
                      "B", routed=routed)
            tasks.add(MemoryOp("fp8_rescale_wgrad", int(groups * op.k * op.n * ROWWISE_RESCALE_BYTES)), "W",
                      routed=routed)


def _tp_pair(sh: _Shapes, tasks: _Tasks) -> None:
    """TP communication around one column-parallel/row-parallel pair (attention or MLP)."""
    if sh.tp <= 1:
        return
    size = sh.tokens * sh.h * BF16
    if sh.sp:
        gathered = int(sh.tokens * sh.h * sh.gather)
        for phase in ("F", "B"):
            tasks.add(Collective("all_gather", gathered, sh.tp_group), phase, "tp_comm", hides_under="gemm")
            tasks.add(Collective("reduce_scatter", size, sh.tp_group), phase, "tp_comm", hides_under="gemm")
        # The column-parallel layer keeps only its sequence shard of the input (the activation memory
        # sequence parallelism saves) and gathers it again in the backward for its weight gradient:
        # Transformer Engine's backward_input_needs_gather, megatron-core's
        # LinearWithGradAccumulationAndAsyncCommunication; the tp-comm-overlap configs name it the
        # bulk overlap of the dgrad GEMM. So the backward moves three tensors where the forward moves two.
        tasks.add(Collective("all_gather", gathered, sh.tp_group), "B", "tp_comm", hides_under="gemm")
    else:
        for phase in ("F", "B"):
            tasks.add(Collective("all_reduce", size, sh.tp_group), phase, "tp_comm", hides_under="gemm")


def _rerun(sh: _Shapes, tasks: _Tasks, start: int, module: str) -> None:
    """Selective recomputation of one of Megatron's ``--recompute-modules``: the forward tasks added
    since ``start`` run again in the backward (no model FLOPs), when the candidate recomputes it."""
    if module in sh.recomputed:
        tasks += [t.again() for t in tasks[start:] if t.phase == "F"]


def _attention(sh: _Shapes, tasks: _Tasks, params: list[int]) -> None:
    m = sh.model
    heads, kv = sh.heads, sh.kv_heads
    if m.mla is not None:
        mla = m.mla
        qk_dim, v_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim, mla.v_head_dim
        if mla.q_lora_rank:
            _linear(sh, tasks, params, sh.gemm(mla.q_lora_rank, sh.h))
            start = len(tasks)
            _linear(sh, tasks, params, sh.gemm(heads * qk_dim, mla.q_lora_rank))
            _rerun(sh, tasks, start, "mla_up_proj")
        else:
            start = len(tasks)
            _linear(sh, tasks, params, sh.gemm(heads * qk_dim, sh.h))
            _rerun(sh, tasks, start, "mla_up_proj")  # megatron-core re-runs linear_q_proj with the up-projections
        _linear(sh, tasks, params, sh.gemm(mla.kv_lora_rank + mla.qk_rope_head_dim, sh.h))
        start = len(tasks)
        _linear(sh, tasks, params, sh.gemm(heads * (mla.qk_nope_head_dim + v_dim), mla.kv_lora_rank))
        _rerun(sh, tasks, start, "mla_up_proj")
        kv_width = heads * (qk_dim + v_dim)  # MLA expands K and V per head before the core
    else:
        qk_dim = v_dim = m.head_dim
        if derived.qkv_gathered(m.kv_heads, sh.tp):
            # past TP = kv_heads the QKV output is split over TP as ever, then gathered whole for each rank
            # to keep its group's heads (one key/value head, heads/TP query heads); the gather's backward
            # reduce-scatters the gradient. Nothing overlaps either.
            whole = derived.qkv_width(m.heads, m.kv_heads, m.head_dim, 1)
            _linear(sh, tasks, params, sh.gemm(derived.qkv_width(m.heads, m.kv_heads, m.head_dim, sh.tp), sh.h),
                    linears=3)
            tasks.add(Collective("all_gather", sh.tokens * whole * BF16, sh.tp_group), "F", "tp_comm")
            tasks.add(Collective("reduce_scatter", sh.tokens * whole * BF16, sh.tp_group), "B", "tp_comm")
        else:
            _linear(sh, tasks, params, sh.gemm((heads + 2 * kv) * m.head_dim, sh.h), linears=3)
        kv_width = 2 * kv * m.head_dim
    _linear(sh, tasks, params, sh.gemm(sh.h, heads * v_dim))
    s_q = sh.s // sh.cp
    variants = [(0, 1.0)]
    if m.sliding_window:
        # windowed and full layers by the card's pattern (gpt-oss alternates: half and half)
        windowed = m.windowed_share
        variants = [(w, share) for w, share in ((0, 1.0 - windowed), (m.sliding_window, windowed)) if share > 0]
    if sh.cand.attention == "unfused":
        _unfused_attention(sh, tasks, heads, s_q, qk_dim, v_dim)
        variants = []
    fa2 = sh.cand.attention == "fa2"
    for window, share in variants:
        fwd = Attention(sh.b, heads, s_q, sh.s, qk_dim, v_dim, True, window, sinks=m.attention_sinks, fa2=fa2)
        tasks.add(fwd, "F", times=share)
        # the backward kernel re-computes the scores (2.5x the forward's work); model FLOPs count 2x
        tasks.add(Attention(sh.b, heads, s_q, sh.s, qk_dim, v_dim, True, window, backward=True,
                            sinks=m.attention_sinks, fa2=fa2),
                  "B", times=share, model_share=0.8)
        if "core_attn" in sh.recomputed:
            tasks.add(fwd, "B", times=share, model_flops=False)
    if sh.cp > 1:
        kv_bytes = sh.tokens * kv_width * BF16
        if sh.cand.cp_comm == "a2a":
            qkvo = sh.tokens * (heads * (qk_dim + v_dim) + kv_width) * BF16
            for phase in ("F", "B"):
                tasks.add(Collective("all_to_all", qkvo, sh.cp_group), phase, "cp_comm")
        else:
            hide = "attention" if sh.cand.cp_comm == "p2p" else ""
            tasks.add(Collective("all_gather", kv_bytes * sh.cp, sh.cp_group), "F", "cp_comm", hides_under=hide)
            tasks.add(Collective("all_gather", kv_bytes * sh.cp, sh.cp_group), "B", "cp_comm", hides_under=hide)
            tasks.add(Collective("reduce_scatter", kv_bytes * sh.cp, sh.cp_group), "B", "cp_comm", hides_under=hide)
    _tp_pair(sh, tasks)


def _unfused_attention(sh: _Shapes, tasks: _Tasks, heads: int, s_q: int, qk_dim: int, v_dim: int) -> None:
    """Attention without a fused kernel: batched GEMMs over the full score square (the causal mask
    is applied, not skipped) and the scaled-masked softmax through HBM. Model FLOPs still count the
    causal half (``model_share``), as for flash attention."""
    batch = sh.b * heads
    scores = sh.b * heads * s_q * sh.s
    qk = Gemm(s_q, sh.s, qk_dim, "bf16", batch)
    pv = Gemm(s_q, v_dim, sh.s, "bf16", batch)
    # softmax forward: read the scores, write probabilities (BF16) and keep them for the backward
    soft = MemoryOp("attention_softmax", scores * 3 * BF16, 2)
    forward: list[tuple[Gemm | MemoryOp, float]] = [(qk, 0.5), (soft, 1.0), (pv, 0.5)]
    for op, share in forward:
        tasks.add(op, "F", model_share=share)
    tasks.add(Gemm(s_q, sh.s, v_dim, "bf16", batch), "B", model_share=0.5)  # dP = dO V^T
    tasks.add(Gemm(sh.s, v_dim, s_q, "bf16", batch), "B", model_share=0.5)  # dV = P^T dO
    tasks.add(MemoryOp("attention_softmax_bwd", scores * 3 * BF16, 2), "B")
    tasks.add(Gemm(s_q, qk_dim, sh.s, "bf16", batch), "B", model_share=0.5)  # dQ = dS K
    tasks.add(Gemm(sh.s, qk_dim, s_q, "bf16", batch), "B", model_share=0.5)  # dK = dS^T Q
    if "core_attn" in sh.recomputed:
        for op, _share in forward:
            tasks.add(op, "B", model_flops=False)


def _elementwise(sh: _Shapes, tasks: _Tasks, ffn_width: int, norms: int = 2, rope: bool = True) -> None:
    """Norms, residual adds, RoPE and the MLP activation of one layer, as HBM traffic (``norms``
    norm-and-residual pairs: a transformer layer has two, a hybrid model's layer one)."""
    t_sp, t, h = sh.tokens_sp, sh.tokens, sh.h
    m = sh.model
    rope_width = derived.qkv_width(m.heads, m.kv_heads, m.head_dim, sh.tp) if m.position == "rope" and rope else 0
    act = 3 if m.gated else 2
    fwd = norms * (2 * t_sp * h * BF16) + norms * (3 * t_sp * h * BF16) + 2 * t * rope_width * BF16 + act * t * ffn_width * BF16
    # the norms, residual adds, RoPE and the activation; their backwards
    kernels = 3 * norms
    tasks.add(MemoryOp("layer_elementwise", fwd, kernels), "F")
    tasks.add(MemoryOp("layer_elementwise_bwd", 2 * fwd, kernels), "B")
    if "layernorm" in sh.recomputed:
        tasks.add(MemoryOp("layernorm_recompute", norms * (2 * t_sp * h * BF16), norms), "B", model_flops=False)


def _dense_mlp(sh: _Shapes, tasks: _Tasks, params: list[int], ffn: int) -> int:
    up = 2 if sh.model.gated else 1
    ffn_r = max(1, ffn // sh.tp)
    start = len(tasks)
    _linear(sh, tasks, params, sh.gemm(up * ffn_r, sh.h), linears=up)
    _linear(sh, tasks, params, sh.gemm(sh.h, ffn_r))
    _tp_pair(sh, tasks)
    _rerun(sh, tasks, start, "mlp")  # Megatron's ``mlp`` module is the dense MLP only
    if "mlp" in sh.recomputed:
        # its activation runs again too (the forward's is costed with the layer's other elementwise ops)
        act = 3 if sh.model.gated else 2
        tasks.add(MemoryOp("mlp_activation_recompute", act * sh.tokens * ffn_r * BF16), "B",
                  model_flops=False)
    return ffn_r


def _moe_mlp(sh: _Shapes, tasks: _Tasks, params: list[int], expert_params: list[int]) -> int:
    moe = sh.model.moe
    assert moe is not None
    up = 2 if sh.model.gated else 1
    tokens_in = sh.tokens // sh.tp  # tokens entering the router on one rank (the SP share)
    start, outer = len(tasks), tasks.part
    tasks.part = "router"
    _linear(sh, tasks, params, Gemm(tokens_in, moe.num_experts, sh.h, "bf16"))
    tasks.part = outer
    local = max(1, moe.num_experts // sh.ep)
    per_expert = max(1, round(tokens_in * moe.top_k * sh.etp * sh.ep / moe.num_experts))
    ffn_r = max(1, moe.ffn_hidden // sh.etp)
    # LatentMoE: tokens go down to the latent width before dispatch and back up after the combine
    width = moe.latent or sh.h
    if moe.latent:
        _linear(sh, tasks, params, Gemm(tokens_in, moe.latent, sh.h, sh.dtype))
        _linear(sh, tasks, params, Gemm(tokens_in, sh.h, moe.latent, sh.dtype))
    _linear(sh, tasks, expert_params, GroupedGemm(local, per_expert, up * ffn_r, width, sh.dtype), routed=True,
            linears=up)
    _linear(sh, tasks, expert_params, GroupedGemm(local, per_expert, width, ffn_r, sh.dtype), routed=True)
    routed_tokens = local * per_expert
    permute = 2 * 2 * routed_tokens * width * BF16  # permute and unpermute, read + write
    tasks.add(MemoryOp("moe_permute", permute, 4), "F", routed=True)
    tasks.add(MemoryOp("moe_permute_bwd", permute, 4), "B", routed=True)
    if sh.cand.moe_dispatcher == "alltoall" and local > 1:
        # megatron-core's all-to-all dispatcher permutes twice each way: its tokens arrive from each rank
        # grouped by expert, and it sorts them by local expert after the all-to-all and back before the
        # combine (``sort_chunks_by_idxs``); DeepEP's dispatch (flex) and the all-gather dispatcher
        # permute once (token_dispatcher.py, core 0.16)
        tasks.add(MemoryOp("moe_sort_chunks", permute, 2), "F", routed=True)
        tasks.add(MemoryOp("moe_sort_chunks_bwd", permute, 2), "B", routed=True)
    # router softmax/top-k and the token sort around the permutation are small kernels of their own
    tasks.add(MemoryOp("moe_router", tokens_in * moe.num_experts * 4 * 3, 4), "F", part="router")
    tasks.add(MemoryOp("moe_router_bwd", tokens_in * moe.num_experts * 4 * 3, 3), "B", part="router")
    act = len(tasks)
    tasks.add(MemoryOp("moe_activation", 3 * routed_tokens * ffn_r * BF16), "F", routed=True)
    if "moe" not in sh.recomputed:
        _rerun(sh, tasks, act, "moe_act")
    tasks.add(MemoryOp("moe_activation_bwd", 6 * routed_tokens * ffn_r * BF16), "B", routed=True)
    if sh.ep > 1 and sh.cand.moe_dispatcher == "allgather":
        # megatron-core's MoEAllGatherTokenDispatcher gathers every rank's tokens, whatever their experts, and
        # each rank keeps those of its own; the combine reduce-scatters them back: ep x the rank's tokens,
        # where all-to-all moves only the top_k copies bound for other ranks
        gathered = tokens_in * sh.ep * width * BF16
        for phase in ("F", "B"):
            tasks.add(Collective("all_gather", gathered, sh.ep_group), phase, "ep_comm", routed=True,
                      hides_under="block")
            tasks.add(Collective("reduce_scatter", gathered, sh.ep_group), phase, "ep_comm", routed=True,
                      hides_under="block")
    elif sh.ep > 1:
        send = tokens_in * moe.top_k * width * BF16
        remote = -1
        domains = sh.ep_group.domains
        if sh.cand.moe_dispatcher == "flex" and domains > 1:
            # DeepEP/HybridEP send a token once to each remote domain holding one of its experts and
            # forward it over the scale-up fabric there: the expected number of remote domains hit
            # by top_k experts spread evenly over the domains
            hit = (domains - 1) * (1 - (1 - 1 / domains) ** moe.top_k)
            remote = int(tokens_in * hit * width * BF16)
        for phase in ("F", "B"):
            for _ in ("dispatch", "combine"):
                tasks.add(Collective("all_to_all", send, sh.ep_group, remote), phase, "ep_comm",
                          routed=True, hides_under="block")
        if sh.cand.moe_dispatcher == "alltoall":
            # the all-to-all dispatcher gathers every rank's token counts per expert before it
            # dispatches, and sends the routing probabilities (FP32) by an all-to-all of their own, whose
            # gradient returns in the backward; DeepEP carries both inside its dispatch kernel
            counts = moe.num_experts * 8 * sh.ep
            probs = tokens_in * moe.top_k * 4
            tasks.add(Collective("all_gather", counts, sh.ep_group), "F", "ep_comm", routed=True)
            for phase in ("F", "B"):
                tasks.add(Collective("all_to_all", probs, sh.ep_group), phase, "ep_comm", routed=True,
                          hides_under="block")
    if sh.etp > 1:
        gathered = routed_tokens * width * BF16
        for phase in ("F", "B"):
            tasks.add(Collective("all_gather", gathered, sh.etp_group), phase, "ep_comm", routed=True)
            tasks.add(Collective("reduce_scatter", gathered, sh.etp_group), phase, "ep_comm", routed=True)
    shared = 0
    if moe.shared_experts:
        width = moe.shared_experts * (moe.shared_ffn_hidden or moe.ffn_hidden)
        shared = max(1, width // sh.tp)
        first = len(tasks)
        _linear(sh, tasks, params, sh.gemm(up * shared, sh.h), linears=up)
        _linear(sh, tasks, params, sh.gemm(sh.h, shared))
        if "moe" not in sh.recomputed:
            _rerun(sh, tasks, first, "shared_experts")
    if sh.tp > 1 and not sh.sp:
        _tp_pair(sh, tasks)
    # the whole MoE layer, router, dispatch and combine included (moe_act's re-run is inside it)
    _rerun(sh, tasks, start, "moe")
    return shared


def _mamba(sh: _Shapes, tasks: _Tasks, params: list[int]) -> None:
    """A Mamba-2 mixer (megatron-core's MambaMixer on its memory-efficient path): in_proj, the fused
    convolution + SSD scan + gated norm (``SsmScan``, mamba_ssm's kernels) and out_proj, with the TP
    collectives of a column/row pair and, under CP, the all-to-alls around the scan. megatron copies
    the in_proj output and the scan output between its sequence-first layout and the kernel's
    batch-first one (``rearrange(...).contiguous()``)."""
    mb = sh.model.mamba
    assert mb is not None
    tp = sh.tp
    heads, groups = derived.heads_per_rank(mb.heads, tp), derived.heads_per_rank(mb.groups, tp)
    inner, bc = heads * mb.head_dim, 2 * groups * mb.state_dim
    width = 2 * inner + bc + heads
    _linear(sh, tasks, params, sh.gemm(width, sh.h))
    params.append((inner + bc) * (mb.conv_kernel + 1) + 3 * heads + inner)
    t = sh.tokens
    chunks = sh.b * max(1, -(-(sh.s // sh.cp) // mb.chunk))
    conv = t * (inner + bc) * BF16 * 2  # read x, B, C; write them convolved
    # FP32 chunk states written, passed along and read back; dt and its cumulative sums
    passing = chunks * heads * mb.state_dim * mb.head_dim * 4 * 3 + t * heads * 4 * 4
    norm = t * inner * BF16 * 3 + t * groups * 4  # y and z in, normalised y out; FP32 statistics
    layout = 2 * t * (width + inner) * BF16  # the two layout copies, read and write

    def scan(backward: bool) -> SsmScan:
        # the backward recomputes the convolution, then runs every kernel's gradient
        traffic = 3 * conv + 2 * passing + 2 * norm if backward else conv + passing + norm
        kernels = 12 if backward else 7
        return SsmScan(chunks, heads, mb.chunk, mb.state_dim, mb.head_dim, traffic, kernels, backward)

    tasks.add(MemoryOp("mamba_layout_copies", layout, 2), "F")
    tasks.add(scan(False), "F")
    tasks.add(MemoryOp("mamba_layout_copies_bwd", layout, 2), "B")
    tasks.add(scan(True), "B")
    if sh.cp > 1:
        # MambaContextParallel: an all-to-all trades the sequence shards for head shards before the
        # convolution and scan (z, x, B, C, dt) and back after it (y); the scan's work is unchanged
        for phase in ("F", "B"):
            tasks.add(Collective("all_to_all", t * width * BF16, sh.cp_group), phase, "cp_comm")
            tasks.add(Collective("all_to_all", t * inner * BF16, sh.cp_group), phase, "cp_comm")
    _linear(sh, tasks, params, sh.gemm(sh.h, inner))
    _tp_pair(sh, tasks)


def _fsdp(sh: _Shapes, tasks: _Tasks, nparams: int) -> None:
    """FSDP gathers a layer's parameters before its forward and again before its backward; torch FSDP2
    also reduce-scatters the layer's gradients in each backward."""
    if sh.cand.sharding != "fsdp" or sh.dp_group.size <= 1:
        return
    gathered = nparams * gathered_bytes(sh.cand)
    tasks.add(Collective("all_gather", gathered, sh.dp_group), "F", "dp_comm", hides_under="block")
    tasks.add(Collective("all_gather", gathered, sh.dp_group), "B", "dp_comm", hides_under="block")
    if sh.torch_fsdp2:
        tasks.add(Collective("reduce_scatter", nparams * sh.grad_bytes, sh.dp_group), "B", "dp_comm",
                  hides_under="block")


def _recomputed(tasks: Sequence[Task]) -> list[Task]:
    """Full recompute: the layer's forward runs again before its backward."""
    return [t.again() for t in tasks if t.phase == "F"]


def _op_recomputed(sh: _Shapes, moe: bool, tasks: Sequence[Task]) -> list[Task]:
    """Op-level checkpointing (torchtitan): the backward re-runs every second ``aten.mm`` of the
    block in forward order (wq wk wv wo w1 [w3] w2: wk, wo, w3 or w2), with the FP8 quantize kernels
    of its input, and every memory-bound op of the layer (norms, RoPE, activation, residual adds);
    the attention core's output is saved. Linears with a bias (``aten.addmm``) are all re-run. MoE
    and MLA layers, which legality refuses under ``op``, are costed as fully recomputed rather than
    guessed."""
    m = sh.model
    if moe or m.mla is not None:
        return _recomputed(tasks)
    heads, kv = sh.heads, sh.kv_heads
    ffn_r = max(1, m.ffn_hidden // sh.tp)
    mms = [sh.gemm(heads * m.head_dim, sh.h), sh.gemm(kv * m.head_dim, sh.h), sh.gemm(kv * m.head_dim, sh.h),
           sh.gemm(sh.h, heads * m.head_dim), sh.gemm(ffn_r, sh.h)]
    if m.gated:
        mms.append(sh.gemm(ffn_r, sh.h))
    mms.append(sh.gemm(sh.h, ffn_r))
    out: list[Task] = []
    for i, op in enumerate(mms):
        if i % 2 or m.bias:
            out.append(Task(op, "B", model_flops=False))
            if op.dtype != "bf16" and sh.cast > 0:
                out.append(Task(MemoryOp(f"{op.dtype}_cast_input", int(op.m * op.k * sh.cast)), "B",
                                model_flops=False))
    out += [t.again()
            for t in tasks if t.phase == "F" and isinstance(t.op, MemoryOp) and t.op.name == "layer_elementwise"]
    return out


# (what every block reads, what only an MoE block reads besides): ``_layer_key``
LayerKey = tuple[tuple[object, ...], tuple[object, ...]]


_ids: dict[int, tuple[object, int]] = {}


def token(obj: object) -> int:
    """A small int standing for ``obj`` in cache keys (hashing a model card or a cluster on every
    lookup costs more than the lookup); the table keeps ``obj`` alive so its id stays its own."""
    hit = _ids.get(id(obj))
    if hit is None or hit[0] is not obj:
        hit = _ids[id(obj)] = (obj, len(_ids))
    return hit[1]


def _layer_key(model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> LayerKey:
    """What a single layer's ops depend on: candidates that differ only in pipeline, schedule,
    batch or step-level knobs share layers (and their cached timings)."""
    # the DP size and the bytes a gathered parameter moves only matter to FSDP's gathers (_fsdp), and the
    # gradient bytes to torch FSDP2's reduce-scatters
    fsdp = (cand.pp, gathered_bytes(cand), torch_fsdp2 and derived.dtype_bytes(cand.main_grad_dtype)) \
        if cand.sharding == "fsdp" else 0
    # a dense layer, the embedding and the heads are built once for all the expert layouts and
    # dispatchers of a space
    return ((token(model), token(cluster), cand.tp, cand.cp, cand.mbs, cand.seq_len, cand.precision,
             cand.fp8_recipe, cand.recompute.kind if cand.recompute.kind in ("selective", "op") else "",
             cand.recompute.modules, cand.attention, cand.sp, cand.cp_comm, cand.cross_entropy, fsdp),
            (cand.ep, cand.etp, cand.moe_dispatcher))


def _is_moe(kind: str) -> bool:
    """Whether a layer kind (``LAYER_NAMES``) holds an MoE block."""
    return kind.endswith("E")


_layers: dict[tuple[tuple[object, ...], str, bool], tuple[Block, int, int]] = {}
_ends: dict[tuple[tuple[object, ...], str], tuple[Block, int]] = {}


def _layer_of(key: LayerKey, sh: _Shapes, kind: str, recompute: bool) -> tuple[Block, int, int]:
    shared = key if _is_moe(kind) else key[0]
    k = (shared, kind, recompute)
    hit = _layers.get(k)
    if hit is None:
        if len(_layers) > 20_000:
            _layers.clear()
        # a layer recomputed whole and one that is not share the body they run once
        body, p_dense, p_expert = remembered(_bodies, (shared, kind), lambda: _body(sh, kind), 20_000)
        hit = _layers[k] = (_layer(sh, kind, body, recompute), p_dense, p_expert)
    return hit


_Body = tuple[tuple[Task, ...], int, int]
_bodies: dict[Hashable, _Body] = {}
_mixers: dict[Hashable, tuple[tuple[Task, ...], tuple[int, ...]]] = {}


def _end_of(key: LayerKey, sh: _Shapes, name: str) -> tuple[Block, int]:
    """The embedding (``name == "embedding"``) or an output head, cached like the dense layers."""
    hit = _ends.get((key[0], name))
    if hit is None:
        if len(_ends) > 20_000:
            _ends.clear()
        hit = _ends[(key[0], name)] = _embedding(sh) if name == "embedding" else _head(sh, name)
    return hit


# A layer's kind: a transformer layer with a dense MLP (``T-``) or an MoE (``TE``), or one layer of
# a hybrid model, named by its pattern character (``M``, ``*``, ``-``, ``E``).
LAYER_NAMES = {"T-": "dense", "TE": "moe", "M": "mamba", "*": "attention", "-": "mlp", "E": "moe_mlp"}


def _body(sh: _Shapes, kind: str) -> _Body:
    """One layer's tasks as it runs once, with its dense and its expert parameter counts on this
    rank."""
    params: list[int] = []
    expert_params: list[int] = []
    mixer = kind[0] if kind[0] in ("T", "M", "*") else ""
    mlp = kind[-1] if kind[-1] in ("-", "E") else ""
    # the sequence mixer, Mamba's too, is graphed under the `attn` scope with attention
    tasks = _Tasks("attn")
    if mixer in ("T", "*"):
        # attention reads no expert field: one for every expert layout of the space
        shared = _layer_key(sh.model, sh.cluster, sh.cand, sh.torch_fsdp2)[0]
        attention, attention_params = remembered(_mixers, shared, lambda: _attention_part(sh), 20_000)
        tasks += attention
        params += attention_params
    elif mixer == "M":
        _mamba(sh, tasks, params)
    width = 0
    if mlp == "E":
        tasks.part = "moe"
        width = _moe_mlp(sh, tasks, params, expert_params)
    elif mlp == "-":
        tasks.part = "mlp"
        width = _dense_mlp(sh, tasks, params, sh.model.ffn_hidden)
    tasks.part = ""
    norms = 2 if mixer == "T" else 1
    if mixer == "T" and sh.model.norm_placement == "sandwich":
        norms = 4  # Gemma 2/3 normalize each sublayer's input and output
    _elementwise(sh, tasks, width, norms, rope=mixer in ("T", "*"))
    norm_params = norms * sh.h
    _fsdp(sh, tasks, sum(params) + sum(expert_params) + norm_params)
    return tuple(tasks), sum(params) + norm_params, sum(expert_params)


def _attention_part(sh: _Shapes) -> tuple[tuple[Task, ...], tuple[int, ...]]:
    tasks = _Tasks("attn")
    params: list[int] = []
    _attention(sh, tasks, params)
    return tuple(tasks), tuple(params)


def _layer(sh: _Shapes, kind: str, body: tuple[Task, ...], recompute: bool) -> Block:
    """One layer's block: its body, then what recomputation runs again before the backward."""
    tasks = list(body)
    if recompute:
        tasks += _recomputed(body)
    elif sh.cand.recompute.kind == "op":
        tasks += _op_recomputed(sh, kind[-1] == "E" or kind[0] != "T", body)
    suffix = "_layer_recomputed" if recompute else "_layer_op" if sh.cand.recompute.kind == "op" else "_layer"
    return Block(LAYER_NAMES[kind] + suffix, tuple(tasks))


def _embedding(sh: _Shapes) -> tuple[Block, int]:
    nbytes = sh.tokens_sp * sh.h * BF16 * 2
    # FSDP's gather of the table and torch FSDP2's reduce-scatter of its gradient are left out: nothing in
    # this block's passes would hide them, and FSDP prefetches them under the first layer's work
    tasks = (Task(MemoryOp("embedding", nbytes), "F"), Task(MemoryOp("embedding_bwd", 2 * nbytes), "W"))
    nparams = sh.vocab * sh.h
    return Block("embedding", tasks), nparams


def _head(sh: _Shapes, name: str = "output") -> tuple[Block, int]:
    """Final norm, the vocabulary-parallel output GEMM (BF16) and the cross-entropy."""
    tasks = _Tasks()
    params: list[int] = []
    vocab_r = sh.vocab
    _linear(sh, tasks, params, Gemm(sh.tokens, vocab_r, sh.h, "bf16"))
    if sh.tp > 1 and sh.sp:
        size = sh.tokens * sh.h * BF16
        tasks.add(Collective("all_gather", size, sh.tp_group), "F", "tp_comm", hides_under="gemm")
        tasks.add(Collective("reduce_scatter", size, sh.tp_group), "B", "tp_comm", hides_under="gemm")
    logits = sh.tokens * vocab_r
    if sh.cand.cross_entropy == "te":
        # Transformer Engine's kernels: an online softmax reads the BF16 logits once; the backward reads
        # them again and writes their gradient over them
        tasks.add(MemoryOp("cross_entropy", logits * 2 + 4 * sh.tokens_sp * sh.h, 2), "F")
        tasks.add(MemoryOp("cross_entropy_bwd", logits * 4 + 4 * sh.tokens_sp * sh.h, 1), "B")
    else:
        # FP32 softmax over the logits: read BF16, write FP32 probabilities, read them for the loss
        tasks.add(MemoryOp("cross_entropy", logits * 10 + 4 * sh.tokens_sp * sh.h, 3), "F")
        tasks.add(MemoryOp("cross_entropy_bwd", logits * 8 + 4 * sh.tokens_sp * sh.h, 3), "B")
    if sh.model.logit_softcap:
        # cap·tanh(x/cap) over the BF16 logits: read and write them; the backward reads the output
        # and its gradient and writes the input's
        tasks.add(MemoryOp("logit_softcap", logits * 2 * BF16), "F")
        tasks.add(MemoryOp("logit_softcap_bwd", logits * 3 * BF16), "B")
    nparams = sum(params) if not sh.model.tied_embeddings else 0
    if nparams and name == "output":  # an MTP head shares the output layer's weights: gathered once
        _fsdp(sh, tasks, nparams)
    return Block(name, tuple(tasks)), nparams


def virtual_stage(cand: Candidate, stage: int, chunk: int) -> int:
    """Index of (stage, chunk) along the model's layer order."""
    pp = cand.pp
    if cand.schedule == "zbv":
        return stage if chunk == 0 else 2 * pp - 1 - stage
    return chunk * pp + stage


_PLAIN = Efficiency()


# Knobs that change how the projection times and overlaps the ops, never which ops there are: the op
# lists of candidates that differ only in these are built once (tests/project/test_step_floor.py).
TIMING_KNOBS: dict[str, Any] = {"tp_comm_overlap": False, "ep_comm_overlap": False, "overlap_grad_reduce": True,
                                "overlap_param_gather": True, "cuda_graph": "none"}


def stage_ops(model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> tuple[Stage, ...]:
    """The per-stage operator lists of ``cand`` (one ``Stage`` per pipeline rank); ``torch_fsdp2``: the
    target launches FSDP as torch FSDP2 (``Settings.torch_fsdp2``)."""
    return _stage_ops(model, _plain_of_cluster(cluster), ops_key(cand), torch_fsdp2)


def _plain_of_cluster(cluster: Cluster) -> Cluster:
    if cluster.gpu.efficiency == _PLAIN:
        return cluster
    # op shapes do not depend on efficiency: share them across calibrated variants of a profile
    # (looked up by identity first: a search projects thousands of candidates on one cluster)
    return _by_identity(_plain_of, cluster, 0, _plain_cluster)


class Layers:
    """The blocks of every candidate that shares a layer key (``_layer_key``), by slot, with the
    parameters each adds to its stage: what ``stage_ops`` assembles, for callers that assemble
    stages as arrays over many candidates instead (``batch``)."""

    def __init__(self, key: LayerKey, sh: _Shapes) -> None:
        self.key, self._sh = key, sh
        # what a slot's parameter counts read: the model and how TP, EP and ETP split it (not the
        # micro-batch, precision, recomputation or kernels the rest of the key names)
        self.params_key = (token(sh.model), sh.tp, sh.ep, sh.etp)
        self._slots: dict[Slot, tuple[Block, int, int]] = {}
        self._params: dict[Slot, tuple[int, int]] = {}

    def block(self, slot: Slot) -> tuple[Block, int, int]:
        hit = self._slots.get(slot)
        if hit is None:
            hit = self._slots[slot] = slot_block(self.key, self._sh, slot)
        return hit

    def params(self, slot: Slot) -> tuple[int, int]:
        """The dense and expert parameters ``slot`` adds to its stage (``block``'s), from its single
        layer's block: a repeated layer's block need not be built to count them."""
        hit = self._params.get(slot)
        if hit is None:
            _block, dense, expert = self.block(slot_base(slot))
            hit = self._params[slot] = (dense * slot.count, expert * slot.count)
        return hit


def layers_of(model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> Layers:
    """The ``Layers`` of ``cand``'s layer key (one object per key, shared)."""
    cluster = _plain_of_cluster(cluster)
    key = _layer_key(model, cluster, cand, torch_fsdp2)  # reads no timing knob: ``ops_key(cand)`` has the same key
    return remembered(_layer_sets, key,
                      lambda: Layers(key, _Shapes(model, cluster, ops_key(cand), torch_fsdp2)), 20_000)


_layer_sets: dict[Hashable, Layers] = {}


class StepShapes:
    """What a stage's once-per-step work and its pipeline send depend on besides its parameter
    counts, shared by the candidates with the same layer key, PP and step-level knobs."""

    def __init__(self, sh: _Shapes) -> None:
        self._sh = sh
        self.p2p = p2p_op(sh)

    def tasks(self, dense_p: int, expert_p: int) -> tuple[Task, ...]:
        return _step_tasks(self._sh, dense_p, expert_p)


def step_shapes(model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> StepShapes:
    """The ``StepShapes`` of ``cand``, shared by every candidate that agrees in what the step's tasks and
    the pipeline send read (``_step_tasks``, ``p2p_op``): not its recomputation, attention kernel,
    dispatcher or timing knobs."""
    cluster = _plain_of_cluster(cluster)
    torch_fsdp2 = torch_fsdp2 and cand.sharding == "fsdp"  # keyed as _Shapes reads it
    key = (token(model), token(cluster), cand.tp, cand.cp, cand.pp, cand.ep, cand.expert_tp, cand.sp, cand.mbs,
           cand.seq_len, cand.precision, cand.fp8_recipe, cand.sharding, cand.main_grad_dtype, cand.optimizer_dtype,
           cand.fp8_param_gather, torch_fsdp2)
    return remembered(_step_shapes, key,
                      lambda: StepShapes(_Shapes(model, cluster, ops_key(cand), torch_fsdp2)), 20_000)


_step_shapes: dict[Hashable, StepShapes] = {}


_timing = attrgetter(*TIMING_KNOBS)
_TIMING_DEFAULTS = tuple(TIMING_KNOBS.values())


def ops_key(cand: Candidate) -> Candidate:
    """``cand`` with its timing knobs at one fixed value: what its op lists are built from."""
    if _timing(cand) == _TIMING_DEFAULTS:
        return cand
    return _by_identity(_keys, cand, 0, _with_fixed_timing)


def _with_fixed_timing(cand: Candidate, _: int) -> Candidate:
    # positionally (KNOBS is the fields' order): attrs.evolve re-reads every field by name, and a plan
    # across clusters asks this of every point whose timing knobs are not the defaults
    values = list(_all_knobs(cand))
    for at, value in _TIMING_AT:
        values[at] = value
    # one object per key, found by its values: dictionaries keyed by it (a search's shared floors) then
    # find it by identity, without comparing 34 fields, and equal keys are not built again
    fields = tuple(values)
    key = _canonical_keys.get(fields)
    if key is None:
        if len(_canonical_keys) > 50_000:
            _canonical_keys.clear()
        key = _canonical_keys[fields] = Candidate(*values)
    return key


_canonical_keys: dict[tuple[Any, ...], Candidate] = {}


_all_knobs = attrgetter(*KNOBS)
_TIMING_AT = tuple((list(KNOBS).index(name), value) for name, value in TIMING_KNOBS.items())


_keys: dict[tuple[int, int], tuple[Any, Any]] = {}


def _plain_cluster(cluster: Cluster, _: int) -> Cluster:
    plain = attrs.evolve(cluster, gpu=attrs.evolve(cluster.gpu, efficiency=_PLAIN))
    return _plain.setdefault(plain, plain)


_plain: dict[Cluster, Cluster] = {}
_plain_of: dict[tuple[int, int], tuple[Any, Any]] = {}
_T = TypeVar("_T")
_R = TypeVar("_R")


def _by_identity(cache: dict[tuple[int, int], tuple[Any, Any]], obj: _T, n: int,
                 make: Callable[[_T, int], _R], limit: int = 50_000) -> _R:
    """``make(obj, n)``, cached by ``obj``'s identity (hashing a cluster or a block per lookup costs
    more than the lookup); the entry keeps ``obj`` alive so its id stays its own."""
    hit = cache.get((id(obj), n))
    if hit is None or hit[0] is not obj:
        if len(cache) > limit:
            cache.clear()
        hit = cache[(id(obj), n)] = (obj, make(obj, n))
    result: _R = hit[1]
    return result


@frozen(cache_hash=True)
class Slot:
    """One block of a chunk, named by what builds it: ``what`` is ``embedding``, ``layer`` (``kind``,
    ``recompute`` and ``count`` repeats), ``mtp_layer`` (``kind``), ``mtp_head`` or ``head`` (``kind``
    the head's name). A stage's parameters are its slots' but an MTP head's: Megatron ties it to the
    output layer's weights, which the last stage holds."""

    what: str
    kind: str = ""
    recompute: bool = False
    count: int = 1


# Per stage, per chunk, the slots in the order the stage runs them.
Template = tuple[tuple[tuple[Slot, ...], ...], ...]


def stage_template(model: Model, cand: Candidate) -> Template:
    """Which blocks each stage's chunks hold: what the pipeline split and full recomputation decide,
    shared by every candidate with the same split whatever its layer shapes."""
    rc = cand.recompute
    full = (rc.method, rc.layers) if rc.kind == "full" else None
    key = (token(model), cand.pp, derived.virtual_stages(cand.schedule, cand.vpp), cand.schedule == "zbv",
           cand.first_stage_layers, cand.last_stage_layers, cand.account_for_embedding, cand.account_for_loss,
           cand.pipeline_layout, full)
    return remembered(_templates, key, lambda: _template(model, cand), 20_000)


_templates: dict[Hashable, Template] = {}


def _template(model: Model, cand: Candidate) -> Template:
    pp, vpp = cand.pp, derived.virtual_stages(cand.schedule, cand.vpp)
    nvirtual = pp * vpp
    split = pipeline.layout(pipeline.split_of(model.num_layers, cand, vpp), model.mtp_layers)
    rc = cand.recompute
    # a hybrid model's MTP layer is attention and MoE (Nemotron 3's "*E"), as a transformer's
    mtp_kind = "TE" if model.is_moe else "T-"
    stages: list[tuple[tuple[Slot, ...], ...]] = []
    for s in range(pp):
        chunks: list[tuple[Slot, ...]] = []
        for c in range(vpp):
            j = virtual_stage(cand, s, c)
            slots: list[Slot] = [Slot("embedding")] if j == 0 else []
            lo, hi = split.chunks[j].start, split.chunks[j].start + split.chunks[j].layers
            if rc.kind == "full":
                budget = hi - lo if rc.method == "uniform" else min(rc.layers, hi - lo)
            else:
                budget = 0
            for kind, again, n_layers in _chunk_kinds(model, lo, hi, budget):
                slots += [Slot("layer", kind, recompute, count)
                          for recompute, count in ((True, again), (False, n_layers - again)) if count]
            # MTP sits on the last virtual stage unless an explicit layout puts it on another
            for i in range(split.chunks[j].mtp):
                slots += [Slot("mtp_layer", mtp_kind), Slot("mtp_head", f"mtp_output_{i}")]
            if j == nvirtual - 1:
                slots.append(Slot("head", "output"))
            chunks.append(tuple(_slots.setdefault(slot, slot) for slot in slots))
        stages.append(tuple(chunks))
    return tuple(stages)


# One object per distinct slot, so that looking one up finds it by identity.
_slots: dict[Slot, Slot] = {}


def slot_base(slot: Slot) -> Slot:
    """``slot`` for a single layer (count 1): what times one pass of its block."""
    hit = _bases.get(slot)
    if hit is None:
        base = attrs.evolve(slot, count=1)
        hit = _bases[slot] = _slots.setdefault(base, base)
    return hit


_bases: dict[Slot, Slot] = {}


# the slots and blocks of decoder layers (an MTP layer's too), apart from the embedding and the heads
DECODER_SLOTS = ("layer", "mtp_layer")


def decoder_block(block: Block) -> bool:
    """Whether a stage's block is a decoder layer's (``_layer`` names them; ``DECODER_SLOTS``)."""
    return block.name.endswith(("_layer", "_layer_recomputed", "_layer_op"))


def slot_block(key: LayerKey, sh: _Shapes, slot: Slot) -> tuple[Block, int, int]:
    """The block a slot stands for on candidates of layer key ``key``, with the dense and expert
    parameters it adds to its stage."""
    if slot.what == "layer":
        block, p_dense, p_expert = _layer_of(key, sh, slot.kind, slot.recompute)
        return _by_identity(_blocks, block, slot.count, _counted), p_dense * slot.count, p_expert * slot.count
    if slot.what == "mtp_layer":
        block, p_dense, p_expert = _layer_of(key, sh, slot.kind, False)
        return Block("mtp_layer", block.tasks, 1), p_dense, p_expert
    end, n = _end_of(key, sh, "embedding" if slot.what == "embedding" else slot.kind)
    return end, (0 if slot.what == "mtp_head" else n), 0


def p2p_op(sh: _Shapes) -> Collective | None:
    """The activation a stage sends the next one, per micro-batch and chunk (None without PP)."""
    return Collective("p2p", sh.tokens_sp * sh.h * BF16, sh.pp_group) if sh.pp > 1 else None


@functools.lru_cache(maxsize=16384)
def _stage_ops(model: Model, cluster: Cluster, cand: Candidate, torch_fsdp2: bool = False) -> tuple[Stage, ...]:
    sh = _Shapes(model, cluster, cand, torch_fsdp2)
    key = _layer_key(model, cluster, cand, torch_fsdp2)
    stages: list[Stage] = []
    for s, template in enumerate(stage_template(model, cand)):
        chunks: list[tuple[Block, ...]] = []
        dense_p = 0
        expert_p = 0
        for slots in template:
            blocks: list[Block] = []
            for slot in slots:
                block, p_dense, p_expert = slot_block(key, sh, slot)
                blocks.append(block)
                dense_p += p_dense
                expert_p += p_expert
            chunks.append(tuple(blocks))
        stages.append(Stage(s, tuple(chunks), _step_tasks(sh, dense_p, expert_p), p2p_op(sh)))
    return tuple(stages)


_blocks: dict[tuple[int, int], tuple[Any, Any]] = {}


def _chunk_kinds(model: Model, lo: int, hi: int, budget: int) -> list[tuple[str, int, int]]:
    """(kind, layers recomputed whole, layers) for decoder layers ``lo .. hi - 1``, in the order the
    kinds first appear; full recompute takes the chunk's first ``budget`` layers."""
    if model.hybrid or model.interleaved:
        # each layer's kind (an interleaved MoE's `T-`/`TE` as its MLPs alternate)
        layers = model.pattern[lo:hi] if model.hybrid else model.mlp_kinds[lo:hi]
        first = layers[:budget]
        prefix = "" if model.hybrid else "T"
        return [(prefix + k, first.count(k), layers.count(k)) for k in dict.fromkeys(layers)]
    dense_until = model.dense_layers if model.is_moe else model.num_layers
    n_dense = max(0, min(hi, dense_until) - lo)
    out: list[tuple[str, int, int]] = []
    for kind, n_layers in (("T-", n_dense), ("TE", hi - lo - n_dense)):
        if n_layers > 0:
            again = min(budget, n_layers)
            budget -= again
            out.append((kind, again, n_layers))
    return out


def _counted(block: Block, count: int) -> Block:
    """``count`` repeats of a cached layer block (cached too: a search builds the same few thousand)."""
    return Block(block.name, block.tasks, count)


_steps: dict[Hashable, tuple[Task, ...]] = {}


def _step_tasks(sh: _Shapes, dense_p: int, expert_p: int) -> tuple[Task, ...]:
    """Once per step: gradient reduction, parameter gathers, the optimizer and FP8 weight casts."""
    cand = sh.cand
    # everything _build_step_tasks reads: FP8 primary weights gather a byte per parameter (gathered_bytes),
    # and the weight cast is named by its dtype
    key = (dense_p, expert_p, sh.dp_group, sh.edp_group, cand.sharding, sh.grad_bytes, cand.optimizer_dtype,
           sh.cast, sh.weight_cast, gathered_bytes(cand), sh.dtype, sh.torch_fsdp2)
    return remembered(_steps, key, lambda: _build_step_tasks(sh, dense_p, expert_p), 50_000)


def _build_step_tasks(sh: _Shapes, dense_p: int, expert_p: int) -> tuple[Task, ...]:
    cand = sh.cand
    tasks = _Tasks()
    for nparams, group in ((dense_p, sh.dp_group), (expert_p, sh.edp_group)):
        if nparams <= 0 or group.size <= 1:
            continue
        grads = nparams * sh.grad_bytes
        if sh.torch_fsdp2:
            continue  # reduce-scattered in every micro-batch's backward (_fsdp); FSDP2 gathers no shard here
        if cand.sharding == "none":
            tasks.add(Collective("all_reduce", grads, group), "W", "dp_comm", hides_under="grad")
        else:
            tasks.add(Collective("reduce_scatter", grads, group), "W", "dp_comm", hides_under="grad")
            if cand.sharding == "dist_opt":
                tasks.add(Collective("all_gather", nparams * gathered_bytes(cand), group), "F", "dp_comm",
                          hides_under="param")
    shards = 1 if cand.sharding == "none" else sh.dp_group.size
    eshards = 1 if cand.sharding == "none" else sh.edp_group.size
    local = dense_p // shards + expert_p // eshards
    state = derived.dtype_bytes(cand.optimizer_dtype)
    per_param = (BF16 + sh.grad_bytes + 4 + 2 * state) + (BF16 + 4 + 2 * state)
    tasks.add(MemoryOp("optimizer", local * per_param), "W", model_flops=False)
    if sh.weight_cast > 0:
        tasks.add(MemoryOp(f"{sh.dtype}_weight_cast", int((dense_p + expert_p) * sh.weight_cast)), "W",
                  model_flops=False)
    return tuple(tasks)
