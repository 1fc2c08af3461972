"""Search spaces: axes with domains, constraints, objective, budget. Their expressions are ``ir/expr.py``."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from attrs import field, frozen

from primus_lang.ir.candidate import Candidate, Recompute
from primus_lang.ir.expr import Expr
from primus_lang.ir.hardware import Cluster, Gpu, with_fields
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import kind_of
from primus_lang.ir.run import Run
from primus_lang.ir.site import Site
from primus_lang.ir.span import Span
from primus_lang.ir.text import literal

# A value an axis can take: a knob's int, enum name, flag, or a recompute setting.
Value = bool | int | float | str | Recompute


# A value a cluster axis can take: a count or bandwidth, or a GPU profile.
ClusterValue = int | float | Gpu


# --- domains ----------------------------------------------------------------------------------
@frozen
class Domain:
    """A finite, ordered set of values. Ranges and powers of two are expanded at lowering."""

    values: tuple[Value, ...]


@frozen
class Axis:
    name: str  # a knob name from ir.candidate.KNOBS
    domain: Domain
    when: Expr | None = None  # the axis takes its values only where this holds, else the knob default
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Let:
    """A derived value usable in later expressions (``let tokens = gbs * seq_len``)."""

    name: str
    expr: Expr
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Constraint:
    expr: Expr
    message: str = ""
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class ClusterAxis:
    """An axis over a field of the cluster (``nodes : 8 | 16``, ``gpu : h100_sxm_calibrated | mi355x_calibrated``):
    a plan searches the recipe axes on each of its clusters, and compares the clusters by a run's time and cost."""

    name: str  # a field of ir.hardware.Cluster
    values: tuple[ClusterValue, ...]
    span: Span | None = field(default=None, eq=False, repr=False)


# What a whole training run costs: the objectives across clusters, and the names a `require` on them uses
CAPACITY_METRICS = ("time_to_train", "cost", "tokens_per_dollar")
CAPACITY_NAMES = (*CAPACITY_METRICS, "gpus")


@frozen
class Capacity:
    """The training run a plan across clusters sizes: its tokens, and what it optimizes and requires.

    In a ``require``, ``time_to_train`` is in days, ``cost`` in the GPUs' ``price_per_hour`` currency
    and ``gpus`` the cluster's GPU count."""

    train_tokens: float = 0.0  # 0: not given
    objective: Objective | None = None  # a CAPACITY_METRICS objective; None: the space's own, per GPU
    constraints: tuple[Constraint, ...] = ()
    span: Span | None = field(default=None, eq=False, repr=False)  # where train_tokens is set


@frozen
class MemoryRule:
    headroom: float = 0.0  # fraction of HBM capacity kept free
    span: Span | None = field(default=None, eq=False, repr=False)


OBJECTIVE_METRICS = ("tokens_per_gpu", "step_time", "mfu", "tflops_per_gpu", "memory_peak")
# What each objective's metric is, as the editor's hover and completion say it
METRIC_DOCS = {
    "tokens_per_gpu": "tokens trained per second per GPU (global batch x sequence / step time / GPUs)",
    "step_time": "seconds per optimizer step (one global batch)",
    "mfu": "model FLOP/s per GPU over the dense peak of the candidate's own precision",
    "tflops_per_gpu": "model TFLOP/s per GPU (Megatron's FLOP count; recomputation is not counted)",
    "memory_peak": "bytes on the fullest rank (the memory account's peak)",
    "time_to_train": "days to train the space's `train_tokens` on the cluster (plans across clusters)",
    "cost": "GPU-hours x each GPU's `price_per_hour`, for the whole run (plans across clusters)",
    "tokens_per_dollar": "tokens a unit of the price buys: tokens/s/GPU x 3600 / `price_per_hour`",
}
# The only sensible direction of each metric: the other asks for the worst recipe (the slowest step, the
# most bytes), which no search is for
METRIC_SENSE = {"tokens_per_gpu": "maximize", "step_time": "minimize", "mfu": "maximize", "tflops_per_gpu": "maximize",
                "memory_peak": "minimize", "time_to_train": "minimize", "cost": "minimize",
                "tokens_per_dollar": "maximize"}
TIE_BREAKS = ("numerics", "speed")
STRATEGIES = ("auto", "planner", "exhaustive", "random", "evolutionary", "bayes", "llm")


