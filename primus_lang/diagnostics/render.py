"""Render diagnostics as rustc-style text, one-line ``short`` form, or JSON."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable

from primus_lang.diagnostics.core import Diagnostic
from primus_lang.sources import lines

SourceLookup = Callable[[str], str | None]


def _source_line(sources: SourceLookup, file: str, line: int) -> str | None:
    text = sources(file)
    if text is None:
        return None
    found = _lines(text)
    return found[line - 1] if 0 < line <= len(found) else None


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> tuple[str, ...]:
    """``lines(text)`` once per text, not once per diagnostic: a file with 20,000 broken
    definitions gets 20,000 diagnostics, and splitting it for each took minutes. A string caches its
    hash, so a hit costs no pass over the text."""
    return tuple(lines(text))


WINDOW = 100  # characters of a source line shown under a diagnostic
_CONTEXT = 30  # of them, before the span


def _window(src: str, start: int, width: int) -> tuple[str, int, int]:
    """At most ``WINDOW`` characters of ``src`` around the span at ``start`` (an ellipsis marking each
    cut), and the span's start and width within them: a generated line can be 20,000 characters."""
    if len(src) <= WINDOW:
        return src, start, width
    left = 0 if start < WINDOW - _CONTEXT else max(0, min(start - _CONTEXT, len(src) - WINDOW))
    right = left + WINDOW
    shown = ("…" if left else "") + src[left:right] + ("…" if right < len(src) else "")
    at = start - left + (1 if left else 0)
    return shown, at, max(1, min(width, right - start))


def _caret_block(sources: SourceLookup, d: Diagnostic) -> list[str]:
    if d.span is None:
        return []
    span = d.span
    src = _source_line(sources, span.file, span.line)
    gutter = " " * len(str(span.line))
    out = [f"{gutter}--> {span.file}:{span.line}:{span.column}"]
    if src is None:
        return out
    width = span.end_column - span.column if span.end_line == span.line else len(src) - span.column + 1
    shown, start, width = _window(src, span.column - 1, max(1, width))
    out += [f"{gutter} |", f"{span.line} | {shown}", f"{gutter} | {' ' * start}{'^' * width}"]
    for label in d.labels:
        out.append(f"{gutter} = note: {label.message} at {label.span}")
    return out


def human(d: Diagnostic, sources: SourceLookup) -> str:
    lines = [f"{d.severity.value}[{d.code.id}]: {d.message}"]
    lines += _caret_block(sources, d)
    for note in d.notes:
        lines.append(f"  = note: {note}")
    if d.help:
        lines.append(f"  = help: {d.help}")
    return "\n".join(lines)


def short(d: Diagnostic) -> str:
    where = f"{d.span.file}:{d.span.line}:{d.span.column}: " if d.span else ""
    return f"{where}{d.severity.value}: {d.message}  [{d.code.id}]"


def as_json(d: Diagnostic) -> dict[str, object]:
    span = None
    if d.span is not None:
        span = {
            "file": d.span.file,
            "line": d.span.line,
            "column": d.span.column,
            "end_line": d.span.end_line,
            "end_column": d.span.end_column,
        }
    return {
        "code": d.code.id,
        "name": d.code.name,
        "severity": d.severity.value,
        "message": d.message,
        "span": span,
        "help": d.help,
        "notes": list(d.notes),
    }


def render(diagnostics: Iterable[Diagnostic], fmt: str = "human", sources: SourceLookup | None = None) -> str:
    diags = list(diagnostics)
    lookup: SourceLookup = sources or (lambda _f: None)
    if fmt == "json":
        # one line: standard error under this format is JSON Lines (diagnostics/stream.py)
        return json.dumps({"diagnostics": [as_json(d) for d in diags]})
    if fmt == "short":
        return "\n".join(short(d) for d in diags)
    return "\n\n".join(human(d, lookup) for d in diags)
