"""One place that talks to an LLM: litellm, a cassette of recorded exchanges, and the trace.

A request is hashed (SHA-256 of its canonical JSON: model, messages, tools, temperature). Replies
are looked up first in the trace of a resumed run, then in the cassette; only then is litellm called
(unless the run is a replay, which never goes online), and a live reply is written to the cassette.
Prompts are built deterministically, so a rerun asks the very same requests and gets the very same
replies: ``--llm-replay`` reruns a search exactly, offline.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import OPTIONAL_MISSING
from primus_lang.search.llm.cassette import Cassette
from primus_lang.search.llm.config import LlmConfig

# the most of one reply's text kept (a proposal list is a few kilobytes)
REPLY_CHARS = 65_536


@frozen
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@frozen
class Reply:
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    cost_usd: float = 0.0
    error: str = ""  # the model call failed: nothing else is set
    source: str = "live"  # live, cassette, trace or mock

    def to_data(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "cost_usd": self.cost_usd,
            "error": self.error,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any], source: str) -> Reply:
        calls = tuple(ToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in data.get("tool_calls", []))
        return cls(str(data.get("content") or ""), calls, float(data.get("cost_usd", 0.0)), str(data.get("error", "")), source)


def request_hash(request: dict[str, Any]) -> str:
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class LlmClient:
    def __init__(self, config: LlmConfig, recorded: dict[str, dict[str, Any]] | None = None) -> None:
        self.config = config
        self.cassette = Cassette(config.cassette)
        self.recorded = recorded or {}  # replies a resumed run's trace already holds
        self._mock_index = 0

    def request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "model": self.config.model,
            "messages": messages,
            "tools": tools,
            "temperature": self.config.temperature,
        }

    def complete(self, request: dict[str, Any], timeout: float | None = None) -> tuple[str, Reply]:
        """The reply to ``request`` and its hash; a failed call is a Reply with ``error`` set. ``timeout``:
        the seconds a live call may take (not part of the request's hash)."""
        key = request_hash(request)
        if key in self.recorded:
            return key, Reply.from_data(self.recorded[key], "trace")
        stored = self.cassette.get(key)
        if stored is not None:
            return key, Reply.from_data(stored, "cassette")
        if self.config.replay:
            return key, Reply(error=f"the cassette has no reply for request {key[:12]}", source="cassette")
        reply = self._call(request, timeout)
        # errors are recorded too: a replay must meet the same failure to take the same path
        self.cassette.put(key, request, reply.to_data())
        return key, reply

    def _call(self, request: dict[str, Any], timeout: float | None = None) -> Reply:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
        try:
            import litellm
        except ImportError:
            raise CompileError(
                Diagnostic(OPTIONAL_MISSING, "the `llm` strategy needs litellm, which is not installed",
                           help="pip install 'primusc[agent]'")
            ) from None
        litellm.suppress_debug_info = True
        kwargs: dict[str, Any] = dict(request)
        if not kwargs["tools"]:
            del kwargs["tools"]
        if timeout is not None:
            kwargs["timeout"] = timeout
        source = "live"
        mocks = self.config.mock_responses
        if mocks is not None:
            mock = mocks[min(self._mock_index, len(mocks) - 1)]
            self._mock_index += 1
            source = "mock"
            if isinstance(mock, dict):
                kwargs["mock_response"] = str(mock.get("content", ""))
                kwargs["mock_tool_calls"] = mock.get("tool_calls")
            else:
                kwargs["mock_response"] = mock
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # any provider failure is the model's error, not ours
            return Reply(error=f"{type(exc).__name__}: {exc}"[:500], source=source)
        message = response.choices[0].message
        calls = tuple(
            ToolCall(str(c.id), str(c.function.name), str(c.function.arguments or "{}"))
            for c in (message.tool_calls or [])
        )
        cost = 0.0
        if source == "live":
            try:
                cost = float(litellm.completion_cost(completion_response=response))
            except Exception:  # an unknown price is not a failure; the call budget still counts it
                cost = 0.0
        content = str(message.content or "")
        if len(content) > REPLY_CHARS:
            # a proposal list is a few kilobytes; a runaway reply would go into the cassette and the trace
            # whole (cut here, so that a replay meets the same text)
            content = content[:REPLY_CHARS]
        return Reply(content, calls, cost, "", source)
