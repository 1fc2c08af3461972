"""Work too slow for the edit path (the memory proof of every legal point), off it.

One worker thread runs jobs in order. A newer version of a document cancels its older job: a job
not started is dropped, one running stops at its next chunk (``Cancelled``), and a result that
arrives for a version the editor has moved past is dropped by the caller's version check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import attrs

from primus_lang.ir.space import Space

T = TypeVar("T")
CHUNK = 2048  # legal points proved at once between two looks at the cancel flag


class Cancelled(Exception):
    pass


@attrs.frozen
class Fits:
    space: str
    legal: int
    fitting: int
    least_peak: int  # bytes per GPU of the smallest peak (-1: no legal point)
    usable: int


def fitting_points(space: Space, stop: threading.Event) -> Fits:
    """How many legal points fit in memory, proved chunk by chunk (``memory.prefilter``)."""
    from itertools import islice

    from primus_lang.check import legal_points
    from primus_lang.memory import prefilter, usable_bytes

    usable = usable_bytes(space.cluster.gpu.hbm_capacity, space.headroom)
    points = legal_points(space)
    legal = fitting = 0
    least = -1
    while True:
        if stop.is_set():
            raise Cancelled
        chunk = list(islice(points, CHUNK))
        if not chunk:
            return Fits(space.name, legal, fitting, least, usable)
        peaks = prefilter(space.model, space.cluster, chunk, space.settings)
        legal += len(chunk)
        fitting += int((peaks <= usable).sum())
        low = int(peaks.min())
        least = low if least < 0 else min(least, low)


class SlowWork:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="primusc-slow")
        self._stops: dict[str, threading.Event] = {}
        self._futures: dict[str, list[Future[object]]] = {}

    def submit(self, key: str, jobs: list[Callable[[threading.Event], T]]) -> list[Future[T]]:
        """Run ``jobs`` for ``key`` (a document), cancelling what ran for it before."""
        self.cancel(key)
        stop = threading.Event()
        self._stops[key] = stop
        futures = [self._pool.submit(job, stop) for job in jobs]
        self._futures[key] = list(futures)  # type: ignore[arg-type]
        return futures

    def cancel(self, key: str) -> None:
        stop = self._stops.pop(key, None)
        if stop is not None:
            stop.set()
        for future in self._futures.pop(key, []):
            future.cancel()

    def shutdown(self) -> None:
        for key in list(self._stops):
            self.cancel(key)
        self._pool.shutdown(wait=False, cancel_futures=True)
