"""One document → the diagnostics ``primusc check`` gives and the facts the editor shows.

Runs on the server's single analysis thread: the parser keeps per-parse state in a module global,
so every parse of the server happens on that one thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from primus_lang.check import require_legal, summarize
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_internal import INTERNAL
from primus_lang.ir.space import Space
from primus_lang.ir.span import Span
from primus_lang.lower import Loader, loads_program
from primus_lang.syntax import MAX_BYTES, ast, parse_by_item, read_source


@attrs.frozen
class Counts:
    name: str
    span: Span | None
    raw: int
    legal: int


@attrs.frozen
class Analysis:
    text: str
    file: str
    module: ast.Module | None = None  # the AST when the text parses
    diagnostics: tuple[Diagnostic, ...] = ()
    spaces: tuple[Space, ...] = ()
    counts: tuple[Counts, ...] = ()


def source_of(text: str, file: str) -> str | bytes:
    """What the compiler should read. An editor shows a file that is not UTF-8 with U+FFFD where the
    bad bytes were, or passes them through JSON as lone surrogates; either way the file is not
    UTF-8, and reading its bytes lets the parser say so at the byte (P1009), as `check` would."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escaped_only(text) else "surrogatepass")
    if "\ufffd" in text and not file.startswith("<") and len(text) <= MAX_BYTES:
        try:
            data = read_source(Path(file), file)
        except (OSError, CompileError):
            return text
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            if data.decode("utf-8", "replace") == text:
                return data
    return text


def _escaped_only(text: str) -> bool:
    return all("\udc80" <= ch <= "\udcff" for ch in text if "\ud800" <= ch <= "\udfff")


def analyse(text: str, file: str) -> Analysis:
    """Parse, lower and count like `primusc check`; every failure is a diagnostic, never a raise."""
    try:
        return _analyse(text, file)
    except CompileError as err:
        return Analysis(text, file, diagnostics=tuple(err.diagnostics))
    except Exception as exc:  # a compiler bug must not take the editor's server down with it
        diag = Diagnostic(INTERNAL, f"internal error: {type(exc).__name__}: {exc}",
                          help="this is a bug in primusc; `primusc check` on the file reproduces it")
        return Analysis(text, file, diagnostics=(diag,))


def _analyse(text: str, file: str) -> Analysis:
    data = source_of(text, file)
    module = parse_by_item(data, file)
    try:
        program = loads_program(text, file)
    except CompileError as err:
        return Analysis(text, file, module, tuple(err.diagnostics))
    found: list[Diagnostic] = []
    counts: list[Counts] = []
    for space in program.spaces:
        summary = summarize(space)
        counts.append(Counts(space.name, space.span, summary.raw, summary.legal))
        try:
            require_legal(space, summary)
        except CompileError as err:
            found.extend(err.diagnostics)
    return Analysis(text, file, module, tuple(found), program.spaces, tuple(counts))


def resolve(text: str, file: str, name: str, fallback: Path | None) -> tuple[str, Any] | None:
    """The resolved value of a model, GPU or cluster a document sees; through the file that
    defines it when the document itself does not lower (one is usually mid-edit)."""
    for source, shown in ((text, file), (None, str(fallback) if fallback else None)):
        if shown is None:
            continue
        loader = Loader()
        try:
            loaded = (loader.load_text(source, shown) if source is not None
                      else loader.load_path(Path(shown), None, shown))
            entry = loaded.visible.get(name)
            if entry is not None and entry.kind != "space":
                return entry.kind, loader.value_of(entry)
        except CompileError:
            continue
        except RecursionError:
            return None
    return None
