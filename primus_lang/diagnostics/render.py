"""Render diagnostics as rustc-style text, one-line ``short`` form, or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from primus_lang.diagnostics.core import Diagnostic

SourceLookup = Callable[[str], str | None]


def _source_line(sources: SourceLookup, file: str, line: int) -> str | None:
    text = sources(file)
    if text is None:
        return None
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


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
    out += [f"{gutter} |", f"{span.line} | {src}", f"{gutter} | {' ' * (span.column - 1)}{'^' * max(1, width)}"]
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
        return json.dumps({"diagnostics": [as_json(d) for d in diags]}, indent=2)
    if fmt == "short":
        return "\n".join(short(d) for d in diags)
    return "\n\n".join(human(d, lookup) for d in diags)
