"""The cassette: an LLM's recorded exchanges by request hash, which ``--llm-cassette`` writes and
``--llm-replay`` answers from (``client.LlmClient``), and whose recorded model a replay reads
(``config.LlmConfig.resolve``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from primus_lang.datafiles import DataCodes, loads_json, read_text
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import CASSETTE_INVALID

CASSETTE_FORMAT = 1

CASSETTE_CODES = DataCodes(CASSETTE_INVALID, CASSETTE_INVALID, CASSETTE_INVALID, CASSETTE_INVALID, CASSETTE_INVALID,
                           CASSETTE_INVALID)


class Cassette:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path is not None and path.is_file():
            what = "a primusc LLM cassette"
            data = loads_json(read_text(path, CASSETTE_CODES, what), str(path), CASSETTE_CODES, what)
            try:
                if data.get("format") != CASSETTE_FORMAT:
                    raise ValueError("unknown cassette format")
                self.entries = dict(data["interactions"])
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise CompileError(
                    Diagnostic(CASSETTE_INVALID, f"`{path}` is not a primusc LLM cassette ({err})")
                ) from None

    def models(self) -> list[str]:
        """The models the recorded requests asked, each once, in order."""
        named = (e.get("request", {}).get("model") for e in self.entries.values() if isinstance(e, dict))
        return list(dict.fromkeys(m for m in named if isinstance(m, str) and m))

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self.entries.get(key)
        return None if entry is None else dict(entry["reply"])

    def put(self, key: str, request: dict[str, Any], reply: dict[str, Any]) -> None:
        self.entries[key] = {"request": request, "reply": reply}
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(self.path.suffix + ".tmp")
            tmp.write_text(
                json.dumps({"format": CASSETTE_FORMAT, "interactions": self.entries}, indent=1, sort_keys=True),
                encoding="utf-8",
            )
            tmp.replace(self.path)
