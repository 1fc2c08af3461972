"""How the LLM investigator is configured, and whether it can run here."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from attrs import frozen

MODEL_ENV = "PRIMUSC_LLM_MODEL"


@frozen
class LlmConfig:
    """``model`` is any litellm model string; the provider's key comes from its usual variable.

    ``cassette`` records every request and reply; with ``replay`` the run is offline and answered
    only from it. ``mock_responses`` go to litellm's built-in offline mock (tests).
    """

    model: str = ""
    cassette: Path | None = None
    replay: bool = False
    temperature: float = 0.0
    retries: int = 2  # a malformed reply is asked again this many times, then dropped
    tool_rounds: int = 3  # tool calls the model may make before it must answer
    proposals: int = 5
    # handed to litellm one per call (the last one repeats): a reply text, an Exception to raise, or
    # {"content": ..., "tool_calls": [...]} for a reply that calls tools; tests run offline on these
    mock_responses: tuple[object, ...] | None = None

    @classmethod
    def resolve(
        cls, model: str = "", space_model: str = "", cassette: Path | None = None, replay: bool = False
    ) -> LlmConfig:
        """The command line wins over the space's ``assume llm_model``, which wins over the environment. A
        replay named no model by any of them replays the one its cassette recorded (the model is part of
        each request's hash, so another would match no recorded reply)."""
        chosen = model or space_model or os.environ.get(MODEL_ENV, "")
        if replay and not chosen and cassette is not None and cassette.is_file():
            from primus_lang.search.llm.cassette import Cassette

            recorded = Cassette(cassette).models()
            if len(recorded) == 1:
                chosen = recorded[0]
        return cls(model=chosen, cassette=cassette, replay=replay)

    def usable(self) -> tuple[bool, str]:
        """Whether the investigator can run, and if not, a sentence saying why."""
        if self.replay:
            if self.cassette is None or not self.cassette.exists():
                return False, f"--llm-replay needs a recorded cassette; `{self.cassette}` does not exist"
            if not self.cassette.is_file():
                return False, f"--llm-replay needs a recorded cassette; `{self.cassette}` is not a file"
            return True, ""
        if not self.model:
            return False, (
                "no LLM configured (give --llm-model, `assume llm_model = ...` or "
                f"{MODEL_ENV}); using the evolutionary search instead"
            )
        if self.mock_responses is not None:
            return True, ""
        if self.cassette is not None and self.cassette.is_file():
            return True, ""
        try:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm
        except ImportError:
            return False, "the LLM strategy needs litellm (`pip install primusc[agent]`); using the evolutionary search"
        litellm.suppress_debug_info = True
        try:
            # litellm prints a banner of providers to stdout for a model it cannot place, which would
            # corrupt `plan --json`: anything it prints goes to stderr
            with contextlib.redirect_stdout(sys.stderr):
                litellm.get_llm_provider(self.model)
                env = litellm.validate_environment(model=self.model)
        except Exception as exc:  # litellm raises plain exceptions for unknown providers
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            return False, (f"litellm does not know the model `{self.model}` ({first}; a model is named "
                           "`provider/model`, e.g. `openai/gpt-4o-mini`); using the evolutionary search")
        if not env.get("keys_in_environment", False):
            missing = ", ".join(env.get("missing_keys", [])) or "its API key"
            return False, (
                f"no key for `{self.model}` in the environment (set {missing}) and no cassette; "
                "using the evolutionary search instead"
            )
        return True, ""
