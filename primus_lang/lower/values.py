"""AST values → IR field values, driven only by each attrs field's quantity metadata.

One mechanism serves every block kind: a new IR field with ``q(Kind.BYTES, ...)`` metadata is
accepted as ``80 GiB`` with no change here.
"""

from __future__ import annotations

import difflib
import functools
import typing
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_types as T
from primus_lang.ir.quantity import Kind, choices_of, kind_of
from primus_lang.ir.ranges import ceiling_problem
from primus_lang.ir.span import Span
from primus_lang.syntax import UNITS, ast

_UNIT_KINDS = (Kind.BYTES, Kind.BANDWIDTH, Kind.FLOPS, Kind.TIME)
_EXAMPLE_UNIT = {Kind.BYTES: "GiB", Kind.BANDWIDTH: "GB/s", Kind.FLOPS: "TFLOP/s", Kind.TIME: "ms"}


def fail(code: Any, message: str, span: Span | None, help: str = "") -> CompileError:
    return CompileError(
        Diagnostic(code, message, span, help=help or f"`primusc explain {code.id}` shows an example")
    )


def name_span(span: Span | None, name: str) -> Span | None:
    """The span of the name a statement starts with (``field = ...``, ``knob : ...``)."""
    if span is None:
        return None
    return Span(span.file, span.line, span.column, span.line, span.column + len(name))


def describe(value: ast.Value | ast.Range) -> str:
    if isinstance(value, ast.Quantity):
        return "a number" if value.unit is None else f"a quantity in {value.unit}"
    if isinstance(value, ast.Str):
        return "a string"
    if isinstance(value, ast.Ident):
        return f"the name `{value.name}`"
    if isinstance(value, ast.Override):
        return "a block"
    if isinstance(value, ast.Times):
        return "`N x quantity`"
    if isinstance(value, ast.CallValue):
        return f"a call to `{value.func}`"
    return "a range"


def count(value: ast.Value | ast.Range, what: str) -> int:
    if not isinstance(value, ast.Quantity):
        raise fail(T.WRONG_TYPE, f"`{what}` takes a whole number, not {describe(value)}", value.span)
    if value.unit is not None:
        raise fail(
            T.UNEXPECTED_UNIT,
            f"`{what}` is a plain count; remove the unit `{value.unit}`",
            value.span,
            help=f"write `{what} = {value.text}`",
        )
    v = value.value
    if isinstance(v, float):
        if not v.is_integer():
            raise fail(T.NOT_INTEGER, f"`{what}` must be a whole number, not {value.text}", value.span)
        v = int(v)
    return v


def number(value: ast.Value, what: str, allow_percent: bool) -> float:
    if not isinstance(value, ast.Quantity):
        raise fail(T.WRONG_TYPE, f"`{what}` takes a number, not {describe(value)}", value.span)
    if value.unit is None:
        return float(value.value)
    if value.unit == "%" and allow_percent:
        return float(value.value) / 100.0
    raise fail(T.UNEXPECTED_UNIT, f"`{what}` is a plain number; remove the unit `{value.unit}`", value.span)


def fraction(value: ast.Value, what: str) -> float:
    v = number(value, what, allow_percent=True)
    if not 0.0 <= v <= 1.0:
        raise fail(
            T.OUT_OF_RANGE,
            f"`{what}` is a fraction between 0 and 1, got {v:g}",
            value.span,
            help="a share: write it as 0.05 or 5%",
        )
    return v


def unit_quantity(value: ast.Value, kind: Kind, what: str) -> float:
    if not isinstance(value, ast.Quantity):
        raise fail(T.WRONG_TYPE, f"`{what}` takes a {kind.value} quantity, not {describe(value)}", value.span)
    example = f"{value.text} {_EXAMPLE_UNIT[kind]}"
    if value.unit is None:
        if value.value == 0:
            return 0.0
        raise fail(
            T.MISSING_UNIT,
            f"`{what}` needs a {kind.value} unit",
            value.span,
            help=f"write e.g. `{what} = {example}`",
        )
    unit_kind, factor = UNITS[value.unit]
    if unit_kind is not kind:
        same = [u for u, (k, _) in UNITS.items() if k is kind]
        raise fail(
            T.WRONG_UNIT,
            f"`{what}` holds {kind.value}, but `{value.unit}` is a unit of {unit_kind.value}",
            value.span,
            help=f"use one of {', '.join(same)}",
        )
    return float(value.value) * factor


