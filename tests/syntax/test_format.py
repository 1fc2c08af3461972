"""fmt: canonical, idempotent, comment-preserving, and the shipped files are formatted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.diagnostics import CompileError
from primus_lang.resources import data_dir
from primus_lang.syntax import parse
from primus_lang.syntax.format import format_source

FILES = sorted([*data_dir("examples").glob("*.prx"), *data_dir("stdlib").rglob("*.prx")])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_idempotent_and_same_tree(path: object) -> None:
    text = path.read_text()  # type: ignore[attr-defined]
    once = format_source(text)
    assert format_source(once) == once
    assert parse(once, "a").items == parse(text, "b").items
    assert [c.text for c in parse(once, "a").comments] == [c.text for c in parse(text, "b").comments]


def test_layout() -> None:
    text = "model   m=base{\nnum_layers=2 # two\n\n\n  moe{top_k=2;num_experts=8}}\ncluster c {gpu=g;nic=8 x 400 Gbps}"
    assert format_source(text) == (
        "model m = base {\n"
        "  num_layers = 2  # two\n"
        "\n"
        "  moe { top_k = 2; num_experts = 8 }\n"
        "}\n"
        "\n"
        "cluster c { gpu = g; nic = 8 x 400 Gbps }\n"
    )


def test_expressions_keep_their_meaning() -> None:
    text = "space s on c { require (a - (b - c)) * 2 > 1 and not (x or y) or z in (1, 2) }"
    out = format_source(text)
    assert "(a - (b - c)) * 2 > 1 and not (x or y) or z in (1, 2)" in out
    assert parse(out, "a").items == parse(text, "b").items


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([p.read_text() for p in FILES]),
    st.integers(0, 10_000),
    st.sampled_from(["\n", "\n\n", "  ", "# c\n"]),
)
def test_idempotent_under_whitespace_edits(text: str, at: int, insert: str) -> None:
    lines = text.splitlines(keepends=True)
    i = at % (len(lines) + 1)
    edited = "".join(lines[:i]) + insert + "".join(lines[i:])
    try:
        once = format_source(edited)
    except CompileError:
        return
    assert format_source(once) == once


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x1c"])
def test_a_comment_holding_a_line_separator_stays_on_its_line(separator: str) -> None:
    # the lexer ends a line only at `\n`; cutting the source at U+2028 and the like moved the
    # comments and blank lines after it
    text = f"model m {{\n  # a{separator}b\n  num_layers = 1  # one\n\n  hidden = 2\n}}\n"
    once = format_source(text)
    assert once == text
    assert format_source(once) == once


@pytest.mark.parametrize("literal", ["1e400", "1e-400", "99999999999999999999"])
def test_a_number_that_cannot_round_trip_is_refused(literal: str) -> None:
    # `1e400` used to read as infinity and print back as `inf`, a name that `check` then refused
    with pytest.raises(CompileError) as err:
        format_source(f"space s on c {{ require tp < {literal} }}")
    assert err.value.diagnostics[0].code.id == "P1016"
    span = err.value.diagnostics[0].span
    assert span is not None and (span.column, span.end_column) == (29, 29 + len(literal))


@pytest.mark.parametrize("literal", ["1e300", "0.1", "1e-300", "0.0", "000_000_000_000_000_000_000_1", "9_223_372_036_854_775_807"])
def test_numbers_round_trip(literal: str) -> None:
    text = f"space s on c {{ require tp < {literal} }}"
    once = format_source(text)
    assert parse(once, "a").items == parse(text, "b").items


def test_a_statement_with_comments_between_its_lines_keeps_them_where_they_were() -> None:
    text = ("space s on c {\n  model = m\n  tp : 1 | 2   # tensor\n    | 4        # four\n"
            "  recompute : none\n    | selective  # sel\n}\n")
    out = format_source(text)
    assert out == ("space s on c {\n  model = m\n  tp : 1 | 2   # tensor\n      | 4  # four\n"
                   "  recompute : none | selective  # sel\n}\n")
    assert format_source(out) == out
    assert parse(out, "a").items == parse(text, "b").items


def test_a_comment_belongs_to_the_statement_it_follows_on_a_shared_line() -> None:
    out = format_source("space s on c {\n  gbs = 1; tp : 1 |  # x\n    2\n  pp : 1; cp : 1  # y\n}\n")
    assert out == "space s on c {\n  gbs = 1\n  tp : 1 |  # x\n      2\n  pp : 1\n  cp : 1  # y\n}\n"
    assert format_source(out) == out


def test_an_empty_block_written_over_lines_formats() -> None:
    """A fuzzed `gpu g = mi300x {\\n}` stopped fmt with an internal error (a statement list of none)."""
    assert format_source("gpu g = mi300x {\n}\n") == "gpu g = mi300x {\n}\n"


def test_an_import_s_comments_and_a_first_line_s_comment_stay_with_what_they_describe() -> None:
    text = ("import models.llama3 (   # why this model\n  llama3_1_8b,           # the 8B\n)\n"
            "space s on c { model = m; gbs = 64   # same-line stmts\n  tp : 1\n}\n")
    out = format_source(text)
    assert out.startswith("import models.llama3 (   # why this model\n    llama3_1_8b,           # the 8B\n)\n")
    assert "space s on c {\n  model = m\n  gbs = 64  # same-line stmts\n  tp : 1\n}\n" in out
    assert format_source(out) == out and parse(out, "a").items == parse(text, "b").items
