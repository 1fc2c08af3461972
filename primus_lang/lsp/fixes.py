"""Quick fixes: a diagnostic whose help says "did you mean `X`?" offers to write ``X`` in place of
the word it is about.

Every compiler stage words its near misses that way (``diagnostics/suggest.py`` finds them), and
names the word it could not place in backticks in its message; the word is the one of those that
stands whole inside the diagnostic's span (`tpp` in ``tpp : 1 | 2``, `tokens_per_gpuu` in
``maximize tokens_per_gpuu``). Where none does, or the help has no single suggestion, there is no
fix: an edit is offered only where it replaces exactly what the message names.
"""

from __future__ import annotations

import re

from attrs import frozen

from primus_lang.diagnostics import Diagnostic
from primus_lang.ir.span import Span

_SUGGESTION = re.compile(r"did you mean `([^`]+)`\?")
_NAMED = re.compile(r"`([^`]+)`")


@frozen
class Fix:
    """Write ``text`` over ``span`` (one line: the word the diagnostic is about)."""

    span: Span
    text: str


def quick_fix(d: Diagnostic, text_lines: list[str]) -> Fix | None:
    """The replacement ``d``'s help suggests, placed on the word its message names, or None."""
    suggested = _SUGGESTION.findall(d.help)
    span = d.span
    if len(suggested) != 1 or span is None:
        return None
    new = suggested[0]
    for row in range(span.line, span.end_line + 1):
        if row > len(text_lines):
            break
        src = text_lines[row - 1]
        lo = span.column - 1 if row == span.line else 0
        hi = span.end_column - 1 if row == span.end_line else len(src)
        for old in _NAMED.findall(d.message):
            if old == new:
                continue
            hit = re.search(rf"(?<![\w.]){re.escape(old)}(?![\w.])", src[lo:hi])
            if hit is not None:
                start = lo + hit.start() + 1
                return Fix(Span(span.file, row, start, row, start + len(old)), new)
    return None


__all__ = ["Fix", "quick_fix"]
