"""`fmt` prints every expression so that it parses back to itself (found by the fuzzer: a `-` over
a `not`, and an arithmetic right side of `in`, lost the parentheses the grammar needs)."""

from __future__ import annotations

import pytest

from primus_lang.syntax import parse
from primus_lang.syntax.format import format_source


@pytest.mark.parametrize(("written", "printed"), [
    ('require -(not "a")', 'require -(not "a")'),
    ("require -(not tp) < 1", "require -(not tp) < 1"),
    ("vpp : 2 when not 0.0 + tp in (1 + 0)", "vpp : 2 when not (0.0 + tp in (1 + 0))"),
    ("require tp in (-pp)", "require tp in (-pp)"),
    ("require tp in (not pp)", "require tp in (not pp)"),
    ("require tp in (1, 2)", "require tp in (1, 2)"),
    ("require -(tp + 1) > -pp", "require -(tp + 1) > -pp"),
])
def test_printed_expressions_parse_back_the_same(written: str, printed: str) -> None:
    source = f"space s on c {{\n  {written}\n}}\n"
    out = format_source(source)
    assert out == f"space s on c {{\n  {printed}\n}}\n"
    assert parse(out, "a").items == parse(source, "b").items
    assert format_source(out) == out
