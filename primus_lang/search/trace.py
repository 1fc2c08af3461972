"""The search trace: an append-only JSONL log of every proposal, verdict, evaluation and incumbent.

A run with a given seed and an evaluation budget is deterministic, so its events form a fixed
stream. Resuming reruns the search from the start with every recorded evaluation and LLM reply
answered from the trace, and suppresses the events the trace already holds: the finished trace is
the one an uninterrupted run would have written, plus ``resume``/``interrupted`` markers, which are
not part of the stream.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from attrs import frozen

from primus_lang.datafiles import DataCodes, read_json_lines
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import TRACE_INTERLEAVED, TRACE_INVALID, TRACE_MISMATCH
from primus_lang.ir import serialize
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.span import Span
from primus_lang.search.trial import Evaluation

FORMAT = 1
# written outside the deterministic stream: a resume, an interrupt, and what the plan said after its search
# (which recipe its launch files run, why it searched again), which the report rebuilt from the trace says too
MARKERS = frozenset({"resume", "interrupted", "plan_note"})


def append_plan_note(path: Path, message: str) -> None:
    """A plan's note after its search, appended to the trace the search wrote."""
    from primus_lang.outputs import open_log

    with open_log(path, append=True) as f:
        f.write(json.dumps({"event": "plan_note", "message": message}, separators=(",", ":")) + "\n")


