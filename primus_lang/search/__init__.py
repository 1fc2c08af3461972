"""Search: strategies over the legal, memory-proved points of a space; budgets, trace, the LLM investigator.

``run_search(space, strategy, budget, seed, ...)`` is the stage's entry point (docs/search.md).
"""

from primus_lang.search import ties
from primus_lang.search.budget import Limits
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.plan import prepare, run_search
from primus_lang.search.stages import landscape_of
from primus_lang.search.trace import FORMAT as TRACE_FORMAT
from primus_lang.search.trace import iter_events, read_trace
from primus_lang.search.trial import EVALUATED, SPACE_RECIPE, Evaluation, Proposal, SearchResult, Trial

__all__ = [
    "EVALUATED",
    "SPACE_RECIPE",
    "TRACE_FORMAT",
    "Evaluation",
    "Limits",
    "LlmConfig",
    "Proposal",
    "SearchResult",
    "Trial",
    "iter_events",
    "landscape_of",
    "prepare",
    "read_trace",
    "run_search",
    "ties",
]
