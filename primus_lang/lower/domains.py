"""Knob values and domains: ranges, steps, ``pow2(..)`` and ``full(layers: .., method: ..)`` expanded.

Everything is read from the knob's attrs field (its kind and choices), including the fields of the
``Recompute`` block, so a new knob needs no change here.
"""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.diagnostics.suggest import closest
from primus_lang.ir.candidate import RECOMPUTE_MODULES, Recompute, format_value
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.space import Value
from primus_lang.lower.values import below_ceiling, block_class, check_choice, count, describe, fail, scalar
from primus_lang.syntax import ast

MAX_DOMAIN = 100_000


def _check_count(field: attrs.Attribute[Any], v: int, span: Any) -> int:
    # A count whose default is 0 uses 0 as "unset" (etp, recompute layers); any other must be >= 1.
    floor = 0 if field.default == 0 else 1
    if v < floor:
        raise fail(T.OUT_OF_RANGE, f"`{field.name}` must be at least {floor}, got {v}", span)
    below_ceiling(field, v, span)
    return v


def _ends(field: attrs.Attribute[Any], r: ast.Range) -> tuple[int, int]:
    """A range's bounds, each refused at its own span above the knob's ceiling."""
    lo, hi = count(r.lo, field.name), count(r.hi, field.name)
    below_ceiling(field, lo, r.lo.span)
    below_ceiling(field, hi, r.hi.span)
    return lo, hi


def _range(field: attrs.Attribute[Any], r: ast.Range) -> list[int]:
    lo, hi = _ends(field, r)
    step = count(r.step, "step") if r.step is not None else 1
    if step < 1:
        raise fail(
            T.BAD_STEP, f"a range step must be at least 1, got {step}", r.step.span if r.step else r.span
        )
    if hi >= lo and (hi - lo) // step + 1 > MAX_DOMAIN:
        raise fail(
            T.DOMAIN_TOO_LARGE,
            f"`{lo} .. {hi}` holds {(hi - lo) // step + 1:,} values, more than {MAX_DOMAIN:,}",
            r.span,
            help="add a larger `step`, or use `pow2(lo .. hi)`",
        )
    return [_check_count(field, v, r.span) for v in range(lo, hi + 1, step)]


def _pow2(field: attrs.Attribute[Any], call: ast.CallValue) -> list[int]:
    if len(call.args) != 1 or call.args[0].key is not None:
        raise fail(T.BAD_ARGUMENTS, "`pow2` takes one range: `pow2(1 .. 8)`", call.span)
    out: list[int] = []
    for alt in call.args[0].domain.alts:
        if isinstance(alt, ast.Range):
            lo, hi = _ends(field, alt)
            if alt.step is not None:
                raise fail(T.BAD_ARGUMENTS, "`pow2(..)` takes a range without `step`", alt.step.span)
            p = 1
            while p <= hi:
                if p >= lo:
                    out.append(p)
                p *= 2
        else:
            v = below_ceiling(field, count(alt, field.name), alt.span)
            if v > 0 and v & (v - 1) == 0:
                out.append(v)
    return [_check_count(field, v, call.span) for v in out]


def _full(call: ast.CallValue) -> list[Recompute]:
    fields = attrs.fields_dict(Recompute)
    args: dict[str, ast.Domain] = {}
    order = ["layers", "method"]
    for i, arg in enumerate(call.args):
        key = arg.key if arg.key is not None else (order[i] if i < len(order) else "")
        if key not in order:
            raise fail(
                T.BAD_ARGUMENTS,
                f"`full` takes `layers:` and `method:`, not `{arg.key or 'a third argument'}`",
                arg.span,
                help="write `full(layers: 0 .. 80 step 4, method: uniform | block)`",
            )
        if key in args:
            raise fail(T.BAD_ARGUMENTS, f"`{key}` given twice to `full`", arg.span)
        args[key] = arg.domain
    if "layers" not in args:
        raise fail(T.BAD_ARGUMENTS, "`full` needs a layer count: `full(layers: 8)`", call.span)
    layers = [v for v in expand(fields["layers"], args["layers"]) if isinstance(v, int)]
    methods = [str(v) for v in expand(fields["method"], args["method"])] if "method" in args else ["block"]
    return [Recompute("full", n, m) for n in layers for m in methods]


