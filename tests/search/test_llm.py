"""The LLM investigator, fully offline: litellm's mock_response, recorded cassettes, the trace."""

import importlib.util
import json
import os
from pathlib import Path

import pytest

from primus_lang.search.budget import Limits
from primus_lang.search.llm.client import Cassette, request_hash
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.llm.reply import MalformedReply, parse_reply
from primus_lang.search.run import search_landscape
from primus_lang.search.trial import EVALUATED, ILLEGAL, OOM, REFUSED
from tests.search import synthetic

# litellm is the `agent` extra: without it the investigator says so and the search falls back, which
# these tests, driving litellm's mock responses, cannot check
NEEDS_LITELLM = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                   reason="litellm is in the `agent` extra")

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
DATA = Path(__file__).parent / "data"

GOOD = json.dumps({"proposals": [
    {"changes": {"tp": 4, "mbs": 4, "precision": "fp8", "tp_comm_overlap": True}, "hypothesis": "fp8 with overlap"},
    {"changes": {"tp": 2, "mbs": 2, "precision": "fp8"}, "hypothesis": "less TP, bigger micro-batch"},
    {"changes": {"pp": 2, "vpp": 2, "precision": "fp8"}, "hypothesis": "interleaved pipeline"},
]})
ILLEGAL_AND_REFUSED = json.dumps({"proposals": [
    {"changes": {"gbs": 512}, "hypothesis": "a bigger batch trains faster"},
    {"changes": {"lr": 0.001}, "hypothesis": "learning rate"},
    {"changes": {"vpp": 4, "pp": 1}, "hypothesis": "virtual stages without a pipeline"},
    {"changes": {"tp": 16}, "hypothesis": "more TP than the axis allows"},
]})


def run(config: LlmConfig, evaluations: int = 12, trace: Path | None = None, seed: int = 0):
    return search_landscape(synthetic.landscape(), synthetic.evaluator(), "llm", Limits(evaluations=evaluations),
                            seed=seed, trace=trace, llm=config)


@pytest.mark.slow
@NEEDS_LITELLM
def test_proposals_are_parsed_gated_and_evaluated(tmp_path: Path) -> None:
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=(GOOD,)), trace=tmp_path / "t.jsonl")
    llm_trials = [t for t in result.trials if t.source == "llm"]
    assert llm_trials[0].verdict == EVALUATED
    # changes apply on top of the incumbent the model was shown, not one found later in the batch
    assert llm_trials[1].candidate is not None and not llm_trials[1].candidate.tp_comm_overlap
    assert all(t.verdict in (EVALUATED, OOM) for t in llm_trials[:3])
    assert llm_trials[0].hypothesis == "fp8 with overlap"
    assert llm_trials[0].label == "tp=4,mbs=4,precision=fp8,tp_comm_overlap=true"
    assert result.llm_calls >= 1
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    llm = [e for e in events if e["event"] == "llm"]
    assert llm[0]["source"] == "mock" and len(llm[0]["request"]) == 64
    # the same proposals come back every round: no new evaluation, so it hands over to evolution
    assert any("no new evaluation" in n for n in result.notes)
    assert result.evaluations == 12 and any(t.source == "evolutionary" for t in result.trials)


@NEEDS_LITELLM
def test_illegal_and_refused_proposals_cost_nothing() -> None:
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=(ILLEGAL_AND_REFUSED, GOOD)))
    first = [t for t in result.trials if t.source == "llm"][:4]
    assert [t.verdict for t in first] == [REFUSED, REFUSED, ILLEGAL, REFUSED]
    assert "changes what is trained" in first[0].reasons[0]
    assert "changes what is trained" in first[1].reasons[0]
    assert "outside the axis domain" in first[3].reasons[0]
    assert not any(t.charged for t in first)
    # the next prompt tells the model what became of them
    later = [t for t in result.trials if t.source == "llm" and t.verdict == EVALUATED]
    assert later, "the second reply's proposals were evaluated"


@NEEDS_LITELLM
def test_malformed_json_is_retried_then_used() -> None:
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=("here you go: {proposals: [", "```json\n" + GOOD + "\n```")))
    # the engine evaluates the planner's baseline first (engine._baseline_first), then the LLM proposes
    assert result.trials[0].source == "baseline"
    assert result.trials[1].source == "llm" and result.trials[1].verdict == EVALUATED
    assert result.llm_calls >= 2