def below_ceiling(field: attrs.Attribute[Any], value: Any, span: Span | None) -> Any:
    """``value``, or P3017 at its span when it is above what ``field`` can physically be."""
    problem = ceiling_problem(field, value)
    if problem is not None:
        raise fail(T.TOO_LARGE, problem.message, span, help=problem.help)
    return value


def enum(value: ast.Value | ast.Range, choices: tuple[str, ...], what: str) -> str:
    name = (
        value.name
        if isinstance(value, ast.Ident)
        else (value.text if isinstance(value, ast.Quantity) else None)
    )
    if name is None or (isinstance(value, ast.Quantity) and value.unit is not None):
        raise fail(
            T.WRONG_TYPE, f"`{what}` takes one of {_choices(choices)}, not {describe(value)}", value.span
        )
    check_choice(name, choices, value.span, f"`{name}` is not a value of `{what}`",
                 f"`{what}` takes {_choices(choices)}")
    return name


def check_choice(name: str, choices: tuple[str, ...], span: Span | None, message: str, listing: str) -> None:
    """Refuse ``name`` unless it is one of ``choices``; a near miss gets a "did you mean"."""
    if name in choices:
        return
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean `{close[0]}`? " if close else ""
    raise fail(T.BAD_ENUM, message, span, help=f"{hint}{listing}")


def flag(value: ast.Value | ast.Range, what: str) -> bool:
    if isinstance(value, ast.Ident) and value.name in ("true", "false"):
        return value.name == "true"
    raise fail(T.WRONG_TYPE, f"`{what}` takes `true` or `false`, not {describe(value)}", value.span)


def text(value: ast.Value, what: str) -> str:
    if isinstance(value, ast.Str):
        return value.value
    raise fail(T.WRONG_TYPE, f"`{what}` takes a string in double quotes, not {describe(value)}", value.span)


def _choices(choices: tuple[str, ...]) -> str:
    return " | ".join(choices)


def scalar(field: attrs.Attribute[Any], value: ast.Value | ast.Range) -> Any:
    """Convert one value for a field whose kind is not REF or BLOCK."""
    kind = kind_of(field)
    what = field.name
    if isinstance(value, ast.Range):
        raise fail(T.WRONG_TYPE, f"`{what}` takes one value, not a range", value.span)
    if kind is Kind.COUNT:
        return below_ceiling(field, count(value, what), value.span)
    if kind is Kind.NUMBER:
        return below_ceiling(field, number(value, what, allow_percent=False), value.span)
    if kind is Kind.FRACTION:
        return fraction(value, what)
    if kind in _UNIT_KINDS:
        v = below_ceiling(field, unit_quantity(value, kind, what), value.span)
        return round(v) if kind is Kind.BYTES else v
    if kind is Kind.TEXT:
        return text(value, what)
    if kind is Kind.FLAG:
        return flag(value, what)
    if kind is Kind.ENUM:
        return enum(value, choices_of(field), what)
    raise TypeError(f"field {what!r} of kind {kind} is not a scalar")


@functools.cache
def block_class(owner: type, field_name: str) -> type:
    """The attrs class a BLOCK or REF field holds (``Moe`` for ``moe: Moe | None``)."""
    hints = typing.get_type_hints(owner)
    hint = hints[field_name]
    options = typing.get_args(hint) or (hint,)
    for option in options:
        if attrs.has(option):
            return typing.cast(type, option)
    raise TypeError(f"{owner.__name__}.{field_name} holds no attrs class")


def field_doc(field: attrs.Attribute[Any]) -> str:
    kind = kind_of(field)
    if kind is Kind.ENUM:
        return _choices(choices_of(field))
    return str(kind.value)
