"""Expression evaluation over frames: the same code judges one candidate or a million at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from primus_lang.ir.expr import Binary, Call, Const, Expr, Name, Tuple_, Unary, Visitor, alternatives, to_text

__all__ = ["evaluate"]

_COMPARE = {
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply}


def _divides(a: Any, b: Any) -> Any:
    a_safe = np.where(a == 0, 1, a)
    return np.logical_and(a != 0, np.remainder(b, a_safe) == 0)


_DIVIDE = {"/": np.true_divide, "//": np.floor_divide, "%": np.remainder}


def _divide(e: Binary, a: Any, b: Any, live: Any) -> Any:
    """``a op b``, refusing a zero divisor at any point where the expression is read (``live``):
    a silent 0 or infinity would decide a `require` against what its author meant."""
    zero = np.equal(b, 0)
    if np.any(np.logical_and(live, zero)):
        from primus_lang.diagnostics import CompileError, Diagnostic
        from primus_lang.diagnostics.codes_legality import DIVISION_BY_ZERO

        divisor = to_text(e.right)
        if isinstance(e.right, Const):
            where, hint = "", "a divisor of 0 is never what was meant; write another number"
        else:
            where = f" where `{divisor}` is 0"
            hint = (f"guard the divisor, e.g. `max({divisor}, 1)`, or read it only where it is not 0: "
                    f"`{divisor} != 0 and ...`")
        raise CompileError(Diagnostic(DIVISION_BY_ZERO, f"`{to_text(e)}` divides by zero{where}", e.span,
                                      help=hint))
    out = _DIVIDE[e.op](a, np.where(zero, 1, b))  # the points not read still need a finite value
    return _checked(e, out, _overflows(e.op, a, b, out), live)


_INT_MIN = np.iinfo(np.int64).min


def _ints(v: Any) -> Any:
    return np.asarray(v).astype(np.int64)


def _magnitude(v: Any) -> int:
    """The largest absolute value in ``v`` (0 when empty; 2^64 for what is not a whole number)."""
    arr = np.asarray(v)
    if arr.dtype.kind not in "iub":
        return 2**64
    if arr.size == 0:
        return 0
    return max(abs(int(arr.max())), abs(int(arr.min())))


def _overflows(op: str, a: Any, b: Any, out: Any) -> Any:
    """Where ``a op b`` (``op a`` when ``b`` is None) left 64-bit arithmetic: a whole number that
    wrapped, or a decimal that became infinite or NaN. Inputs are finite (literals are, P1016), so a
    non-finite result is the operation's own."""
    kind = np.asarray(out).dtype.kind
    if kind == "f":
        return np.logical_not(np.isfinite(out))
    if kind not in "iu":
        return False
    # the bounds of the operands, exact as Python ints, clear nearly every expression in two reductions each
    if b is None:
        bound = _magnitude(a)
    elif op in ("+", "-"):
        bound = _magnitude(a) + _magnitude(b)
    else:
        bound = _magnitude(a) * _magnitude(b) if op == "*" else 2**64
    if bound < 2**63:
        return False
    r, x = _ints(out), _ints(a)
    if b is None:  # unary minus: only -(-2^63) wraps
        return x == _INT_MIN
    y = _ints(b)
    if op == "+":
        return ((x ^ r) & (y ^ r)) < 0
    if op == "-":
        return ((x ^ y) & (x ^ r)) < 0
    if op == "*":
        wrapped = np.logical_and(x != 0, np.floor_divide(r, np.where(x == 0, 1, x)) != y)
        edge = np.logical_or(np.logical_and(x == -1, y == _INT_MIN), np.logical_and(y == -1, x == _INT_MIN))
        return np.logical_or(wrapped, edge)
    if op == "//":
        return np.logical_and(x == _INT_MIN, y == -1)
    return False


def _checked(e: Expr, out: Any, bad: Any, live: Any) -> Any:
    """``out``, refusing it where it overflowed at a point where the expression is read."""
    if np.any(np.logical_and(live, bad)):
        from primus_lang.diagnostics import CompileError, Diagnostic
        from primus_lang.diagnostics.codes_legality import EXPRESSION_OVERFLOW

        raise CompileError(
            Diagnostic(
                EXPRESSION_OVERFLOW,
                f"`{to_text(e)}` overflows 64-bit arithmetic at some point of the space",
                e.span,
                help="whole numbers stop at 2^63 - 1 and decimals at about 1.8e308; keep the values to what "
                "the recipe can hold, or guard the expression with `and`/`or`",
            )
        )
    return out


def evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """Evaluate ``expr``; names are looked up in ``env`` (arrays or scalars). The right side of
    `and` (`or`) is read only where the left is true (false), so it may guard a division."""
    with np.errstate(all="ignore"):
        return _Evaluate(env).visit(expr)


class _Evaluate(Visitor[Any]):
    def __init__(self, env: Mapping[str, Any]) -> None:
        self.env = env
        # where the node being evaluated is read: `and`/`or` narrow it for their right side
        self.live: Any = True

    def const(self, e: Const) -> Any:
        return e.value

    def name(self, e: Name) -> Any:
        return self.env[e.id]

    def unary(self, e: Unary) -> Any:
        v = self.visit(e.operand)
        if e.op == "not":
            return np.logical_not(v)
        out = np.negative(v)
        return _checked(e, out, _overflows("-", v, None, out), self.live)

    def binary(self, e: Binary) -> Any:
        if e.op == "in":
            left = self.visit(e.left)
            out: Any = False
            for item in alternatives(e):
                out = np.logical_or(out, np.equal(left, self.visit(item)))
            return out
        a = self.visit(e.left)
        if e.op == "and":
            return np.logical_and(a, self._read_where(np.logical_and(self.live, a), e.right))
        if e.op == "or":
            return np.logical_or(a, self._read_where(np.logical_and(self.live, np.logical_not(a)), e.right))
        b = self.visit(e.right)
        if e.op in _COMPARE:
            return _COMPARE[e.op](a, b)
        if e.op in _ARITH:
            out = _ARITH[e.op](a, b)
            return _checked(e, out, _overflows(e.op, a, b, out), self.live)
        if e.op in _DIVIDE:
            return _divide(e, a, b, self.live)
        raise ValueError(f"unknown operator {e.op!r}")

    def _read_where(self, live: Any, e: Expr) -> Any:
        outer, self.live = self.live, live
        try:
            return self.visit(e)
        finally:
            self.live = outer

    def call(self, e: Call) -> Any:
        args = [self.visit(a) for a in e.args]
        if e.func == "min":
            return _reduce(np.minimum, args)
        if e.func == "max":
            return _reduce(np.maximum, args)
        if e.func == "divides":
            return _divides(args[0], args[1])
        raise ValueError(f"unknown function {e.func!r}")

    def tuple_(self, e: Tuple_) -> Any:
        raise ValueError("a tuple is only allowed after `in`")


def _reduce(fn: Any, args: list[Any]) -> Any:
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out
