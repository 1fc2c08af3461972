"""Every stdlib module and example is valid .prx."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.resources import data_dir
from primus_lang.syntax import parse
from primus_lang.syntax.format import format_source

FILES = sorted(data_dir("stdlib").rglob("*.prx")) + sorted(data_dir("examples").glob("*.prx"))


def test_the_bundle_is_complete() -> None:
    names = {f"{p.parent.name}/{p.stem}" for p in FILES}
    expected_models = {"llama2", "llama3", "gpt3", "nemotron4", "mixtral", "deepseek", "qwen3", "gpt_oss"}
    assert {f"models/{m}" for m in expected_models} <= names
    assert {"hardware/amd", "hardware/nvidia", "clusters/amd", "clusters/nvidia"} <= names
    assert len([p for p in FILES if p.parent.name == "examples"]) >= 7


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_parses(path: Path) -> None:
    assert parse(path.read_text(), str(path)) is not None


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_formatted(path: Path) -> None:
    text = path.read_text()
    assert format_source(text, str(path)) == text, "run `primusc fmt --write` on it"
