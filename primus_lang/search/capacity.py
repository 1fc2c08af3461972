"""Plan across clusters: the recipe axes searched on each cluster a space's cluster axes span, then the
clusters compared by what the whole training run takes (its days and its cost, each with its band).

On one cluster a run's time is ``train_tokens / (tokens/s/GPU × GPUs)`` and its cost that time × GPUs ×
the GPU's price: both fall as tokens/s/GPU rises, so the recipe that maximizes tokens/s/GPU on a
cluster is also its fastest and cheapest, and only each cluster's best can lie on the front of time
against cost. Each cluster is searched for that recipe (the space's strategy and budget, per cluster);
the front and the choice are then exact over those bests."""

from __future__ import annotations

import math
import multiprocessing
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from primus_lang.check import evaluate_expr
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_legality import NO_LEGAL_POINT as NO_LEGAL
from primus_lang.diagnostics.codes_search import NO_CLUSTER_MEETS, NO_FITTING_POINT, NO_LEGAL_POINT
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.expr import Expr, names_in, to_text
from primus_lang.ir.hardware import Provenance
from primus_lang.ir.space import Constraint, Space, cluster_points
from primus_lang.search.budget import Limits
from primus_lang.search.plan import prepare, run_search
from primus_lang.search.trial import Trial
from primus_lang.validate import trust

if TYPE_CHECKING:
    from primus_lang.project import Oracle

DAY = 86_400.0
HOUR = 3_600.0


@frozen
class Spread:
    """A figure and its band (where measured runs of its kind fell; ``low`` <= ``high``). The band need not
    hold the figure: a spec sheet's projections were faster than every run measured (0.49-0.86x)."""

    value: float
    low: float
    high: float


@frozen
class ClusterPlan:
    """One cluster: its best recipe, and what a whole run on it takes."""

    label: str  # ``gpu=b200_calibrated,nodes=16``
    gpu: str
    nodes: int
    gpus: int
    price_per_hour: float  # 0: not given
    recipe: str = ""  # the best candidate's label ("" when none was evaluated)
    tokens_per_gpu: Spread | None = None
    days: Spread | None = None  # time to train, with the band of the projection
    cost: Spread | None = None  # None without a price
    tokens_per_dollar: Spread | None = None  # tokens a unit of the price buys; None without a price
    excluded: str = ""  # why the cluster cannot be chosen ("" when it can)
    # where the band says otherwise than the projection: a requirement met that its far end fails, or one
    # failed where its near end meets them all ("" when neither)
    marginal: str = ""
    front: bool = False  # on the front of days against cost (or GPUs, without prices), requirements aside
    front_gpus: bool = False  # on the front of days against GPUs
    legal: int = 0
    fitting: int = 0
    evaluations: int = 0
    proven: bool = False  # its search proved the best projection the best of the cluster (exhaustive)
    beyond: tuple[str, ...] = ()  # how the best lies beyond what its profile was fitted on, its band widened
    # where its run is within its GPU profile's paired error of the chosen one's on the objective: the
    # measured order could go either way, so what it saves on the other figure is said ("" otherwise)
    near: str = ""


@frozen
class CapacityPlan:
    """What ``plan`` prints for a space with cluster axes or a training-run objective."""

    train_tokens: float
    objective: str  # ``minimize cost``; the space's per-GPU one without a training-run objective
    clusters: tuple[ClusterPlan, ...]
    chosen: str  # the chosen cluster's label ("" when none can be chosen)
    named: bool = False  # `chosen` is the cluster `--cluster` named, not the objective's choice
    best: str = ""  # where it is, the objective's choice ("" when no cluster meets the requirements)
    tie: str = ""  # why ``chosen`` was taken over clusters equal to it on the objective ("" without a tie)
    # where the objective is the run's cost and no requirement bounds its days: how long the chosen run takes
    # beside the fastest (a trial's cheapest run took 1,923 days, without a word; "" otherwise)
    unbounded: str = ""
    # where the chosen cluster's GPU profile has no runs of its own and another GPU's best run lies inside the
    # chosen run's band on the objective: the choice between GPUs is the least measured part ("" otherwise)
    unmeasured: str = ""

    def cluster(self, label: str) -> ClusterPlan | None:
        return next((c for c in self.clusters if c.label == label), None)

    def mark(self, label: str) -> str:
        """How the table and the report mark a cluster: the one planned, and the objective's choice where
        `--cluster` named another ("" for the others)."""
        if label == self.chosen:
            return "chosen (--cluster)" if self.named else "; ".join(x for x in ("chosen", self.tie) if x)
        return "the objective's choice (not launched)" if self.named and label == self.best else ""

    def note(self, c: ClusterPlan) -> str:
        """A cluster's note as the table and the report give it: its mark, why it is excluded, and where
        its band says otherwise."""
        return "; ".join(x for x in (self.mark(c.label), c.excluded, c.near, c.marginal) if x)


