"""The LLM investigator: a model proposes cross-axis moves as JSON, each with a hypothesis.

Every proposal goes through the same gate, legality check, memory proof and projection as any other;
the model learns what became of its proposals in the next prompt. A malformed reply is sent back
with the reason and asked again (``retries`` times), then dropped. When the model cannot be used (no
model, no key and no cassette, repeated model errors, or its own call/cost budget spent) the
investigator says so in the trace and hands over to the evolutionary search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from primus_lang.datafiles import parse_json
from primus_lang.search.gate import gate_changes
from primus_lang.search.llm.client import LlmClient, Reply
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.llm.prompt import SYSTEM, TOOLS, describe_trial, user_message
from primus_lang.search.llm.reply import LlmProposal, MalformedReply, parse_reply
from primus_lang.search.strategies.base import Strategy
from primus_lang.search.strategies.evolutionary import Evolutionary
from primus_lang.search.trial import Proposal, Trial

if TYPE_CHECKING:
    from primus_lang.search.view import SearchView

FAILED_ROUNDS = 2  # rounds in a row without a usable reply before the investigator gives up
IDLE_ROUNDS = 3  # rounds in a row whose proposals bring no new evaluation (repeats, illegal, refused)

# the longest one LLM call may take (litellm waits 600 s by default); less where the time budget ends sooner
CALL_SECONDS = 300.0


class Investigator(Strategy):
    name = "llm"

    def __init__(self, config: LlmConfig) -> None:
        super().__init__()
        self.config = config
        self.client: LlmClient | None = None
        self.fallback: Evolutionary | None = None
        self.feedback: list[Trial] = []
        self.failed_rounds = 0
        self.idle_rounds = 0
        self.accepted = 0  # proposals parsed from replies
        self.dropped = 0  # replies dropped after their retries

    def finish(self) -> None:
        if self.fallback is not None:
            self.fallback.finish()
        super().finish()

    def start(self, search: SearchView) -> None:
        super().start(search)
        if self.fallback is not None:
            self.fallback.start(search)
            return
        usable, why = self.config.usable()
        if not usable:
            self._give_up(why)
            return
        self.client = LlmClient(self.config, recorded=search.llm_replies)

    def _give_up(self, why: str) -> None:
        self.search.note(why)
        self.stop_reason = why
        self.fallback = Evolutionary()
        self.fallback.start(self.search)

    def propose(self) -> list[Proposal]:
        while self.fallback is None:
            if not self.search.meter.llm_allowed():
                self._give_up("the LLM call or cost budget is spent; the evolutionary search continues")
                break
            proposals = self._round()
            if proposals:
                self.failed_rounds = 0
                base = self._incumbent()
                return [
                    Proposal(self.name, base=base, changes=p.changes, hypothesis=p.hypothesis) for p in proposals
                ]
            self.failed_rounds += 1
            if self.failed_rounds >= FAILED_ROUNDS:
                self._give_up(
                    f"the LLM gave no usable proposals in {FAILED_ROUNDS} rounds; the evolutionary search continues"
                )
        assert self.fallback is not None
        return self.fallback.propose()

    def observe(self, trials: Sequence[Trial]) -> None:
        if self.fallback is not None:
            self.fallback.observe(trials)
            return
        self.feedback = [t for t in trials if t.source == self.name]
        self.idle_rounds = 0 if any(t.charged for t in trials) else self.idle_rounds + 1
        if self.idle_rounds >= IDLE_ROUNDS:
            self._give_up(
                f"the LLM's last {IDLE_ROUNDS} rounds brought no new evaluation; the evolutionary search continues"
            )

    # --- one round: ask, let it use tools, parse, retry malformed replies ------------------------
    def _incumbent(self) -> Any:
        s = self.search
        return s.best.candidate if s.best is not None and s.best.candidate is not None else s.land.base

    def _round(self) -> list[LlmProposal]:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": user_message(self.search, self.feedback, self.config.proposals)},
        ]
        for attempt in range(1 + self.config.retries):
            reply, messages = self._converse(messages)
            if reply.error:
                self.search.note(f"LLM error: {reply.error}")
                return []
            try:
                parsed = parse_reply(reply.content, self.config.proposals)
            except MalformedReply as err:
                self.search.trace.write("llm_malformed", attempt=attempt + 1, problem=str(err))
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": f"That reply could not be used: {err}. Answer again with the JSON object only."},
                ]
                continue
            self.accepted += len(parsed)
            return parsed
        self.dropped += 1
        self.search.note(f"an LLM reply was dropped after {self.config.retries + 1} malformed attempts")
        return []

    def _converse(self, messages: list[dict[str, Any]]) -> tuple[Reply, list[dict[str, Any]]]:
        assert self.client is not None
        meter = self.search.meter
        reply = Reply(error="no call made")
        for round_ in range(self.config.tool_rounds + 1):
            if not meter.llm_allowed():
                return Reply(error="the LLM call or cost budget is spent"), messages
            tools = TOOLS if round_ < self.config.tool_rounds else []
            left = meter.remaining_seconds()
            # a model that never answers must not hold the search past its time budget
            wait = CALL_SECONDS if left is None else max(1.0, min(CALL_SECONDS, left))
            key, reply = self.client.complete(self.client.request(messages, tools), timeout=wait)
            meter.llm_calls += 1
            meter.llm_cost_usd += reply.cost_usd
            self.search.trace.write(
                "llm", call=meter.llm_calls, request=key, source=reply.source, reply=reply.to_data()
            )
            if reply.error or not reply.tool_calls:
                return reply, messages
            messages = [
                *messages,
                {
                    "role": "assistant",
                    "content": reply.content or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in reply.tool_calls
                    ],
                },
                *(
                    {"role": "tool", "tool_call_id": c.id, "content": self._tool(c.name, c.arguments)}
                    for c in reply.tool_calls
                ),
            ]
        return reply, messages

    def _tool(self, name: str, arguments: str) -> str:
        s = self.search
        try:
            args = parse_json(arguments or "{}")
            changes = args.get("changes", args) if isinstance(args, dict) else None
        except json.JSONDecodeError as err:
            return f"error: arguments are not JSON ({err.msg})"
        except ValueError as err:
            return f"error: the arguments' JSON {err}"
        if not isinstance(changes, dict):
            return 'error: pass {"changes": {"<axis>": <value>}}'
        items = tuple((str(k), v) for k, v in changes.items())
        base = self._incumbent()
        if name == "estimate_memory":
            verdict = gate_changes(s.land, items, base)
            if not verdict.allowed:
                return "refused: " + "; ".join(verdict.reasons)
            cand = base.replace(**dict(verdict.changes))
            idx = s.land.lookup(cand)
            if idx is None:
                return "illegal: " + "; ".join(s.land.why_illegal(cand))
            peak = int(s.land.peaks[idx])
            fits = "fits" if s.land.fits[idx] else "does not fit"
            return f"{fits}: peak {peak / 1e9:.2f} GB per GPU, limit {s.land.limit / 1e9:.2f} GB"
        if name == "project":
            if s.meter.stop_reason():
                return "refused: the evaluation budget is spent"
            trial = s.submit(Proposal(f"{self.name}:tool", base=base, changes=items, hypothesis="tool call"))
            if trial.evaluation is None:
                return f"{trial.verdict}: " + "; ".join(trial.reasons)
            return describe_trial(s, trial)
        return f"error: no tool named {name}"
