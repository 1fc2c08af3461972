"""The check that an expression uses only the names and functions it may, and its type.

Knobs come from ``KNOBS``; derived values, model facts and functions from ``ir/expr.py``, where
``check`` (which evaluates them) reads them too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.diagnostics.suggest import near_name, spelled_out
from primus_lang.frameworks import spelling
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.expr import (
    DERIVED,
    FUNCTIONS,
    MODEL_FACTS,
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
)
from primus_lang.ir.quantity import Kind, choices_of, kind_of


def enum_values() -> set[str]:
    """Every enum value of every knob: usable as a constant in expressions (``schedule == zbv``)."""
    out: set[str] = set()
    for f in KNOBS.values():
        out.update(choices_of(f))
        if kind_of(f) is Kind.BLOCK:
            for sub in attrs.fields(f.type if isinstance(f.type, type) else _recompute_type()):
                out.update(choices_of(sub))
    return out


def _recompute_type() -> type:
    from primus_lang.ir.candidate import Recompute

    return Recompute


class _Resolve(Transformer):
    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.enums = enum_values()

    def name(self, e: Name) -> Expr:
        if e.id in self.known:
            return e
        if e.id in self.enums:
            return Const(e.id, e.span)
        close = near_name(e.id, sorted(self.known | self.enums))
        hint = f"did you mean `{close}`?" if close else "see the names listed by `primusc explain P2010`"
        raise CompileError(Diagnostic(N.UNKNOWN_VARIABLE, f"unknown name `{e.id}`", e.span, help=hint))

    def binary(self, e: Binary) -> Expr:
        if isinstance(e.right, Tuple_) and e.op != "in":
            raise CompileError(Diagnostic(T.BAD_EXPRESSION, "a tuple is only allowed after `in`", e.right.span))
        return self.default(e)

    def call(self, e: Call) -> Expr:
        if e.func not in FUNCTIONS:
            close = difflib.get_close_matches(e.func, list(FUNCTIONS), n=1)
            hint = f"did you mean `{close[0]}`?" if close else "functions: min, max, divides"
            raise CompileError(Diagnostic(N.UNKNOWN_FUNCTION, f"unknown function `{e.func}`", e.span, help=hint))
        lo, hi = FUNCTIONS[e.func]
        if len(e.args) < lo or (hi is not None and len(e.args) > hi):
            want = f"{lo}" if lo == hi else f"at least {lo}"
            raise CompileError(
                Diagnostic(
                    T.BAD_ARGUMENTS,
                    f"`{e.func}` takes {want} argument(s), got {len(e.args)}",
                    e.span,
                    help="`divides(a, b)` is true when a divides b",
                )
            )
        return self.default(e)


def resolve_expr(expr: Expr, known: set[str]) -> Expr:
    """Return ``expr`` with enum names turned into constants; refuse unknown names and calls."""
    return _Resolve(known).visit(expr)


def _knob_type(name: str) -> str:
    f = KNOBS[name]
    kind = kind_of(f)
    if kind is Kind.FLAG:
        return "bool"
    if kind in (Kind.ENUM, Kind.BLOCK, Kind.TEXT):  # `recompute` reads as its kind, a layout as its text
        return "name"
    return "number"


def _bad(e: Expr, message: str) -> CompileError:
    return CompileError(Diagnostic(T.BAD_EXPRESSION, message, e.span, help="see `primusc explain P3016`"))


class _Type(Visitor[str]):
    """``number``, ``bool`` or ``name`` of each node, refusing operators on the wrong kind (P3016)."""

    def __init__(self, lets: dict[str, str]) -> None:
        self.lets = lets

    def name(self, e: Name) -> str:
        if e.id in KNOBS:
            return _knob_type(e.id)
        return self.lets.get(e.id, "number")

    def const(self, e: Const) -> str:
        if e.unit:  # a comparison with `time_to_train` takes it before this (``binary``)
            raise _bad(e, f"`{e.unit}` measures a run's time: compare `time_to_train` with it "
                          f"(`time_to_train <= {e.value} {e.unit}`)")
        if isinstance(e.value, bool):
            return "bool"
        return "name" if isinstance(e.value, str) else "number"

    def unary(self, e: Unary) -> str:
        inner = self.visit(e.operand)
        want = "bool" if e.op == "not" else "number"
        if inner != want:
            raise _bad(e, f"`{e.op}` needs a {want}, not a {inner}")
        return want

    def binary(self, e: Binary) -> str:
        if e.op in ("<", "<=", ">", ">=", "==", "!="):
            # a run's time in days, as `time_to_train` is: `time_to_train <= 30 days`
            for side, other in ((e.left, e.right), (e.right, e.left)):
                if isinstance(side, Const) and side.unit and isinstance(other, Name) \
                        and other.id == "time_to_train":
                    self.visit(other)
                    return "bool"
        left = self.visit(e.left)
        if e.op == "in":
            for item in alternatives(e):
                if self.visit(item) != left:
                    raise _bad(item, f"`in` compares a {left} with a {self.visit(item)}")
                _one_of_its_values(e.left, item)
            return "bool"
        right = self.visit(e.right)
        if e.op in ("and", "or"):
            if left != "bool" or right != "bool":
                raise _bad(e, f"`{e.op}` joins conditions, not a {left if left != 'bool' else right}")
            return "bool"
        if e.op in ("==", "!="):
            if left != right:
                raise _bad(e, f"`{e.op}` compares a {left} with a {right}")
            _one_of_its_values(e.left, e.right)
            _one_of_its_values(e.right, e.left)
            return "bool"
        if left != "number" or right != "number":
            raise _bad(e, f"`{e.op}` needs numbers, not a {left if left != 'number' else right}")
        return "bool" if e.op in ("<", "<=", ">", ">=") else "number"

    def call(self, e: Call) -> str:
        for a in e.args:
            if self.visit(a) != "number":
                raise _bad(a, f"`{e.func}` takes numbers")
        return "bool" if e.func == "divides" else "number"

    def tuple_(self, e: Tuple_) -> str:
        raise _bad(e, "a tuple is only allowed after `in`")


def _one_of_its_values(knob: Expr, value: Expr) -> None:
    """An enum knob compared with a name it never takes (``precision == "fp9"``, ``schedule == fp8``)
    would be a condition that is always false or always true without a word."""
    if not (isinstance(knob, Name) and knob.id in KNOBS and isinstance(value, Const) and isinstance(value.value, str)):
        return
    f = KNOBS[knob.id]
    choices = choices_of(f)
    if kind_of(f) is Kind.ENUM and choices and value.value not in choices:
        raise _bad(value, f"`{value.value}` is not a value of `{knob.id}`, which is one of {', '.join(choices)}")


def type_of(expr: Expr, lets: dict[str, str]) -> str:
    """``number``, ``bool`` or ``name``; refuses operators applied to the wrong kind of value (P3016)."""
    return _Type(lets).visit(expr)


def base_names() -> set[str]:
    return set(KNOBS) | set(DERIVED) | set(MODEL_FACTS)


def knob_hint(word: str, knobs: Iterable[str]) -> str:
    """The help for ``word`` that is not a knob of ``knobs``: the knob a Megatron setting of that name
    states (`fp8`, `use_distributed_optimizer`), that a derived value is not set but follows (`dp`,
    `data_parallel`), else the nearest knob by name, else the knobs."""
    listed = list(knobs)
    knob = spelling.knob_of_setting(word)
    if knob is not None and knob in listed:
        return f"did you mean `{knob}`? (Megatron's `{word}` is primusc's `{knob}`)"
    derived = word if word in DERIVED else spelled_out(word, DERIVED)
    if derived is not None:
        return (f"`{derived}` is not set but follows from the knobs it is computed from "
                f"({', '.join(DERIVED[derived]) or 'the cluster'}); bound it with `require`")
    close = near_name(word, listed)
    return f"did you mean `{close}`?" if close else "knobs: " + ", ".join(listed)

