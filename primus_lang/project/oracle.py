"""How long one op takes: the ``Oracle`` protocol and the spec-sheet ``SimulateOracle``.

``SimulateOracle`` is a roofline with efficiency curves from the hardware profile:
- a GEMM of ``f`` FLOPs takes ``f / (peak * gemm_max) + knee / (peak_bf16 * gemm_max)``, i.e. the
  profile's curve ``gemm_max * f / (f + knee)`` for BF16: ``knee`` is a fixed per-kernel cost
  (launch, tail wave) expressed in BF16 FLOPs, so FP8 GEMMs pay it at the same wall time, and so
  does every other kernel launch (attention, each memory-bound kernel);
- grouped GEMMs (the local experts of a MoE layer) reach ``grouped_gemm`` of the dense plateau:
  ragged groups tile less well than one large GEMM; and each expert's GEMM pays the fixed cost
  (Transformer Engine's grouped linear issues one GEMM per local expert), so many small experts per
  rank cost more per FLOP than a few large ones, and more at a small micro-batch;
- FP8 GEMMs run at the FP8 peak times ``fp8_gemm_max``, NVFP4 GEMMs at the FP4 peak times
  ``fp4_gemm_max`` (their quantize/cast kernels are separate memory ops in the op list, priced per
  recipe);
- attention with learned sinks runs at ``sink_attention`` times that: Transformer Engine turns flash
  attention off for a learnable softmax offset and runs cuDNN's fused kernel;
- flash attention runs at ``attention`` of the BF16 peak on its work in matmul-equivalent FLOPs
  (``attention_work``: the FLOPs done, causal half, with the softmax's share for the head width
  relative to 128-dim heads and the key blocks a sliding window straddles); FlashAttention-2's
  kernels (``Attention.fa2``: PyTorch SDPA's flash backend, as torchtitan runs it) at the part's
  ``fa2_attention`` times that, a published kernel-benchmark ratio and never fitted;
- Mamba-2's SSD scan (``SsmScan``) does its intra-chunk masked attention at the attention rate (an
  exponential per pair, as flash attention's softmax), its inter-chunk matmuls at the BF16 GEMM
  plateau and its other traffic at the HBM rate, all at ``ssm_scan`` times those: mamba_ssm's Triton
  kernels are not the vendor's tuned attention, GEMM and copy kernels;
- memory-bound kernels move their bytes at ``hbm`` of the HBM bandwidth;
- collectives follow ``collectives.collective_time`` over the cluster's links.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from primus_lang.ir import Cluster
from primus_lang.project.collectives import Links, collective_time
from primus_lang.project.ops import Attention, Collective, Compute, GroupedGemm, MemoryOp, Op, SsmScan


@runtime_checkable
class Oracle(Protocol):
    """Times ops on one cluster. ``compute`` takes GEMMs, grouped GEMMs, attention and memory ops;
    ``collective`` takes a collective with its group layout."""

    def compute(self, op: Compute) -> float: ...

    def collective(self, op: Collective) -> float: ...


class SimulateOracle:
    """Roofline with the profile's efficiency curves; caches every timing by op key."""

    def __init__(self, cluster: Cluster) -> None:
        gpu = cluster.gpu
        eff = gpu.efficiency
        self.cluster = cluster
        self._bf16 = gpu.peak_bf16 * eff.gemm_max
        self._fp8 = gpu.peak("fp8") * (eff.fp8_gemm_max if gpu.peak_fp8 > 0 else eff.gemm_max)
        self._fp4 = gpu.peak("fp4") * (eff.fp4_gemm_max if gpu.peak_fp4 > 0 else eff.gemm_max)
        self._overhead = eff.gemm_knee_flops / self._bf16
        self._grouped = eff.grouped_gemm
        self._attention = gpu.peak_bf16 * eff.attention
        self._sinks = eff.sink_attention
        self._fa2 = gpu.fa2_attention
        self._ssm = eff.ssm_scan
        self._hbm = gpu.hbm_bandwidth * eff.hbm
        self._links = Links.of(cluster)
        self._cache: dict[tuple[object, ...], float] = {}

    def compute(self, op: Compute) -> float:
        key = op.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if isinstance(op, MemoryOp):
            t = op.bytes / self._hbm + op.kernels * self._overhead
        elif isinstance(op, Attention):
            rate = self._attention * (self._sinks if op.sinks else 1.0) * (self._fa2 if op.fa2 else 1.0)
            t = attention_work(op) / rate + self._overhead
        elif isinstance(op, SsmScan):
            t = scan_seconds(op, self._attention, self._bf16, self._hbm) / self._ssm + op.kernels * self._overhead
        else:
            rate = self._fp8 if op.dtype == "fp8" else self._fp4 if op.dtype == "fp4" else self._bf16
            kernels = 1
            if isinstance(op, GroupedGemm):
                rate *= self._grouped
                kernels = op.groups
            t = op.flops / rate + kernels * self._overhead
        self._cache[key] = t
        return t

    def collective(self, op: Collective) -> float:
        key = op.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        t = collective_time(op, self._links)
        self._cache[key] = t
        return t


# Flash attention's softmax runs on the special-function units, not the tensor cores: H100 SXM has
# 989 TFLOP/s of BF16 matmul but 3.9 TFLOP/s of exponentials (FlashAttention-3 paper, Shah et al. 2024,
# section 3). Per query-key pair the forward does 2*(d_qk + d_v) matmul FLOPs and one exponential, so
# a pair costs (1 + EXP_RATIO / (2*(d_qk + d_v))) matmul-equivalents: narrow heads pay relatively more.
EXP_RATIO = 989.0 / 3.9
REFERENCE_WIDTH = 256  # d_qk + d_v of 128-dim heads, where the profile's `attention` is read
TILE = 128  # key block of a flash-attention kernel: a sliding window scans whole blocks


def attention_work(op: Attention) -> float:
    """The FLOPs a flash-attention kernel spends in matmul-equivalents (timing only; model FLOPs
    stay ``op.flops``): the softmax per pair relative to 128-dim heads, and a sliding window of
    ``w`` keys scanning ``w + TILE`` keys per query (the blocks the window straddles)."""
    width = op.head_dim + op.v_head_dim
    softmax = (1 + EXP_RATIO / (2 * width)) / (1 + EXP_RATIO / (2 * REFERENCE_WIDTH))
    window = 1.0
    if op.window and op.window < op.seq_kv:
        window = min(op.seq_kv, op.window + TILE) / op.window
    return op.flops * softmax * window


def scan_seconds(op: SsmScan, attention: float, gemm: float, hbm: float) -> float:
    """The scan's work at the profile's attention, GEMM and HBM rates (before ``ssm_scan``). The
    backward does the intra-chunk term 2.5 times (its scores again, as flash attention's backward)
    and the inter-chunk matmuls 2.5 times (two gradients and the recomputed chunk states)."""
    again = 2.5 if op.backward else 1.0
    pair = Attention(op.chunks, op.heads, op.chunk, op.chunk, op.state, op.head_dim, True)
    return again * (attention_work(pair) / attention + op.inter_flops / gemm) + op.bytes / hbm


def op_time(oracle: Oracle, op: Op) -> float:
    if isinstance(op, Collective):
        return oracle.collective(op)
    return oracle.compute(op)