@NEEDS_LITELLM
def test_malformed_replies_are_dropped_and_it_falls_back(tmp_path: Path) -> None:
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=("not json",)), trace=tmp_path / "t.jsonl")
    assert any("dropped after 3 malformed attempts" in n for n in result.notes)
    assert any("no usable proposals" in n for n in result.notes)
    assert result.evaluations == 12 and all(t.source == "evolutionary" for t in result.trials[1:])
    text = (tmp_path / "t.jsonl").read_text()
    assert text.count('"event":"llm_malformed"') == 6  # 2 rounds x (1 + 2 retries)


@NEEDS_LITELLM
def test_a_model_error_falls_back() -> None:
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=(RuntimeError("provider overloaded"),)))
    assert any("LLM error" in n and "provider overloaded" in n for n in result.notes)
    assert result.evaluations == 12 and result.best is not None


@NEEDS_LITELLM
def test_tool_calls_are_answered() -> None:
    tools = {"content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "estimate_memory", "arguments": json.dumps({"changes": {"tp": 1}})}},
        {"id": "b", "type": "function", "function": {"name": "project", "arguments": json.dumps({"changes": {"tp": 8}})}},
    ]}
    result = run(LlmConfig(model="gpt-4o-mini", mock_responses=(tools, GOOD)))
    tool_trials = [t for t in result.trials if t.source == "llm:tool"]
    assert len(tool_trials) == 1 and tool_trials[0].candidate is not None and tool_trials[0].candidate.tp == 8
    assert result.trials[2].source == "llm"


