"""Run a function on N local ranks joined by torch.distributed (gloo on CPU, NCCL/RCCL on GPUs)."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable
from typing import Any

from primus_lang.bench.runtime import cpu_threads, torch

Worker = Callable[[int, int, Any], Any]  # (rank, world, payload) -> result (rank 0's is returned)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _entry(rank: int, world: int, port: int, backend: str, fn: Worker, payload: Any, out: str) -> None:
    t = torch()
    t.set_num_threads(cpu_threads())
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    t.distributed.init_process_group(backend, rank=rank, world_size=world)
    try:
        result = fn(rank, world, payload)
        if rank == 0:
            t.save(result, out)
    finally:
        t.distributed.destroy_process_group()


def run_ranks(fn: Worker, world: int, payload: Any, backend: str = "gloo") -> Any:
    """Start ``world`` processes, run ``fn`` on each, return rank 0's result.

    ``fn`` must be a module-level function (spawned processes pickle it).
    """
    t = torch()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.pt")
        # fork on CPU (no re-import of the caller's __main__, fast start); spawn where CUDA may be live
        method = "fork" if backend == "gloo" else "spawn"
        t.multiprocessing.start_processes(
            _entry, args=(world, _free_port(), backend, fn, payload, out), nprocs=world, join=True,
            start_method=method,
        )
        return t.load(out, weights_only=False)
