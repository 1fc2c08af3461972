"""The report's own view-models: small frozen classes the charts draw from.

The search, memory and projection stages own richer result classes that keep gaining fields; the
report reads them once, in ``adapt.py``, into these, so a new field upstream never breaks a chart.
"""

from __future__ import annotations

import math

from attrs import field, frozen


@frozen
class MemoryTerm:
    name: str
    bytes: int
    formula: str = ""


@frozen
class RankMemory:
    """One rank class (a pipeline stage, dense or expert ranks) and its byte account."""

    name: str
    stage: int
    terms: tuple[MemoryTerm, ...]
    total: int


@frozen
class TimelineEvent:
    """One block of the winner's step: ``kind`` is F, B, W or comm; times in seconds from step start."""

    stage: int
    kind: str
    microbatch: int
    start: float
    end: float
    chunk: int = 0  # the virtual stage on this rank under interleaved and ZBV schedules


@frozen
class CandidateView:
    label: str
    knobs: tuple[tuple[str, str], ...]
    step_time: float
    tokens_per_gpu: float
    tflops_per_gpu: float
    mfu: float
    bubble_fraction: float
    memory_peak: int
    fits: bool
    breakdown: tuple[tuple[str, float], ...] = ()
    ranks: tuple[RankMemory, ...] = ()
    timeline: tuple[TimelineEvent, ...] = ()
    strategy: str = ""
    evaluation: int = 0  # the 1-based order in which the search evaluated it (0: not from a search)
    # the band the GPU profile's provenance gives the projection (basis "": no profile known, no band)
    tokens_low: float = 0.0
    tokens_high: float = 0.0
    step_low: float = 0.0
    step_high: float = 0.0
    coverage: float = 0.0
    paired: float = 0.0  # relative error of the ratio of two projections on this profile
    basis: str = ""  # spec, pooled or fitted
    beyond: tuple[str, ...] = ()  # how the candidate lies beyond its profile's runs (the band widened)

    def metric(self, name: str) -> float:
        """The value of an objective metric by its language name."""
        if name == "memory_peak":
            return float(self.memory_peak)
        value = getattr(self, name, None)
        if not isinstance(value, int | float):
            raise KeyError(f"unknown metric {name!r}")
        return float(value)


@frozen
class TrajectoryPoint:
    evaluation: int  # 1-based, counted over the whole search
    value: float  # the evaluated candidate's objective (NaN when it did not fit)
    incumbent: float  # the best objective so far across the whole search


@frozen
class Trajectory:
    strategy: str
    points: tuple[TrajectoryPoint, ...]


@frozen
class ClusterPoint:
    """One cluster of a plan across clusters: a whole run's days and cost, each with its band (cost NaN
    without a price)."""

    label: str
    gpus: int
    recipe: str
    days: float
    days_low: float
    days_high: float
    cost: float
    cost_low: float
    cost_high: float
    front: bool
    chosen: bool
    excluded: str = ""
    note: str = ""  # the terminal table's note (``search.CapacityPlan.note``)
    front_gpus: bool = False  # no other cluster is both faster and on fewer GPUs
    beyond: tuple[str, ...] = ()  # why its band is the wider one, beyond the runs its profile saw (†)
    proven: bool = True  # its search proved its best (``exhaustive``)
    tokens_per_gpu: float = float("nan")  # its best recipe's projection
    tokens_per_dollar: float = float("nan")  # tokens a unit of its GPU's price buys (NaN without a price)


@frozen
class ReportData:
    space: str
    model: str
    cluster: str
    gpu: str
    world: int
    capacity: int  # HBM bytes per GPU
    headroom: float  # fraction of capacity the space keeps free
    objective_metric: str = "tokens_per_gpu"
    objective_sense: str = "maximize"
    winner: CandidateView | None = None
    runners_up: tuple[CandidateView, ...] = ()
    baseline: CandidateView | None = None
    baseline_is: str = ""  # which baseline: the space's own recipe, or the planner's start (one meaning everywhere)
    evaluated: tuple[CandidateView, ...] = ()
    trajectories: tuple[Trajectory, ...] = ()
    notes: tuple[tuple[str, str], ...] = field(default=())  # extra facts for the header: (name, value)
    clusters: tuple[ClusterPoint, ...] = ()  # a plan across clusters: every cluster's run (``search.capacity``)
    # what the clusters were compared by: the run's objective, its tokens and each GPU's price, (name, value)
    run: tuple[tuple[str, str], ...] = ()

    @property
    def limit(self) -> int:
        """The byte line a candidate must stay under: capacity less the headroom (rounded as memory does)."""
        return self.capacity - math.ceil(self.capacity * self.headroom)