@NEEDS_LITELLM
def test_unconfigured_llm_says_so_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRIMUSC_LLM_MODEL", raising=False)
    result = run(LlmConfig())
    assert any("no LLM configured" in n for n in result.notes)
    assert result.evaluations == 12
    for var in ("OPENAI_API_KEY", "AZURE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    result = run(LlmConfig(model="openai/gpt-4o-mini"))
    assert any("no key for `openai/gpt-4o-mini`" in n for n in result.notes)


@NEEDS_LITELLM
def test_auto_uses_the_llm_when_configured_else_evolution() -> None:
    land = synthetic.landscape()
    with_llm = search_landscape(land, synthetic.evaluator(), "auto", Limits(evaluations=40),
                                llm=LlmConfig(model="gpt-4o-mini", mock_responses=(GOOD,)))
    assert any(t.source == "llm" for t in with_llm.trials)
    without = search_landscape(land, synthetic.evaluator(), "auto", Limits(evaluations=40), llm=LlmConfig())
    assert not any(t.source == "llm" for t in without.trials)
    assert any(t.source == "evolutionary" for t in without.trials)


@NEEDS_LITELLM
def test_recorded_cassette_replays_exactly_offline(tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    recorded = run(LlmConfig(model="gpt-4o-mini", cassette=cassette,
                             mock_responses=("oops", GOOD, ILLEGAL_AND_REFUSED)), evaluations=20)
    assert cassette.is_file()
    replayed = run(LlmConfig(model="gpt-4o-mini", cassette=cassette, replay=True), evaluations=20)
    assert [(t.source, t.candidate, t.verdict) for t in replayed.trials] == [
        (t.source, t.candidate, t.verdict) for t in recorded.trials
    ]


def test_committed_cassette_replays() -> None:
    """A cassette in the repository (recorded through litellm's mock) drives a whole search offline."""
    config = LlmConfig(model="gpt-4o-mini", cassette=DATA / "investigator_cassette.json", replay=True)
    result = run(config, evaluations=20)
    assert any(t.source == "llm" and t.verdict == EVALUATED for t in result.trials)
    assert not any("cassette has no reply" in n for n in result.notes)


def test_replay_without_an_entry_reports_and_falls_back(tmp_path: Path) -> None:
    cassette = tmp_path / "empty.json"
    Cassette(cassette).put("0" * 64, {}, {"content": GOOD})
    result = run(LlmConfig(model="gpt-4o-mini", cassette=cassette, replay=True))
    assert any("cassette has no reply" in n for n in result.notes)
    assert result.evaluations == 12


@NEEDS_LITELLM
def test_resume_replays_llm_replies_from_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    mocks = (GOOD, ILLEGAL_AND_REFUSED, GOOD)
    whole = run(LlmConfig(model="gpt-4o-mini", mock_responses=mocks), evaluations=20, trace=tmp_path / "w.jsonl")
    lines = (tmp_path / "w.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"evaluation_number":5,' in line)
    trace.write_text("\n".join(lines[: cut + 1]) + "\n")
    # no mocks now: every LLM reply must come from the trace
    resumed = search_landscape(synthetic.landscape(), synthetic.evaluator(), "llm", Limits(evaluations=20),
                               resume=trace, llm=LlmConfig(model="gpt-4o-mini", replay=True,
                                                           cassette=DATA / "investigator_cassette.json"))
    assert [t.candidate for t in resumed.trials] == [t.candidate for t in whole.trials]


def test_reply_parser() -> None:
    assert len(parse_reply(GOOD)) == 3
    assert parse_reply('[{"changes": {"tp": 2}}]')[0].changes == (("tp", 2),)
    for bad in ("", "no json", '{"proposals": []}', '{"proposals": [{"changes": {}}]}',
                '{"proposals": [{"changes": {"tp": 2}, "hypothesis": 3}]}', '{"proposals": [1]}'):
        with pytest.raises(MalformedReply):
            parse_reply(bad)
    assert len(parse_reply(json.dumps({"proposals": [{"changes": {"tp": 1}}] * 9}))) == 5


def test_request_hash_is_canonical() -> None:
    assert request_hash({"a": 1, "b": [1, 2]}) == request_hash({"b": [1, 2], "a": 1})
    assert request_hash({"a": 1}) != request_hash({"a": 2})


@NEEDS_LITELLM
def test_llm_call_budget_hands_over_to_evolution() -> None:
    result = search_landscape(synthetic.landscape(), synthetic.evaluator(), "llm",
                              Limits(evaluations=12, llm_calls=1), llm=LlmConfig(model="gpt-4o-mini", mock_responses=(GOOD,)))
    assert result.llm_calls == 1
    assert any("call or cost budget is spent" in n for n in result.notes)
    assert result.evaluations == 12 and any(t.source == "evolutionary" for t in result.trials)


@NEEDS_LITELLM
def test_a_call_waits_no_longer_than_the_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that never answers held `plan` past its time budget (litellm waits 600 s by default; a new
    user's trial): each call is given the time the budget has left, and at most CALL_SECONDS."""
    import litellm

    from primus_lang.search.strategies.investigator import CALL_SECONDS

    waits: list[float] = []

    def answer(**kwargs: object) -> object:
        waits.append(float(kwargs["timeout"]))  # type: ignore[arg-type]
        raise TimeoutError("no answer")

    monkeypatch.setattr(litellm, "completion", answer)
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    config = LlmConfig(model="openai/gpt-4o-mini")
    timed = search_landscape(synthetic.landscape(), synthetic.evaluator(), "llm", Limits(evaluations=6, seconds=3600),
                             llm=config)
    assert waits and all(w <= CALL_SECONDS for w in waits) and timed.best is not None
    waits.clear()
    search_landscape(synthetic.landscape(), synthetic.evaluator(), "llm", Limits(evaluations=6, seconds=40), llm=config)
    assert waits and all(1.0 <= w <= 40 for w in waits)


@NEEDS_LITELLM
def test_an_unknown_provider_is_said_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """litellm printed its provider banner to stdout for `foo/bar`, ahead of `plan --json`'s output."""
    usable, why = LlmConfig(model="foo/bar").usable()
    assert not usable and "litellm does not know the model `foo/bar`" in why and "provider/model" in why
    assert capsys.readouterr().out == ""


def test_a_long_hypothesis_is_cut() -> None:
    """A 5 MB hypothesis went whole into every later prompt (a new user's trial)."""
    from primus_lang.search.llm.reply import HYPOTHESIS_CHARS

    text = json.dumps({"proposals": [{"changes": {"tp": 2}, "hypothesis": "faster " * 1000}]})
    (proposal,) = parse_reply(text)
    assert len(proposal.hypothesis) == HYPOTHESIS_CHARS + 3 and proposal.hypothesis.endswith("...")


def test_a_replay_without_a_model_replays_the_recorded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/search.md's `plan FILE --strategy llm --llm-replay run.cassette.json` named no model, and every
    request missed the cassette (the model is part of its hash)."""
    monkeypatch.delenv("PRIMUSC_LLM_MODEL", raising=False)
    config = LlmConfig.resolve(cassette=DATA / "investigator_cassette.json", replay=True)
    assert config.model == "gpt-4o-mini"
    result = run(config, evaluations=20)
    assert not any("cassette has no reply" in n for n in result.notes)
