"""Random and mutated text: the front end answers with a result or a diagnostic, nothing else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primus_lang.diagnostics import CompileError
from primus_lang.lower import loads_program
from primus_lang.resources import data_dir
from primus_lang.syntax import parse

SOURCES = sorted([*data_dir("examples").glob("*.prx"), *data_dir("stdlib").rglob("*.prx")])
TEXTS = [p.read_text() for p in SOURCES]
TOKENS = [
    "{",
    "}",
    "=",
    ":",
    "|",
    "..",
    "step",
    "when",
    "x",
    "%",
    "GB",
    "GiB/s",
    "(",
    ")",
    ",",
    ";",
    '"',
    "model",
    "space",
    "on",
    "require",
    "let",
    "1f1b",
    "0",
    "-1",
    "1e9",
    "#",
    "\n",
    "pow2(",
    "full(",
]


def _front_end(text: str) -> None:
    try:
        loads_program(text, str(Path.cwd() / "fuzz.prx"))
    except CompileError as err:
        assert err.diagnostics


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    try:
        parse(text, "random.prx")
    except CompileError as err:
        assert err.diagnostics


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(TEXTS),
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(TOKENS)), min_size=1, max_size=4),
)
def test_mutated_sources(text: str, edits: list[tuple[float, int, str]]) -> None:
    for where, cut, token in edits:
        at = int(where * len(text))
        text = text[:at] + token + text[at + cut :]
    _front_end(text)