@frozen
class Objective:
    sense: str = "maximize"  # maximize | minimize
    metric: str = "tokens_per_gpu"
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Budget:
    evaluations: int | None = None
    seconds: float | None = None
    llm_calls: int | None = None
    llm_cost_usd: float | None = None
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Settings:
    """Space-wide assumptions that are not knobs of the recipe."""

    moe_imbalance: float = 1.1  # busiest expert rank's load over the mean (paper: 1.05-1.12 per step)
    oracle: str = "simulate"  # simulate | benchmark | hybrid
    target: str = "megatron+slurm"  # framework+launcher for emission
    seed: int = 0
    llm_model: str = ""
    # among candidates a projection cannot tell apart (within the profile's paired band), plan picks
    # the recipe that changes numerics least (``numerics``) or the projected fastest (``speed``)
    tie_break: str = "numerics"
    # the Megatron-LM release the launch files name (`core_v0.19`); empty: emission's default. An imported
    # command line that needs a newer release's flags says so here
    megatron_version: str = ""
    # the Megatron-Bridge release a bridge launch runs (`067f987`); empty: emission's default
    bridge_version: str = ""
    # the target the space was written for, where a command launches it for another (`--target`); empty:
    # ``target`` is the space's own
    source_target: str = ""

    def retarget(self, target: str) -> Settings:
        """These settings for a launch on ``target``: what is legal, what fits and how fast are judged as
        that target launches a candidate, and the space's own target is kept as ``source_target``."""
        target = target.replace(" ", "")  # `primus + slurm`, as a space writes it, is `primus+slurm`
        if target == self.target.replace(" ", ""):
            return self
        if target.split("+")[0] == self.framework:
            return attrs.evolve(self, target=target)  # another launcher: the same framework judges alike
        return attrs.evolve(self, target=target, source_target=self.source_target or self.target)

    def launch_change(self, cand: Candidate) -> str:
        """How this target launches ``cand`` otherwise than the space's own (``source_target``) does, in words
        ("" where alike): what a refusal for the other target names as its cause."""
        if not self.source_target:
            return ""
        own = attrs.evolve(self, target=self.source_target, source_target="")
        kinds = {True: "torch FSDP2", False: "Megatron-FSDP"}
        out = []
        if cand.sharding == "fsdp" and own.torch_fsdp2 != self.torch_fsdp2:
            out.append(f"FSDP as {kinds[self.torch_fsdp2]} where {own.target} runs {kinds[own.torch_fsdp2]}")
        theirs, ours = own.as_launched(cand), self.as_launched(cand)
        out += [f"`{f.name}` {getattr(ours, f.name)} where it is {getattr(theirs, f.name)}"
                for f in attrs.fields(type(cand)) if getattr(ours, f.name) != getattr(theirs, f.name)]
        return "; ".join(out)

    @property
    def framework(self) -> str:
        return self.target.replace(" ", "").split("+")[0]

    @property
    def torch_fsdp2(self) -> bool:
        """Whether ``sharding = fsdp`` launches as torch FSDP2 (the primus target, as Primus's own example
        configs run it) rather than Megatron-FSDP (Megatron-LM, Megatron-Bridge)."""
        return self.framework == "primus"

    def distributed_optimizer(self, sharding: Any) -> Any:
        """Whether Megatron's distributed optimizer runs under ``sharding`` (a knob value, or a numpy
        column of them): with ``dist_opt``, and with Megatron-FSDP, which switches it on itself; not
        with torch FSDP2 or without sharding."""
        return (sharding == "dist_opt") | ((sharding == "fsdp") & (not self.torch_fsdp2))

    def all_as_launched(self, cands: Sequence[Candidate]) -> Sequence[Candidate]:
        """``as_launched`` of each of ``cands`` (``cands`` itself where the target rewrites nothing)."""
        return [self.as_launched(c) for c in cands] if self.torch_fsdp2 else cands

    def as_launched(self, cand: Candidate) -> Candidate:
        """``cand`` as its launch runs it, where the target decides something a knob names.

        Megatron wraps torch FSDP2 without a mixed-precision policy
        (megatron/core/distributed/torch_fully_sharded_data_parallel.py) around parameters its
        Float16Module has made BF16, and so does the wrapper Primus puts in its place unless one of its
        own FSDP2 optimizer switches asks for a policy (primus/backends/megatron/core/distributed/,
        v26.5.1; `import-recipe` says so where a recipe sets one): gradients are reduced and accumulated
        in BF16 whatever ``main_grad_dtype`` says (the FP32 copies Float16OptimizerWithFloat16Params
        makes exist only during the optimizer step)."""
        if cand.sharding == "fsdp" and cand.main_grad_dtype != "bf16" and self.torch_fsdp2:
            return cand.replace(main_grad_dtype="bf16")
        return cand


# the blocks a file defines fields of (a field written in the wrong one is named with its home, P2002)
BLOCK_CLASSES: tuple[type, ...] = (Model, Gpu, Cluster, Site, Run)


def user_settings() -> tuple[str, ...]:
    """The settings a space names with `assume NAME = value`: not `target`, which has its own statement,
    nor `source_target`, which a command sets when it launches the space for another target."""
    return tuple(f.name for f in attrs.fields(Settings) if f.name not in ("target", "source_target"))


