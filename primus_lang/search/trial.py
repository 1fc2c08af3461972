"""What a search produces: proposals, the verdict on each, evaluations and the final result.

Everything here is a frozen attrs class so ``--json`` is ``serialize.to_json(result)`` and a trace
line can be turned back into the object it recorded.
"""

from __future__ import annotations

from attrs import field, frozen

from primus_lang.ir.candidate import Candidate

# The verdict a proposal gets, in the order the engine decides it.
REFUSED = "refused"  # the objective gate: the move changes what is trained, or leaves the space
ILLEGAL = "illegal"  # not a legal point of the space (Megatron rules, user constraints)
OOM = "oom"  # legal, but the memory proof says it does not fit
REPEAT = "repeat"  # already evaluated: answered from the memo, not charged
EVALUATED = "evaluated"  # projected, one evaluation charged
VERDICTS = (REFUSED, ILLEGAL, OOM, REPEAT, EVALUATED)


@frozen
class Evaluation:
    """The oracle's answer for one candidate (seconds, tokens/s, FLOP/s, fractions)."""

    step_time: float
    tokens_per_gpu: float
    tflops_per_gpu: float
    mfu: float
    bubble_fraction: float
    exposed_comm: float  # seconds communication adds: what compute does not hide, and the compute it slows
    breakdown: tuple[tuple[str, float], ...] = ()  # where the step's time goes, seconds per part

    def metric(self, name: str) -> float:
        value = getattr(self, name)
        return float(value)


@frozen
class Proposal:
    """A point a strategy wants evaluated.

    ``changes`` are knob assignments on top of ``base``; a strategy over the legal set gives the whole
    point as ``candidate`` instead. Raw changes may name things that are not knobs (an LLM may try to
    change the learning rate): the gate refuses them before anything is built.
    """

    source: str
    candidate: Candidate | None = None
    base: Candidate | None = None
    changes: tuple[tuple[str, object], ...] = ()
    hypothesis: str = ""
    # where ``candidate`` is the landscape's point at this position, when the strategy knows it (a
    # strategy walking the landscape by position spares the lookup of every point by value)
    index: int | None = None


# The source of the trial that is the space's own baseline; a trace keeps it, so a report rebuilt
# from one still knows the recipe.
SPACE_RECIPE = "space baseline"


@frozen
class Trial:
    """One proposal and everything decided about it."""

    number: int  # 1-based order of proposals in this search
    source: str  # the strategy (or phase) that proposed it
    verdict: str
    candidate: Candidate | None = None
    label: str = ""
    hypothesis: str = ""
    reasons: tuple[str, ...] = ()
    memory_peak: int | None = None  # bytes on the busiest rank
    memory_limit: int | None = None  # capacity less the space's headroom
    evaluation: Evaluation | None = None
    score: float | None = None  # the objective, oriented so that larger is better
    charged: bool = False

    @property
    def is_space_recipe(self) -> bool:
        """The space's own ``baseline`` (the recipe it was imported from), projected beside the search."""
        return self.source.startswith(SPACE_RECIPE)
    evaluation_number: int = 0  # how many evaluations had been charged when this one was

    @property
    def spare(self) -> int | None:
        if self.memory_peak is None or self.memory_limit is None:
            return None
        return self.memory_limit - self.memory_peak


@frozen
class SearchResult:
    """What ``run_search`` returns: every trial in order, the best evaluated (``best``), how the search
    stopped and whether it proved its optimum. ``plan``'s winner is ``search.choose`` of it."""

    space: str
    strategy: str
    seed: int
    objective: str  # "maximize tokens_per_gpu"
    stop_reason: str
    trials: tuple[Trial, ...]
    best: Trial | None
    baseline: Trial | None
    evaluations: int
    proposals: int
    elapsed: float
    optimum_proven: bool = False
    llm_calls: int = 0
    llm_cost_usd: float = 0.0
    legal_points: int = 0
    fitting_points: int = 0
    notes: tuple[str, ...] = field(default=())

    def ranked(self, top: int = 10) -> list[Trial]:
        """The best distinct evaluated trials, best first; an exact tie goes to the smaller memory peak
        (more headroom for the same speed), then to the one found first."""
        seen: set[Candidate] = set()
        evaluated = []
        for t in self.trials:
            if t.verdict == EVALUATED and t.candidate is not None and t.candidate not in seen:
                seen.add(t.candidate)
                evaluated.append(t)
        evaluated.sort(key=lambda t: (-(t.score if t.score is not None else float("-inf")), t.memory_peak or 0))
        return evaluated[:top]
