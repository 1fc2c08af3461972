"""Measured vs projected: the reference training step of a small GPT against the benchmark oracle.

One function runs the whole check for a list of configurations and returns the rows, the median
absolute error and the Spearman rank correlation; ``markdown`` renders the table for
docs/benchmark.md. The CI test, ``primusc bench --check`` and benchmarks/gpu_check.py all call it.
"""

from __future__ import annotations

import time

import numpy as np
from attrs import frozen

from primus_lang.bench.collectives import measure_collectives
from primus_lang.bench.compose import project_downscaled
from primus_lang.bench.database import ProfileDB
from primus_lang.bench.oracle import BenchmarkOracle
from primus_lang.bench.reference import RefConfig, measure_reference
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.ir import Candidate, Cluster, Gpu, Model, Recompute, Settings

# A GPT-2-style miniature: small enough that a step takes tens of milliseconds on one core.
TINY_GPT = Model(
    name="tiny_gpt", num_layers=4, hidden=256, ffn_hidden=1024, heads=8, kv_heads=8, head_dim=32, vocab=4096,
    seq_len=256, max_position_embeddings=1024, activation="gelu", norm="layernorm", position="learned",
    source="primusc benchmark acceptance model",
)

# micro-batch, sequence, recompute, layers, 1 and 2 gloo ranks
CPU_CONFIGS = (
    RefConfig(layers=2, mbs=1, seq=256, microbatches=2),
    RefConfig(layers=4, mbs=2, seq=256, microbatches=2),
    RefConfig(layers=4, mbs=2, seq=256, microbatches=2, recompute="full", full_layers=4),
    RefConfig(layers=4, mbs=1, seq=512, microbatches=2, recompute="selective"),
    RefConfig(layers=6, mbs=4, seq=128, microbatches=1, recompute="full", full_layers=3),
    RefConfig(layers=2, mbs=1, seq=256, microbatches=2, world=2),
    RefConfig(layers=4, mbs=2, seq=512, microbatches=2, world=2),
    RefConfig(layers=8, mbs=1, seq=128, microbatches=4, world=2),
    RefConfig(layers=4, mbs=1, seq=256, microbatches=4, recompute="full", full_layers=2, world=2),
)


def local_cluster(gpu: Gpu, ranks: int) -> Cluster:
    return Cluster(name=f"{gpu.name}_x{ranks}", gpu=gpu, nodes=1, gpus_per_node=ranks)


# Spec-sheet fallback for one CPU core (only used where nothing was measured).
CPU_CORE = Gpu(
    name="cpu_core", vendor="other", peak_bf16=1.0e12, hbm_capacity=8 * 2**30, hbm_bandwidth=20.0e9,
    scale_up_bandwidth=2.0e9, scale_up_domain=2, source="one core of the local CPU (fallback only)",
)


def candidate(cfg: RefConfig) -> Candidate:
    """The reference step as a recipe: pure data parallelism, no overlap (the reference has none)."""
    return Candidate(
        mbs=cfg.mbs, gbs=cfg.mbs * cfg.microbatches * cfg.world, seq_len=cfg.seq,
        recompute=Recompute(cfg.recompute, cfg.full_layers), sharding="none",
        overlap_grad_reduce=False, overlap_param_gather=False,
    )


@frozen
class CheckRow:
    config: RefConfig
    measured: float
    projected: float  # downscaled: measured blocks composed by the schedule simulator
    kernel_level: float | None = None  # ``project()`` summing measured kernels (BenchmarkOracle)
    anchored: float | None = None  # ``project()`` with the oracle anchored to the measured blocks

    @property
    def error(self) -> float:
        return self.projected / self.measured - 1.0


@frozen
class CheckResult:
    device: str
    rows: tuple[CheckRow, ...]
    median_abs_error: float
    spearman: float
    measure_seconds: float  # reference runs
    project_seconds: float  # oracle measurements and composition


def spearman(a: list[float], b: list[float]) -> float:
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def run_check(
    model: Model, configs: tuple[RefConfig, ...], db: ProfileDB, device: DeviceInfo, gpu: Gpu = CPU_CORE,
    *, kernel_level: bool = False,
) -> CheckResult:
    begin = time.perf_counter()
    measured = measure_reference(model, list(configs), device=device.device)
    middle = time.perf_counter()
    ranks = tuple(sorted({c.world for c in configs if c.world > 1}))
    if ranks and not db.collectives(device.key, "gloo" if device.kind == "cpu" else "nccl"):
        measure_collectives(db, device, ranks)
    rows = []
    for cfg, seconds in zip(configs, measured, strict=True):
        cluster = local_cluster(gpu, cfg.world)
        oracle = BenchmarkOracle(db, device, cluster)
        reduced = model.replace(num_layers=cfg.layers)
        step = project_downscaled(reduced, cluster, candidate(cfg), db, device, oracle)
        kernels = anchored = None
        if kernel_level:
            from primus_lang.project import project

            kernels = project(reduced, cluster, candidate(cfg), Settings(), oracle=oracle).step_time
            fresh = BenchmarkOracle(db, device, cluster)
            fresh.anchor(reduced, [candidate(cfg)])
            anchored = project(reduced, cluster, candidate(cfg), Settings(), oracle=fresh).step_time
        rows.append(CheckRow(cfg, seconds, step.step_time, kernels, anchored))
    end = time.perf_counter()
    errors = [abs(r.error) for r in rows]
    rho = spearman([r.measured for r in rows], [r.projected for r in rows])
    return CheckResult(device.key, tuple(rows), float(np.median(errors)), rho, middle - begin, end - middle)


def markdown(result: CheckResult) -> str:
    kernels = all(r.kernel_level is not None for r in result.rows)
    extra_head, extra_rule = ("", "")
    if kernels:
        extra_head, extra_rule = (" kernel-level (ms) | error | anchored (ms) | error |", "---:|---:|---:|---:|")
    lines = [
        f"Device: `{result.device}`",
        "",
        "| layers | mbs | seq | micro-batches | recompute | DP ranks | measured (ms) | projected (ms) | error |"
        + extra_head,
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|" + extra_rule,
    ]
    for r in result.rows:
        c = r.config
        rc = f"full({c.full_layers})" if c.recompute == "full" else c.recompute
        extra = ""
        for value in (r.kernel_level, r.anchored):
            if value is not None:
                extra += f" {value * 1e3:.1f} | {value / r.measured - 1:+.1%} |"
        lines.append(
            f"| {c.layers} | {c.mbs} | {c.seq} | {c.microbatches} | {rc} | {c.world} | {r.measured * 1e3:.1f} | "
            f"{r.projected * 1e3:.1f} | {r.error:+.1%} |" + extra
        )
    lines += [
        "",
        f"Median absolute error {result.median_abs_error:.1%}, Spearman {result.spearman:.3f} "
        f"({len(result.rows)} configurations; reference runs {result.measure_seconds:.0f} s, "
        f"oracle measurements and projection {result.project_seconds:.0f} s).",
    ]
    return "\n".join(lines)
