"""IR values as the language writes them: the one printer of `.prx` values.

import-hf's and import-recipe's cards and spaces, the language server's hover and resolved views
and the docs' default column all print a field's value or default through here, so that what one
shows the others read back the same (before, the hover said `kv_heads` defaulted to `required`
and the docs `heads`; the hover wrote recomputation as `full(2,uniform)`, which does not parse).
A number prints exactly: the shortest text that reads back as the same value, in the kind's
largest unit that keeps it whole where the kind has units.
"""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.ir.candidate import Recompute
from primus_lang.ir.derived import MODEL_DEFAULTS
from primus_lang.ir.hardware import Provenance
from primus_lang.ir.quantity import Kind, kind_of


def quote(text: str) -> str:
    """A string literal: backslashes, quotes, newlines and tabs escaped as the grammar reads them;
    other control characters, which no escape writes, become spaces."""
    text = "".join(c if c.isprintable() or c in "\n\t" else " " for c in text)
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


def number(x: float | int) -> str:
    """The shortest text that reads back as ``x``: ``:g`` where it is exact, else ``repr``."""
    if isinstance(x, int):
        return str(x)
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


_BINARY = (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
# kind -> (unit, factor) the language writes a value of that kind in (syntax/units.py reads them)
_SCALED = {Kind.BANDWIDTH: ("GB/s", 1e9), Kind.FLOPS: ("TFLOP/s", 1e12), Kind.TIME: ("us", 1e-6)}


def recompute(r: Recompute) -> str:
    if r.kind == "full":
        return f"full(layers: {r.layers}, method: {r.method})"
    if r.kind == "selective" and r.modules:
        return f"selective({', '.join(r.modules)})"
    return r.kind


def literal(value: Any, kind: Kind | None = None) -> str:
    """``value`` as a `.prx` literal of quantity ``kind`` (a bare word for names and enums)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, Recompute):
        return recompute(value)
    if isinstance(value, str):
        return quote(value) if kind is Kind.TEXT else value
    if kind is Kind.BYTES and isinstance(value, int):
        unit, size = next(((u, s) for u, s in _BINARY if value % s == 0), ("B", 1)) if value else ("GiB", 1)
        return f"{value // size} {unit}"
    if kind in _SCALED and isinstance(value, int | float):
        unit, scale = _SCALED[kind]
        # 12 significant digits: the division's last-bit noise (1e-5 / 1e-6) is no part of the value
        return f"{number(float(f'{value / scale:.12g}'))} {unit}"
    if isinstance(value, int | float):
        return number(value)
    return str(value)


# a count's suffix and what it multiplies (`train_tokens = 15T`, `require cost <= 5M`); G is B's alias
COUNT_SUFFIXES = {"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def count(n: float) -> str:
    """``15T``: a large count as a space writes it (three significant digits, rounded before the suffix
    is chosen: 999,600 is ``1M``, not ``1e+03K``)."""
    n = float(f"{n:.3g}")
    if n >= 1000 * COUNT_SUFFIXES["T"]:
        return f"{n:.3g}".replace("e+", "e")  # as a space writes it: 2e16, not 2e+04T
    for suffix in "TBMK":
        if n >= COUNT_SUFFIXES[suffix]:
            return f"{n / COUNT_SUFFIXES[suffix]:.3g}{suffix}"
    return f"{n:g}"


def fitted(name: str, value: float) -> str:
    """A fitted efficiency as calibrate and learn write it: rounded to what a fit can tell apart (three
    decimals of a rate, four significant digits of the knee, a tenth of a microsecond of launch)."""
    if name == "gemm_knee_flops":
        return f"{value:.3e}".replace("e+0", "e").replace("e+", "e")
    if name == "host_launch":
        return f"{value * 1e6:.1f} us"
    return f"{value:.3f}"


# provenance fraction fields: shares of runs, two decimals; its other numbers are errors and ratios, three
_PROVENANCE_DIGITS = {Kind.FRACTION: ".2f", Kind.NUMBER: ".3f"}


def provenance_fields(p: Provenance) -> list[tuple[str, str]]:
    """Every field of a provenance block, as written (the note last): a profile read back carries the
    band, and what its fit saw, that it was written with."""
    out: list[tuple[str, str]] = []
    fields: list[attrs.Attribute[Any]] = list(attrs.fields(Provenance))
    for f in sorted(fields, key=lambda f: (kind_of(f) is Kind.TEXT, f.name == "note")):
        value, kind = getattr(p, f.name), kind_of(f)
        out.append((f.name, format(value, _PROVENANCE_DIGITS[kind]) if kind in _PROVENANCE_DIGITS
                    else literal(value, kind)))
    return out


def is_model_rule(f: attrs.Attribute[Any]) -> bool:
    """Whether ``f`` is a model field whose default follows from other fields."""
    from primus_lang.ir.model import Model

    return f.name in MODEL_DEFAULTS and attrs.fields_dict(Model).get(f.name) is f


def field_default(f: attrs.Attribute[Any]) -> str:
    """A field's default as the docs and the hover state it: the rule of a model default that
    follows from other fields (``ir.derived.MODEL_DEFAULTS``), ``required``, ``defaults`` for a
    nested block, else the value."""
    if is_model_rule(f):
        return MODEL_DEFAULTS[f.name][0]
    if f.default is attrs.NOTHING:
        return "required"
    value: Any = f.default
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        value = value.factory()
    if attrs.has(type(value)) and not isinstance(value, Recompute):
        return "defaults"
    return literal(value, kind_of(f))
