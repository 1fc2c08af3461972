"""The search's only door to the earlier stages: legal points (check), memory (memory), projection
(project). Everything else in the search works on a ``Landscape`` and an ``Evaluator``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import NO_FITTING_POINT, NO_LEGAL_POINT
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.space import Axis, Domain, Space
from primus_lang.search.bound import bounded_by_step, floor_scores, score_bounds
from primus_lang.search.evaluator import Evaluator
from primus_lang.search.landscape import AxisView, Landscape
from primus_lang.search.room import doublings, fewest_nodes
from primus_lang.search.trial import Evaluation

if TYPE_CHECKING:
    from primus_lang.project import Oracle, Projection

COMM_KINDS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")


def usable_bytes(capacity: int, headroom: float) -> int:
    from primus_lang.memory import usable_bytes as usable

    return usable(capacity, headroom)


def memory_peaks(space: Space, points: list[Candidate]) -> np.ndarray:
    """The busiest rank's bytes for every point, by the vectorized pre-filter (equal to the exact account)."""
    from primus_lang.memory import prefilter

    return np.asarray(prefilter(space.model, space.cluster, points, space.settings), dtype=np.int64)


def landscape_of(space: Space, require_fit: bool = True, ties: bool = True) -> Landscape:
    """Every legal point of ``space`` with its memory peak; the limit is capacity less the headroom.
    ``ties``: projections within the profile's paired band are tied (``Landscape.tie``), so a proof by
    bound projects every point that could tie the best; without, only those that could beat it."""
    from primus_lang.check import legal_list, legality, summarize

    points = legal_list(space)
    if not points:
        # what removes most, said where it is read: a capacity plan's row for a cluster has only this line
        summary = summarize(space)
        rules = sorted(summary.rules, key=lambda r: -r.removed)[:2]
        # each rule's count alone: a point two rules refuse counts for both
        why = "; ".join(f"{r.code} {r.rule} refuses {r.removed:,} of the {summary.raw:,}" for r in rules if r.removed)
        raise CompileError(
            Diagnostic(NO_LEGAL_POINT, f"space `{space.name}` has no legal point", span=space.span,
                       help="`primusc check` shows which rule removes which points", notes=(why,) if why else ())
        )
    peaks = memory_peaks(space, points)
    capacity = space.cluster.gpu.hbm_capacity
    headroom = space.headroom
    limit = usable_bytes(capacity, headroom)

    def explain(cand: Candidate) -> list[str]:
        try:
            with np.errstate(all="ignore"):  # a zero count (a candidate from a hand-edited trace) is a verdict
                return [str(getattr(v, "message", v)) for v in legality(space, cand)]
        except Exception:  # a half-built candidate may trip an earlier stage; the verdict stays "illegal"
            return []

    land = Landscape(
        space.name,
        [AxisView(a.name, tuple(a.domain.values)) for a in space.axes],
        points,
        peaks,
        limit,
        objective=space.objective,
        capacity=capacity,
        explain_illegal=explain,
        cluster_point=space.cluster_point,
        tie=space.cluster.gpu.provenance.paired if ties else 0.0,
        launch_target=space.settings.target if space.settings.source_target else "",
    )
    if require_fit and not land.fits.any():
        smallest = int(peaks.min())
        peak, usable = f"{smallest / 2**30:.1f}", f"{limit / 2**30:.1f}"
        if peak == usable:  # just over: the rounded figures would read as a fit
            peak, usable = f"{smallest:,} B", f"{limit:,} B"
        else:
            peak, usable = f"{peak} GiB", f"{usable} GiB"
        from primus_lang.check import baseline_point, legality

        notes = [f"the smallest peak is {peak} per GPU against a limit of {usable} ("
                 + (f"{capacity / 2**30:.1f} GiB less {headroom * 100:g}% headroom)" if headroom
                    else "the whole GPU)")]
        recipe = baseline_point(space)
        if recipe is not None and not legality(space, recipe):
            notes.append("the space's recipe (its baseline) is one of them: if it runs as it is, the account "
                         "overcounts it, and `primusc emit FILE --point baseline` writes its launch files (W5002)")
        raise CompileError(
            Diagnostic(
                NO_FITTING_POINT,
                f"none of the {len(points):,} legal points of `{space.name}` fits in memory",
                span=space.span,
                notes=tuple(notes),
                help=_what_could_fit(space, points),
            )
        )
    return land


