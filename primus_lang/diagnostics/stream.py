"""Standard error under ``--error-format json``: JSON Lines, so a program reads every line it gets.

A diagnostics document (``render(..., "json")``, one line) passes as it is; any other line a command
prints there (a note, a warning's plain line, ``fmt --check``'s "would reformat") becomes
``{"note": LINE}``. Without this, stderr held a diagnostics document followed by plain text, which no
JSON reader takes whole.
"""

from __future__ import annotations

import json
from typing import TextIO


class JsonLines:
    """A text stream that writes each complete line to ``inner`` as one JSON document."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._line(line)
        return len(text)

    def _line(self, line: str) -> None:
        if not line.strip():
            return
        if line.startswith("{"):
            try:
                json.loads(line)
            except ValueError:
                pass
            else:
                self.inner.write(line + "\n")
                return
        self.inner.write(json.dumps({"note": line.removeprefix("note: ")}) + "\n")

    def flush(self) -> None:
        if self._pending:
            self._line(self._pending)
            self._pending = ""
        self.inner.flush()

    def isatty(self) -> bool:
        return False  # a program reads it: no progress bars, no colour

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:
        return self.inner.encoding