@frozen
class Space:
    """One ``space`` of a ``.prx`` file, lowered: its model and cluster, the knobs it fixes, its axes
    (with ``when`` conditions), ``require`` constraints, memory rule, objective, budget, strategy, target
    and settings, and cluster axes and run figures for a capacity plan."""

    name: str
    model: Model
    cluster: Cluster
    fixed: tuple[tuple[str, Value], ...] = ()  # knobs set once (``sharding = dist_opt``)
    axes: tuple[Axis, ...] = ()
    lets: tuple[Let, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    memory: MemoryRule | None = None
    objective: Objective = field(factory=Objective)
    budget: Budget = field(factory=Budget)
    strategy: str = "auto"
    settings: Settings = field(factory=Settings)
    span: Span | None = field(default=None, eq=False, repr=False)
    # where each fixed knob or axis is written, so a rule's diagnostic can point at the knob
    knob_spans: tuple[tuple[str, Span], ...] = field(default=(), eq=False, repr=False)
    site: Site | None = None  # the cluster's site profile (`site = NAME`); None: emit as without one
    run: Run | None = None  # the training run (`run { ... }`); None: a throughput measurement
    # the recipe a plan reports first (`baseline { tp = 8 }`); knobs it leaves out as in a --point
    baseline: tuple[tuple[str, Value], ...] | None = None
    # Megatron settings primusc does not model, carried to the launch files as written (`passthrough { }`)
    passthrough: tuple[tuple[str, bool | int | float | str], ...] = ()
    # axes over the cluster's own fields; ``cluster`` is then their first point (``cluster_points``)
    cluster_axes: tuple[ClusterAxis, ...] = ()
    capacity: Capacity = field(factory=Capacity)
    # the point of its space's cluster axes this space is on (``cluster_points``; "" when it is none)
    cluster_point: str = ""
    # with cluster axes: the cluster as its definition writes it, and the fields the space fixes
    # (`gpus_per_node = 4`), from which each point of the axes is built (``cluster_at``)
    cluster_declared: Cluster | None = field(default=None, eq=False, repr=False)
    cluster_fixed: tuple[tuple[str, Any], ...] = field(default=(), eq=False, repr=False)

    @property
    def headroom(self) -> float:
        """The share of GPU memory ``fits memory headroom`` keeps free (0 without the rule)."""
        return self.memory.headroom if self.memory is not None else 0.0


@frozen
class Program:
    """Everything one file defines (its imports already resolved into the definitions it uses)."""

    file: str
    models: tuple[Model, ...] = ()
    gpus: tuple[Gpu, ...] = ()
    clusters: tuple[Cluster, ...] = ()
    spaces: tuple[Space, ...] = ()
    sites: tuple[Site, ...] = ()


def cluster_label(values: Mapping[str, object]) -> str:
    """``gpu=b200_calibrated,nodes=16``: a cluster point as the plan's table and ``--cluster`` name it,
    each value as the language writes it (``nic_bandwidth=50 GB/s``)."""
    fields = attrs.fields_dict(Cluster)
    return ",".join(f"{k}={v.name if isinstance(v, Gpu) else literal(v, kind_of(fields[k]))}"
                    for k, v in values.items())


def cluster_at(declared: Cluster, fixed: Iterable[tuple[str, Any]], chosen: Mapping[str, Any]) -> Cluster:
    """A space's cluster at the point ``chosen`` of its cluster axes: the ``declared`` cluster with the
    space's ``fixed`` fields and the point's values, reshaped once (``hardware.with_fields``), so that a
    fixed `nics_per_node` holds on every point and a node's NICs follow its GPUs from the declaration. A
    GPU the space chooses that comes in one node shape (``Gpu.node_gpus``: a GB200 tray of 4) is planned
    on nodes of that shape, where the space does not set `gpus_per_node` itself: the declared cluster's
    nodes are another GPU's (eight B200s a node), and no 8-GPU GB200 node exists to launch on."""
    fields = {**dict(fixed), **chosen}
    gpu = fields.get("gpu")
    if (isinstance(gpu, Gpu) and gpu.node_gpus > 0 and gpu.name != declared.gpu.name
            and "gpus_per_node" not in fields):
        fields["gpus_per_node"] = gpu.node_gpus
    return with_fields(declared, **fields)


def cluster_points(space: Space) -> tuple[tuple[str, Space], ...]:
    """Each cluster the space's cluster axes span, as a space of its own with no cluster axes (without
    them, the space's one cluster, labelled by its name); the order is the axes' values, the last axis
    fastest."""
    if not space.cluster_axes:
        return ((space.cluster.name, space),)
    names = [a.name for a in space.cluster_axes]
    base = attrs.evolve(space, cluster_axes=())
    declared = space.cluster_declared if space.cluster_declared is not None else space.cluster
    out = []
    for values in itertools.product(*(a.values for a in space.cluster_axes)):
        chosen: dict[str, Any] = dict(zip(names, values, strict=True))
        label = cluster_label(chosen)
        # named for the point, so a manifest or a report names the cluster it was planned on; the base's own
        # name says another GPU once the GPU is an axis (`h100_x8` for MI355X nodes)
        name = label if "gpu" in chosen else f"{space.cluster.name} ({label})"
        cluster = attrs.evolve(cluster_at(declared, space.cluster_fixed, chosen), name=name)
        out.append((label, attrs.evolve(base, cluster=cluster, cluster_point=label)))
    return tuple(out)
