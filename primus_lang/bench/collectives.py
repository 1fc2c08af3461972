"""Collectives: measured in scope (local ranks, the real backend), restored beyond it.

In scope is what this machine can run: groups of up to ``max_ranks`` local processes. The measured
points fix the effective link of the scale-up domain (latency alpha, bandwidth 1/beta, fitted by
least squares to the ring costs); larger groups and groups that leave the domain are restored with
the same hierarchical alpha-beta model the simulate oracle uses, the measured link inside the domain
and the NIC spec across it.
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

import numpy as np
from attrs import frozen

from primus_lang.bench.database import CollectiveRow, ProfileDB
from primus_lang.bench.procs import run_ranks
from primus_lang.bench.runtime import DeviceInfo, torch
from primus_lang.bench.timing import cpu_clock

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
# Rows measured between nodes (one rank per node, a campaign's net step) are stored under the backend
# with this suffix, apart from the scale-up domain's rows, whose link fit they would otherwise skew.
NET = "+net"
DEFAULT_SIZES = tuple(1 << p for p in range(12, 25, 2))  # 4 KiB .. 16 MiB


def ring_terms(op: str, n: int) -> tuple[float, float]:
    """(latency steps, bytes factor) of the ring cost of ``op`` on ``n`` ranks (REFERENCE.md)."""
    if op == "all_reduce":
        return 2.0 * (n - 1), 2.0 * (n - 1) / n
    if op == "p2p":
        return 1.0, 1.0
    return float(n - 1), (n - 1) / n


def _collective_worker(rank: int, world: int, payload: Any) -> list[tuple[str, int, float]]:
    t = torch()
    dist = t.distributed
    sizes, repeats, device = payload
    out: list[tuple[str, int, float]] = []
    for op in OPS:
        for size in sizes:
            numel = max(world, size // 4 // world * world)
            buf = t.ones(numel, dtype=t.float32, device=device)
            part = t.ones(numel // world, dtype=t.float32, device=device)
            pieces = [t.empty_like(part) for _ in range(world)]

            def run(op: str = op, buf: Any = buf, part: Any = part, pieces: Any = pieces) -> None:
                if op == "all_reduce":
                    dist.all_reduce(buf)
                elif op == "all_gather":
                    dist.all_gather(pieces, part)
                elif op == "reduce_scatter":
                    dist.reduce_scatter(part, list(buf.chunk(world)))
                else:
                    dist.all_to_all(pieces, list(buf.chunk(world)))

            try:
                run()
            except (RuntimeError, NotImplementedError, ValueError):
                break  # the backend lacks this collective (gloo: reduce_scatter)
            samples = []
            clock = cpu_clock() if device == "cpu" else time.perf_counter
            for _ in range(repeats):
                dist.barrier()
                begin = clock()
                run()
                if device.startswith("cuda"):
                    t.cuda.synchronize()
                samples.append(clock() - begin)
            # CPU: the fastest run is the uncontended one (timing.Timing.best)
            pick = min(samples) if device == "cpu" else statistics.median(samples)
            worst = t.tensor([pick], dtype=t.float64)
            dist.all_reduce(worst, op=dist.ReduceOp.MAX)
            out.append((op, numel * 4, float(worst.item())))
    return out


def measure_collectives(
    db: ProfileDB, device: DeviceInfo, ranks: tuple[int, ...], sizes: tuple[int, ...] = DEFAULT_SIZES,
    repeats: int = 7,
) -> list[CollectiveRow]:
    """Measure every op at every size on each group size in ``ranks`` and store the points."""
    backend = backend_of(device)
    rows: list[CollectiveRow] = []
    for n in ranks:
        if n < 2:
            continue
        points = run_ranks(_collective_worker, n, (sizes, repeats, device.device), backend)
        rows += [CollectiveRow(op, n, size, seconds) for op, size, seconds in points]
    db.put_collectives(device.key, backend, rows)
    return rows


def backend_of(device: DeviceInfo) -> str:
    return "gloo" if device.kind == "cpu" else "nccl"  # ROCm builds of torch name RCCL "nccl"


@frozen
class LinkFit:
    """Effective link of the measured domain: ``t = alpha * steps + bytes_factor * S / bandwidth``."""

    alpha: float  # seconds per ring step
    bandwidth: float  # bytes/s
    points: int
    max_ranks: int
    median_error: float  # relative error of the fit on its own points


def fit_link(rows: list[CollectiveRow]) -> LinkFit | None:
    """Least-squares alpha-beta over all measured points (relative error, so small messages count)."""
    usable = [r for r in rows if r.seconds > 0 and r.op in OPS]
    if len(usable) < 2:
        return None
    terms = [ring_terms(r.op, r.ranks) for r in usable]
    y = np.array([r.seconds for r in usable])
    a = np.array([[steps, factor * r.bytes] for (steps, factor), r in zip(terms, usable, strict=True)])
    weight = 1.0 / y  # minimise relative error
    coef, *_ = np.linalg.lstsq(a * weight[:, None], y * weight, rcond=None)
    alpha = max(float(coef[0]), 0.0)
    inv_bw = max(float(coef[1]), 1e-15)
    pred = a @ np.array([alpha, inv_bw])
    err = float(np.median(np.abs(pred / y - 1.0)))
    return LinkFit(alpha, 1.0 / inv_bw, len(usable), max(r.ranks for r in usable), err)


def fit_links(rows: list[CollectiveRow]) -> dict[str, LinkFit]:
    """One link per collective kind (a backend's algorithms differ by kind: gloo's all-reduce and
    all-gather do not share a bandwidth), under the key "" the fit over every point."""
    fits = {op: fit_link([r for r in rows if r.op == op]) for op in OPS}
    fits[""] = fit_link(rows)
    return {op: fit for op, fit in fits.items() if fit is not None}


def interpolate_measured(rows: list[CollectiveRow], op: str, ranks: int, size: int) -> float | None:
    """In scope: log-log interpolation between the two measured sizes around ``size``."""
    pts = sorted((r.bytes, r.seconds) for r in rows if r.op == op and r.ranks == ranks)
    if not pts or size < pts[0][0] or size > pts[-1][0]:
        return None
    for s0, t0 in pts:
        if s0 == size:
            return t0
    for (s0, t0), (s1, t1) in itertools.pairwise(pts):
        if s0 <= size <= s1:
            if s1 == s0:
                return t0
            frac = np.log(size / s0) / np.log(s1 / s0)
            return float(np.exp(np.log(t0) + frac * (np.log(t1) - np.log(t0))))
    return pts[0][1]
