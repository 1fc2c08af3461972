"""``project``: one candidate's step time, throughput and breakdown.

Each stage's per-micro-batch F, B and W times come from its op list through the oracle, with the
communication a candidate can hide taken off: TP collectives under (TP-1)/TP of the GEMMs of their
own attention or MLP, shared, when ``tp_comm_overlap``, the CP ring under attention, EP all-to-alls
under the layer's compute when ``ep_comm_overlap``, FSDP gathers under the layer they prefetch for; what hides still costs
``overlap_slowdown`` of its time in slower compute (``_comm_cost``). The schedule plan then places
the passes; after a stage's last backward come the exposed part of its gradient reduction (it
overlaps that last backward when ``overlap_grad_reduce``), the parameter all-gather (it overlaps the
first forward when ``overlap_param_gather``), the optimizer and FP8 weight casts.

FLOP convention (docs/projection.md): model FLOPs are the forward GEMMs and attention of the model
times three (forward, input gradient, weight gradient; attention backward 2.5x), causal attention
counted at half of the full square, recomputation excluded. MFU is model FLOP/s over the dense BF16
peak whatever the precision, so FP8's speed-up shows as higher MFU.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TypeVar

import attrs
import numpy as np
from attrs import frozen
from numpy.typing import NDArray

from primus_lang.ir import Candidate, Cluster, Model, Settings, derived
from primus_lang.memory import offload_bytes
from primus_lang.project.build import decoder_block, ops_key, stage_ops
from primus_lang.project.ops import Attention, Block, Collective, Gemm, GroupedGemm, Stage, Task
from primus_lang.project.oracle import Oracle, SimulateOracle
from primus_lang.project.plans import plan
from primus_lang.project.schedule import ScheduleResult, fast, replay, replayable

# a float for one candidate, a column for the batch path (``offload_exposed``)
Seconds = TypeVar("Seconds", float, NDArray[np.float64])
BREAKDOWN_KINDS = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "host", "offload", "bubble",
                   "optimizer")

# The layer parts each ``cuda_graph`` setting captures (build.py tags every task of a layer with its
# part); a captured part costs the host one graph launch per pass instead of one launch per kernel.
# ``full`` captures the whole iteration, embedding and head included: no host launches at all.
GRAPHED: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "attn": frozenset({"attn"}),
    "moe_router": frozenset({"router"}),
    "attn_moe_router": frozenset({"attn", "router"}),
    "layer": frozenset({"attn", "mlp", "router", "moe", ""}),
}


@frozen
class Projection:
    """What ``project`` says of one candidate: its step, throughput and where the time goes. ``mfu`` is of
    the candidate's own precision's dense peak (an FP8 run reads lower than a BF16 one as fast), ``mfu_bf16``
    of the BF16 peak whatever the precision. A projection says nothing of memory: check ``memory.account``
    first (``fits``)."""

    step_time: float  # seconds per global batch
    tokens_per_gpu: float  # tokens/s per GPU
    tflops_per_gpu: float  # model TFLOP/s per GPU
    mfu: float  # model FLOP/s over the dense peak of the dtype the GEMMs run in (FP8 runs: the FP8 peak)
    mfu_bf16: float  # model FLOP/s over the dense BF16 peak, whatever the dtype (FP8 runs can exceed 1)
    bubble_fraction: float  # pipeline idle share of the busiest stage
    breakdown: tuple[tuple[str, float], ...]  # seconds per kind on the stage that finishes last
    inflight: tuple[int, ...]  # per stage, micro-batch chunks alive at the peak (see schedule.py)
    timeline: tuple[tuple[int, str, int, float, float], ...] = ()  # (stage, F/B/W/comm, mb, start, end)


@frozen
class _Pass:
    """One pass of a chunk: total seconds, and the parts of it by kind."""

    total: float
    parts: dict[str, float]


# Block task tuples come from a cache in build.py and are shared by every candidate with the same
# layer shapes; keying by identity (and keeping the tuple alive beside the result) avoids hashing
# hundreds of tasks per lookup.
_Passes = tuple[_Pass, _Pass, _Pass]
_cache: weakref.WeakKeyDictionary[Oracle, dict[tuple[object, ...], tuple[tuple[Task, ...], _Passes]]] = (
    weakref.WeakKeyDictionary())
_flops: dict[int, tuple[tuple[Task, ...], float]] = {}


def _host_time(tasks: list[Task], cand: Candidate, launch: float) -> float:
    """Host seconds to issue one pass of a block (``tasks``: the pass's): a launch per kernel
    outside the CUDA graphs, one per captured part. A dropless MoE layer copies its token counts to
    the host to size the dispatch, so the host cannot run ahead of the GPU by more than a layer: the
    pass takes the longer of the two (dense layers are costed the same way; their host lead rarely
    matters)."""
    if cand.cuda_graph == "full" or launch <= 0:
        return 0.0
    graphed = GRAPHED[cand.cuda_graph]
    n = 0.0
    parts: set[str] = set()
    for task in tasks:
        if task.part in graphed:
            parts.add(task.part)
        else:
            n += task.launches
    return (n + len(parts)) * launch


def _comm_cost(t: float, hide: float, slowdown: float) -> float:
    """What a collective of ``t`` seconds costs beside ``hide`` seconds of compute it may overlap:
    the part that does not fit under the compute, plus the compute it slows while it runs beside it
    (its kernels hold SMs and HBM bandwidth). Never more than ``t``, never less as ``t`` shrinks."""
    hidden = min(t, hide)
    return t - hidden + slowdown * hidden


def block_passes(block: Block, cand: Candidate, oracle: Oracle, imbalance: float,
                  launch: float = 0.0, slowdown: float = 0.0) -> tuple[_Pass, _Pass, _Pass]:
    try:
        cache = _cache.get(oracle)
        if cache is None:
            cache = _cache[oracle] = {}
    except TypeError:  # an oracle that cannot be weakly referenced or hashed: time without a cache
        cache = {}
    key = (id(block.tasks), cand.tp_comm_overlap, cand.ep_comm_overlap, imbalance, cand.cuda_graph, launch, slowdown)
    hit = cache.get(key)
    if hit is not None and hit[0] is block.tasks:
        return hit[1]
    out = []
    passes: dict[str, list[Task]] = {"F": [], "B": [], "W": []}
    for task in block.tasks:
        passes[task.phase].append(task)
    for tasks in passes.values():
        compute = attention = 0.0
        gemm: dict[str, float] = {}  # GEMM seconds per layer part ("attn", "mlp", "moe", "" the rest)
        comms: list[tuple[Task, float]] = []
        for task in tasks:
            scale = task.times * (imbalance if task.routed else 1.0)
            op = task.op
            if isinstance(op, Collective):
                comms.append((task, oracle.collective(op) * scale))
                continue
            t = oracle.compute(op) * scale
            compute += t
            if isinstance(op, Gemm | GroupedGemm):
                gemm[task.part] = gemm.get(task.part, 0.0) + t
            elif isinstance(op, Attention):
                attention += t
        parts = {"compute": compute}
        room: dict[str, float] = {}  # GEMM seconds per part that overlapped TP collectives may still use
        for task, t in comms:
            hide = 0.0
            if task.hides_under == "gemm" and cand.tp_comm_overlap:
                # Overlapped TP (torch's async TP, Transformer Engine's userbuffers) splits a collective
                # into TP-degree chunks pipelined with the GEMMs that consume or produce it, the linears
                # of its own attention or MLP: the first chunk's GEMM waits for no transfer, the last
                # transfer for no GEMM, so what hides is at most (TP-1)/TP of them, shared by the
                # part's collectives (PyTorch's async-TP post, "all-gather -> qkv projection",
                # "ffn -> reduce-scatter"; torchtitan PR #429).
                size = task.op.group.size if isinstance(task.op, Collective) else 1
                if task.part not in room:
                    room[task.part] = gemm.get(task.part, 0.0) * ((size - 1) / size if size > 1 else 1.0)
                hide = room[task.part]
                room[task.part] = hide - min(t, hide)
            elif task.hides_under == "attention":
                hide = attention
            elif task.hides_under == "block" and (task.kind != "ep_comm" or cand.ep_comm_overlap):
                hide = compute
            parts[task.kind] = parts.get(task.kind, 0.0) + _comm_cost(t, hide, slowdown)
        gpu = sum(parts.values())
        host = _host_time(tasks, cand, launch)
        if host > gpu:
            parts["host"] = host - gpu
        out.append(_Pass(max(gpu, host), parts))
    if len(cache) > 200_000:
        cache.clear()
    result = (out[0], out[1], out[2])
    cache[key] = (block.tasks, result)
    return result


def _stage_passes(stage: Stage, cand: Candidate, oracle: Oracle, imbalance: float, launch: float = 0.0,
                  slowdown: float = 0.0, compute_only: bool = False) -> list[list[float]]:
    """Per chunk: [F, B, W] seconds per micro-batch (``compute_only``: their compute alone, which no
    timing knob changes)."""
    times: list[list[float]] = []
    for chunk in stage.chunks:
        f = b = w = 0.0
        for block in chunk:
            pf, pb, pw = block_passes(block, cand, oracle, imbalance, launch, slowdown)
            if compute_only:
                f += pf.parts["compute"] * block.count
                b += pb.parts["compute"] * block.count
                w += pw.parts["compute"] * block.count
            else:
                f += pf.total * block.count
                b += pb.total * block.count
                w += pw.total * block.count
        times.append([f, b, w])
    return times


def _stage_parts(stage: Stage, cand: Candidate, oracle: Oracle, imbalance: float, launch: float,
                 slowdown: float) -> dict[str, float]:
    """A stage's seconds per micro-batch by kind (only the critical stage's are reported)."""
    parts: dict[str, float] = {}
    for chunk in stage.chunks:
        for block in chunk:
            for p in block_passes(block, cand, oracle, imbalance, launch, slowdown):
                for kind, t in p.parts.items():
                    parts[kind] = parts.get(kind, 0.0) + t * block.count
    return parts


def model_flops(stages: tuple[Stage, ...], microbatches: int) -> float:
    """Model FLOPs one rank of each stage does per step, averaged over stages (see module doc)."""
    total = 0.0
    for stage in stages:
        for chunk in stage.chunks:
            for block in chunk:
                total += block_flops(block) * block.count
    return total * microbatches / len(stages)


def block_flops(block: Block) -> float:
    """Model FLOPs of one pass of ``block`` (one of its ``count`` layers)."""
    hit = _flops.get(id(block.tasks))
    if hit is None or hit[0] is not block.tasks:
        if len(_flops) > 100_000:
            _flops.clear()
        hit = _flops[id(block.tasks)] = (
            block.tasks, sum(t.op.flops * t.times * t.model_share for t in block.tasks if t.model_flops))
    return hit[1]


def project(
    model: Model,
    cluster: Cluster,
    cand: Candidate,
    settings: Settings | None = None,
    oracle: Oracle | None = None,
    timeline: bool = False,
) -> Projection:
    """Project ``cand``: step time, tokens/s/GPU, model TFLOP/s/GPU, MFU, bubble and breakdown."""
    oracle = oracle or default_oracle(cluster)
    settings = settings or Settings()
    cand = settings.as_launched(cand)
    p = _prepare(model, cluster, cand, settings, oracle)
    # a timeline records every op of the step: past the slot limit it is left out, as unreadable
    if timeline and replayable(cand.pp, p.v, p.m):
        result = replay(plan(p.schedule, cand.pp, p.v, p.m), p.fwd, p.bwd, p.wgt, p.p2p, record=True)
    else:
        result = fast(p.schedule, cand.pp, p.m, p.fwd, p.bwd, p.wgt, p.p2p)
    return _finish(p, cluster, oracle, result)


@frozen
class _Prepared:
    """A candidate's passes, ready for its schedule: what ``_finish`` reads besides the result."""

    cand: Candidate
    stages: tuple[Stage, ...]
    m: int
    imbalance: float
    launch: float
    slowdown: float
    fwd: list[list[float]]
    bwd: list[list[float]]
    wgt: list[list[float]]
    p2p: float
    schedule: str
    offload: float  # per micro-batch, the activation copies to and from the host that no compute hides

    @property
    def v(self) -> int:
        return len(self.fwd[0])


