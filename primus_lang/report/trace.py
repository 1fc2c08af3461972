"""A search result rebuilt from its JSONL trace, for ``primusc report TRACE``.

The trace holds every proposal (its source), the gate's verdict with the memory peak, and each
evaluation with its candidate and figures; that is everything the report draws except the exact
memory terms and the winner's timeline, which come from recomputing the shown candidates when the
space is known.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_report import TRACE_EMPTY
from primus_lang.ir import serialize
from primus_lang.ir.candidate import Candidate
from primus_lang.search import (
    EVALUATED,
    TRACE_FORMAT,
    Evaluation,
    SearchResult,
    Trial,
    iter_events,
    read_trace,
)


def result_from_trace(path: Path) -> tuple[SearchResult, dict[str, Any]]:
    """The ``SearchResult`` the traced run returned (or had reached when it stopped), and the trace header."""
    read_trace(path)  # validates the header and the lines, with the search stage's own diagnostics
    header: dict[str, Any] = {}
    # a proposal waits for its gate as (source, hypothesis, candidate as compact JSON): the parsed
    # event would hold a dict per knob, several KiB each, and a trace of 250 MiB of proposals that
    # never reach a gate took 1.6 GB that way; each is dropped once its gate has read it
    proposals: dict[int, tuple[str, str, str | None]] = {}
    trials: dict[int, Trial] = {}
    end: dict[str, Any] = {}
    notes: list[str] = []
    for event in iter_events(path):
        kind = event["event"]
        if kind == "start" and event.get("format") == TRACE_FORMAT:
            header = event
        elif kind == "proposal":
            raw = event.get("candidate")
            proposals[int(event["n"])] = (str(event.get("source", "")), str(event.get("hypothesis", "")),
                                          json.dumps(raw, separators=(",", ":")) if raw is not None else None)
        elif kind == "gate":
            n = int(event["n"])
            source, hypothesis, cand = proposals.pop(n, ("", "", None))
            trials[n] = Trial(
                number=n,
                source=source,
                verdict=str(event["verdict"]),
                candidate=serialize.from_data(json.loads(cand), Candidate) if cand is not None else None,
                label=str(event.get("label", "")),
                hypothesis=hypothesis,
                reasons=tuple(event.get("reasons", ())),
                memory_peak=event.get("memory_peak"),
                memory_limit=event.get("memory_limit"),
            )
        elif kind == "evaluation":
            n = int(event["n"])
            base = trials.get(n) or Trial(number=n, source=proposals.get(n, ("", "", None))[0], verdict=EVALUATED)
            trials[n] = Trial(
                number=n, source=base.source, verdict=EVALUATED,
                candidate=serialize.from_data(event["candidate"], Candidate),
                label=base.label, hypothesis=base.hypothesis, reasons=base.reasons,
                memory_peak=base.memory_peak, memory_limit=base.memory_limit,
                evaluation=serialize.from_data(event["evaluation"], Evaluation),
                score=event.get("score"), charged=True,
                evaluation_number=int(event.get("evaluation_number", 0)),
            )
        elif kind in ("note", "plan_note"):  # the search's notes, then what the plan said after it
            notes.append(str(event.get("message", "")))
        elif kind == "end":
            end = event
    ordered = tuple(trials[n] for n in sorted(trials))
    evaluated = [t for t in ordered if t.verdict == EVALUATED and t.score is not None]
    if not evaluated:
        raise CompileError(Diagnostic(TRACE_EMPTY, f"`{path}` records no evaluation",
                                      help="a report needs at least one evaluated candidate"))
    best: Trial | None = None
    for t in evaluated:  # the first of equal scores wins, as in the search itself
        if best is None or (t.score is not None and best.score is not None and t.score > best.score):
            best = t
    baseline = next((t for t in evaluated if t.source.endswith("baseline")), None)
    result = SearchResult(
        space=str(header.get("space", "")),
        strategy=str(header.get("strategy", "")),
        seed=int(header.get("seed", 0)),
        objective=str(header.get("objective", "maximize tokens_per_gpu")),
        stop_reason=str(end.get("reason", "interrupted" if not end else "")),
        trials=ordered,
        best=best,
        baseline=baseline,
        evaluations=len(evaluated),
        proposals=len(ordered),
        elapsed=max((float(e.get("elapsed", 0.0)) for e in iter_events(path) if e["event"] == "evaluation"),
                    default=0.0),
        optimum_proven=bool(end.get("optimum_proven", False)),
        legal_points=int(header.get("legal_points", 0)),
        fitting_points=int(header.get("fitting_points", 0)),
        notes=tuple(notes),
    )
    return result, header
