"""Fills the report's view-models from the other stages' results.

This is the one module that knows the search, memory and projection classes; it reads them by
attribute so that a field added upstream changes nothing here, and a field missing upstream shows
as an empty chart rather than a crash.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from primus_lang.ir import Candidate, Space
from primus_lang.report.candidate_view import NAN, candidate_view, figure
from primus_lang.report.view import (
    CandidateView,
    ReportData,
    Trajectory,
    TrajectoryPoint,
)
from primus_lang.search import BASELINE_MEANING, SPACE_RECIPE
from primus_lang.validate import trust


def parse_objective(text: str) -> tuple[str, str]:
    """``"maximize tokens_per_gpu"`` -> ("maximize", "tokens_per_gpu")."""
    words = text.split()
    if len(words) == 2 and words[0] in ("maximize", "minimize"):
        return words[0], words[1]
    return "maximize", "tokens_per_gpu"


def trajectories(trials: Iterable[Any], metric: str, sense: str) -> tuple[Trajectory, ...]:
    """Per strategy, each charged evaluation's objective and the whole search's incumbent at that point.

    The incumbent is global, not per strategy: under ``auto`` a later phase starts from what the
    earlier ones found, and the chart should show that hand-over rather than a fresh start.
    """
    best = NAN
    points: dict[str, list[TrajectoryPoint]] = {}
    for t in trials:
        ev = getattr(t, "evaluation", None)
        if not getattr(t, "charged", False) or ev is None:
            continue
        value = figure(ev, metric) if metric != "memory_peak" else float(getattr(t, "memory_peak", NAN) or NAN)
        if math.isfinite(value) and (
            not math.isfinite(best) or (value > best if sense == "maximize" else value < best)
        ):
            best = value
        number = int(getattr(t, "evaluation_number", 0)) or sum(len(p) for p in points.values()) + 1
        # "planner:baseline" is the planner's first move, not a strategy of its own.
        strategy = str(t.source).split(":", 1)[0]
        points.setdefault(strategy, []).append(TrajectoryPoint(number, value, best))
    return tuple(Trajectory(s, tuple(p)) for s, p in points.items())


@attrs.frozen
class Enrichment:
    """Exact memory accounts and projections (with timelines) recomputed for the few shown candidates."""

    accounts: dict[Candidate, Any]
    projections: dict[Candidate, Any]


def enrich(space: Space, cands: Sequence[Candidate], timeline_for: Candidate | None = None) -> Enrichment:
    """Recompute the byte account and a projection with its timeline for the candidates the report shows.

    The search keeps only peaks and figures per trial; the report needs terms and timelines, and
    recomputing a handful of candidates is cheaper than tracing them all.
    """
    from primus_lang.report.evaluate import evaluate

    accounts: dict[Candidate, Any] = {}
    projections: dict[Candidate, Any] = {}
    for cand in cands:
        if cand not in accounts:
            ev = evaluate(space, cand, timeline=cand == timeline_for)
            accounts[cand], projections[cand] = ev.account, ev.projection
    return Enrichment(accounts, projections)


def from_search(result: Any, space: Space | None = None, runners_up: int = 4) -> ReportData:
    """A ``search.SearchResult`` (and its space, for capacity, accounts and timelines) as a report."""
    sense, metric = parse_objective(str(getattr(result, "objective", "")))
    ranked = list(result.ranked(runners_up + 1))
    best = getattr(result, "best", None) or (ranked[0] if ranked else None)
    tied = 0
    said: list[tuple[str, str]] = []  # what plan said in the terminal that the page must say too
    if space is not None:
        best, ranked, tied, said = _as_plan_chose(result, space, metric, best, ranked, runners_up)
    baseline = getattr(result, "baseline", None)
    shown = [t for t in [best, *ranked, baseline] if t is not None and t.candidate is not None]
    winner_cand = best.candidate if best is not None else None
    enrichment = (enrich(space, [t.candidate for t in shown], winner_cand) if space is not None
                  else Enrichment({}, {}))

    limit = next((int(t.memory_limit) for t in result.trials if getattr(t, "memory_limit", None)), 0)
    headroom = space.headroom if space is not None else 0.0
    capacity = space.cluster.gpu.hbm_capacity if space is not None else int(limit / (1.0 - headroom) or 0)
    view = _viewer(space, enrichment, limit)

    # Each candidate once: a point proposed again (a repeat, or an OOM point proposed twice) is one dot.
    evaluated = list({t.candidate: view(t) for t in result.trials
                      if t.candidate is not None and t.verdict in ("evaluated", "oom")
                      and t.memory_peak is not None}.values())
    winner = view(best) if best is not None and best.candidate is not None else None
    others = [view(t) for t in ranked if t is not best and t.candidate is not None]
    base = view(baseline) if baseline is not None and baseline.candidate is not None else None
    return ReportData(
        space=str(result.space),
        model=space.model.name if space is not None else "",
        cluster=space.cluster.name if space is not None else "",
        gpu=space.cluster.gpu.name if space is not None else "",
        world=space.cluster.world if space is not None else 0,
        capacity=int(capacity),
        headroom=headroom,
        objective_metric=metric,
        objective_sense=sense,
        winner=winner,
        runners_up=tuple(o for o in others if winner is None or o.label != winner.label)[:runners_up],
        baseline=base,
        baseline_is=baseline_meaning(baseline.source) if base is not None and baseline is not None else "",
        evaluated=tuple(evaluated),
        trajectories=trajectories(result.trials, metric, sense),
        notes=tuple(_notes(result, space, tied, said)),
    )


def _as_plan_chose(result: Any, space: Space, metric: str, best: Any, ranked: list[Any],
                   runners_up: int) -> tuple[Any, list[Any], int, list[tuple[str, str]]]:
    """The winner plan chose (among candidates tied with the best projection, the space's tie-break),
    the runners-up after it, how many tied with it, and what plan said of it and of the GPU profile."""
    from primus_lang.search import ties

    tied = 0
    said: list[tuple[str, str]] = []
    choice = ties.choose(result, space.cluster.gpu.provenance, metric, space.objective.sense,
                         space.settings, getattr(result, "baseline", None))
    settled = choice.settled
    if choice.winner is not None:
        best, ranked, tied = choice.winner, list(settled.top(runners_up + 1)), len(settled.tied) - 1
        said += [("tie-break", line) for line in ties.why_winner(settled, metric)[1:]]
    if choice.kept:
        said.append(("launched", choice.kept))
    gpu = space.cluster.gpu
    mfu = [(t.candidate.label(), t.evaluation.mfu) for t in ranked if t.candidate is not None and t.evaluation]
    said += [(f"warning {d.code.id}", d.message) for d in trust.warnings(gpu, mfu, trust.fix_for(gpu))]
    return best, ranked, tied, said


def _viewer(space: Space | None, enrichment: Enrichment, limit: int) -> Callable[[Any], CandidateView]:
    """A trial as the view of its candidate; made once per candidate, from the first trial asked for."""
    views: dict[Candidate, CandidateView] = {}

    def view(trial: Any) -> CandidateView:
        cand = trial.candidate
        if cand in views:
            return views[cand]
        peak = trial.memory_peak if trial.memory_peak is not None else 0
        acc = enrichment.accounts.get(cand)
        if acc is not None:
            peak = int(acc.peak.total)
        fits = trial.verdict != "oom" and (not limit or peak <= limit)
        v = candidate_view(
            cand, trial.evaluation, memory_peak=peak, fits=fits, account=acc,
            projection=enrichment.projections.get(cand), strategy=str(trial.source),
            evaluation=int(getattr(trial, "evaluation_number", 0)),
            provenance=space.cluster.gpu.provenance if space is not None else None,
            world=space.cluster.world if space is not None else 0,
            model=space.model if space is not None else None,
            stack=trust.target_stack(space.settings.target) if space is not None else "",
            arch=space.cluster.gpu.arch if space is not None else "",
        )
        views[cand] = v
        return v

    return view


def _notes(result: Any, space: Space | None, tied: int, said: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The search's facts under the report: strategy, seed, ties, GPU profile, what plan said, the stop."""
    notes = [("strategy", str(result.strategy)), ("seed", str(result.seed))]
    if space is not None and tied:
        notes.append(("tied with the winner",
                      f"{tied} (the best ahead by at most {space.cluster.gpu.provenance.paired:.1%})"))
    if space is not None:
        # describe's first line names the profile ("profile `h100_sxm_calibrated`: ..."), its second says how
        # the band was measured: each a note of its own, where the page would run them together
        first, _, band = trust.describe(space.cluster.gpu.name, space.cluster.gpu.provenance).partition("\n")
        notes.append(("GPU", first))
        if band.strip():
            key, _, text = band.strip().partition(": ")
            notes.append((key, text))
    trials = list(getattr(result, "trials", ()))
    verdicts = {v: sum(1 for t in trials if t.verdict == v) for v in ("evaluated", "refused", "illegal", "oom")}
    proposals = (f"{len(trials)}: {verdicts['evaluated']} evaluated, {verdicts['refused']} refused by the gate, "
                 f"{verdicts['illegal']} illegal, {verdicts['oom']} over memory")
    # what the search noted (an LLM that handed over, a bound that failed) and what plan said after it
    # (which recipe the launch files run, why it searched again): the terminal's notes, recorded in the trace
    told = [("note", str(n)) for n in getattr(result, "notes", ())]
    # no wall-clock time: the page is a generated file and the same search writes the same bytes (the
    # terminal says how long it took; the trace stamps each evaluation)
    return [*notes, *said, ("proposals", proposals), *told, ("stopped", str(getattr(result, "stop_reason", "")))]


def baseline_meaning(source: str) -> str:
    """What a baseline trial is, in the words plan's terminal output uses (search/explain.py)."""
    if source.startswith(SPACE_RECIPE):
        return "the space's recipe"
    return BASELINE_MEANING
