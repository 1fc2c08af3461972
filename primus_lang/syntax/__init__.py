"""Syntax: the Lark grammar → AST with spans, and the formatter."""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.syntax.generated import render_sections
from primus_lang.syntax.parser import MAX_INT, parse, parse_by_item, read_source, whole_number
from primus_lang.syntax.units import UNITS, with_unit


def format_source(text: str, file: str = "<input>") -> str:
    """The canonical layout of ``text`` (``primusc fmt``); raises ``CompileError`` if it does not parse."""
    # imported on use: `check` and every other stage that parses never format
    from primus_lang.syntax.format import format_source as layout

    return layout(text, file)


__all__ = ["MAX_INT", "UNITS", "format_source", "parse", "parse_by_item", "read_source", "render_sections",
           "whole_number", "with_unit"]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.syntax import ast
    from primus_lang.syntax.format import format_module
    from primus_lang.syntax.lexical import code_of
    from primus_lang.syntax.parser import MAX_BYTES, decode

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["MAX_BYTES", "ast", "code_of", "decode", "format_module"]