@frozen
class Figures:
    """A whole run of one recipe on one cluster, each figure with its band."""

    tokens_per_gpu: Spread
    days: Spread | None  # None without train_tokens
    cost: Spread | None  # None without train_tokens or a price
    tokens_per_dollar: Spread | None  # None without a price
    widened: tuple[str, ...]  # why the band is wider than the profile's ("" reasons: it is not)


def run_figures(space: Space, best: Trial) -> Figures:
    """tokens/s/GPU, days, cost and tokens per unit of price of a whole run of ``best`` on the space's
    cluster, with their bands: the band's slowest rate gives the longest and dearest run."""
    ev, cluster = best.evaluation, space.cluster
    assert ev is not None
    prov = cluster.gpu.provenance
    assert best.candidate is not None
    band = trust.band_on(space, best.candidate, ev)
    # the far band can lie inside the profile's own: then beyond what the fit saw is no wider
    wider = trust.far(prov) != (prov.low, prov.high)
    return run_of(space, Spread(ev.tokens_per_gpu, band.tokens_low, band.tokens_high), best.candidate,
                  band.beyond if wider else ())


def whole_iterations(train_tokens: float, cand: Candidate) -> int:
    """The iterations that train ``train_tokens`` tokens at ``cand``'s global batch: a run stops at the end
    of an iteration, so the last one is whole."""
    return math.ceil(train_tokens / (cand.gbs * cand.seq_len))


def run_of(space: Space, tokens: Spread, cand: Candidate | None = None, widened: tuple[str, ...] = ()) -> Figures:
    """A whole run at ``tokens`` tokens/s/GPU (a projection and its band) on the space's cluster: days for
    its ``train_tokens`` (rounded up to ``cand``'s whole iterations where it is given), their cost at the
    GPU's price, and tokens per unit of price. ``project`` and ``explain`` give a point's run by it, as
    ``plan`` gives each cluster's."""
    cluster = space.cluster
    price = cluster.gpu.price_per_hour
    rated = tokens.value > 0 and tokens.low > 0  # a point that was not projected has no run
    per_dollar = (Spread(*(r * HOUR / price for r in (tokens.value, tokens.low, tokens.high)))
                  if price > 0 and rated else None)
    n = space.capacity.train_tokens
    if cand is not None and n > 0:
        n = float(whole_iterations(n, cand) * cand.gbs * cand.seq_len)
    days = (Spread(*(n / (r * cluster.world) / DAY for r in (tokens.value, tokens.high, tokens.low)))
            if n > 0 and rated else None)
    cost = (Spread(*(d * DAY / HOUR * cluster.world * price for d in (days.value, days.low, days.high)))
            if days is not None and price > 0 else None)
    return Figures(tokens, days, cost, per_dollar, widened)


def _variables(c: ClusterPlan, end: str = "value") -> dict[str, float]:
    """The names a training run's ``require`` reads (``ir.space.Capacity``), at the projection (``value``)
    or at the end of each band that is worst (``worst``) or best (``best``) for the run."""
    out = {"gpus": float(c.gpus)}
    for name, (spread, worst) in _spreads(c).items():
        if spread is not None:
            best = "low" if worst == "high" else "high"
            out[name] = getattr(spread, {"worst": worst, "best": best}.get(end, "value"))
    return out


def _spreads(c: ClusterPlan) -> dict[str, tuple[Spread | None, str]]:
    """Each figure of a run with its band, and the band's end that is worst for the run."""
    return {m: (spread_of(c, m), worst) for m, worst in (("time_to_train", "high"), ("cost", "high"),
                                                         ("tokens_per_dollar", "low"))}


