"""Syntax: the Lark grammar → AST with spans, and the formatter."""

from primus_lang.syntax.generated import render_sections
from primus_lang.syntax.parser import parse, parse_by_item, read_source
from primus_lang.syntax.units import UNITS


def format_source(text: str, file: str = "<input>") -> str:
    """The canonical layout of ``text`` (``primusc fmt``); raises ``CompileError`` if it does not parse."""
    # imported on use: `check` and every other stage that parses never format
    from primus_lang.syntax.format import format_source as layout

    return layout(text, file)


__all__ = ["UNITS", "format_source", "parse", "parse_by_item", "read_source", "render_sections"]
