"""Parsing the investigator's reply: JSON proposals, each a set of changes and a hypothesis."""

from __future__ import annotations

import json
import re
from typing import Any

from attrs import frozen

from primus_lang.datafiles import parse_json

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

# a hypothesis is a sentence: longer ones are cut where they are kept and shown to the model again
HYPOTHESIS_CHARS = 300


@frozen
class LlmProposal:
    changes: tuple[tuple[str, object], ...]
    hypothesis: str


class MalformedReply(ValueError):
    """The reply cannot be used; the message is sent back to the model when it is asked again."""


def _json_text(text: str) -> str:
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise MalformedReply("the reply holds no JSON object")
    start = min(starts)
    end = text.rfind("}" if text[start] == "{" else "]")
    if end < start:
        raise MalformedReply("the reply's JSON is cut off")
    return text[start : end + 1]


def parse_reply(text: str, most: int = 5) -> list[LlmProposal]:
    if not text.strip():
        raise MalformedReply("the reply is empty")
    json_text = _json_text(text)  # a MalformedReply of its own, which the handlers below would rename
    try:
        data: Any = parse_json(json_text)
    except json.JSONDecodeError as err:
        raise MalformedReply(f"the reply is not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except ValueError as err:
        raise MalformedReply(f"the reply's JSON {err}") from None
    items = data.get("proposals") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise MalformedReply('the reply must be {"proposals": [...]} with at least one proposal')
    out: list[LlmProposal] = []
    for k, item in enumerate(items[:most], start=1):
        if not isinstance(item, dict):
            raise MalformedReply(f"proposal {k} is not an object")
        changes = item.get("changes")
        if not isinstance(changes, dict) or not changes:
            raise MalformedReply(f'proposal {k} needs a non-empty "changes" object')
        hypothesis = item.get("hypothesis", "")
        if not isinstance(hypothesis, str):
            raise MalformedReply(f'proposal {k}: "hypothesis" must be a string')
        hypothesis = hypothesis.strip()
        if len(hypothesis) > HYPOTHESIS_CHARS:  # it is shown back to the model in every later prompt
            hypothesis = hypothesis[:HYPOTHESIS_CHARS] + "..."
        out.append(LlmProposal(tuple((str(key), value) for key, value in changes.items()), hypothesis))
    return out