def _failed(space: Space, env: dict[str, float]) -> str:
    """Each ``require`` the run ``env`` fails, as written, joined ("" when it meets them all): a user who
    relaxes one learns of the next at once."""
    failed = []
    for cons in space.capacity.constraints:
        if not names_in(cons.expr) <= set(env):
            continue  # a figure this cluster has none of yet (before its search)
        if not bool(evaluate_expr(cons.expr, env)):
            failed.append(cons.message or f"`require {to_text(cons.expr, whole=True)}`")
    return " and ".join(failed)


def run_fails(space: Space, run: Figures) -> str:
    """Each ``require`` on the whole run that ``run`` (one point's, on the space's cluster) fails, at its
    projection, as ``plan`` words a cluster it sets aside ("" when it meets them all, or names none)."""
    env = {"gpus": float(space.cluster.world)}
    for name, spread in (("time_to_train", run.days), ("cost", run.cost), ("tokens_per_dollar", run.tokens_per_dollar)):
        if spread is not None:
            env[name] = spread.value
    failed = _failed(space, env)
    return f"fails: {failed}" if failed else ""


def fails_unsearched(space: Space, gpus: int) -> str:
    """The first ``require`` a cluster of ``gpus`` GPUs fails before any search (those that read only
    `gpus`), as ``plan`` words it ("" when none)."""
    failed = _failed(space, {"gpus": float(gpus)})
    return f"fails: {failed}" if failed else ""


def all_set_aside(space: Space) -> Diagnostic | None:
    """P8014 where every cluster of ``space`` fails a requirement before any search (those reading only
    `gpus`): ``check`` says so as ``plan`` would (None otherwise). One requirement every cluster fails is
    named at its span with the cluster nearest to meeting it; else the requirements no cluster meets
    together."""
    worlds = sorted({sub.cluster.world for _label, sub in cluster_points(space)}) if space.cluster_axes else []
    if not worlds or not all(fails_unsearched(space, w) for w in worlds):
        return None
    on_gpus = [c for c in space.capacity.constraints if names_in(c.expr) <= {"gpus"}]

    def fails(c: Constraint, w: int) -> bool:
        return not evaluate_expr(c.expr, {"gpus": float(w)})

    every = next((c for c in on_gpus if all(fails(c, w) for w in worlds)), None)
    if every is None:
        return Diagnostic(NO_CLUSTER_MEETS, "no cluster meets " + " and ".join(
            f"`require {to_text(c.expr, whole=True)}`" for c in on_gpus if any(fails(c, w) for w in worlds))
            + " together", on_gpus[0].span, help="relax one of them, or change the cluster axes")
    said = f"every cluster fails `require {to_text(every.expr, whole=True)}`"
    way = _gpus_way(every.expr)
    if way == "more":
        said, widen = f"{said}: the largest has {worlds[-1]:,} GPUs", _MORE_GPUS
    elif way == "fewer":
        said, widen = f"{said}: the smallest has {worlds[0]:,} GPUs", _WIDEN["gpus"]
    else:
        said, widen = f"{said}: its clusters have {worlds[0]:,} to {worlds[-1]:,} GPUs", "other node counts"
    return Diagnostic(NO_CLUSTER_MEETS, said, every.span, help=f"relax the requirement, or change the cluster axes "
                      f"({widen})")


_MORE_GPUS = "more nodes or more GPUs a node"


def _gpus_way(expr: Expr) -> str:
    """Which way a requirement on `gpus` is met: with `more` GPUs, `fewer`, or neither alone (`== 12`)."""
    def met(n: float) -> bool:
        return bool(evaluate_expr(expr, {"gpus": n}))

    return "more" if met(2.0**62) else "fewer" if met(1.0) else ""


def _unmet(space: Space, c: ClusterPlan) -> ClusterPlan:
    """The cluster with the first requirement it fails, or the first its band reaches beyond."""
    failed = _failed(space, _variables(c))
    if failed:
        # its band may reach a run that passes them all: the other side of `far end fails`
        reached = not _failed(space, _variables(c, "best"))
        return attrs.evolve(c, excluded=f"fails: {failed}", marginal="the band's near end passes" if reached else "")
    marginal = _failed(space, _variables(c, "worst"))
    return attrs.evolve(c, marginal=f"the band's far end fails: {marginal}" if marginal else "")


