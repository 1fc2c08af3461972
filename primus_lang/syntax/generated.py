"""Sections of a document that a command writes: the text between ``<!-- generated: NAME -->`` and
``<!-- end: NAME -->``, so the tables a reader trusts are the ones the code computes (the language
reference's from the IR, projection.md's from the bundled corpus), and a test fails when they drift."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping


def render_sections(text: str, sections: Mapping[str, Callable[[], str]]) -> str:
    """``text`` with each ``<!-- generated: NAME -->`` ... ``<!-- end: NAME -->`` section of
    ``sections`` rewritten from its maker (each computed only if the text has it)."""
    for name, make in sections.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n).*?(<!-- end: {name} -->)", re.S)
        if pattern.search(text):
            body = make().replace("\\", "\\\\")
            text = pattern.sub(rf"\g<1>{body}\n\g<2>", text)
    return text
