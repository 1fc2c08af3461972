"""Running a search over a landscape: strategy by name, budgets, trace and resume."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import UNKNOWN_STRATEGY
from primus_lang.outputs import write_file
from primus_lang.search.budget import Limits
from primus_lang.search.engine import Search
from primus_lang.search.evaluator import Evaluator
from primus_lang.search.landscape import Landscape
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.strategies import CLASSICAL, NAMES, Auto, Strategy
from primus_lang.search.trace import TraceLog, check_compatible, read_trace
from primus_lang.search.trial import SearchResult


def make_strategy(name: str, llm: LlmConfig | None = None, notes: list[str] | None = None) -> Strategy:
    """The strategy called ``name``; ``llm`` configures the investigator for ``llm`` and ``auto``."""
    if name in CLASSICAL:
        return CLASSICAL[name]()
    if name == "bayes":
        from primus_lang.search.strategies.bayes import Bayes

        return Bayes()
    if name == "llm":
        from primus_lang.search.strategies.investigator import Investigator

        return Investigator(llm or LlmConfig())
    if name == "auto":
        config = llm or LlmConfig()
        usable, why = config.usable()
        if notes is not None and not usable:
            notes.append(f"auto: {why}")
        if usable:
            from primus_lang.search.strategies.investigator import Investigator

            return Auto(explorer=lambda: Investigator(config))
        return Auto()
    raise CompileError(
        Diagnostic(
            UNKNOWN_STRATEGY,
            f"unknown strategy `{name}`",
            help=f"choose one of {', '.join(NAMES)}",
        )
    )


def resumable(land: Landscape, evaluator: Evaluator, strategy: str | Strategy, limits: Limits | None, seed: int,
              resume: Path, llm: LlmConfig | None = None) -> TraceLog:
    """The trace ``resume``, read and checked to record this very search (P8001, P8002), writing nothing."""
    strat = make_strategy(strategy, llm) if isinstance(strategy, str) else strategy
    log = read_trace(resume)
    check_compatible(log, Search(land, evaluator, strat, limits or Limits(), seed).header())
    return log


def search_landscape(
    land: Landscape,
    evaluator: Evaluator,
    strategy: str | Strategy = "auto",
    limits: Limits | None = None,
    seed: int = 0,
    trace: Path | None = None,
    resume: Path | None = None,
    progress: Callable[[Search], None] | None = None,
    upper: np.ndarray | None = None,
    llm: LlmConfig | None = None,
    refine: Callable[[int, float], float] | None = None,
) -> SearchResult:
    """Search ``land`` with ``strategy``; with ``resume``, continue the search that trace records.

    A resumed search appends to its trace (to a copy of it when ``trace`` names another file) and
    replays the recorded evaluations and LLM replies before it spends anything new.
    """
    notes: list[str] = []
    strat = make_strategy(strategy, llm, notes) if isinstance(strategy, str) else strategy
    limits = limits or Limits()
    skip, offset, replies = 0, 0.0, {}
    if resume is not None:
        log = resumable(land, evaluator, strat, limits, seed, resume)  # refused before a copy is written
        if trace is not None and trace.resolve() != resume.resolve():
            write_file(trace, resume.read_bytes(), force=True, option="trace")
        else:
            trace = resume
        evaluator.preload(log.evaluations)
        skip, offset, replies = log.stream_events, log.elapsed, dict(log.llm_replies)
    search = Search(
        land, evaluator, strat, limits, seed,
        trace_path=trace, resume_events=skip, elapsed_offset=offset,
        progress=progress, upper=upper, llm_replies=replies, notes=notes, refine=refine,
    )
    return search.run()
