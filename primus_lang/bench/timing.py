"""Wall-clock a callable on a device: warm-up, repeats, median (CUDA events on GPUs)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from attrs import frozen

from primus_lang.bench.runtime import torch


@frozen
class Timing:
    median: float  # seconds
    minimum: float
    repeats: int

    def best(self, device: str) -> float:
        """The estimate to compose with: the median on GPUs; the minimum on a CPU, where other
        processes sharing the cores only ever add time, so the fastest run is the uncontended one."""
        return self.minimum if device == "cpu" else self.median

    @property
    def spread(self) -> float:
        """How far the median sits above the best run, as a fraction: a noise gauge."""
        return self.median / self.minimum - 1.0 if self.minimum > 0 else 0.0


def time_call(
    fn: Callable[[], object],
    device: str,
    *,
    warmup: int = 2,
    repeats: int = 0,
    budget_s: float = 0.25,
    max_repeats: int = 50,
) -> Timing:
    """Time ``fn``. With ``repeats`` 0 the count adapts so the repeats take about ``budget_s``."""
    for _ in range(warmup):
        fn()
    _sync(device)
    if repeats <= 0:
        probe = _time_once(fn, device)
        repeats = int(min(max_repeats, max(3, budget_s / max(probe, 1e-7))))
    samples = sorted(_time_once(fn, device) for _ in range(repeats))
    return Timing(statistics.median(samples), samples[0], repeats)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch().cuda.synchronize(device)


def _time_once(fn: Callable[[], object], device: str) -> float:
    if device.startswith("cuda"):
        t = torch()
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1e3
    begin = time.perf_counter()
    fn()
    return time.perf_counter() - begin
