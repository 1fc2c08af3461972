"""The fuzzer, briefly: generated and mutated sources through `check`, `fmt` and `project --top 1`
(the contract is in harness.py; `python benchmarks/fuzz.py` runs it at length, docs/fuzzing.md).

Deterministic: the suite's hypothesis profile is derandomized, so these are the same sources on
every run, and nothing here reads the clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.fuzz.harness import check_source
from tests.fuzz.strategies import QUICK, grammar_sources, mutated_grammar_sources, mutated_sources

PROJECTED: dict[str, int | None] = {}  # project's exit code per lowered program, across the examples


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def holds(data: bytes, folder: Path) -> None:
    codes, problems = check_source(data, folder, PROJECTED)
    assert not problems, f"{problems} for {data[:2000]!r}"
    assert set(codes.values()) <= {0, 1}


@settings(max_examples=40)
@given(data=grammar_sources())
def test_sources_from_the_grammar(data: bytes, folder: Path) -> None:
    holds(data, folder)


@settings(max_examples=30)
@given(data=mutated_grammar_sources())
def test_mutated_sources_from_the_grammar(data: bytes, folder: Path) -> None:
    holds(data, folder)


@pytest.mark.slow
@settings(max_examples=40)
@given(data=mutated_sources(QUICK))
def test_mutated_examples_and_stdlib(data: bytes, folder: Path) -> None:
    holds(data, folder)
