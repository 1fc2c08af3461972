"""The expression vocabulary of ``require``, ``when`` and ``let``: the nodes, their traversal, and
their source text.

This is the one module that knows which fields of a node hold subexpressions. Every stage that reads
an expression (the parser's depth bound, lowering's name resolution and typing, the checker's numpy
evaluation, the formatter) walks it through ``children``/``map_children``/``walk`` or a ``Visitor``
subclass, so a new node kind is added here and the type checker points at every visitor that must
learn it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from attrs import field, frozen

from primus_lang.ir.span import Span
from primus_lang.ir.text import quote


@frozen
class Name:
    id: str
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Const:
    value: bool | int | float | str
    span: Span | None = field(default=None, eq=False, repr=False)
    unit: str = ""  # "day" or "days": a run's time, as a requirement on ``time_to_train`` may write it


@frozen
class Unary:
    op: str  # "-", "not"
    operand: Expr
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Binary:
    op: str  # + - * / // % == != < <= > >= and or in
    left: Expr
    right: Expr
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Call:
    func: str  # min, max, divides
    args: tuple[Expr, ...]
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Tuple_:
    items: tuple[Expr, ...]
    span: Span | None = field(default=None, eq=False, repr=False)


Expr = Name | Const | Unary | Binary | Call | Tuple_

R = TypeVar("R")


# --- the names and functions an expression may use, besides the knobs of ``KNOBS`` and its lets --
# Listed once, for lowering (which refuses any other name) and for ``check`` (which evaluates them).
# name -> the knobs it is computed from (the checker's fast path needs these dependencies)
DERIVED: dict[str, tuple[str, ...]] = {
    "dp": ("tp", "pp", "cp"),
    "edp": ("etp", "tp", "ep", "pp"),
    "microbatches": ("gbs", "mbs", "tp", "pp", "cp"),
    "world": (),
    "nodes": (),
    "gpus_per_node": (),
    "layers_per_stage": ("pp", "first_stage_layers", "last_stage_layers", "account_for_embedding",
                         "account_for_loss", "schedule"),
}
MODEL_FACTS = ("num_layers", "hidden", "heads", "kv_heads", "num_experts", "vocab")
# function -> (fewest, most) arguments; None: any number
FUNCTIONS: dict[str, tuple[int, int | None]] = {"min": (1, None), "max": (1, None), "divides": (2, 2)}


# --- traversal --------------------------------------------------------------------------------
def children(e: Expr) -> tuple[Expr, ...]:
    """The direct subexpressions of ``e``, left to right."""
    if isinstance(e, Unary):
        return (e.operand,)
    if isinstance(e, Binary):
        return (e.left, e.right)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Tuple_):
        return e.items
    return ()


def map_children(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """``e`` with each direct subexpression replaced by ``f`` of it (left to right); leaves as they are."""
    if isinstance(e, Unary):
        return Unary(e.op, f(e.operand), e.span)
    if isinstance(e, Binary):
        left = f(e.left)
        return Binary(e.op, left, f(e.right), e.span)
    if isinstance(e, Call):
        return Call(e.func, tuple(f(a) for a in e.args), e.span)
    if isinstance(e, Tuple_):
        return Tuple_(tuple(f(a) for a in e.items), e.span)
    return e


def walk(e: Expr) -> Iterator[tuple[Expr, int]]:
    """Every node of ``e`` with its depth (``e`` itself at 1), parents before children, without
    recursion: the parser measures unbounded input with it before anything recurses."""
    stack = [(e, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        stack.extend((c, depth + 1) for c in reversed(children(node)))


def alternatives(e: Binary) -> tuple[Expr, ...]:
    """What the left side of ``x in (a, b)`` is compared with (``x in a`` compares with ``a`` alone)."""
    return e.right.items if isinstance(e.right, Tuple_) else (e.right,)


def depth(e: Expr) -> int:
    return max(d for _, d in walk(e))


def names_in(e: Expr) -> set[str]:
    """The names ``e`` reads."""
    return {node.id for node, _ in walk(e) if isinstance(node, Name)}


class Visitor(Generic[R]):
    """Dispatch on a node's kind: ``visit`` calls the method named after it. A subclass decides
    what a node means (its type, its value) and recurses by calling ``visit`` on the children it
    wants, in the order and with the state its semantics need (``and`` reads its right side only
    where the left holds)."""

    def visit(self, e: Expr) -> R:
        if isinstance(e, Name):
            return self.name(e)
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, Unary):
            return self.unary(e)
        if isinstance(e, Binary):
            return self.binary(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, Tuple_):
            return self.tuple_(e)
        raise TypeError(f"not an expression node: {e!r}")

    def name(self, e: Name) -> R:
        return self.default(e)

    def const(self, e: Const) -> R:
        return self.default(e)

    def unary(self, e: Unary) -> R:
        return self.default(e)

    def binary(self, e: Binary) -> R:
        return self.default(e)

    def call(self, e: Call) -> R:
        return self.default(e)

    def tuple_(self, e: Tuple_) -> R:
        return self.default(e)

    def default(self, e: Expr) -> R:
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(e).__name__}")


class Transformer(Visitor[Expr]):
    """A visitor that rebuilds the tree: by default a node keeps its kind and its children are visited."""

    def default(self, e: Expr) -> Expr:
        return map_children(e, self.visit)


# --- source text ------------------------------------------------------------------------------
_PRECEDENCE = {"or": 1, "and": 2, "in": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}


def _prec(op: str) -> int:
    return _PRECEDENCE.get(op, 4)  # comparisons


class _Text(Visitor[str]):
    def __init__(self, quote_strings: bool, whole: bool = False) -> None:
        self.quote_strings = quote_strings
        self.whole = whole

    def const(self, e: Const) -> str:
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        if isinstance(e.value, str):
            return quote(e.value) if self.quote_strings else e.value
        value = e.value
        if self.whole and isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
            value = int(value)
        return f"{value} {e.unit}" if e.unit else str(value)

    def name(self, e: Name) -> str:
        return e.id

    def unary(self, e: Unary) -> str:
        inner = self.visit(e.operand)
        # `-` takes a factor, so `-(not x)` keeps its parentheses (`-not x` does not parse)
        wrap = isinstance(e.operand, Binary) or (
            e.op == "-" and isinstance(e.operand, Unary) and e.operand.op == "not")
        inner = f"({inner})" if wrap else inner
        return f"not {inner}" if e.op == "not" else f"-{inner}"

    def binary(self, e: Binary) -> str:
        return f"{self._side(e, e.left, False)} {e.op} {self._side(e, e.right, True)}"

    def _side(self, e: Binary, x: Expr, right: bool) -> str:
        mine = _prec(e.op)
        if e.op == "in" and right and isinstance(x, Binary | Unary):
            return f"({self.visit(x)})"  # `in` takes an atom: `x in (1 + 0)`, not `x in 1 + 0`
        if isinstance(x, Unary) and x.op == "not" and mine > 3:
            return f"({self.visit(x)})"
        if not isinstance(x, Binary):
            return self.visit(x)
        theirs = _prec(x.op)
        # same level: left-associative arithmetic keeps the left side bare; comparisons never chain
        wrap = theirs < mine or (theirs == mine and (right or mine == 4))
        return f"({self.visit(x)})" if wrap else self.visit(x)

    def call(self, e: Call) -> str:
        return f"{e.func}({', '.join(self.visit(a) for a in e.args)})"

    def tuple_(self, e: Tuple_) -> str:
        return "(" + ", ".join(self.visit(a) for a in e.items) + ("," if len(e.items) == 1 else "") + ")"


def to_text(e: Expr, quote_strings: bool = False, whole: bool = False) -> str:
    """Source text of an expression with the fewest parentheses that keep its meaning (string
    constants quoted with ``quote_strings``, as the formatter writes them). ``whole``: a whole number
    read as a float is written whole, as a message quotes a count (`cost <= 10K` says 10000, not 10000.0;
    the formatter keeps what was written)."""
    return _Text(quote_strings, whole).visit(e)


__all__ = [
    "DERIVED",
    "FUNCTIONS",
    "MODEL_FACTS",
    "Binary",
    "Call",
    "Const",
    "Expr",
    "Name",
    "Transformer",
    "Tuple_",
    "Unary",
    "Visitor",
    "alternatives",
    "children",
    "depth",
    "map_children",
    "names_in",
    "quote",
    "to_text",
    "walk",
]
