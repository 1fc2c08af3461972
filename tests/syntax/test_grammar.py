"""The grammar builds under Lark's strict mode (no conflicts, no terminal collisions), uncached."""

from __future__ import annotations

from typing import Any

from primus_lang.syntax import parse
from primus_lang.syntax.parser import build_parser


def test_strict_grammar_builds_without_cache() -> None:
    parser = build_parser(cache=False, strict=True)
    assert parser.options.strict and parser.options.parser == "lalr"


def test_contextual_keywords_are_names_elsewhere() -> None:
    m = parse(
        "cluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n"
        "space s on c { model = m; gbs = 8; schedule : 1f1b | zbv; x : 1e3 | 1_000 | 2.5 }",
        "k.prx",
    )
    cluster, space = m.items
    assert cluster.body.stmts[0].name == "gpu"  # type: ignore[union-attr]
    axis = space.body.stmts[3]  # type: ignore[union-attr]
    assert [a.value for a in axis.domain.alts] == [1000.0, 1000, 2.5]  # type: ignore[union-attr]


def test_keyword_named_fields_may_follow_an_inline_override() -> None:
    """A definition's body is its own rule: after an override's `}` the next word is a field even
    when it spells a definition keyword (it used to be lexed as `model`, a parse error)."""
    for kw, other in (("cluster", "model"), ("model", "cluster"), ("model", "gpu"), ("gpu", "space")):
        m = parse(f"space s {{\n  {kw} = base {{ nodes = 16 }}\n  {other} = x\n  gbs = 8\n}}\nmodel n {{ hidden = 8 }}",
                  "o.prx")
        space, model = m.items
        names = [st.name for st in space.body.stmts]  # type: ignore[union-attr]
        assert names == [kw, other, "gbs"] and model.name == "n"  # type: ignore[union-attr]


def test_units_may_be_glued_to_numbers() -> None:
    m = parse("gpu g { hbm_capacity = 80GiB; x = 1.5TB/s; y = 30min; z = 1f1b }", "u.prx")
    values: list[Any] = [s.value for s in m.items[0].body.stmts]  # type: ignore[union-attr]
    assert [(v.value, v.unit) for v in values[:3]] == [(80, "GiB"), (1.5, "TB/s"), (30, "min")]
    assert values[3].name == "1f1b"


def test_days_is_a_unit_only_where_an_expression_may_end() -> None:
    """`30 days` in a requirement; a field or axis named `days` on the line after a number stays a name
    (the parser's state after a number is shared by values and expressions, and newlines are no tokens)."""
    m = parse("model m {\n  layers = 4\n  days = 5\n}\nspace s on c {\n  tp : 1 | 2 when pp > 1\n  day : 1 | 2\n"
              "  require time_to_train <= 30 days \"a month\"\n  require (time_to_train <= 1 day) or gpus <= 8\n}\n",
              "d.prx")
    model, space = m.items
    assert [st.name for st in model.body.stmts] == ["layers", "days"]  # type: ignore[union-attr]
    assert space.body.stmts[1].name == "day"  # type: ignore[union-attr]


def test_a_backslash_that_is_no_escape_stays_as_written() -> None:
    """A trial's `"a\\tb\\x41\\q"` lost the backslashes of `\\x` and `\\q`, and `fmt --write` with them."""
    from primus_lang.ir.text import quote
    from primus_lang.syntax import ast

    tree = parse('model m { source = "a\\tb\\x41\\q\\"c\\\\d" }\n', "s.prx")
    [value] = [st.value for st in tree.items[0].body.stmts if isinstance(st.value, ast.Str)]
    assert value.value == 'a\tb\\x41\\q"c\\d'
    # written back as the grammar reads it: the same value again
    again = parse(f"model m {{ source = {quote(value.value)} }}\n", "s.prx")
    assert [st.value.value for st in again.items[0].body.stmts] == [value.value]