def _figure(c: ClusterPlan, metric: str) -> float:
    """Smaller is better: a run's ``metric`` on cluster ``c`` (infinite where it has none)."""
    if metric == "time_to_train":
        return c.days.value if c.days is not None else math.inf
    if metric == "cost":
        return c.cost.value if c.cost is not None else math.inf
    return -c.tokens_per_dollar.value if c.tokens_per_dollar is not None else math.inf


# What breaks a tie on each run objective before the GPU count: the run's other figure (equal days at
# half the price is the better run, and so is equal cost in fewer days), and how ``_tie`` says it
_SECOND = {"time_to_train": ("cost", "for its lower cost"), "cost": ("time_to_train", "for its shorter run"),
           "tokens_per_dollar": ("time_to_train", "for its shorter run")}


def _key(space: Space, c: ClusterPlan, scores: dict[str, float]) -> tuple[float, float, int, str]:
    """Smaller is better: the run's objective (to nine significant digits, so that clusters equal but for
    rounding are a tie), then the run's other figure (``_SECOND``), then fewer GPUs, then the label."""
    obj = space.capacity.objective
    if obj is None:
        return float(f"{-scores[c.label]:.9g}"), 0.0, c.gpus, c.label
    second = _figure(c, _SECOND[obj.metric][0])
    return float(f"{_figure(c, obj.metric):.9g}"), float(f"{second:.9g}"), c.gpus, c.label


def front(clusters: Sequence[ClusterPlan], against: str = "cost") -> set[str]:
    """The labels no other cluster beats on both days and ``against`` (``cost``, or ``gpus``; against GPUs
    for every cluster where one has no price: a cost and a GPU count are not compared)."""
    # a requirement a cluster fails does not move the front; without tokens to train, a cluster is as fast as
    # the tokens it trains a second (its days are their inverse times the tokens)
    ok = [c for c in clusters if c.days is not None or c.tokens_per_gpu is not None]
    by_cost = against == "cost" and all(c.cost is not None for c in ok)

    def point(c: ClusterPlan) -> tuple[float, float]:
        if c.days is not None:
            slow = c.days.value
        else:
            assert c.tokens_per_gpu is not None
            slow = 1 / (c.tokens_per_gpu.value * c.gpus) if c.tokens_per_gpu.value > 0 else math.inf
        return slow, c.cost.value if by_cost and c.cost is not None else float(c.gpus)

    def beats(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] <= b[0] and a[1] <= b[1] and a != b

    return {c.label for c in ok if not any(beats(point(o), point(c)) for o in ok)}


def plan_capacity(space: Space, strategy: str | None, limits: Limits, seed: int | None,
                  oracle_for: Callable[[Space], Oracle | None] = lambda s: None,
                  progress: Callable[[ClusterPlan, int, int], None] | None = None, jobs: int = 1) -> CapacityPlan:
    """Search each cluster of ``space`` and compare the clusters by the space's training-run objective.

    ``jobs`` > 1 searches that many clusters at a time in forked processes (simulate oracle only:
    ``oracle_for`` is not called then). Each cluster's search is the same either way, and so is the plan;
    ``progress`` hears of each cluster searched, in order, with how many of how many have been."""
    plans: list[ClusterPlan] = []
    scores: dict[str, float] = {}
    # `require gpus <= N` needs no search
    todo = [(sub, ClusterPlan(label, sub.cluster.gpu.name, sub.cluster.nodes, sub.cluster.world,
                              sub.cluster.gpu.price_per_hour, excluded=fails_unsearched(space, sub.cluster.world)))
            for label, sub in cluster_points(space)]
    searches = [(sub, c, strategy, limits, seed) for sub, c in todo if not c.excluded]
    found = _searched(searches, jobs, oracle_for)
    done = 0
    for _sub, c in todo:
        if not c.excluded:
            c, score = next(found)
            done += 1
            if progress is not None:
                progress(c, done, len(searches))
            if score is not None:
                scores[c.label] = score
            if not c.excluded:
                c = _unmet(space, c)
        plans.append(c)
    by_cost, by_gpus = front(plans), front(plans, "gpus")
    plans = [attrs.evolve(c, front=c.label in by_cost, front_gpus=c.label in by_gpus) for c in plans]
    open_ = [c for c in plans if not c.excluded]
    ranked = sorted(open_, key=lambda c: _key(space, c, scores))
    if ranked:
        near = _near(space, ranked, {c.label: sub.cluster.gpu.provenance for sub, c in todo})
        plans = [attrs.evolve(c, near=near.get(c.label, "")) for c in plans]
    obj = space.capacity.objective or space.objective
    return CapacityPlan(space.capacity.train_tokens, f"{obj.sense} {obj.metric}", tuple(plans),
                        ranked[0].label if ranked else "", tie=_tie(space, ranked, scores),
                        unbounded=_unbounded(space, ranked),
                        unmeasured=_unmeasured(space, ranked, {sub.cluster.gpu.name: sub.cluster.gpu.provenance
                                                               for sub, _c in todo}))


