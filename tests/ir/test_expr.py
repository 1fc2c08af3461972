"""The one traversal of expressions (ir/expr.py) that the parser, lowering, check and fmt walk with."""

from __future__ import annotations

import pytest

from primus_lang.ir.expr import (
    Binary,
    Call,
    Const,
    Expr,
    Name,
    Transformer,
    Tuple_,
    Unary,
    Visitor,
    alternatives,
    children,
    depth,
    map_children,
    names_in,
    to_text,
    walk,
)

# require not (tp * 2 in (pp, 4)) or divides(cp, min(dp, 8))
MIN = Call("min", (Name("dp"), Const(8)))
RIGHT = Call("divides", (Name("cp"), MIN))
EXPR = Binary("or", Unary("not", Binary("in", Binary("*", Name("tp"), Const(2)), Tuple_((Name("pp"), Const(4))))), RIGHT)


def test_children_are_in_source_order() -> None:
    assert children(EXPR) == (EXPR.left, EXPR.right)
    assert children(Name("x")) == () and children(Const(1)) == ()
    assert children(Tuple_((Name("a"), Name("b")))) == (Name("a"), Name("b"))


def test_walk_visits_every_node_parents_first_left_to_right() -> None:
    order = [node for node, _ in walk(EXPR)]
    assert len(order) == 14
    assert order[0] is EXPR
    assert [n.id for n in order if isinstance(n, Name)] == ["tp", "pp", "cp", "dp"]
    assert depth(EXPR) == 5 and depth(Name("x")) == 1


def test_depth_of_a_tree_deeper_than_the_recursion_limit() -> None:
    e: Expr = Name("x")
    for _ in range(5000):
        e = Unary("-", e)
    assert depth(e) == 5001


def test_alternatives_of_in() -> None:
    inside = EXPR.left
    assert isinstance(inside, Unary) and isinstance(inside.operand, Binary)
    assert alternatives(inside.operand) == (Name("pp"), Const(4))
    assert alternatives(Binary("in", Name("x"), Name("y"))) == (Name("y"),)


def test_names_in() -> None:
    assert names_in(EXPR) == {"tp", "pp", "cp", "dp"}
    assert names_in(Const("zbv")) == set()


def test_map_children_replaces_each_child() -> None:
    zeroed = map_children(RIGHT, lambda c: Const(0) if isinstance(c, Name) else c)
    assert zeroed == Call("divides", (Const(0), MIN))


def test_a_transformer_rebuilds_only_what_it_overrides() -> None:
    class Rename(Transformer):
        def name(self, e: Name) -> Expr:
            return Name(e.id.upper(), e.span)

    out = Rename().visit(EXPR)
    assert names_in(out) == {"TP", "PP", "CP", "DP"}
    assert to_text(out) == "not (TP * 2 in (PP, 4)) or divides(CP, min(DP, 8))"


def test_a_visitor_names_the_node_kind_it_does_not_handle() -> None:
    class Count(Visitor[int]):
        def name(self, e: Name) -> int:
            return 1

    assert Count().visit(Name("x")) == 1
    with pytest.raises(NotImplementedError, match="Count does not handle Const"):
        Count().visit(Const(1))
    with pytest.raises(TypeError):
        Count().visit("x")  # type: ignore[arg-type]


def test_source_text_keeps_only_the_parentheses_meaning_needs() -> None:
    assert to_text(EXPR) == "not (tp * 2 in (pp, 4)) or divides(cp, min(dp, 8))"
    assert to_text(Binary("-", Name("a"), Binary("-", Name("b"), Name("c")))) == "a - (b - c)"
    assert to_text(Binary("-", Binary("-", Name("a"), Name("b")), Name("c"))) == "a - b - c"
    assert to_text(Unary("-", Unary("not", Name("x")))) == "-(not x)"
    assert to_text(Tuple_((Const("zbv"),)), quote_strings=True) == '("zbv",)'