def _what_could_fit(space: Space, points: list[Candidate]) -> str:
    """The changes that could bring a point under the limit, leaving out those the space already
    takes as far as they go: more TP only below the scale-up domain and the head count, more PP
    only below the layer count and the GPUs left by TP, and either only at values some legal point
    takes beside the space's other knobs (a fixed CP may leave no TP that divides the GPUs)."""
    model, cluster = space.model, space.cluster
    ideas = []
    illegal = []  # larger values the space's axes take, which a rule removes on this model and cluster
    blocked = []  # larger values the space does not take, which no legal point would
    most_tp, most_pp = max(c.tp for c in points), max(c.pp for c in points)
    ceilings = {"tp": lambda c: min(c.domain, model.heads),
                "pp": lambda c: min(model.num_layers, max(c.world // most_tp, 1))}
    for knob, most in (("tp", most_tp), ("pp", most_pp)):
        at = ceilings[knob](cluster)
        if most >= at:
            continue
        taken = [v for a in space.axes if a.name == knob for v in a.domain.values if isinstance(v, int) and v > most]
        if taken:
            illegal.append(f"{knob.upper()} {', '.join(map(str, taken))}")
            continue
        legal, why = _larger(space, knob, most, at)
        if legal:
            ideas.append(f"{knob.upper()} above {most} ({_listed(legal)})")
            continue
        elsewhere = ""
        for nodes, wider in doublings(space):
            found, _ = _larger(wider, knob, most, ceilings[knob](wider.cluster))
            if found:
                elsewhere = f", though on {nodes:,} nodes {knob.upper()} {_listed(found)} would be legal"
                break
        blocked.append(f"no legal point takes {knob.upper()} above {most} here ({why}){elsewhere}")
    if not any(c.recompute.kind == "full" for c in points):
        ideas.append("full recompute")
    if not any(c.sharding == "fsdp" for c in points):
        ideas.append("FSDP sharding" if any(c.sharding == "dist_opt" for c in points)
                     else "a distributed optimizer or FSDP sharding")
    if min(c.mbs for c in points) > 1:
        ideas.append("a smaller micro-batch")
    nodes, _, tried = fewest_nodes(space)
    more = (f"or {nodes:,} nodes, the fewest doubling of {cluster.nodes:,} on which a legal point fits" if nodes else
            f"no count of nodes up to {tried:,} holds one")
    removed = (f"; the larger values the space takes ({'; '.join(illegal)}) are illegal here (`primusc check` "
               "names the rule that removes them)") if illegal else ""
    removed += "".join(f"; {b}" for b in blocked)
    if not ideas:
        return (f"the space already takes TP, PP, recompute and sharding as far as they go{removed}: use GPUs with "
                f"more memory, {more}")
    return "add to the space: " + ", ".join(ideas) + f"{removed}; {more}"


def _larger(space: Space, knob: str, most: int, at: int) -> tuple[tuple[int, ...], str]:
    """The values of ``knob`` above ``most`` up to ``at`` that some legal point takes, were the space to
    take them beside its other knobs; and, where none is, why the first is not (the checker's words)."""
    from primus_lang.check import legal_values, never_legal, never_legal_why

    wider = attrs.evolve(space, fixed=tuple((k, v) for k, v in space.fixed if k != knob),
                         axes=(*(a for a in space.axes if a.name != knob), Axis(knob, Domain(tuple(range(most + 1, at + 1))))))
    legal = tuple(int(v) for v in legal_values(wider, knob))
    if legal:
        return legal, ""
    code = next((c for k, v, c, *_ in never_legal(wider) if k == knob and v == most + 1), "")
    return (), never_legal_why(wider, knob, most + 1, code) or "the checks rule it out together"


def _listed(values: tuple[int, ...]) -> str:
    shown = [str(v) for v in values]
    if len(shown) > 5:
        return f"{', '.join(shown[:3])}, ... {shown[-1]}"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def evaluation_of(projection: Projection) -> Evaluation:
    """The search's view of a ``project.Projection``."""
    breakdown = tuple((str(k), float(v)) for k, v in projection.breakdown)
    exposed = sum(v for k, v in breakdown if k in COMM_KINDS)
    return Evaluation(
        step_time=float(projection.step_time),
        tokens_per_gpu=float(projection.tokens_per_gpu),
        tflops_per_gpu=float(projection.tflops_per_gpu),
        mfu=float(projection.mfu),
        bubble_fraction=float(projection.bubble_fraction),
        exposed_comm=exposed,
        breakdown=breakdown,
    )


def projector(space: Space, oracle: Oracle | None = None) -> Callable[[Candidate], Evaluation]:
    """Projections through ``oracle`` (None: the projection's own simulate oracle)."""
    from primus_lang.project import project

    def evaluate(cand: Candidate) -> Evaluation:
        return evaluation_of(project(space.model, space.cluster, cand, space.settings, oracle=oracle))

    return evaluate


def evaluator_of(space: Space, oracle: Oracle | None = None) -> Evaluator:
    return Evaluator(projector(space, oracle))


def upper_bounds(space: Space, land: Landscape) -> np.ndarray | None:
    return score_bounds(space.model, space.cluster, land.points, land.objective.metric, land.objective.sense,
                        land.peaks)


def refined_bounds(space: Space, land: Landscape, oracle: Oracle | None = None) -> StepFloors | None:
    """A tighter upper bound on one point's score, computed when asked (``StepFloors``); ``None`` for an
    objective the step time does not bound."""
    objective = land.objective
    if not bounded_by_step(objective.metric, objective.sense):
        return None
    return StepFloors(space, land, oracle)


class StepFloors:
    """Refined bounds: the projection's own passes and step tails without its schedule
    (``project.step_floor``). A floor costs a fraction of a projection, so branch and bound asks it only
    of points the landscape-wide bound could not set aside, and only as far as needed to fall to
    ``enough`` (the incumbent's score): first the floor shared by the points that differ only in timing
    knobs (computed once for them all), then the point's own floor. Told of the points it will be asked
    about next (``ahead``), it computes their floors together as arrays (``project.step_floors``), the
    same values."""

    def __init__(self, space: Space, land: Landscape, oracle: Oracle | None = None) -> None:
        self.space, self.land, self.oracle = space, land, oracle
        self.shared: dict[Candidate, float] = {}  # by ``ops_key``
        self.own: dict[int, float] = {}  # by point

    def _score(self, cand: Candidate, floor: float) -> float:
        objective = self.land.objective
        return floor_scores(objective.metric, objective.sense, floor, float(cand.gbs * cand.seq_len),
                            self.space.cluster.world)

    def __call__(self, index: int, enough: float) -> float:
        from primus_lang.project import ops_key, step_floor

        space, cand = self.space, self.land.points[index]
        key = ops_key(cand)
        floor = self.shared.get(key)
        if floor is None:
            floor = self.shared[key] = step_floor(space.model, space.cluster, cand, space.settings, self.oracle,
                                                  shared=True)
        loose = self._score(cand, floor)
        if loose <= enough:
            return loose
        own = self.own.get(index)
        if own is None:
            own = self.own[index] = step_floor(space.model, space.cluster, cand, space.settings, self.oracle)
        return min(loose, self._score(cand, own))

    def ahead(self, indices: Sequence[int], enough: float) -> None:
        """Compute the floors that asking for each of ``indices`` with ``enough`` would: a later ``enough``
        is never lower (the incumbent only improves), so it asks for no floor beyond these."""
        from primus_lang.project import ops_key, step_floors

        space, points = self.space, self.land.points
        keys = {i: ops_key(points[i]) for i in indices}
        first: dict[Candidate, int] = {}
        for i, key in keys.items():
            if key not in self.shared:
                first.setdefault(key, i)  # the floor of the first point asked, as ``__call__`` keeps it
        if first:
            floors = step_floors(space.model, space.cluster, [points[i] for i in first.values()], space.settings,
                                 self.oracle, shared=True)
            self.shared.update(zip(first, floors, strict=True))
        own = [i for i, key in keys.items() if i not in self.own and self._score(points[i], self.shared[key]) > enough]
        if own:
            floors = step_floors(space.model, space.cluster, [points[i] for i in own], space.settings, self.oracle)
            self.own.update(zip(own, floors, strict=True))