def _unmeasured(space: Space, ranked: list[ClusterPlan], provenance: dict[str, Provenance]) -> str:
    """Where the chosen cluster's GPU profile was fitted on no runs of its own (pooled, or a spec sheet) and
    the best run of another GPU lies inside the chosen run's band on the run's objective: which GPU to buy is
    then decided by the least measured profile (a trial's MI355X, pooled, chosen over an H200 whose cost lay
    inside its band), and a run measured on it is what settles it ("" otherwise)."""
    obj = space.capacity.objective
    if obj is None or not ranked:
        return ""
    chosen = ranked[0]
    basis = provenance[chosen.gpu].basis
    if basis == "fitted":
        return ""
    band = spread_of(chosen, obj.metric)
    if band is None:
        return ""
    lo, hi = sorted((band.low, band.high))
    others: dict[str, tuple[ClusterPlan, Spread]] = {}
    for c in ranked[1:]:
        theirs = spread_of(c, obj.metric)
        if c.gpu != chosen.gpu and c.gpu not in others and theirs is not None:
            others[c.gpu] = (c, theirs)  # each GPU's best open cluster
    # the bands overlap: the measured order of the two runs could be either (higher is better only for tokens
    # a unit of price)
    higher = obj.metric == "tokens_per_dollar"
    overlap = [(c, t) for c, t in others.values()
               if (max(t.low, t.high) >= lo if higher else min(t.low, t.high) <= hi)]
    if not overlap:
        return ""
    what = "no runs of its own (its vendor's pooled values)" if basis == "pooled" else "no runs behind it (a spec sheet)"
    named = ", ".join(f"{c.label}: {figure(t.value)} ({figure(min(t.low, t.high))}–{figure(max(t.low, t.high))})"
                      for c, t in overlap)
    return (f"the choice rests on `{chosen.gpu}`, whose profile has {what}: its run's "
            f"{obj.metric.replace('_', ' ')} band ({figure(band.value)}, {figure(lo)}–{figure(hi)}) overlaps the "
            f"best of {'another GPU' if len(overlap) == 1 else 'other GPUs'}, {named}; measure a run on "
            f"`{chosen.gpu}` and fit it (`primusc calibrate --runs`) before choosing the GPU by it")


def spread_of(c: ClusterPlan, metric: str) -> Spread | None:
    """A cluster's run figure a run objective reads, with its band."""
    return {"time_to_train": c.days, "cost": c.cost, "tokens_per_dollar": c.tokens_per_dollar}[metric]


def _unbounded(space: Space, ranked: list[ClusterPlan]) -> str:
    """How long the chosen run takes where a cost objective chose it and no requirement bounds its days,
    beside the fastest run of the open clusters ("" otherwise)."""
    obj = space.capacity.objective
    if obj is None or obj.metric == "time_to_train" or not ranked or ranked[0].days is None or any(
            "time_to_train" in names_in(c.expr) for c in space.capacity.constraints):
        return ""
    chosen, fastest = ranked[0], min(ranked, key=lambda c: _figure(c, "time_to_train"))
    said = (f"no `require time_to_train` bounds the run: the chosen one takes "
            f"{days_text(_figure(chosen, 'time_to_train'), days=True)}")
    if fastest is not chosen:
        said += f", the fastest ({fastest.label}) {days_text(_figure(fastest, 'time_to_train'), days=True)}"
    return said + "; add e.g. `require time_to_train <= 90 days` to choose among runs you would wait for"


