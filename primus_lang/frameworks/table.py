"""The generated tables under ``frameworks/`` (tools/framework_knowledge.py), read once each, and the
releases of the frameworks that pin a Megatron-LM commit (Primus, Megatron-Bridge), which their tables
list the same way."""

from __future__ import annotations

import functools
import json
from typing import Any

from attrs import frozen

from primus_lang.resources import data_dir


@functools.cache
def load(framework: str, name: str) -> dict[str, Any]:
    """``frameworks/<framework>/<name>``, parsed."""
    with (data_dir("frameworks") / framework / name).open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@frozen
class Release:
    """One release of a framework built on Megatron-LM, as its table records it."""

    name: str
    ref: str
    commit: str
    date: str
    megatron: str  # the Megatron-LM commit it pins


@functools.cache
def releases(framework: str, name: str) -> tuple[Release, ...]:
    """The releases the table ``frameworks/<framework>/<name>`` was read at."""
    return tuple(Release(**v) for v in load(framework, name)["versions"])


def pinned_megatron(framework: str, name: str, release: str, who: str) -> str:
    """The name of the Megatron-LM version table ``release`` runs on (the commit it pins)."""
    from primus_lang.frameworks import megatron

    return megatron.named_for_commit(next(r.megatron for r in releases(framework, name) if r.name == release), who)