def _selective(call: ast.CallValue) -> Recompute:
    """``selective(core_attn, mlp)``: selective recomputation of the named modules."""
    names: list[str] = []
    for arg in call.args:
        alts = arg.domain.alts
        if arg.key is not None or len(alts) != 1 or not isinstance(alts[0], ast.Ident):
            raise fail(
                T.BAD_ARGUMENTS,
                "`selective(...)` lists module names",
                arg.span,
                help="e.g. `selective(core_attn, mlp)`; alternatives are separate values: "
                "`selective(core_attn) | selective(mlp)`",
            )
        names.append(alts[0].name)
    for name, arg in zip(names, call.args, strict=True):
        check_choice(name, RECOMPUTE_MODULES, arg.span, f"`{name}` is not a recompute module",
                     f"modules: {', '.join(RECOMPUTE_MODULES)}")
    return Recompute("selective", modules=tuple(names))


def _alt(field: attrs.Attribute[Any], alt: ast.Alt) -> list[Value]:
    kind = kind_of(field)
    if isinstance(alt, ast.Range):
        if kind is not Kind.COUNT:
            raise fail(T.WRONG_TYPE, f"`{field.name}` does not take a numeric range", alt.span)
        return list(_range(field, alt))
    if isinstance(alt, ast.CallValue):
        if alt.func == "pow2" and kind is Kind.COUNT:
            return list(_pow2(field, alt))
        if alt.func == "full" and kind is Kind.BLOCK:
            return list(_full(alt))
        if alt.func == "selective" and kind is Kind.BLOCK:
            return [_selective(alt)]
        if alt.func in ("pow2", "full"):
            raise fail(T.WRONG_TYPE, f"`{alt.func}(..)` is not a value of `{field.name}`", alt.span)
        if alt.func == "selective":
            raise fail(T.WRONG_TYPE, f"`selective(..)` is not a value of `{field.name}`", alt.span)
        raise fail(
            N.UNKNOWN_FUNCTION,
            f"unknown function `{alt.func}` in a domain",
            alt.span,
            help="domains know `pow2(lo .. hi)` and `full(layers: .., method: ..)`",
        )
    if kind is Kind.BLOCK:
        cls = block_class(_owner(field), field.name)
        if cls is Recompute and isinstance(alt, ast.Ident) and alt.name in ("none", "selective", "op"):
            return [Recompute(alt.name)]
        if cls is Recompute and isinstance(alt, ast.Ident) and alt.name == "full":
            raise fail(
                T.BAD_ARGUMENTS,
                "`full` needs a layer count",
                alt.span,
                help="write `full(layers: 8)` or `full(8)`",
            )
        near = closest(alt.name, ("none", "selective", "op", "full")) if isinstance(alt, ast.Ident) else None
        raise fail(
            T.WRONG_TYPE,
            f"`{field.name}` takes `none`, `selective`, `op` or `full(layers: ..)`, not {describe(alt)}",
            alt.span,
            help=f"did you mean `{near}`?" if near else "",
        )
    value = scalar(field, alt)
    if kind is Kind.COUNT:
        value = _check_count(field, value, alt.span)
    return [value]


def _owner(field: attrs.Attribute[Any]) -> type:
    from primus_lang.ir.candidate import Candidate

    return Candidate


def expand(field: attrs.Attribute[Any], domain: ast.Domain) -> tuple[Value, ...]:
    """The ordered, duplicate-free values of a domain for one knob (or block field)."""
    out: list[Value] = []
    seen: dict[Value, ast.Alt] = {}
    for alt in domain.alts:
        values = _alt(field, alt)
        if values and all(v in seen for v in values):
            # every value already given: most likely a typo for a value that is missing
            shown = ", ".join(f"`{format_value(v)}`" for v in values[:3]) + (", ..." if len(values) > 3 else "")
            raise fail(
                T.REPEATED_VALUE,
                f"`{field.name}` lists {shown} again: an earlier alternative of its domain already gives "
                + ("it" if len(values) == 1 else "them"),
                alt.span,
                help="remove the repeat, or write the value that was meant",
            )
        for v in values:
            if v not in seen:
                seen[v] = alt
                out.append(v)
    if len(out) > MAX_DOMAIN:
        raise fail(T.DOMAIN_TOO_LARGE, f"`{field.name}` has {len(out):,} values", domain.span)
    if not out:
        raise fail(
            T.EMPTY_DOMAIN,
            f"the domain of `{field.name}` is empty",
            domain.span,
            help="a range `lo .. hi` needs lo <= hi; `pow2(lo .. hi)` needs a power of two inside",
        )
    return tuple(out)


def single(field: attrs.Attribute[Any], value: ast.Value) -> Value:
    """A fixed knob: exactly one value."""
    values = expand(field, ast.Domain((value,), value.span))
    if len(values) != 1:
        raise fail(
            T.WRONG_TYPE,
            f"`{field.name} = ...` fixes one value but this gives {len(values)}",
            value.span,
            help=f"write `{field.name} : ...` to make it an axis",
        )
    return values[0]