def step_model_flops(model: Model, cluster: Cluster, cand: Candidate, settings: Settings | None = None) -> float:
    """The model FLOPs one rank does per step, as ``project`` counts them for its TFLOP/s and MFU, without
    timing anything (a measurement's MFU is these over its measured step)."""
    settings = settings or Settings()
    cand = settings.as_launched(cand)
    return model_flops(stage_ops(model, cluster, cand, settings.torch_fsdp2), _microbatches(cand, cluster))


def _microbatches(cand: Candidate, cluster: Cluster) -> int:
    return int(derived.at_least_one(cand.microbatches(cluster.world)))


def _prepare(model: Model, cluster: Cluster, cand: Candidate, settings: Settings, oracle: Oracle) -> _Prepared:
    m = _microbatches(cand, cluster)
    stages = stage_ops(model, cluster, cand, settings.torch_fsdp2)
    imbalance = settings.moe_imbalance if cand.ep > 1 else 1.0
    launch = cluster.gpu.efficiency.host_launch
    slowdown = cluster.gpu.efficiency.overlap_slowdown
    per_stage = [_stage_passes(s, cand, oracle, imbalance, launch, slowdown) for s in stages]
    fwd = [[c[0] for c in t] for t in per_stage]
    bwd = [[c[1] for c in t] for t in per_stage]
    wgt = [[c[2] for c in t] for t in per_stage]
    p2p = oracle.collective(stages[0].p2p) if stages[0].p2p is not None else 0.0
    off_f = off_b = 0.0
    if cand.offload_layers > 0:  # one stage, one chunk: legality keeps offloading to PP 1
        # the copies overlap the decoder layers' passes, not the embedding's or the head's
        lf = lb = lw = 0.0
        for block in stages[0].chunks[0]:
            if decoder_block(block):
                pf, pb, pw = block_passes(block, cand, oracle, imbalance, launch, slowdown)
                lf += pf.total * block.count
                lb += pb.total * block.count
                lw += pw.total * block.count
        copied = offload_bytes(model, cand, cluster.world, settings)
        off_f, off_b = (float(x) for x in offload_exposed(lf, lb + lw, float(copied), cluster.gpu.host_bandwidth))
        fwd[0][0] += off_f
        bwd[0][0] += off_b
    return _Prepared(cand, stages, m, imbalance, launch, slowdown, fwd, bwd, wgt, p2p, schedule_of(cand, len(fwd[0])),
                     off_f + off_b)