class TraceWriter:
    """Writes events as JSON lines, flushed one by one so an interrupt never loses a finished one."""

    def __init__(self, path: Path | None, skip: int = 0) -> None:
        self.path = path
        self.skip = skip  # stream events the trace already holds (a resumed run)
        self.count = 0
        self._file: IO[str] | None = None
        if path is not None:
            from primus_lang.outputs import open_log

            # a fresh search starts its own trace (its caller has refused to replace a user's file);
            # a resumed one appends after the events it replays. Either holds the file against a
            # second plan writing into it, which would tear lines and interleave two searches.
            self._file = open_log(path, append=bool(skip))
            if skip and path.stat().st_size and not _ends_with_newline(path):
                self._file.write("\n")  # a torn last line stays alone; the reader skips it

    def write(self, event: str, **fields: Any) -> None:
        if event not in MARKERS:
            self.count += 1
            if self.count <= self.skip:
                return
        if self._file is None:
            return
        self._file.write(json.dumps({"event": event, **fields}, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1) == b"\n"


@frozen
class TraceLog:
    """What a resumed run needs from a trace."""

    header: dict[str, Any]
    stream_events: int
    evaluations: tuple[tuple[Candidate, Evaluation], ...]
    llm_replies: tuple[tuple[str, dict[str, Any]], ...]
    elapsed: float
    finished: bool


TRACE_CODES = DataCodes(TRACE_INVALID, TRACE_INVALID, TRACE_INVALID, TRACE_INVALID, TRACE_INVALID, TRACE_INVALID)


def _scan(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each non-empty line's number and event; None for a line that is not one (torn)."""
    for number, event in read_json_lines(path, TRACE_CODES, "a search trace"):
        yield number, event if isinstance(event, dict) and "event" in event else None


def iter_events(path: Path) -> Iterator[dict[str, Any]]:
    """The trace's events; a line torn by a kill is skipped (``read_trace`` says where one may be)."""
    for _, event in _scan(path):
        if event is not None:
            yield event


def _interleaved(path: Path, why: str) -> CompileError:
    return CompileError(Diagnostic(
        TRACE_INTERLEAVED, f"`{path}` {why}; two plans wrote it at once, or it was edited",
        help="rerun the plan into an --out of its own"))


# What each field of an event holds, where the event has it: a trace is a data file like any other,
# and a line that parses as JSON may still hold a string where a count goes, a NaN where a figure
# goes, or a candidate that is no candidate. Each is refused at its line here, so the search that
# resumes and the report that draws it read only events a plan could have written.
_MEMORY_BOUND = 2**63  # bytes: far beyond any GPU, and small enough for a chart's arithmetic
_FIGURE_BOUND = 1e18  # seconds, tokens/s, TFLOP/s: past any real one; 1e308 overflows the charts' scales


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_figure(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) <= _FIGURE_BOUND)


def _is_bytes(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                             and math.isfinite(value) and 0 <= value <= _MEMORY_BOUND)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


_FIELDS: dict[str, dict[str, tuple[Callable[[Any], bool], str]]] = {
    "start": {"space": (_is_text, "a string"), "strategy": (_is_text, "a string"), "seed": (_is_int, "an integer"),
              "objective": (_is_text, "a string"), "legal_points": (_is_int, "an integer"),
              "fitting_points": (_is_int, "an integer"), "cluster": (_is_text, "a string")},
    "proposal": {"n": (_is_int, "an integer"), "source": (_is_text, "a string"),
                 "hypothesis": (_is_text, "a string")},
    "gate": {"n": (_is_int, "an integer"), "verdict": (_is_text, "a string"), "label": (_is_text, "a string"),
             "reasons": (lambda v: isinstance(v, list) and all(isinstance(r, str) for r in v), "a list of strings"),
             "memory_peak": (_is_bytes, "a number of bytes"), "memory_limit": (_is_bytes, "a number of bytes")},
    "evaluation": {"n": (_is_int, "an integer"), "evaluation_number": (_is_int, "an integer"),
                   "score": (lambda v: v is None or _is_figure(v), "a finite number (at most 1e18)"),
                   "elapsed": (lambda v: _is_figure(v) and v >= 0, "a finite number of seconds")},
    "end": {"reason": (_is_text, "a string"), "optimum_proven": (lambda v: isinstance(v, bool), "true or false")},
    "llm": {"request": (_is_text, "a string")},
    "note": {"message": (_is_text, "a string")},
    "plan_note": {"message": (_is_text, "a string")},
}
_REQUIRED = {"proposal": ("n",), "gate": ("n", "verdict"), "evaluation": ("n", "candidate", "evaluation")}


def _invalid(path: Path, number: int, why: str) -> CompileError:
    return CompileError(Diagnostic(
        TRACE_INVALID, f"`{path}` line {number} is not an event primusc writes: {why}",
        span=Span(str(path), number, 1, number, 2),
        help="pass the trace `primusc plan --trace` wrote, unedited, or start a new search"))


def _structured(path: Path, number: int, raw: Any, cls: type[Any], key: str) -> Any:
    """``raw`` as a ``cls`` (a candidate or an evaluation), refused at its line when it is not one."""
    if not isinstance(raw, dict):
        raise _invalid(path, number, f"`{key}` is not a mapping")
    try:
        value = serialize.from_data(raw, cls)
    except Exception:  # cattrs raises its own validation groups beside TypeError and ValueError
        raise _invalid(path, number, f"`{key}` is not a {cls.__name__.lower()}") from None
    if isinstance(value, Evaluation):
        figures = [value.step_time, value.tokens_per_gpu, value.tflops_per_gpu, value.mfu, value.bubble_fraction,
                   value.exposed_comm, *(seconds for _, seconds in value.breakdown)]
        if not all(_is_figure(f) for f in figures):
            raise _invalid(path, number, f"`{key}` holds a figure that is not a finite number up to 1e18")
    return value


def check_event(path: Path, number: int, event: dict[str, Any]) -> None:
    """Refuse ``event`` (line ``number``) when a field it has is not of the kind primusc writes."""
    kind = event["event"]
    if not isinstance(kind, str):
        raise _invalid(path, number, "`event` is not a string")
    for key in _REQUIRED.get(kind, ()):
        if key not in event:
            raise _invalid(path, number, f"a `{kind}` event without `{key}`")
    for key, (ok, expected) in _FIELDS.get(kind, {}).items():
        if key in event and not ok(event[key]):
            raise _invalid(path, number, f"`{key}` of a `{kind}` event is {json.dumps(event[key])[:40]}, "
                                         f"expected {expected}")
    if kind in ("proposal", "evaluation") and event.get("candidate") is not None:
        _structured(path, number, event["candidate"], Candidate, "candidate")
    if kind == "evaluation":
        _structured(path, number, event["evaluation"], Evaluation, "evaluation")
    if kind == "llm" and event.get("reply") is not None and not isinstance(event["reply"], dict):
        raise _invalid(path, number, "`reply` of an `llm` event is not a mapping")


def read_trace(path: Path) -> TraceLog:
    if not path.is_file():
        raise CompileError(Diagnostic(TRACE_INVALID, f"no trace at `{path}`", help="pass the file given to --trace"))
    header: dict[str, Any] | None = None
    count = 0
    evaluations: list[tuple[Candidate, Evaluation]] = []
    replies: list[tuple[str, dict[str, Any]]] = []
    elapsed = 0.0
    finished = False
    torn = 0  # the line number of a torn line not yet explained
    try:
        for number, scanned in _scan(path):
            if torn and not (scanned is not None and scanned["event"] == "resume"):
                # torn lines are expected only where a plan was killed: last, or where it was resumed
                raise _interleaved(path, f"has a torn line {torn}")
            torn = 0 if scanned is not None else number
            if scanned is None and header is None and not count:
                # before any event: not a trace a plan tore, but another file (a space, a report)
                raise CompileError(Diagnostic(TRACE_INVALID, f"`{path}` is not a primusc search trace: its line "
                                              f"{number} is no trace event", help="pass the trace.jsonl a plan wrote "
                                              "into its --out"))
            if scanned is None:
                continue
            event = scanned
            check_event(path, number, event)
            kind = event["event"]
            if kind in MARKERS:
                continue
            count += 1
            if kind == "start":
                if header is not None:
                    raise _interleaved(path, f"has a second `start` event at line {number}")
                header = event
            elif kind == "evaluation":
                cand = serialize.from_data(event["candidate"], Candidate)
                evaluations.append((cand, serialize.from_data(event["evaluation"], Evaluation)))
                elapsed = max(elapsed, float(event.get("elapsed", 0.0)))
            elif kind == "llm" and event.get("reply") is not None:
                replies.append((str(event["request"]), event["reply"]))
            elif kind == "end":
                if finished:
                    raise _interleaved(path, f"has a second `end` event at line {number}")
                finished = True
    except (KeyError, TypeError, ValueError) as err:
        raise CompileError(
            Diagnostic(TRACE_INVALID, f"`{path}` is not a primusc search trace ({err})")
        ) from None
    if header is None or header.get("format") != FORMAT:
        raise CompileError(Diagnostic(TRACE_INVALID, f"`{path}` has no primusc trace header"))
    return TraceLog(header, count, tuple(evaluations), tuple(replies), elapsed, finished)


def check_compatible(log: TraceLog, expected: dict[str, Any]) -> None:
    """A trace can only be resumed by the same search: same space, strategy, seed and budget."""
    # a plan across clusters or for another target than the space's names it; a search that does not
    # names nothing, so a trace that does is another search's
    keys = [*expected, *(k for k in ("cluster", "target") if k in log.header and k not in expected)]
    diffs = [
        f"{key}: trace has {log.header.get(key)!r}, this run {expected.get(key)!r}"
        for key in keys
        if log.header.get(key) != expected.get(key)
    ]
    if diffs:
        raise CompileError(
            Diagnostic(
                TRACE_MISMATCH,
                "the trace was written by a different search",
                notes=tuple(diffs),
                help="resume with the same space, --strategy, --seed and --budget, or start a new trace",
            )
        )
