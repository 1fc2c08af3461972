"""``run_search``: search a lowered space end to end (legal points, memory, projection, strategy)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import BAD_BUDGET
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.space import Space
from primus_lang.search.budget import Limits
from primus_lang.search.engine import Search
from primus_lang.search.evaluator import Evaluator
from primus_lang.search.landscape import Landscape
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.run import resumable, search_landscape
from primus_lang.search.stages import evaluator_of, landscape_of, refined_bounds, upper_bounds
from primus_lang.search.strategies.planner import baseline_index
from primus_lang.search.trial import EVALUATED, SPACE_RECIPE, Evaluation, SearchResult, Trial

if TYPE_CHECKING:
    from primus_lang.project import Oracle

DEFAULT_EVALUATIONS = 100


def limits_of(space: Space, evaluations: int | None = None, seconds: float | None = None,
              patience: int | None = None) -> Limits:
    """The command line's budget over the space's ``budget`` line; 100 evaluations when neither says."""
    b = space.budget
    evals = evaluations if evaluations is not None else b.evaluations
    secs = seconds if seconds is not None else b.seconds
    if evals is None and secs is None:
        evals = DEFAULT_EVALUATIONS
    return Limits(evaluations=evals, seconds=secs, llm_calls=b.llm_calls, llm_cost_usd=b.llm_cost_usd,
                  patience=patience)


@frozen
class Prepared:
    """A space made searchable: its landscape, a memoized oracle and the branch-and-bound bound."""

    space: Space
    land: Landscape
    evaluator: Evaluator
    upper: np.ndarray | None
    refine: Callable[[int, float], float] | None = None  # a tighter bound on one point, when asked


def prepare(space: Space, oracle: Oracle | None = None, ties: bool = True) -> Prepared:
    """``oracle`` None projects with the simulate oracle. The branch-and-bound bound is a floor of the
    simulate oracle's compute time, so it proves nothing about measured kernels: no bound then."""
    land = landscape_of(space, ties=ties)
    if oracle is not None:
        return Prepared(space, land, evaluator_of(space, oracle), None)
    return Prepared(space, land, evaluator_of(space, oracle), upper_bounds(space, land), refined_bounds(space, land))


def run_search(
    space: Space,
    strategy: str | None = None,
    budget: Limits | None = None,
    seed: int | None = None,
    trace: Path | None = None,
    resume: Path | None = None,
    progress: Callable[[Search], None] | None = None,
    llm: LlmConfig | None = None,
    prepared: Prepared | None = None,
) -> SearchResult:
    """Search ``space`` with ``strategy`` (default: the space's), under ``budget`` (default: the space's).

    ``result.best`` is the best projection the search evaluated; ``plan``'s winner is
    ``search.choose(result, ...)`` (which breaks ties within the profile's paired band toward the recipe that
    changes numerics least) and its launch ``emit.launchable(...)`` (docs/search.md, Using it from Python).
    ``CompileError`` for a budget that allows no evaluation or a space with no point that fits."""
    own_limits = limits_of(space)
    limits = budget or own_limits
    if (limits.evaluations is not None and limits.evaluations < 1) or (limits.seconds is not None and limits.seconds <= 0):
        given = " and ".join(x for x in (f"{limits.evaluations} evaluations" if limits.evaluations is not None else "",
                                         f"{limits.seconds:g} s" if limits.seconds is not None else "") if x)
        raise CompileError(Diagnostic(BAD_BUDGET, f"a budget of {given} allows no evaluation",
                                      # the space's own `budget`: said at its line
                                      getattr(space.budget, "span", None) if limits == own_limits else None,
                                      help="give the search at least one evaluation and the time for it, e.g. "
                                           "`budget 50 evals, 5 min` in the space or `--budget 50,5min`"))
    prep = prepared or prepare(space)
    return search_landscape(
        prep.land,
        prep.evaluator,
        strategy or space.strategy,
        limits,
        seed=space.settings.seed if seed is None else seed,
        trace=trace,
        resume=resume,
        progress=progress,
        upper=prep.upper,
        refine=prep.refine,
        llm=llm or LlmConfig.resolve(space_model=space.settings.llm_model),
    )


def check_resume(space: Space, resume: Path, strategy: str | None = None, budget: Limits | None = None,
                 seed: int | None = None, llm: LlmConfig | None = None, prepared: Prepared | None = None) -> None:
    """Refuse, before anything is written, the trace ``run_search`` with the same arguments would refuse to
    resume (P8001: not a trace; P8002: another search's)."""
    prep = prepared or prepare(space)
    resumable(prep.land, prep.evaluator, strategy or space.strategy, budget or limits_of(space),
              space.settings.seed if seed is None else seed, resume,
              llm or LlmConfig.resolve(space_model=space.settings.llm_model))


def space_baseline(space: Space, land: Landscape, evaluator: Evaluator) -> Trial | None:
    """The space's own ``baseline`` (the recipe it was imported from) as a trial, projected now and
    not charged to the budget; None when the space has none."""
    from primus_lang.check import baseline_point
    from primus_lang.memory import account

    cand = baseline_point(space)
    if cand is None:
        return None
    peak = account(space.model, space.cluster, cand, space.settings).peak.total
    return uncharged(land, cand, peak, evaluator(cand), f"{SPACE_RECIPE} (the recipe; projected for comparison, not charged)")


def uncharged(land: Landscape, cand: Candidate, peak: int, evaluation: Evaluation, source: str) -> Trial:
    """A point projected outside the search (for comparison or to launch it), as a trial of it: the
    budget does not count it."""
    return Trial(number=0, source=source, verdict=EVALUATED, candidate=cand, label=land.label(cand), memory_peak=peak,
                 memory_limit=land.limit, evaluation=evaluation, score=land.score(evaluation, peak))


def baseline_trial(prep: Prepared, result: SearchResult) -> Trial | None:
    """The space's baseline when it has one; else the planner's: from the search when it ran, else
    projected now (uncharged)."""
    given = space_baseline(prep.space, prep.land, prep.evaluator)
    if given is not None:
        return given
    if result.baseline is not None:
        return result.baseline
    land = prep.land
    i = baseline_index(land)
    if i is None:
        return None
    cand = land.points[i]
    return uncharged(land, cand, int(land.peaks[i]), prep.evaluator(cand),
                     "baseline (projected for comparison, not charged)")