def offload_exposed(forward: Seconds, backward: Seconds, copied: Seconds, bandwidth: float) -> tuple[Seconds, Seconds]:
    """The seconds a micro-batch's activation copies add to its forward and its backward (floats, or
    numpy columns for the batch path): Transformer Engine spreads the offloaded layers' copies over
    windows of the decoder layers' forward (each waited for at its window's last layer) and the
    reloads over their backward alike, on streams of their own, so a pass waits for what its copies
    take beyond its layers' time (layers of one shape: the windows are equal)."""
    copy = copied / bandwidth
    return np.maximum(0.0, copy - forward), np.maximum(0.0, copy - backward)


def schedule_of(cand: Candidate, v: int) -> str:
    """The schedule ``cand`` runs with ``v`` model chunks a stage: without PP there is nothing to
    schedule, and interleaving one chunk is 1F1B."""
    sched = cand.schedule if cand.pp > 1 else "1f1b"
    return "1f1b" if sched == "interleaved" and v == 1 else sched


def _finish(p: _Prepared, cluster: Cluster, oracle: Oracle, result: ScheduleResult) -> Projection:
    cand, stages, m = p.cand, p.stages, p.m
    world = cluster.world
    tails = _step_tails(stages, cand, oracle, result.last_backward, [f[0] for f in p.fwd], p.slowdown)
    ends = [result.finish[s] + sum(tails[s].values()) for s in range(len(stages))]
    critical = max(range(len(stages)), key=lambda s: ends[s])
    step = ends[critical]
    tokens = cand.gbs * cand.seq_len
    flops = model_flops(stages, m)
    tflops = flops / step / 1e12
    parts = _stage_parts(stages[critical], cand, oracle, p.imbalance, p.launch, p.slowdown)
    if p.offload:
        parts["offload"] = p.offload
    breakdown = _breakdown(parts, m, result, critical, tails[critical], p.p2p, cand, p.v)
    events: tuple[tuple[int, str, int, float, float], ...] = ()
    if result.events:
        events = tuple((s, k, i, a, b) for s, k, _c, i, a, b in result.events)
        events += tuple((s, "comm", -1, result.finish[s], ends[s]) for s in range(len(stages)) if ends[s] > result.finish[s])
    return Projection(
        step_time=step,
        tokens_per_gpu=tokens / step / world,
        tflops_per_gpu=tflops,
        mfu=tflops * 1e12 / cluster.gpu.peak(cand.precision),
        mfu_bf16=tflops * 1e12 / cluster.gpu.peak_bf16,
        bubble_fraction=result.bubble_fraction,
        breakdown=breakdown,
        inflight=result.inflight,
        timeline=events,
    )


