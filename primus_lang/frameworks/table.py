"""The generated tables under ``frameworks/`` (tools/framework_knowledge.py), read once each."""

from __future__ import annotations

import functools
import json
from typing import Any

from primus_lang.resources import data_dir


@functools.cache
def load(framework: str, name: str) -> dict[str, Any]:
    """``frameworks/<framework>/<name>``, parsed."""
    with (data_dir("frameworks") / framework / name).open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data
