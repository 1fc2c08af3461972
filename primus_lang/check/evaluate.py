"""Expression evaluation over frames: the same code judges one candidate or a million at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from primus_lang.ir.space import Binary, Call, Const, Expr, Name, Tuple_, Unary
from primus_lang.syntax.exprtext import to_text

__all__ = ["evaluate", "to_text"]

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
    return _DIVIDE[e.op](a, np.where(zero, 1, b))  # the points not read still need a finite value


def evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """Evaluate ``expr``; names are looked up in ``env`` (arrays or scalars). The right side of
    `and` (`or`) is read only where the left is true (false), so it may guard a division."""
    with np.errstate(all="ignore"):
        return _eval(expr, env, True)


def _eval(e: Expr, env: Mapping[str, Any], live: Any) -> Any:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Name):
        return env[e.id]
    if isinstance(e, Unary):
        v = _eval(e.operand, env, live)
        return np.logical_not(v) if e.op == "not" else np.negative(v)
    if isinstance(e, Binary):
        if e.op == "in":
            left = _eval(e.left, env, live)
            items = e.right.items if isinstance(e.right, Tuple_) else (e.right,)
            out: Any = False
            for item in items:
                out = np.logical_or(out, np.equal(left, _eval(item, env, live)))
            return out
        a = _eval(e.left, env, live)
        if e.op == "and":
            return np.logical_and(a, _eval(e.right, env, np.logical_and(live, a)))
        if e.op == "or":
            return np.logical_or(a, _eval(e.right, env, np.logical_and(live, np.logical_not(a))))
        b = _eval(e.right, env, live)
        if e.op in _COMPARE:
            return _COMPARE[e.op](a, b)
        if e.op in _ARITH:
            return _ARITH[e.op](a, b)
        if e.op in _DIVIDE:
            return _divide(e, a, b, live)
        raise ValueError(f"unknown operator {e.op!r}")
    if isinstance(e, Call):
        args = [_eval(a, env, live) for a in e.args]
        if e.func == "min":
            return _reduce(np.minimum, args)
        if e.func == "max":
            return _reduce(np.maximum, args)
        if e.func == "divides":
            return _divides(args[0], args[1])
        raise ValueError(f"unknown function {e.func!r}")
    if isinstance(e, Tuple_):
        raise ValueError("a tuple is only allowed after `in`")
    raise TypeError(f"not an expression: {e!r}")


def _reduce(fn: Any, args: list[Any]) -> Any:
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out
