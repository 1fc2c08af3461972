"""Search: strategies over the legal, memory-proved points of a space; budgets, trace, the LLM investigator.

``run_search(space, strategy, budget, seed, ...)`` is the stage's entry point (docs/search.md).
"""

from primus_lang.search.budget import Limits
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.plan import prepare, run_search
from primus_lang.search.trial import Evaluation, Proposal, SearchResult, Trial

__all__ = ["Evaluation", "Limits", "LlmConfig", "Proposal", "SearchResult", "Trial", "prepare", "run_search"]
