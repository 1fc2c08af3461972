"""The text of every file the compiler has read, so diagnostics can quote the offending line."""

from __future__ import annotations


def lines(text: str) -> list[str]:
    """``text`` cut into lines as the lexer counts them: at ``\n`` only (``str.splitlines`` also cuts
    at U+2028, U+0085 and others, which a comment or a string may hold), a ``\r`` before it dropped."""
    out = text.split("\n")
    if out[-1] == "":
        out.pop()
    return [line.removesuffix("\r") for line in out]


class SourceCache:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, name: str, text: str) -> None:
        self._texts[name] = text

    def get(self, name: str) -> str | None:
        return self._texts.get(name)


SOURCES = SourceCache()
