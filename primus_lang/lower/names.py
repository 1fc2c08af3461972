"""The names an expression may use, and the check that it uses only those.

Knobs come from ``KNOBS``; derived values and model facts are listed here once, for lowering (which
refuses unknown names) and for ``check`` (which evaluates them).
"""

from __future__ import annotations

import difflib

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.quantity import Kind, choices_of, kind_of
from primus_lang.ir.space import Binary, Call, Const, Expr, Name, Tuple_, Unary

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
FUNCTIONS: dict[str, tuple[int, int | None]] = {"min": (1, None), "max": (1, None), "divides": (2, 2)}


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


def resolve_expr(expr: Expr, known: set[str]) -> Expr:
    """Return ``expr`` with enum names turned into constants; refuse unknown names and calls."""
    enums = enum_values()

    def walk(e: Expr) -> Expr:
        if isinstance(e, Name):
            if e.id in known:
                return e
            if e.id in enums:
                return Const(e.id, e.span)
            close = difflib.get_close_matches(e.id, sorted(known | enums), n=1)
            hint = (
                f"did you mean `{close[0]}`?" if close else "see the names listed by `primusc explain P2010`"
            )
            raise CompileError(Diagnostic(N.UNKNOWN_VARIABLE, f"unknown name `{e.id}`", e.span, help=hint))
        if isinstance(e, Const):
            return e
        if isinstance(e, Unary):
            return Unary(e.op, walk(e.operand), e.span)
        if isinstance(e, Binary):
            right = e.right
            if isinstance(right, Tuple_) and e.op != "in":
                raise CompileError(
                    Diagnostic(T.BAD_EXPRESSION, "a tuple is only allowed after `in`", right.span)
                )
            return Binary(e.op, walk(e.left), walk(right), e.span)
        if isinstance(e, Call):
            if e.func not in FUNCTIONS:
                close = difflib.get_close_matches(e.func, list(FUNCTIONS), n=1)
                hint = f"did you mean `{close[0]}`?" if close else "functions: min, max, divides"
                raise CompileError(
                    Diagnostic(N.UNKNOWN_FUNCTION, f"unknown function `{e.func}`", e.span, help=hint)
                )
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
            return Call(e.func, tuple(walk(a) for a in e.args), e.span)
        if isinstance(e, Tuple_):
            return Tuple_(tuple(walk(a) for a in e.items), e.span)
        raise TypeError(f"not an expression node: {e!r}")

    return walk(expr)


def _knob_type(name: str) -> str:
    f = KNOBS[name]
    kind = kind_of(f)
    if kind is Kind.FLAG:
        return "bool"
    if kind in (Kind.ENUM, Kind.BLOCK):  # `recompute` reads as its kind
        return "name"
    return "number"


def type_of(expr: Expr, lets: dict[str, str]) -> str:
    """``number``, ``bool`` or ``name``; refuses operators applied to the wrong kind of value (P3016)."""

    def bad(e: Expr, message: str) -> CompileError:
        return CompileError(
            Diagnostic(
                T.BAD_EXPRESSION, message, getattr(e, "span", None), help="see `primusc explain P3016`"
            )
        )

    def walk(e: Expr) -> str:
        if isinstance(e, Name):
            if e.id in KNOBS:
                return _knob_type(e.id)
            return lets.get(e.id, "number")
        if isinstance(e, Const):
            if isinstance(e.value, bool):
                return "bool"
            return "name" if isinstance(e.value, str) else "number"
        if isinstance(e, Unary):
            inner = walk(e.operand)
            want = "bool" if e.op == "not" else "number"
            if inner != want:
                raise bad(e, f"`{e.op}` needs a {want}, not a {inner}")
            return want
        if isinstance(e, Binary):
            left = walk(e.left)
            if e.op == "in":
                items = e.right.items if isinstance(e.right, Tuple_) else (e.right,)
                for item in items:
                    if walk(item) != left:
                        raise bad(item, f"`in` compares a {left} with a {walk(item)}")
                return "bool"
            right = walk(e.right)
            if e.op in ("and", "or"):
                if left != "bool" or right != "bool":
                    raise bad(e, f"`{e.op}` joins conditions, not a {left if left != 'bool' else right}")
                return "bool"
            if e.op in ("==", "!="):
                if left != right:
                    raise bad(e, f"`{e.op}` compares a {left} with a {right}")
                return "bool"
            if left != "number" or right != "number":
                raise bad(e, f"`{e.op}` needs numbers, not a {left if left != 'number' else right}")
            return "bool" if e.op in ("<", "<=", ">", ">=") else "number"
        if isinstance(e, Call):
            for a in e.args:
                if walk(a) != "number":
                    raise bad(a, f"`{e.func}` takes numbers")
            return "bool" if e.func == "divides" else "number"
        raise bad(e, "a tuple is only allowed after `in`")

    return walk(expr)


def names_in(expr: Expr) -> set[str]:
    if isinstance(expr, Name):
        return {expr.id}
    if isinstance(expr, Unary):
        return names_in(expr.operand)
    if isinstance(expr, Binary):
        return names_in(expr.left) | names_in(expr.right)
    if isinstance(expr, Call):
        return set().union(*(names_in(a) for a in expr.args)) if expr.args else set()
    if isinstance(expr, Tuple_):
        return set().union(*(names_in(a) for a in expr.items)) if expr.items else set()
    return set()


def base_names() -> set[str]:
    return set(KNOBS) | set(DERIVED) | set(MODEL_FACTS)