def default_oracle(cluster: Cluster) -> Oracle:
    cached = _oracles.get(cluster)
    if cached is None:
        if len(_oracles) > 64:
            _oracles.clear()
        cached = _oracles[cluster] = SimulateOracle(cluster)
    return cached


_oracles: dict[Cluster, SimulateOracle] = {}


def _step_tails(stages: tuple[Stage, ...], cand: Candidate, oracle: Oracle, grad_hide: Sequence[float],
                param_hide: Sequence[float], slowdown: float = 0.0) -> list[dict[str, float]]:
    """What each stage spends after its last backward: its gradient reduction may hide under
    ``grad_hide[s]`` (its last backward) and its parameter gather under ``param_hide[s]`` (its first
    forward), each but for the last bucket."""
    tails: list[dict[str, float]] = []
    for s, stage in enumerate(stages):
        layers = sum(b.count for chunk in stage.chunks for b in chunk) or 1
        tail = {"dp_comm": 0.0, "optimizer": 0.0}
        for task in stage.step_tasks:
            if isinstance(task.op, Collective):
                t = oracle.collective(task.op)
                # the last bucket only starts once the compute it would hide under is done
                last_bucket = t / layers
                hide = 0.0
                if task.hides_under == "grad" and cand.overlap_grad_reduce:
                    hide = grad_hide[s]
                elif task.hides_under == "param" and cand.overlap_param_gather:
                    hide = param_hide[s]
                tail["dp_comm"] += _comm_cost(t, min(hide, t - last_bucket), slowdown)
            else:
                tail["optimizer"] += oracle.compute(task.op)
        tails.append(tail)
    return tails


