"""Redundancy-aware profiling: measure each distinct (op, shape, dtype) once, ever.

The candidates of a space share most of their kernels (every PP or DP choice with the same TP and
micro-batch runs the same GEMMs), so the set of distinct keys is far smaller than the sum of the
candidates' operator lists; and the database keeps them across spaces and models.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from attrs import frozen

from primus_lang.bench.database import KernelRow, ProfileDB
from primus_lang.bench.kernels import KernelSpec, prepare, work
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.bench.timing import time_call
from primus_lang.diagnostics import CompileError

Progress = Callable[[KernelSpec, str], None]  # (spec, "cached" | "measured" | "unsupported")

# Interpolation trusts a neighbour within this factor in every dimension taken together.
MAX_NEIGHBOUR_RATIO = 64.0


@frozen
class ProfileStats:
    distinct: int
    cached: int
    measured: int
    unsupported: tuple[KernelSpec, ...] = ()


@frozen
class Estimate:
    seconds: float
    source: str  # measured | interpolated


def distinct_specs(specs: Iterable[KernelSpec]) -> list[KernelSpec]:
    return sorted(set(specs))


def profile(
    specs: Iterable[KernelSpec],
    db: ProfileDB,
    device: DeviceInfo,
    *,
    budget_s: float = 0.2,
    on_progress: Progress | None = None,
) -> ProfileStats:
    """Measure every spec the database lacks for ``device``; the rest cost a lookup."""
    unique = distinct_specs(specs)
    cached = measured = 0
    unsupported: list[KernelSpec] = []
    for spec in unique:
        if db.kernel(device.key, spec) is not None:
            cached += 1
            status = "cached"
        else:
            try:
                timing = time_call(prepare(spec, device.device), device.device, budget_s=budget_s)
            except (RuntimeError, NotImplementedError, TypeError, CompileError):
                # e.g. FP8 on a part without it: the oracle falls back to simulate for this key
                unsupported.append(spec)
                status = "unsupported"
            else:
                db.put_kernel(device.key, KernelRow(spec, timing.best(device.device), timing.minimum, timing.repeats))
                measured += 1
                status = "measured"
        if on_progress is not None:
            on_progress(spec, status)
    return ProfileStats(len(unique), cached, measured, tuple(unsupported))


def _shape_distance(a: KernelSpec, b: KernelSpec) -> float:
    """Sum of |log ratio| over the dimensions; flags and zero-valued dimensions must match exactly."""
    if len(a.shape) != len(b.shape):
        return math.inf
    total = 0.0
    for x, y in zip(a.shape, b.shape, strict=True):
        if x == y:
            continue
        if x <= 0 or y <= 0:
            return math.inf
        total += abs(math.log(x / y))
    return total


def estimate(db: ProfileDB, device_key: str, spec: KernelSpec) -> Estimate | None:
    """The measured time, else one interpolated from measured neighbours, else None (simulate).

    Interpolation holds the achieved rate (work per second) of the nearest shapes and moves it along
    the work axis: between a smaller and a larger neighbour the rate is interpolated in log-work, on
    one side only it is carried over unchanged.
    """
    row = db.kernel(device_key, spec)
    if row is not None:
        return Estimate(row.seconds, "measured")
    near = sorted(
        ((d, r) for r in db.kernels(device_key, spec.op, spec.dtype)
         if (d := _shape_distance(spec, r.spec)) <= math.log(MAX_NEIGHBOUR_RATIO)),
        key=lambda item: item[0],
    )[:4]
    if not near:
        return None
    target = work(spec)
    below = [r for _, r in near if work(r.spec) <= target]
    above = [r for _, r in near if work(r.spec) > target]
    if below and above:
        lo = max(below, key=lambda r: work(r.spec))
        hi = min(above, key=lambda r: work(r.spec))
        w_lo, w_hi = work(lo.spec), work(hi.spec)
        rate_lo, rate_hi = w_lo / lo.seconds, w_hi / hi.seconds
        frac = 0.0 if w_hi == w_lo else math.log(target / w_lo) / math.log(w_hi / w_lo)
        rate = math.exp(math.log(rate_lo) + frac * (math.log(rate_hi) - math.log(rate_lo)))
    else:
        nearest = near[0][1]
        rate = work(nearest.spec) / nearest.seconds
    return Estimate(target / rate, "interpolated")
