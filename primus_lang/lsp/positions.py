"""Compiler spans (1-based, code points, lines cut at ``\\n``) ↔ LSP positions (0-based, in the
client's negotiated code units, UTF-16 unless it asked otherwise)."""

from __future__ import annotations

import re
from collections.abc import Callable

from primus_lang.ir.span import Span
from primus_lang.sources import lines

Units = Callable[[str], int]  # the length of a string in the client's code units


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_client(text_lines: list[str], line: int, column: int, units: Units) -> tuple[int, int]:
    """A 1-based (line, code-point column) as a 0-based (line, code-unit character)."""
    row = max(0, line - 1)
    src = text_lines[row] if row < len(text_lines) else ""
    return row, units(src[: max(0, column - 1)])


def span_range(text_lines: list[str], span: Span, units: Units) -> tuple[tuple[int, int], tuple[int, int]]:
    start = to_client(text_lines, span.line, span.column, units)
    end = to_client(text_lines, span.end_line, span.end_column, units)
    if end <= start:  # a zero-width span still needs a character to underline
        end = (start[0], start[1] + 1)
    return start, end


def from_client(text_lines: list[str], line: int, character: int, units: Units) -> tuple[int, int]:
    """A 0-based client position as a 0-based (line, code-point index) into ``text_lines``."""
    if line >= len(text_lines):
        return line, 0
    src = text_lines[line]
    used = 0
    for i, ch in enumerate(src):
        if used >= character:
            return line, i
        used += units(ch)
    return line, len(src)


_WORD = re.compile(r"[A-Za-z0-9_.]+")


def word_at(text_lines: list[str], line: int, index: int) -> tuple[str, int, int]:
    """The word (a name, a dotted module path, a code) under a code-point index, with its bounds."""
    if line >= len(text_lines):
        return "", index, index
    src = text_lines[line]
    for m in _WORD.finditer(src):
        if m.start() <= index <= m.end():
            return m.group(), m.start(), m.end()
    return "", index, index


__all__ = ["Units", "from_client", "lines", "span_range", "to_client", "utf16_units", "word_at"]
