"""The text of every file the compiler has read, so diagnostics can quote the offending line."""

from __future__ import annotations


class SourceCache:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, name: str, text: str) -> None:
        self._texts[name] = text

    def get(self, name: str) -> str | None:
        return self._texts.get(name)


SOURCES = SourceCache()