def _near(space: Space, ranked: list[ClusterPlan], provenance: dict[str, Provenance]) -> dict[str, str]:
    """The clusters of the chosen one's GPU profile whose run is within the profile's paired error of its
    run on the objective (``trust.tied``: one profile errs alike on both, so only their ratio's error
    counts), each with what it saves on the run's other figure: what the choice alone would hide (twice
    the cost for a projected 5% shorter run). Another profile's error is its own: no near tie is said."""
    obj = space.capacity.objective
    chosen = ranked[0]
    if obj is None:
        return {}
    mine = abs(_figure(chosen, obj.metric))
    other, _why = _SECOND[obj.metric]
    out = {}
    for c in ranked[1:]:
        theirs = abs(_figure(c, obj.metric))
        if (c.gpu != chosen.gpu or not math.isfinite(mine) or not math.isfinite(theirs)
                or not trust.tied(provenance[c.label], mine, theirs)):
            continue
        a, b = _figure(c, other), _figure(chosen, other)
        if not (math.isfinite(a) and math.isfinite(b) and b > 0):
            continue
        out[c.label] = (f"≈ the chosen, within {c.gpu}'s ±{provenance[c.label].paired:.1%} paired error, at "
                        f"{a / b:.2f}x its {'cost' if other == 'cost' else 'days'}")
    return out


def _tie(space: Space, ranked: list[ClusterPlan], scores: dict[str, float]) -> str:
    """Why the first of ``ranked`` was taken over those equal to it on the objective (``_key``'s nine
    digits), which the table would otherwise show as a choice without a reason ("" without a tie)."""
    if len(ranked) < 2:
        return ""
    key, *others = [_key(space, c, scores) for c in ranked]
    if not math.isfinite(key[0]):
        return ""
    tied = [(c, k) for c, k in zip(ranked[1:], others, strict=True) if k[0] == key[0]]
    if not tied:
        return ""
    obj = space.capacity.objective
    said = (_SECOND[obj.metric][1] if obj is not None else "", "for its fewer GPUs", "as its label sorts first")
    # over each tied cluster, the first of the tie-breaks that set it behind
    why = dict.fromkeys(said[next(i for i in range(3) if k[i + 1] != key[i + 1])] for _c, k in tied)
    return f"ties with {', '.join(c.label for c, _k in tied)} on the objective, taken {' or '.join(why)}"


_Job = tuple[Space, ClusterPlan, str | None, Limits, int | None]


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every system has affinity masks (macOS)
        return os.cpu_count() or 1


def _searched(jobs: list[_Job], workers: int, oracle_for: Callable[[Space], Oracle | None],
              ) -> Iterator[tuple[ClusterPlan, float | None]]:
    """Each job's search, in order: in ``workers`` forked processes where there is more than one
    (forked, so that a worker starts with everything the parent has loaded)."""
    if workers > 1 and len(jobs) > 1 and "fork" in multiprocessing.get_all_start_methods():
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("fork")) as pool:
            yield from pool.map(_search_simulated, jobs)
        return
    for job in jobs:
        yield _search(*job, oracle_for(job[0]))


def _search_simulated(job: _Job) -> tuple[ClusterPlan, float | None]:
    return _search(*job, None)


def _search(sub: Space, c: ClusterPlan, strategy: str | None, limits: Limits, seed: int | None,
            oracle: Any) -> tuple[ClusterPlan, float | None]:
    try:
        # a cluster's row takes its best projection; only the chosen cluster's plan breaks ties
        prep = prepare(sub, oracle, ties=False)
    except CompileError as err:
        # a cluster with no legal point, or none that fits, is a row of the table, not the end of the plan
        if not all(d.code in (NO_LEGAL_POINT, NO_FITTING_POINT, NO_LEGAL) for d in err.diagnostics):
            raise
        said = err.diagnostics[0]
        # the row is the cluster's: the space's name in the message would read as the whole space's
        what = "no legal point on this cluster" if said.code == NO_LEGAL_POINT else said.message
        return attrs.evolve(c, excluded=what + (f" ({said.notes[0]})" if said.notes else "")), None
    c = attrs.evolve(c, legal=len(prep.land), fitting=int(prep.land.fits.sum()))
    result = run_search(sub, strategy, limits, seed, prepared=prep)
    best = result.best
    c = attrs.evolve(c, evaluations=result.evaluations, proven=result.optimum_proven)
    if best is None or best.evaluation is None or best.candidate is None:
        return attrs.evolve(c, excluded=f"the search evaluated nothing ({result.stop_reason})"), None
    f = run_figures(sub, best)
    c = attrs.evolve(c, recipe=best.candidate.label(), tokens_per_gpu=f.tokens_per_gpu, days=f.days, cost=f.cost,
                     tokens_per_dollar=f.tokens_per_dollar, beyond=f.widened)
    return c, best.score


