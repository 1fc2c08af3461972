"""The fuzzers of issue 34's kinds (tests/fuzz/kinds.py) on a small budget with fixed seeds, so the
suite is deterministic; `python benchmarks/fuzz_kinds.py` runs them at length (docs/fuzzing.md).

The contract: every command ends in 0 or 1 (never 2, never an exception out of `main`, never a
traceback); the language server answers every request, a result or a JSON-RPC error, and keeps
answering."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.fuzz import kinds
from tests.fuzz.harness import run_cli

SEEDS = range(12)


def _held(argv: list[str]) -> int | None:
    code, out, err, escaped = run_cli(argv)
    assert not escaped, (argv, escaped)
    assert code in (0, 1), (argv, code, err[-2000:])
    assert "Traceback" not in out + err and "P9001" not in out + err, (argv, err[-2000:])
    return code


@pytest.mark.parametrize("seed", SEEDS)
def test_sources_spliced_across_files(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "spliced.prx"
    path.write_text(kinds.spliced(random.Random(seed)))
    for command in (["check", str(path)], ["fmt", str(path)]):
        _held(command)


@pytest.mark.parametrize("seed", SEEDS)
def test_import_graphs(tmp_path: Path, seed: int) -> None:
    top = kinds.import_graph(random.Random(seed), tmp_path / "g")
    _held(["check", str(top)])


@pytest.mark.parametrize("seed", SEEDS)
def test_data_files_with_control_characters_and_huge_numbers(tmp_path: Path, seed: int) -> None:
    kind, path = kinds.data_file(random.Random(seed), tmp_path / "d")
    if kind == "primus":
        _held(["import-recipe", str(path), "--gpu", "mi300x", "--out", str(tmp_path / "s.prx")])
    elif kind == "runs":
        _held(["validate", "--runs", str(path)])
    else:
        _held(["import-hf", str(path)])


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    folder = tmp_path_factory.mktemp("plan")
    space = folder / "s.prx"
    space.write_text((kinds.ROOT / "examples" / "llama3_1_8b_mi325x.prx").read_text())
    assert main(["plan", str(space), "--budget", "4", "--out", str(folder / "o"), "--no-emit"]) == 0
    events = [json.loads(line) for line in (folder / "o" / "trace.jsonl").read_text().splitlines()]
    return space, events


@pytest.mark.parametrize("seed", SEEDS)
def test_hand_edited_traces(tmp_path: Path, seed: int, planned: tuple[Path, list[dict[str, object]]]) -> None:
    space, events = planned
    trace = tmp_path / "edited.jsonl"
    trace.write_text(kinds.edited_trace(random.Random(seed), events))
    _held(["report", str(trace), "--space", str(space), "--out", str(tmp_path / "r.html")])
    _held(["plan", str(space), "--resume", str(trace), "--budget", "4", "--out", str(tmp_path / "o"), "--no-emit"])


def test_the_language_server_answers_every_request() -> None:
    pytest.importorskip("pygls", reason="pygls is in the `lsp` extra")
    from pygls import uris

    from tests.lsp.raw import RawClient

    client = RawClient()
    try:
        client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        opened = []
        for path in kinds.EXAMPLES[:3]:
            uri = uris.from_fs_path(str(path))
            assert uri is not None
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "primus", "version": 1, "text": path.read_text()}}})
            opened.append(uri)
        rng = random.Random(0)
        for _ in range(60):
            method, params = kinds.lsp_request(rng, [*opened, "file:///dev/zero"])
            answer = client.request(method, params)
            assert ("result" in answer) != ("error" in answer), answer
            assert "Traceback" not in json.dumps(answer)
        assert "result" in client.request("textDocument/documentSymbol", {"textDocument": {"uri": opened[0]}})
    finally:
        client.close()
