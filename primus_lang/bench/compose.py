"""Compose a full training step from a reduced model's measured blocks (the upscale half).

Per micro-batch and pipeline chunk: the measured layer forward and backward times the layers the
chunk holds (recomputed layers at their measured recompute cost), the embedding/head/loss block on
its stage, the tensor-parallel collectives of each layer. The schedule simulator turns those into
the pipeline's makespan; the data-parallel gradient all-reduce (measured or restored) and the
measured optimizer tail are added once per step.
"""

from __future__ import annotations

from attrs import frozen

from primus_lang.bench.database import ProfileDB
from primus_lang.bench.downscale import BlockShape, BlockTimes, block_times, tail_time
from primus_lang.bench.gpt import layer_params, outer_params
from primus_lang.bench.oracle import BenchmarkOracle
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import UNMEASURED_RECOMPUTE
from primus_lang.ir import Candidate, Cluster, Model, derived
from primus_lang.ir.pipeline import split_of


@frozen
class DownscaledStep:
    step_time: float
    pipeline: float  # the schedule's makespan (forward/backward of every micro-batch)
    grad_sync: float  # data-parallel gradient all-reduce, exposed
    tail: float  # gradient buffer, optimizer, weight copy
    bubble: float
    blocks: BlockTimes
    measured_now: bool  # True when this call ran the reduced model (nothing cached)
    collective_sources: tuple[tuple[str, str], ...] = ()


def project_downscaled(
    model: Model, cluster: Cluster, cand: Candidate, db: ProfileDB, device: DeviceInfo, oracle: BenchmarkOracle,
) -> DownscaledStep:
    from primus_lang.project import Collective, Group, group_layout, simulate_schedule

    if cand.recompute.kind not in ("none", "selective", "full"):
        raise CompileError(Diagnostic(
            UNMEASURED_RECOMPUTE, f"no measured layer block runs recompute `{cand.recompute}`",
            help="project it with the benchmark oracle's per-kernel timings (`primusc project --oracle benchmark`)",
        ))

    world = cluster.world
    dp, m = cand.dp(world), cand.microbatches(world)
    pp, vpp = cand.pp, derived.virtual_stages(cand.schedule, cand.vpp)
    blocks, measured = block_times(BlockShape(model, cand.tp, cand.mbs, cand.seq_len), db, device)
    sources: list[tuple[str, str]] = []

    def coll(kind: str, size: int, group: Group) -> float:
        op = Collective(kind, size, group)
        seconds = oracle.collective(op)
        sources.append((f"{kind} {size} B over {group.size}", oracle.sources[op.key]))
        return seconds

    act_bytes = cand.mbs * cand.seq_len * model.hidden * 2
    tp_fwd = tp_bwd = 0.0
    if cand.tp > 1:
        # two all-reduces per layer each way (reduce-scatter + all-gather with SP: the same ring cost)
        one = coll("all_reduce", act_bytes, group_layout(cand.tp, 1, cluster.domain))
        tp_fwd = tp_bwd = 2 * one
    split = split_of(model.num_layers, cand, vpp)
    rc = cand.recompute
    fwd: list[list[float]] = [[0.0] * vpp for _ in range(pp)]
    bwd: list[list[float]] = [[0.0] * vpp for _ in range(pp)]
    for c in range(vpp):
        for s in range(pp):
            n = int(split.chunk_layers(s, c))
            # Megatron checkpoints per model chunk: the first N layers (block) or all of them (uniform)
            full = 0 if rc.kind != "full" else n if rc.method == "uniform" else min(n, rc.layers)
            plain_kind = "selective" if cand.recompute.kind == "selective" else "none"
            f = n * (blocks.layer_f + tp_fwd)
            b = (n - full) * (blocks.layer(plain_kind) - blocks.layer_f) + full * (blocks.layer_fb_full - blocks.layer_f)
            b += n * tp_bwd
            fwd[s][c], bwd[s][c] = f, b
    # embedding, output layer and loss: measured together, placed with the head (it dominates) on the
    # rank of the model's last chunk (stage 0 under ZBV)
    head = int(split.last_stage)
    fwd[head][vpp - 1] += blocks.outer_f
    bwd[head][vpp - 1] += blocks.outer_fb - blocks.outer_f
    p2p = 0.0
    if pp > 1:
        stride = cand.tp * cand.cp * dp
        p2p = coll("p2p", act_bytes // max(1, cand.tp if cand.sp else 1), group_layout(2, stride, cluster.domain))
    zeros = [[0.0] * vpp for _ in range(pp)]
    sched = simulate_schedule(cand.schedule, pp, m, fwd, bwd, zeros, p2p)
    stage_layers = max(int(split.stage_layers(s)) for s in range(pp))
    params = stage_layers * layer_params(model, cand.tp) + outer_params(model, cand.tp)
    sync = 0.0
    if dp > 1:
        sync = coll("all_reduce", 4 * params, group_layout(dp, cand.tp * cand.cp, cluster.domain))
        if cand.overlap_grad_reduce:
            sync = max(0.0, sync - max(sched.last_backward))
    tail = tail_time(model, stage_layers, cand.tp, db, device)
    return DownscaledStep(
        sched.makespan + sync + tail, sched.makespan, sync, tail, sched.bubble_fraction, blocks, measured,
        tuple(sources),
    )
