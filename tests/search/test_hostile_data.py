"""A trace, an LLM cassette and the JSON in a profile database are data files like any other: read
through primus_lang/datafiles.py, so a hostile one is a diagnostic, never a traceback or gigabytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.bench.database import ProfileDB
from primus_lang.diagnostics import CompileError
from primus_lang.search.llm.client import Cassette
from primus_lang.search.trace import iter_events, read_trace

DEEP = "[" * 3000 + "]" * 3000
HEADER = json.dumps({"event": "start", "format": 1})


def code_of(err: pytest.ExceptionInfo[CompileError]) -> str:
    return err.value.diagnostics[0].code.id


@pytest.mark.parametrize("line", [
    DEEP.encode(),
    b'{"event": "evaluation", "x": ' + b"9" * 5000 + b"}",
    b'{"event": "caf\xe9"}',
])
def test_a_hostile_trace_line_is_p8001(tmp_path: Path, line: bytes) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(HEADER.encode() + b"\n" + line + b"\n")
    with pytest.raises(CompileError) as err:
        read_trace(trace)
    assert code_of(err) == "P8001"
    with pytest.raises(CompileError) as err:
        list(iter_events(trace))
    assert code_of(err) == "P8001"
    assert err.value.diagnostics[0].span is not None and err.value.diagnostics[0].span.line == 2


def test_a_torn_line_is_still_only_skipped(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(HEADER + '\n{"event": "evalua')
    assert [e["event"] for e in iter_events(trace)] == ["start"]


@pytest.mark.parametrize("data", [DEEP.encode(), b'{"format": ' + b"1" * 5000 + b"}", b"\xff\xfe{}"])
def test_a_hostile_cassette_is_p8008(tmp_path: Path, data: bytes) -> None:
    cassette = tmp_path / "run.cassette.json"
    cassette.write_bytes(data)
    with pytest.raises(CompileError) as err:
        Cassette(cassette)
    assert code_of(err) == "P8008"


@pytest.mark.parametrize("timings", [DEEP, '{"forward": "fast"}', '{"forward": ' + "9" * 5000 + "}", "[1, 2]"])
def test_hostile_json_in_the_profile_database_is_p6803(tmp_path: Path, timings: str) -> None:
    db = ProfileDB(tmp_path / "p.sqlite")
    db._conn.execute("INSERT INTO blocks VALUES (?,?,?,?)", ("cpu", "k", timings, 0.0))
    with pytest.raises(CompileError) as err:
        db.block("cpu", "k")
    assert code_of(err) == "P6803"


def test_the_profile_database_reads_its_own_timings(tmp_path: Path) -> None:
    db = ProfileDB(tmp_path / "p.sqlite")
    db.put_block("cpu", "k", {"forward": 0.5, "backward": 1})
    assert db.block("cpu", "k") == {"backward": 1.0, "forward": 0.5}


# A line that parses but holds what no plan writes: a string where a count goes, a non-finite or
# chart-overflowing figure, a candidate that is none. `read_trace` (plan --resume) and `primusc
# report` both refuse it at its line, P8001, where each used to end in an internal error.
CANDIDATE = {"tp": 1, "pp": 1, "mbs": 1, "gbs": 128, "seq_len": 8192, "precision": "bf16"}
FIGURES = {"step_time": 1.0, "tokens_per_gpu": 8000.0, "tflops_per_gpu": 400.0, "mfu": 0.4,
           "bubble_fraction": 0.0, "exposed_comm": 0.1, "breakdown": [["compute", 0.9]]}


def _trace(tmp_path: Path, change: tuple[str, str, object] | None = None, drop: tuple[str, str] | None = None) -> Path:
    events = [
        {"event": "start", "format": 1, "space": "s", "strategy": "auto", "seed": 0, "objective": "maximize tokens_per_gpu",
         "legal_points": 1, "fitting_points": 1},
        {"event": "proposal", "n": 1, "source": "planner:baseline", "candidate": CANDIDATE, "hypothesis": ""},
        {"event": "gate", "n": 1, "verdict": "evaluated", "reasons": [], "label": "x", "memory_peak": 2**30,
         "memory_limit": 2**35},
        {"event": "evaluation", "n": 1, "evaluation_number": 1, "candidate": CANDIDATE, "evaluation": FIGURES,
         "score": 8000.0, "elapsed": 0.01},
        {"event": "end", "reason": "evaluation budget spent", "optimum_proven": False},
    ]
    for event in events:
        if change is not None and event["event"] == change[0]:
            key, value = change[1], change[2]
            if "." in key:
                outer, inner = key.split(".")
                event[outer] = {**event[outer], inner: value}  # type: ignore[dict-item]
            else:
                event[key] = value
        if drop is not None and event["event"] == drop[0]:
            del event[drop[1]]
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events))
    return trace


HOSTILE_EVENTS = [
    ("start", "seed", float("nan")), ("start", "seed", "x"), ("start", "legal_points", None),
    ("proposal", "n", "1"), ("proposal", "candidate", "x"), ("proposal", "candidate", {"a": 1}),
    ("gate", "reasons", -1), ("gate", "reasons", None), ("gate", "memory_peak", "x"), ("gate", "memory_peak", 1e308),
    ("gate", "memory_limit", float("inf")), ("gate", "memory_peak", -1), ("gate", "verdict", []),
    ("evaluation", "evaluation", {}), ("evaluation", "evaluation", "x"), ("evaluation", "score", "x"),
    ("evaluation", "score", float("nan")), ("evaluation", "evaluation.step_time", float("nan")),
    ("evaluation", "evaluation.step_time", None), ("evaluation", "evaluation.tokens_per_gpu", 1e308),
    ("evaluation", "evaluation.breakdown", [["compute", float("-inf")]]), ("evaluation", "elapsed", -1.0),
    ("evaluation", "evaluation_number", True), ("end", "optimum_proven", "no"),
]


@pytest.mark.parametrize(("event", "key", "value"), HOSTILE_EVENTS)
def test_a_wrongly_typed_event_is_p8001_at_its_line(tmp_path: Path, event: str, key: str, value: object,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    trace = _trace(tmp_path, (event, key, value))
    with pytest.raises(CompileError) as err:
        read_trace(trace)
    assert code_of(err) == "P8001"
    line = ["start", "proposal", "gate", "evaluation", "end"].index(event) + 1
    span = err.value.diagnostics[0].span
    assert span is not None and span.line == line
    assert main(["report", str(trace), "--out", str(tmp_path / "r.html")]) == 1
    out = capsys.readouterr().err
    assert "P8001" in out and "Traceback" not in out and "P9001" not in out


@pytest.mark.parametrize(("event", "key"), [("proposal", "n"), ("gate", "verdict"), ("evaluation", "evaluation")])
def test_an_event_without_what_it_needs_is_p8001(tmp_path: Path, event: str, key: str) -> None:
    with pytest.raises(CompileError) as err:
        read_trace(_trace(tmp_path, drop=(event, key)))
    assert code_of(err) == "P8001"


def test_the_well_formed_trace_of_these_tests_reads_and_reports(tmp_path: Path) -> None:
    from primus_lang.cli import main

    trace = _trace(tmp_path)
    assert read_trace(trace).finished
    assert main(["report", str(trace), "--out", str(tmp_path / "r.html")]) == 0


def test_a_trace_saved_with_a_byte_order_mark_reads(tmp_path: Path) -> None:
    # an editor's BOM made line 1 unreadable, refused as a torn line "two plans wrote"
    trace = _trace(tmp_path)
    trace.write_bytes(b"\xef\xbb\xbf" + trace.read_bytes())
    assert read_trace(trace).finished


def test_the_report_keeps_of_a_proposal_only_what_its_gate_reads(tmp_path: Path) -> None:
    # a proposal waits for its gate as three strings and is dropped once read (a trace of 250 MiB of
    # ungated proposals took 1.6 GB as parsed events; benchmarks/hostile_data.py measures it): what the
    # report shows of a proposal is unchanged
    from primus_lang.report.trace import result_from_trace

    trace = _trace(tmp_path)
    lines = trace.read_text().splitlines()
    ungated = [json.dumps({"event": "proposal", "n": n, "source": "s", "candidate": CANDIDATE}) for n in (7, 8)]
    trace.write_text("\n".join(lines[:1] + ungated + lines[1:]) + "\n")
    result, _ = result_from_trace(trace)
    (trial,) = result.trials
    assert (trial.number, trial.source, trial.hypothesis) == (1, "planner:baseline", "")
    assert trial.candidate is not None and trial.candidate.gbs == 128 and trial.memory_peak == 2**30