def unproven_line(searched: int, unproven: int) -> str:
    """What the table and the report say of the clusters whose searches stopped before proving their best
    ("" when every search proved it)."""
    if not unproven:
        return ""
    return (f"{unproven} of {searched} clusters' searches stopped before proving their best (their budget spent, "
            "or a strategy that proves nothing): a row's recipe is the best its search found; `strategy exhaustive` "
            "with a budget that lets it finish proves each")


def outside_line(days: Iterable[tuple[str, float, float, float]]) -> str:
    """What the table and the report say where a cluster's band of days (label, figure, low, high) leaves
    its figure out ("" where none does)."""
    out = [label for label, value, low, high in days if not low <= value <= high]
    if not out:
        return ""
    return (f"{', '.join(out)}: the band leaves the figure out, since the runs measured on its GPU profile's evidence "
            "all fell to one side of such projections (a spec sheet's were all faster than measured): plan on the band")


def beyond_kinds(reasons: Iterable[str]) -> list[str]:
    """One reason of each kind a cluster's band is the wider one, its numbers aside (`2,048 GPUs beyond
    ...` and `4,096 GPUs beyond ...` are one): what the table's and the report's † line give."""
    kinds: dict[str, str] = {}
    for r in reasons:
        kinds.setdefault(re.sub(r"[0-9][0-9,.]*", "#", r), r)
    return list(kinds.values())


def figure(x: float) -> str:
    """A run's figure as the table prints it: whole units from 100, else three significant digits, and
    three significant digits again from ten million (a run of 10^18 days says so in a glance)."""
    if x >= 1e7:
        return f"{x:.3g}"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


# A run shorter than a day is said in the largest unit it fills: (unit, its length in days)
_SHORT_UNITS = (("h", 1 / 24), ("min", 1 / 1_440), ("s", 1 / DAY))


def days_text(value: float, low: float | None = None, high: float | None = None, days: bool = False) -> str:
    """A run's days as a table prints them, with their band where given: ``318 (242–366)``; a run of
    under a day in hours, minutes or seconds, the band in the figure's unit (``14.2 h (12.1–16.4 h)``),
    where 0.000587 days says nothing at a glance. ``days``: a run of a day or more says `days` too, for
    text without a column that names the unit."""
    unit, scale = next(((u, d) for u, d in _SHORT_UNITS if value >= d), _SHORT_UNITS[-1]) if 0 < value < 1 else \
        ("days" if days else "", 1.0)
    suffix = f" {unit}" if unit else ""
    if low is None or high is None:
        return figure(value / scale) + suffix
    return f"{figure(value / scale)}{suffix} ({figure(low / scale)}–{figure(high / scale)}{suffix})"


# What the best cluster reaches of each figure a requirement names: (which is best, how to say it)
_BEST = {"time_to_train": (min, "the fastest cluster, {label}, trains in {value} days ({band})"),
         "cost": (min, "the cheapest, {label}, costs {value} ({band})"),
         "tokens_per_dollar": (max, "the most tokens per unit of price, {value} ({band}), is {label}'s"),
         "gpus": (min, "the smallest cluster, {label}, has {value} GPUs")}


