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


def _floordiv(a: Any, b: Any) -> Any:
    return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))


def _mod(a: Any, b: Any) -> Any:
    return np.where(b == 0, a, np.remainder(a, np.where(b == 0, 1, b)))


def evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """Evaluate ``expr``; names are looked up in ``env`` (arrays or scalars)."""
    with np.errstate(all="ignore"):
        return _eval(expr, env)


def _eval(e: Expr, env: Mapping[str, Any]) -> Any:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Name):
        return env[e.id]
    if isinstance(e, Unary):
        v = _eval(e.operand, env)
        return np.logical_not(v) if e.op == "not" else np.negative(v)
    if isinstance(e, Binary):
        if e.op == "in":
            left = _eval(e.left, env)
            items = e.right.items if isinstance(e.right, Tuple_) else (e.right,)
            out: Any = False
            for item in items:
                out = np.logical_or(out, np.equal(left, _eval(item, env)))
            return out
        a, b = _eval(e.left, env), _eval(e.right, env)
        if e.op == "and":
            return np.logical_and(a, b)
        if e.op == "or":
            return np.logical_or(a, b)
        if e.op in _COMPARE:
            return _COMPARE[e.op](a, b)
        if e.op in _ARITH:
            return _ARITH[e.op](a, b)
        if e.op == "/":
            return np.true_divide(a, b)
        if e.op == "//":
            return _floordiv(a, b)
        if e.op == "%":
            return _mod(a, b)
        raise ValueError(f"unknown operator {e.op!r}")
    if isinstance(e, Call):
        args = [_eval(a, env) for a in e.args]
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
