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