def none_meets(space: Space, cap: CapacityPlan) -> Diagnostic:
    """Why no cluster of ``cap`` can be chosen: the requirement most clusters fail, at its span, and how
    near the best cluster came to each requirement any cluster fails, among the clusters that meet the
    others (requirements no cluster meets together, `gpus <= 256` beside a time, are said to conflict)."""
    set_aside = all_set_aside(space)
    if set_aside is not None:
        return set_aside  # no cluster was searched: what `check` says
    constraints = space.capacity.constraints
    failing: list[tuple[float, int, Constraint]] = []
    for cons in constraints:
        verdicts = [v for c in cap.clusters if (v := _judged(c, cons)) is not None]
        n = verdicts.count(False)
        if n:
            # the share of the clusters it could judge: a run's figures exist only for clusters searched
            failing.append((n / len(verdicts), n, cons))
    recipeless = sum(1 for c in cap.clusters if c.tokens_per_gpu is None and not c.excluded.startswith("fails:"))
    total = len(cap.clusters)
    if not failing:
        axis = space.cluster_axes[0].span if space.cluster_axes else None
        why = tuple(dict.fromkeys(c.excluded for c in cap.clusters if c.excluded))[:3]
        return Diagnostic(NO_CLUSTER_MEETS, f"no cluster has a legal recipe that fits in memory ({recipeless} of "
                          f"{total} have none)", axis,
                          help="the table's notes say why for each; `primusc check` counts what memory and "
                               "legality leave on each cluster", notes=why)
    _share, n, worst = max(failing, key=lambda f: (f[0], f[1]))
    reached = []
    for _s, _n, cons in failing:
        others = [o for o in constraints if o is not cons]
        # a cluster set aside before its search (by `gpus`) has no run to meet the others with
        pool = [c for c in cap.clusters if all(_judged(c, o) is True for o in others)]
        for name in sorted(names_in(cons.expr)):
            pick, say = _BEST[name] if name != "gpus" or _gpus_way(cons.expr) != "more" else \
                (max, "the largest cluster, {label}, has {value} GPUs")
            have = [(c, _variables(c)[name]) for c in pool if name in _variables(c)]
            if not have:
                continue
            best, value = pick(have, key=lambda cv: cv[1])
            spread = _spreads(best).get(name, (None, ""))[0]
            band = f"{figure(spread.low)}–{figure(spread.high)}" if spread is not None else ""
            among = " of those meeting the other requirements" if len(pool) < len(cap.clusters) else ""
            reached.append(say.format(label=best.label, value=figure(value), band=band).replace(",", among + ",", 1))
    notes = [f"{n} of {total} clusters fail it" + (f"; {recipeless} {'has' if recipeless == 1 else 'have'} no recipe that fits"
                                                  if recipeless else "")]
    if len(failing) > 1:
        notes.append("no cluster meets " + " and ".join(f"`{to_text(cons.expr, whole=True)}`" for _s, _n, cons in failing)
                     + " together")
    obj = space.objective
    if space.capacity.objective is None and obj.metric not in ("tokens_per_gpu", "step_time"):
        # each cluster's run is its best recipe by the space's objective, not its fastest
        notes.append(f"each cluster's days and cost are those of its best recipe by `{obj.sense} {obj.metric}`, not "
                     "of its fastest: `maximize tokens_per_gpu` (or a run objective, `minimize cost`) judges the "
                     "requirements on the fastest")
    capped = any(names_in(c.expr) == {"gpus"} and _gpus_way(c.expr) == "fewer" for c in constraints)
    # a cap on GPUs some cluster meets is not what stops the plan: its own way (fewer nodes) would contradict
    # the others' (a shorter run)
    widen = dict.fromkeys(_MORE_GPUS if name == "gpus" and _gpus_way(cons.expr) == "more" else
                          _FASTER_ONLY if name == "time_to_train" and capped else _WIDEN[name]
                          for share, _n, cons in failing for name in sorted(names_in(cons.expr))
                          if not (names_in(cons.expr) == {"gpus"} and share < 1 and len(failing) > 1))
    ways = f" ({'; '.join(widen)})" if widen else ""
    return Diagnostic(NO_CLUSTER_MEETS, "no cluster meets the run's requirements", worst.span,
                      help="; ".join(reached) + (": " if reached else "") + "relax the requirement to what is "
                           f"reachable, or widen the cluster axes{ways}", notes=tuple(notes))


def _judged(c: ClusterPlan, cons: Constraint) -> bool | None:
    """Whether cluster ``c`` meets ``cons`` (None: it has no figures to judge it by, no recipe)."""
    env = _variables(c)
    if not env or not names_in(cons.expr) <= set(env):
        return None
    return bool(evaluate_expr(cons.expr, env))


# A shorter run where a requirement caps the GPUs: more nodes would break the cap
_FASTER_ONLY = "a faster GPU, or more nodes up to the GPU cap"
# Which way the cluster axes reach a requirement on each figure
_WIDEN = {"time_to_train": "more nodes or a faster GPU", "cost": "a cheaper GPU, or fewer nodes where scaling loses",
          "tokens_per_dollar": "a cheaper GPU, or fewer nodes where scaling loses",
          "gpus": "fewer nodes or fewer GPUs a node"}
