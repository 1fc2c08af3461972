#!/usr/bin/env python
"""The benchmark oracle's GPU check: one script, under 8 minutes on one H200 (or any one GPU).

1. GEMM efficiency curves, BF16 and FP8 (``torch._scaled_mm``, per-tensor scales): achieved TFLOP/s
   and the fraction of the profile's dense peak, square sizes and Llama-shaped GEMMs.
2. Measured vs projected on one GPU for a ~1.2B-parameter Llama-style model (Llama-3.2-1B shapes):
   a real training step (BF16 weights, FP32 master weights and Adam) for several micro-batch /
   sequence / recompute / layer settings, against
   - the benchmark oracle's downscaled projection (one layer measured per shape, composed), and
   - ``project()`` with the kernel-level BenchmarkOracle and with the SimulateOracle (spec sheet),
   with median absolute error and Spearman for each.

Writes ``$OUT/gpu_check.json`` and ``$OUT/gpu_check.md`` (``$OUT`` defaults to ./gpu_check_out),
and the profile database it filled, ``$OUT/profile.sqlite``.

    python benchmarks/gpu_check.py [--device cuda:0] [--gpu h200] [--budget-s 420]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from primus_lang.bench.acceptance import CPU_CONFIGS, TINY_GPT, candidate, local_cluster, spearman
from primus_lang.bench.compose import project_downscaled
from primus_lang.bench.database import ProfileDB
from primus_lang.bench.kernels import KernelSpec, fp8_supported, prepare, work
from primus_lang.bench.oracle import BenchmarkOracle
from primus_lang.bench.reference import RefConfig, measure_reference
from primus_lang.bench.runtime import DeviceInfo, describe
from primus_lang.bench.timing import cache_flusher, time_call
from primus_lang.ir import Gpu, Model, Settings
from primus_lang.lower import loads_program
from primus_lang.project import SimulateOracle, project

# Llama-3.2-1B shapes (huggingface.co/meta-llama/Llama-3.2-1B config.json): 1.24B parameters untied.
ONE_B = Model(
    name="llama_1b_like", num_layers=16, hidden=2048, ffn_hidden=8192, heads=32, kv_heads=8, head_dim=64,
    vocab=128256, seq_len=2048, max_position_embeddings=8192, activation="swiglu", norm="rmsnorm",
    position="rope", source="Llama-3.2-1B config.json shapes",
)

CONFIGS = (
    RefConfig(layers=16, mbs=1, seq=2048, microbatches=4),
    RefConfig(layers=16, mbs=2, seq=2048, microbatches=2),
    RefConfig(layers=16, mbs=4, seq=2048, microbatches=2),
    RefConfig(layers=16, mbs=1, seq=4096, microbatches=2),
    RefConfig(layers=16, mbs=2, seq=4096, microbatches=2, recompute="selective"),
    RefConfig(layers=16, mbs=2, seq=2048, microbatches=2, recompute="full", full_layers=16),
    RefConfig(layers=8, mbs=4, seq=2048, microbatches=2),
    RefConfig(layers=8, mbs=1, seq=8192, microbatches=2, recompute="full", full_layers=4),
    RefConfig(layers=24, mbs=2, seq=1024, microbatches=4),
)

SQUARE = (256, 512, 1024, 2048, 4096, 8192, 16384)
# (m, n, k): tokens x out x in of the 1B model's GEMMs at 8192 tokens per micro-batch
LLAMA_SHAPES = ((8192, 3072, 2048), (8192, 2048, 2048), (8192, 16384, 2048), (8192, 2048, 8192),
                (8192, 128256, 2048))


def gemm_curves(device: DeviceInfo, gpu: Gpu, deadline: float, smoke: bool) -> list[dict[str, Any]]:
    flush = cache_flusher(device.device)
    dtypes = ["bf16"] + (["fp8"] if fp8_supported(device.device) else [])
    shapes = [(s, s, s) for s in SQUARE] + list(LLAMA_SHAPES)
    rows = []
    for dtype in dtypes:
        for m, n, k in shapes[:2] if smoke else shapes:
            if time.monotonic() > deadline:
                break
            spec = KernelSpec("gemm", (m, n, k, 1), dtype)
            timing = time_call(prepare(spec, device.device), device.device, budget_s=0.15, before=flush)
            tflops = work(spec) / timing.median / 1e12
            rows.append({"dtype": dtype, "m": m, "n": n, "k": k, "ms": timing.median * 1e3, "tflops": tflops,
                         "efficiency": tflops * 1e12 / gpu.peak(dtype)})
            print(f"gemm {dtype} {m}x{n}x{k}: {tflops:.0f} TFLOP/s", flush=True)
    return rows


def check(device: DeviceInfo, gpu: Gpu, db: ProfileDB, deadline: float, smoke: bool) -> list[dict[str, Any]]:
    rows = []
    base, configs = (TINY_GPT, CPU_CONFIGS[:2]) if smoke else (ONE_B, CONFIGS)
    for cfg in configs:
        if time.monotonic() > deadline:
            print(f"skipped (time): {cfg.label()}", flush=True)
            continue
        model = base.replace(num_layers=cfg.layers)
        measured = measure_reference(base, [cfg], device=device.device)[0]
        cluster = local_cluster(gpu, 1)
        cand = candidate(cfg)
        oracle = BenchmarkOracle(db, device, cluster)
        down = project_downscaled(model, cluster, cand, db, device, oracle).step_time
        kernel = project(model, cluster, cand, Settings(), oracle=oracle).step_time
        simulated = project(model, cluster, cand, Settings(), oracle=SimulateOracle(cluster)).step_time
        rows.append({"config": cfg.label(), "measured_s": measured, "downscaled_s": down, "kernel_s": kernel,
                     "simulate_s": simulated, "sources": oracle.source_counts()})
        print(f"{cfg.label()}: measured {measured * 1e3:.1f} ms, downscaled {down * 1e3:.1f}, "
              f"kernel-level {kernel * 1e3:.1f}, simulate {simulated * 1e3:.1f}", flush=True)
    return rows


def summary(rows: list[dict[str, Any]], column: str) -> dict[str, float]:
    if len(rows) < 2:
        return {}
    measured = [r["measured_s"] for r in rows]
    got = [r[column] for r in rows]
    errors = [abs(g / m - 1) for g, m in zip(got, measured, strict=True)]
    return {"median_abs_error": float(np.median(errors)), "spearman": spearman(measured, got)}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"# GPU check on {result['device']}", ""]
    if result.get("gemm"):
        lines += ["## GEMM efficiency", "", "| dtype | m | n | k | ms | TFLOP/s | of peak |", "|---|---:|---:|---:|---:|---:|---:|"]
        for g in result["gemm"]:
            lines.append(f"| {g['dtype']} | {g['m']} | {g['n']} | {g['k']} | {g['ms']:.3f} | {g['tflops']:.1f} | "
                         f"{g['efficiency']:.1%} |")
        lines.append("")
    if result.get("check"):
        lines += ["## Measured vs projected, ~1.2B Llama-style model, one GPU", "",
                  "| config | measured ms | downscaled ms | err | kernel-level ms | err | simulate ms | err |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in result["check"]:
            m = r["measured_s"]
            cells = [f"{r[c] * 1e3:.1f} | {r[c] / m - 1:+.1%}" for c in ("downscaled_s", "kernel_s", "simulate_s")]
            lines.append(f"| {r['config']} | {m * 1e3:.1f} | " + " | ".join(cells) + " |")
        lines.append("")
        for name, s in result["summary"].items():
            if s:
                lines.append(f"- {name}: median absolute error {s['median_abs_error']:.1%}, "
                             f"Spearman {s['spearman']:.3f}")
    for e in result.get("errors", []):
        lines.append(f"- error: {e}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--gpu", default="h200", help="stdlib hardware profile for peaks and fallbacks")
    ap.add_argument("--budget-s", type=float, default=420.0, help="stop starting new work after this")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes: checks the script itself (CPU is fine)")
    args = ap.parse_args()
    start = time.monotonic()
    out = Path(os.environ.get("OUT", "gpu_check_out"))
    out.mkdir(parents=True, exist_ok=True)
    vendor = "amd" if args.gpu.startswith("mi") else "nvidia"
    text = f"import hardware.{vendor} ({args.gpu})\ncluster one {{ gpu = {args.gpu}; nodes = 1; gpus_per_node = 1 }}\n"
    gpu = loads_program(text, "<gpu_check>").clusters[0].gpu
    device = describe(args.device)
    db = ProfileDB(out / "profile.sqlite")
    result: dict[str, Any] = {"device": device.key, "gpu_profile": gpu.name, "errors": []}
    try:
        result["gemm"] = gemm_curves(device, gpu, start + 0.25 * args.budget_s, args.smoke)
    except Exception as exc:  # keep going: the other half is still worth having
        result["errors"].append(f"gemm curves: {type(exc).__name__}: {exc}")
        traceback.print_exc()
    try:
        result["check"] = check(device, gpu, db, start + args.budget_s, args.smoke)
    except Exception as exc:
        result["errors"].append(f"check: {type(exc).__name__}: {exc}")
        traceback.print_exc()
    rows = result.get("check", [])
    result["summary"] = {c: summary(rows, c) for c in ("downscaled_s", "kernel_s", "simulate_s")}
    result["wall_s"] = time.monotonic() - start
    (out / "gpu_check.json").write_text(json.dumps(result, indent=2))
    (out / "gpu_check.md").write_text(markdown(result))
    print(markdown(result))
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
