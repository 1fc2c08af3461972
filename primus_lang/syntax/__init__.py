"""Syntax: the Lark grammar → AST with spans, and the formatter."""

from primus_lang.syntax.generated import render_sections
from primus_lang.syntax.parser import parse

__all__ = ["parse", "render_sections"]
