"""Source positions. Kept beside the IR's meaning: spans never take part in equality."""

from __future__ import annotations

from attrs import frozen


@frozen
class Span:
    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"
