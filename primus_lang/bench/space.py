"""Profile a whole space: the distinct kernel keys over all its candidates, each measured once."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from primus_lang.bench.database import ProfileDB
from primus_lang.bench.kernels import KernelSpec
from primus_lang.bench.oracle import spec_of
from primus_lang.bench.profile import ProfileStats, Progress, profile
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.ir import Candidate, Cluster, Model


@frozen
class SpaceProfile:
    candidates: int
    op_occurrences: int  # kernel ops summed over every candidate's op lists
    stats: ProfileStats


def candidate_specs(model: Model, cluster: Cluster, cand: Candidate) -> list[KernelSpec]:
    from primus_lang.project import stage_ops

    specs = []
    for stage in stage_ops(model, cluster, cand):
        tasks = [task for chunk in stage.chunks for block in chunk for task in block.tasks]
        for task in [*tasks, *stage.step_tasks]:
            spec = spec_of(task.op)
            if spec is not None:
                specs.append(spec)
    return specs


def collect_specs(model: Model, cluster: Cluster, cands: Iterable[Candidate]) -> tuple[set[KernelSpec], int, int]:
    """(distinct specs, candidates seen, op occurrences): the redundancy the profiler removes."""
    distinct: set[KernelSpec] = set()
    count = occurrences = 0
    for cand in cands:
        specs = candidate_specs(model, cluster, cand)
        distinct.update(specs)
        occurrences += len(specs)
        count += 1
    return distinct, count, occurrences


def profile_candidates(
    model: Model, cluster: Cluster, cands: Iterable[Candidate], db: ProfileDB, device: DeviceInfo,
    *, budget_s: float = 0.2, on_progress: Progress | None = None,
) -> SpaceProfile:
    distinct, count, occurrences = collect_specs(model, cluster, cands)
    stats = profile(distinct, db, device, budget_s=budget_s, on_progress=on_progress)
    return SpaceProfile(count, occurrences, stats)
