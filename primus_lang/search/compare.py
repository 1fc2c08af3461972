"""Strategy comparison: each strategy's regret against the exhaustive optimum at equal budgets.

Regret is the share of the optimum's objective a strategy leaves on the table with its best find:
``(optimum - found) / |optimum|`` in score terms (scores are oriented so larger is better), 0 when
it found the optimum. Every run over a space shares one memoized oracle, so the cost of a comparison
is one exhaustive projection of the space plus the strategies' own bookkeeping.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from attrs import frozen

from primus_lang.ir.space import STRATEGIES, Space
from primus_lang.search.budget import Limits
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.plan import Prepared, prepare
from primus_lang.search.run import search_landscape

# every strategy but the LLM investigator, which needs a model to talk to
DEFAULT_STRATEGIES = tuple(s for s in STRATEGIES if s != "llm")
DEFAULT_BUDGETS = (25, 50, 100, 200)
DETERMINISTIC = frozenset({"planner", "exhaustive"})  # the seed does not change what they do


@frozen
class SpaceOptimum:
    space: str
    legal_points: int
    fitting_points: int
    optimum: float  # the objective's value at the optimum (metric units)
    optimum_label: str
    proof_evaluations: int  # evaluations branch and bound needed to prove it
    proven_by_bound: bool


@frozen
class Cell:
    space: str
    strategy: str
    budget: int
    regrets: tuple[float, ...]  # one per seed

    @property
    def median(self) -> float:
        return statistics.median(self.regrets)

    @property
    def worst(self) -> float:
        return max(self.regrets)


@frozen
class Comparison:
    spaces: tuple[SpaceOptimum, ...]
    cells: tuple[Cell, ...]
    strategies: tuple[str, ...]
    budgets: tuple[int, ...]
    seeds: int

    def overall(self, strategy: str, budget: int) -> float:
        """The median over spaces of the per-space median regret."""
        meds = [c.median for c in self.cells if c.strategy == strategy and c.budget == budget]
        return statistics.median(meds) if meds else float("nan")


def optimum_of(prep: Prepared) -> tuple[SpaceOptimum, float]:
    result = search_landscape(prep.land, prep.evaluator, "exhaustive", Limits(evaluations=None), upper=prep.upper,
                               refine=prep.refine)
    if result.best is None or result.best.score is None or result.best.evaluation is None:
        raise RuntimeError(f"no point of {prep.land.name} could be evaluated")
    metric = prep.land.objective.metric
    value = float(result.best.memory_peak or 0) if metric == "memory_peak" else result.best.evaluation.metric(metric)
    opt = SpaceOptimum(
        space=prep.land.name,
        legal_points=len(prep.land),
        fitting_points=int(prep.land.fits.sum()),
        optimum=value,
        optimum_label=result.best.label,
        proof_evaluations=result.evaluations,
        proven_by_bound=result.stop_reason == "optimum proven",
    )
    return opt, result.best.score


def compare(
    spaces: Sequence[Space],
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    seeds: int = 5,
    progress: Callable[[str], None] | None = None,
    llm: Callable[[Space], LlmConfig] | None = None,
) -> Comparison:
    """``llm``: the investigator's configuration for a space (the `llm` strategy's model)."""
    optima: list[SpaceOptimum] = []
    cells: list[Cell] = []
    for space in spaces:
        prep = prepare(space)
        opt, best = optimum_of(prep)
        optima.append(opt)
        if progress:
            progress(f"{space.name}: optimum {opt.optimum:,.1f} at {opt.optimum_label} "
                     f"({opt.proof_evaluations} evaluations to prove it)")
        for strategy in strategies:
            for budget in budgets:
                regrets: list[float] = []
                for seed in range(seeds):
                    if strategy in DETERMINISTIC and seed > 0:
                        regrets.append(regrets[0])
                        continue
                    r = search_landscape(prep.land, prep.evaluator, strategy, Limits(evaluations=budget),
                                         seed=seed, upper=prep.upper, refine=prep.refine,
                                         llm=llm(space) if llm is not None else None)
                    found = r.best.score if r.best is not None and r.best.score is not None else float("-inf")
                    regrets.append(max(0.0, (best - found) / abs(best)) if best else 0.0)
                cell = Cell(space.name, strategy, budget, tuple(regrets))
                cells.append(cell)
                if progress:
                    progress(f"{space.name} {strategy} @{budget}: median regret {cell.median:.2%}")
    return Comparison(tuple(optima), tuple(cells), tuple(strategies), tuple(budgets), seeds)


def _pct(x: float) -> str:
    return "0" if x == 0 else f"{x * 100:.1f}%"


def markdown(cmp: Comparison) -> str:
    """Tables for docs/search.md: per space, then the median over spaces."""
    out: list[str] = []
    head = "| strategy | " + " | ".join(f"{b} evals" for b in cmp.budgets) + " |"
    rule = "|---|" + "---|" * len(cmp.budgets)
    for opt in cmp.spaces:
        out.append(f"**{opt.space}**: {opt.legal_points:,} legal points, {opt.fitting_points:,} fit; optimum "
                   f"{opt.optimum:,.1f} at `{opt.optimum_label}`; exhaustive branch and bound proved it in "
                   f"{opt.proof_evaluations:,} evaluations"
                   + ("" if opt.proven_by_bound else " (by evaluating every fitting point)") + ".")
        out += ["", "median regret (worst of the seeds in brackets)", "", head, rule]
        for s in cmp.strategies:
            row = [c for c in cmp.cells if c.space == opt.space and c.strategy == s]
            by_budget = {c.budget: c for c in row}
            out.append(f"| {s} | " + " | ".join(
                f"{_pct(by_budget[b].median)} ({_pct(by_budget[b].worst)})" for b in cmp.budgets) + " |")
        out.append("")
    out += [f"**All {len(cmp.spaces)} spaces**: median over spaces of the median regret over {cmp.seeds} seeds", "",
            head, rule]
    for s in cmp.strategies:
        out.append(f"| {s} | " + " | ".join(_pct(cmp.overall(s, b)) for b in cmp.budgets) + " |")
    return "\n".join(out) + "\n"
