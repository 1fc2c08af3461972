"""Search: strategies over the legal, memory-proved points of a space; budgets, trace, the LLM investigator.

``run_search(space, strategy, budget, seed, ...)`` is the stage's entry point (docs/search.md).
"""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.search import ties
from primus_lang.search.budget import Limits
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.plan import check_resume, prepare, run_search
from primus_lang.search.stages import landscape_of
from primus_lang.search.strategies.planner import BASELINE_MEANING
from primus_lang.search.trace import FORMAT as TRACE_FORMAT
from primus_lang.search.trace import append_plan_note, iter_events, read_trace
from primus_lang.search.trial import EVALUATED, SPACE_RECIPE, Evaluation, Proposal, SearchResult, Trial

__all__ = [
    "BASELINE_MEANING",
    "EVALUATED",
    "SPACE_RECIPE",
    "TRACE_FORMAT",
    "Evaluation",
    "Limits",
    "LlmConfig",
    "Proposal",
    "SearchResult",
    "Trial",
    "append_plan_note",
    "check_resume",
    "iter_events",
    "landscape_of",
    "prepare",
    "read_trace",
    "run_search",
    "ties",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.search.capacity import (
        CapacityPlan,
        ClusterPlan,
        Spread,
        all_set_aside,
        available_cpus,
        beyond_kinds,
        days_text,
        fails_unsearched,
        figure,
        none_meets,
        outside_line,
        plan_capacity,
        run_fails,
        run_of,
        unproven_line,
        whole_iterations,
    )
    from primus_lang.search.compare import DEFAULT_BUDGETS, DEFAULT_STRATEGIES, markdown
    from primus_lang.search.compare import compare as compare_strategies
    from primus_lang.search.engine import Search
    from primus_lang.search.explain import explain as explain_winner
    from primus_lang.search.landscape import Landscape
    from primus_lang.search.plan import Prepared, baseline_trial, limits_of, space_baseline, uncharged
    from primus_lang.search.room import fewest_nodes, least_peak, usable_bytes_of
    from primus_lang.search.stages import evaluator_of
    from primus_lang.search.strategies import NAMES
    from primus_lang.search.ties import choose, why_winner
    from primus_lang.search.trial import ILLEGAL, OOM, REFUSED

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["DEFAULT_BUDGETS", "DEFAULT_STRATEGIES", "ILLEGAL", "NAMES", "OOM", "REFUSED", "CapacityPlan", "ClusterPlan", "Landscape", "Prepared", "Search", "Spread", "all_set_aside", "available_cpus", "baseline_trial", "beyond_kinds", "choose", "compare_strategies", "days_text", "evaluator_of", "explain_winner", "fails_unsearched", "fewest_nodes", "figure", "least_peak", "limits_of", "markdown", "none_meets", "outside_line", "plan_capacity", "run_fails", "run_of", "space_baseline", "uncharged", "unproven_line", "usable_bytes_of", "whole_iterations", "why_winner"]