# A floor is compared with projections summed in another order: keep it below them by more than rounding.
FLOOR_MARGIN = 1.0 - 1e-9


def step_floor(model: Model, cluster: Cluster, cand: Candidate, settings: Settings | None = None,
               oracle: Oracle | None = None, shared: bool = False) -> float:
    """A lower bound on ``project(...).step_time`` that skips the schedule: the same passes and tails,
    every stage's work back to back after its first input arrives, and the gradient and parameter
    collectives hidden as far as they can be.

    Every op on stage ``s`` waits for the first micro-batch's forward through stages ``0 .. s-1``
    (``lead``), then the stage does all its passes (``busy``). Where B and W run as one pass
    (``1f1b``, ``interleaved``) a stage's last op is a backward, which then crosses stages
    ``s-1 .. 0`` before stage 0 is done (``trail``). The branch-and-bound search uses it to skip
    candidates that cannot beat the incumbent without running their schedule.

    ``shared``: a floor for every candidate that differs from ``cand`` only in its timing knobs
    (``build.TIMING_KNOBS``): the passes count their compute alone, which those knobs do not change
    (each pass is at least its compute: communication and host launches only add), and the
    gradient and parameter collectives overlap as the knobs at their default allow.
    """
    settings = settings or Settings()
    oracle = oracle or default_oracle(cluster)
    cand = settings.as_launched(cand)
    m = derived.at_least_one(cand.microbatches(cluster.world))
    if shared:
        cand = ops_key(cand)
    stages = stage_ops(model, cluster, cand, settings.torch_fsdp2)
    imbalance = settings.moe_imbalance if cand.ep > 1 else 1.0
    eff = cluster.gpu.efficiency
    per_stage = [_stage_passes(s, cand, oracle, imbalance, eff.host_launch, eff.overlap_slowdown, compute_only=shared)
                 for s in stages]
    p2p = oracle.collective(stages[0].p2p) if stages[0].p2p is not None else 0.0
    hidden = [float("inf")] * len(stages)
    tails = [sum(t.values()) for t in _step_tails(stages, cand, oracle, hidden, hidden, eff.overlap_slowdown)]
    merged = cand.pp == 1 or cand.schedule not in ("zero_bubble", "zbv")
    floor = lead = trail = 0.0
    for s, chunks in enumerate(per_stage):
        busy = m * sum(f + b + w for f, b, w in chunks)
        floor = max(floor, lead + busy + tails[s], lead + busy + trail + tails[0] if merged else 0.0)
        lead += chunks[0][0] + p2p
        trail += chunks[0][1] + chunks[0][2] + p2p
    return floor * FLOOR_MARGIN


def _breakdown(parts: dict[str, float], m: int, result: ScheduleResult, s: int, tail: dict[str, float],
               p2p: float, cand: Candidate, v: int) -> tuple[tuple[str, float], ...]:
    idle = max(0.0, result.finish[s] - result.busy[s])
    # the first micro-batch crosses every stage boundary forward and back before the pipe is full
    pp_comm = min(idle, 2 * (cand.pp * v - 1) * p2p) if cand.pp > 1 else 0.0
    out = {k: 0.0 for k in BREAKDOWN_KINDS}
    for kind, t in parts.items():
        out[kind] += t * m
    out["pp_comm"] = pp_comm
    out["bubble"] = idle - pp_comm
    out["dp_comm"] += tail["dp_comm"]
    out["optimizer"] = tail["optimizer"]
    return tuple((k, out[k]) for k in BREAKDOWN_KINDS)


def with_efficiency(cluster: Cluster, **changes: float) -> Cluster:
    """The cluster with some of its GPU's efficiency parameters replaced (calibration, tests)."""
    gpu = cluster.gpu
    return attrs.evolve(cluster, gpu=attrs.evolve(gpu, efficiency=attrs.evolve(gpu.efficiency, **changes)))
