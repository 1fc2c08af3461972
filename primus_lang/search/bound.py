"""An upper bound on a candidate's throughput, for branch-and-bound: the compute-only step time.

Every projection spends at least the time its GEMMs take at the hardware's efficiency plateau (the
simulate oracle's curve never exceeds ``gemm_max``, FP8 never exceeds ``fp8_gemm_max`` of the FP8
peak, NVFP4 ``fp4_gemm_max`` of the FP4 peak) plus its attention at the profile's attention
efficiency, spread over every GPU; a hybrid model's layers by its pattern (its Mamba scan left out). We count only FLOPs that every projection must contain, and fewer when unsure (no router, no MTP, no
attention for sliding-window or MLA models, recomputation at its smallest reading), so the floor
stays below the projected step time. With 1F1B or interleaved schedules the ideal bubble
``(p-1)/(v*m)`` is added (Narayanan et al. 2021); zero-bubble schedules get none. The engine checks
the bound against every projection it makes and stops pruning the moment it fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from primus_lang.ir import derived
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.hardware import Cluster
from primus_lang.ir.model import Model

SCORED_BY_STEP = ("tokens_per_gpu", "step_time")


@runtime_checkable
class RefinesAhead(Protocol):
    """A refined bound (``Search``'s ``refine``) that can be told which points it will be asked about
    next, with the incumbent's score then, and compute their bounds together (``stages.StepFloors``)."""

    def __call__(self, index: int, enough: float) -> float: ...

    def ahead(self, indices: Sequence[int], enough: float) -> None: ...


_F = TypeVar("_F", float, np.ndarray)


def layer_gemm_flops_per_token(model: Model) -> tuple[float, float]:
    """Forward GEMM FLOPs per token of (one dense layer, one MoE layer), attention core excluded."""
    h = model.hidden
    if model.mla is not None:
        mla = model.mla
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        q = (2 * h * mla.q_lora_rank + 2 * mla.q_lora_rank * model.heads * qk) if mla.q_lora_rank else 2 * h * model.heads * qk
        kv = 2 * h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + 2 * mla.kv_lora_rank * model.heads * (
            mla.qk_nope_head_dim + mla.v_head_dim
        )
        attn = q + kv + 2 * model.heads * mla.v_head_dim * h
    else:
        hd = model.head_dim
        attn = 2 * h * (model.heads * hd + 2 * model.kv_heads * hd) + 2 * model.heads * hd * h
    mlp, moe_block = _mlp_flops_per_token(model)
    return float(attn + mlp), float(attn + moe_block)


def _mlp_flops_per_token(model: Model) -> tuple[float, float]:
    """Forward GEMM FLOPs per token of a dense MLP and of an MoE block (LatentMoE at its width)."""
    h = model.hidden
    mats = 3 if model.gated else 2
    dense = 2 * mats * h * model.ffn_hidden
    moe = dense
    if model.moe is not None:
        m = model.moe
        shared = m.shared_experts * 2 * mats * h * (m.shared_ffn_hidden or m.ffn_hidden)
        latent = 2 * 2 * h * m.latent
        moe = m.top_k * 2 * mats * (m.latent or h) * m.ffn_hidden + shared + latent
    return float(dense), float(moe)


def _layers_fwd_flops_per_token(model: Model) -> float:
    """Forward GEMM FLOPs per token of every decoder layer; a hybrid model's by its pattern."""
    dense, moe = layer_gemm_flops_per_token(model)
    if not model.hybrid:
        return dense * model.dense_layers + moe * model.moe_layers
    mlp, moe_block = _mlp_flops_per_token(model)
    attn = dense - mlp
    mamba = 0.0
    if model.mamba is not None:
        b = model.mamba
        mamba = 2.0 * model.hidden * (2 * b.inner + 2 * b.groups * b.state_dim + b.heads) + 2.0 * b.inner * model.hidden
    return (mamba * model.mamba_layers + attn * model.attention_layers + mlp * model.dense_layers
            + moe_block * model.moe_layers)


# Every knob step_time_floor reads: the points of a space that agree on these share their floor
# (tests/search/test_bound.py checks it on the example spaces).
FLOOR_KNOBS = attrgetter("recompute", "pp", "vpp", "schedule", "tp", "cp", "mbs", "gbs", "seq_len", "precision")


def step_time_floor(model: Model, cluster: Cluster, cand: Candidate) -> float:
    """Seconds a step cannot undercut: its compute at peak efficiency, plus the ideal bubble."""
    gpu, eff = cluster.gpu, cluster.gpu.efficiency
    layers_fwd = _layers_fwd_flops_per_token(model)
    full = cand.recompute.kind == "full"
    recomputed = min(cand.recompute.layers * cand.pp, model.num_layers) / model.num_layers if full else 0.0
    tokens = cand.gbs * cand.seq_len
    gemm = (3.0 + recomputed) * layers_fwd * tokens + 3.0 * 2 * model.hidden * model.vocab * tokens
    attention = 0.0
    if model.mla is None and model.sliding_window == 0:
        # causal QK^T and AV: 2 * 2 * s * heads * head_dim per token, halved; forward and 2x backward
        attention = 3.0 * 2 * cand.seq_len * model.heads * model.head_dim * model.attention_layers * tokens
    rate = gpu.peak_bf16 * eff.gemm_max
    if cand.precision == "fp8" and gpu.peak_fp8 > 0:
        rate = max(rate, gpu.peak_fp8 * eff.fp8_gemm_max)
    if cand.precision == "fp4" and gpu.peak_fp4 > 0:
        rate = max(rate, gpu.peak_fp4 * eff.fp4_gemm_max)
    world = cluster.world
    compute = gemm / (rate * world) + attention / (gpu.peak_bf16 * eff.attention * world)
    if cand.pp > 1 and cand.schedule in ("1f1b", "interleaved"):
        m = derived.at_least_one(cand.microbatches(world))
        v = cand.vpp if cand.schedule == "interleaved" else 1
        compute *= 1.0 + (cand.pp - 1) / (v * m)
    return compute


def score_bounds(model: Model, cluster: Cluster, points: Sequence[Candidate], metric: str, sense: str,
                 peaks: np.ndarray) -> np.ndarray | None:
    """An upper bound on every point's score (larger is better), or None for metrics it cannot bound."""
    if metric == "memory_peak":
        sign = 1.0 if sense == "maximize" else -1.0
        return sign * peaks.astype(np.float64)  # the pre-filter's peak is the metric itself
    if not bounded_by_step(metric, sense):
        return None  # other metrics (or the opposite senses) have no floor-derived bound
    floors_of: dict[tuple[object, ...], float] = {}
    floors = np.empty(len(points))
    for i, c in enumerate(points):
        key = FLOOR_KNOBS(c)
        floor = floors_of.get(key)
        if floor is None:
            floor = floors_of[key] = step_time_floor(model, cluster, c)
        floors[i] = floor
    tokens = np.array([c.gbs * c.seq_len for c in points], dtype=np.float64)
    result: np.ndarray = floor_scores(metric, sense, floors, tokens, cluster.world)
    return result


def bounded_by_step(metric: str, sense: str) -> bool:
    """Whether a floor on the step time bounds ``metric`` in this sense (most tokens/s, least step time)."""
    return metric in SCORED_BY_STEP and (metric == "step_time") != (sense == "maximize")


def floor_scores(metric: str, sense: str, floors: _F, tokens: _F, world: int) -> _F:
    """The best score a step-time floor allows, oriented so that larger is better (one point's, given
    floats, or every point's, given arrays)."""
    values = floors if metric == "step_time" else tokens / (world * floors)
    result: _F = (1.0 if sense == "maximize" else -1.0) * values
    return result
