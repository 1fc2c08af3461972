"""Reading a config.json: typed field access whose errors point at the offending key."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from primus_lang.datafiles import DataCodes, loads_json, read_text
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    BAD_VALUE,
    CONFIG_NUMBER,
    CONFIG_TOO_DEEP,
    CONFIG_TOO_LARGE,
    CONFIG_UNREADABLE,
    MISSING_FIELD,
)
from primus_lang.ir.span import Span

# A config.json has no aliases to count: its value count is bounded by its size.
CONFIG_CODES = DataCodes(unreadable=CONFIG_UNREADABLE, encoding=CONFIG_UNREADABLE, too_large=CONFIG_TOO_LARGE,
                         too_deep=CONFIG_TOO_DEEP, too_many_nodes=CONFIG_TOO_LARGE, number=CONFIG_NUMBER)


@frozen
class HfConfig:
    """One parsed config.json, with its text kept so diagnostics can point at a key."""

    file: str
    text: str
    data: Mapping[str, Any]

    @property
    def model_type(self) -> str:
        value = self.data.get("model_type")
        return value if isinstance(value, str) else ""

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def span_of(self, key: str) -> Span | None:
        """The position of ``"key":`` in the text (the first one; configs rarely repeat keys)."""
        match = re.search(r'"' + re.escape(key) + r'"\s*:', self.text)
        if match is None:
            return None
        line = self.text.count("\n", 0, match.start()) + 1
        column = match.start() - (self.text.rfind("\n", 0, match.start()) + 1) + 1
        return Span(self.file, line, column, line, column + len(key) + 2)

    def missing(self, key: str, why: str) -> Diagnostic:
        return Diagnostic(
            MISSING_FIELD,
            f"`{self.file}` has no `{key}`, which the card needs for {why}",
            help=f'add `"{key}": ...` to the config, or write the model card by hand',
        )

    def bad(self, key: str, value: object, expected: str) -> Diagnostic:
        return Diagnostic(
            BAD_VALUE,
            f"`{key}` is {_shown(value)}, expected {expected}",
            span=self.span_of(key),
            help="fix the value in the config",
        )


def _shown(value: object) -> str:
    """A value as the config writes it, cut short: a hostile one may be a megabyte of nesting."""
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Reader:
    """Typed reads that collect every problem, so one run reports all missing fields at once."""

    def __init__(self, config: HfConfig) -> None:
        self.config = config
        self.problems: list[Diagnostic] = []

    def count(self, key: str, why: str, default: int | None = None, minimum: int = 1) -> int:
        """An integer field (``minimum`` 1 for sizes, 0 for counts that may be zero); required
        unless a ``default`` is given."""
        value = self.config.data.get(key)
        if value is None:
            if default is None:
                self.problems.append(self.config.missing(key, why))
                return 0
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.problems.append(self.config.bad(key, value, f"an integer >= {minimum}"))
            return 0
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.config.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problems.append(self.config.bad(key, value, "true or false"))
            return default
        return value

    def real(self, key: str, default: float) -> float:
        """A non-negative number field (a coefficient); ``default`` when absent."""
        value = self.config.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            self.problems.append(self.config.bad(key, value, "a finite number >= 0"))
            return default
        return float(value)

    def text(self, key: str, default: str = "") -> str:
        value = self.config.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.problems.append(self.config.bad(key, value, "a string"))
            return default
        return value

    def mapping(self, key: str) -> Mapping[str, Any]:
        value = self.config.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problems.append(self.config.bad(key, value, "an object"))
            return {}
        return value

    def done(self) -> None:
        if self.problems:
            raise CompileError(self.problems)


def read_config(path: str | Path) -> HfConfig:
    """Load ``path`` (or ``path/config.json`` for a model folder) as one JSON object, within the
    data-file limits; refuse anything else with a P31xx code."""
    if Path(path).is_dir():
        path = Path(path) / "config.json"
    name = str(path)
    text = read_text(path, CONFIG_CODES, "a model's config.json")
    data = loads_json(text, name, CONFIG_CODES, "a model's config.json")
    if not isinstance(data, dict):
        raise CompileError(
            Diagnostic(
                CONFIG_UNREADABLE,
                f"`{name}` holds a JSON {type(data).__name__}, not an object",
                help="a Hugging Face config.json is one JSON object of named fields",
            )
        )
    return HfConfig(name, text, data)
