"""One rank of the collectives between nodes, as a benchmark job starts it (srun or a PyTorchJob).

The rank, world size and rendezvous come from the launcher's environment; rank 0 stores the points
under the backend with the ``+net`` suffix, apart from the rows measured inside one node.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from primus_lang.bench.collectives import NET, _collective_worker, backend_of
from primus_lang.bench.database import CollectiveRow
from primus_lang.bench.runtime import DeviceInfo, cpu_threads, describe, torch
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import NO_RANK_ENVIRONMENT

# a hang guard: every rank of a job starts within this long, or the step fails instead of waiting
RENDEZVOUS_TIMEOUT = datetime.timedelta(minutes=10)


def _int(env: Mapping[str, str], *names: str) -> int | None:
    for name in names:
        value = env.get(name, "")
        if value.isascii() and value.isdigit():
            return int(value)
    return None


def rank_environment(env: Mapping[str, str]) -> tuple[int, int, int]:
    """(rank, world size, local rank): srun's ``SLURM_*`` first (a ``RANK`` in the caller's
    environment travels into srun's tasks), else what torchrun or a PyTorchJob sets."""
    slurm = "SLURM_PROCID" in env
    rank = _int(env, "SLURM_PROCID") if slurm else _int(env, "RANK")
    world = _int(env, "SLURM_NTASKS") if slurm else _int(env, "WORLD_SIZE")
    local = (_int(env, "SLURM_LOCALID") if slurm else _int(env, "LOCAL_RANK")) or 0
    missing = [n for n in ("MASTER_ADDR", "MASTER_PORT") if not env.get(n)]
    if rank is None or world is None or world < 2 or rank >= world or missing:
        found = ", ".join(f"{n}={env[n]}" for n in ("SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE",
                                                     "MASTER_ADDR", "MASTER_PORT") if n in env)
        raise CompileError(Diagnostic(
            NO_RANK_ENVIRONMENT, "`--collectives net` is one rank of a job, and its environment names none",
            notes=(f"found: {found or 'nothing'}",),
            help="start it through the job `primusc bench space.prx --job slurm|k8s` writes (2 ranks or more)"))
    return rank, world, local


def run_net_rank(device: str, env: Mapping[str, str], sizes: tuple[int, ...], repeats: int = 7
                 ) -> tuple[DeviceInfo, str, list[CollectiveRow] | None]:
    """Measure this rank's share; returns (device, backend, rows), rows on rank 0 only."""
    rank, world, local = rank_environment(env)
    info = describe("cpu" if device == "cpu" else f"cuda:{local}")
    backend = backend_of(info)
    t = torch()
    t.set_num_threads(cpu_threads())
    if info.kind != "cpu":
        t.cuda.set_device(local)
    t.distributed.init_process_group(backend, rank=rank, world_size=world, timeout=RENDEZVOUS_TIMEOUT)
    try:
        points = _collective_worker(rank, world, (sizes, repeats, info.device))
    finally:
        t.distributed.destroy_process_group()
    rows = [CollectiveRow(op, world, size, seconds) for op, size, seconds in points] if rank == 0 else None
    return info, backend + NET, rows
