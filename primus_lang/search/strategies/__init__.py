"""Search strategies by name. ``bayes`` and ``llm`` import their optional dependencies lazily."""

from __future__ import annotations

from collections.abc import Callable

from primus_lang.ir.space import STRATEGIES
from primus_lang.search.strategies.auto import Auto
from primus_lang.search.strategies.base import Strategy
from primus_lang.search.strategies.evolutionary import Evolutionary
from primus_lang.search.strategies.exhaustive import Exhaustive
from primus_lang.search.strategies.planner import Planner
from primus_lang.search.strategies.refine import Refine
from primus_lang.search.strategies.sampling import RandomSearch

NAMES = STRATEGIES  # the language's table (ir/space.py): a space's `strategy` and `--strategy` accept the same

CLASSICAL: dict[str, Callable[[], Strategy]] = {
    "planner": Planner,
    "exhaustive": Exhaustive,
    "random": RandomSearch,
    "evolutionary": Evolutionary,
    "refine": Refine,
}

__all__ = ["CLASSICAL", "NAMES", "Auto", "Evolutionary", "Exhaustive", "Planner", "RandomSearch", "Refine", "Strategy"]
