"""Wall-clock a callable on a device: warm-up, repeats, median (CUDA events on GPUs)."""

from __future__ import annotations

import os
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
    before: Callable[[], object] | None = None,
) -> Timing:
    """Time ``fn``. With ``repeats`` 0 the count adapts so the repeats take about ``budget_s``.
    ``before`` runs ahead of every sample, untimed (a cache flush)."""
    probe = 0.0
    for i in range(warmup):
        begin = time.perf_counter()
        fn()
        _sync(device)
        probe = time.perf_counter() - begin
        if i == 0 and probe > budget_s:
            break  # a kernel this long is warm after one run; more would only cost time
    if repeats <= 0:
        probe = _time_once(fn, device, before) if probe <= budget_s else probe
        repeats = int(min(max_repeats, max(3, budget_s / max(probe, 1e-7))))
    samples = sorted(_time_once(fn, device, before) for _ in range(repeats))
    return Timing(statistics.median(samples), samples[0], repeats)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch().cuda.synchronize(device)


def _time_once(fn: Callable[[], object], device: str, before: Callable[[], object] | None = None) -> float:
    if before is not None:
        before()
        _sync(device)
    if device.startswith("cuda"):
        t = torch()
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1e3
    clock = cpu_clock()
    begin = clock()
    fn()
    return clock() - begin


def cpu_clock() -> Callable[[], float]:
    """The clock for CPU timings: the process's CPU time (all its threads), which is what the wall time
    would be on cores of its own; a machine shared with other work then cannot inflate a number.
    ``PRIMUSC_BENCH_CLOCK=wall`` switches to wall-clock time."""
    if os.environ.get("PRIMUSC_BENCH_CLOCK", "cpu") == "wall":
        return time.perf_counter
    return time.process_time


def cache_flusher(device: str, nbytes: int = 0) -> Callable[[], object]:
    """Overwrite a buffer larger than the last-level cache a layer's data would otherwise sit in, so a
    block is timed with cold caches, as it runs inside a full model (the other layers' weights and
    activations have evicted it). 256 MiB covers GPU L2s; on a CPU 32 MiB covers a core's L2 several
    times over (a shared L3 of hundreds of MiB cannot be flushed at a useful cost)."""
    nbytes = nbytes or (32 << 20 if device == "cpu" else 256 << 20)
    buf = torch().empty(nbytes, dtype=torch().uint8, device=device)
    return lambda: buf.fill_(1)
