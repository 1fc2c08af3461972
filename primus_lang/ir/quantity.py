"""The kinds of quantity an IR field holds, declared once as attrs metadata.

Lowering reads this to accept ``80 GiB`` for a bytes field and refuse ``80 GB/s`` there; the
formatter, ``dump`` and the language reference read it to print the canonical unit. IR values are
always SI base units: bytes (int), bytes/s, FLOP/s, seconds, plain counts and fractions.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs


class Kind(enum.Enum):
    COUNT = "count"  # a plain integer (layers, heads, GPUs)
    NUMBER = "number"  # a plain real (factors, theta)
    FRACTION = "fraction"  # 0..1, written as 0.05 or 5%
    BYTES = "bytes"  # int bytes: GB (10^9) and GiB (2^30) are distinct
    BANDWIDTH = "bandwidth"  # bytes per second: GB/s, TB/s, Gbps
    FLOPS = "flops"  # FLOP per second: TFLOP/s, PFLOP/s
    TIME = "time"  # seconds: us, ms, s, min, h
    TEXT = "text"
    FLAG = "flag"  # true / false
    ENUM = "enum"  # one of a fixed set of names
    REF = "ref"  # a reference to another definition (model, gpu, cluster)
    BLOCK = "block"  # a nested block (moe { ... })


META_KIND = "primusc_kind"
META_CHOICES = "primusc_choices"
META_DOC = "primusc_doc"


META_ZERO = "primusc_zero_ok"


def q(kind: Kind, doc: str, choices: tuple[str, ...] = (), zero_ok: bool = False) -> dict[str, Any]:
    """Metadata for an attrs field: what it holds, its documentation, its enum choices, and whether 0
    is a meaningful value of a quantity whose default is not 0 (no latency, a free overlap)."""
    return {META_KIND: kind, META_DOC: doc, META_CHOICES: choices, META_ZERO: zero_ok}


def lowest(field: attrs.Attribute[Any]) -> tuple[float, bool] | None:
    """The least value a quantity field takes, and whether that bound itself is excluded: counts and
    magnitudes are never negative, and only those whose default is 0 (0 means "none" or "the
    default") or that declare ``zero_ok`` may be 0. None for fields that are not magnitudes."""
    kind = field.metadata.get(META_KIND)
    if kind not in (Kind.COUNT, Kind.NUMBER, Kind.FRACTION, Kind.BYTES, Kind.BANDWIDTH, Kind.FLOPS, Kind.TIME):
        return None
    zero = field.metadata.get(META_ZERO, False) or (field.default is not attrs.NOTHING and field.default == 0)
    if kind is Kind.COUNT:
        return (0, False) if zero else (1, False)
    return (0, not zero)


def kind_of(field: attrs.Attribute[Any]) -> Kind:
    kind = field.metadata.get(META_KIND)
    if not isinstance(kind, Kind):
        raise TypeError(f"IR field {field.name!r} declares no quantity kind")
    return kind


def choices_of(field: attrs.Attribute[Any]) -> tuple[str, ...]:
    value = field.metadata.get(META_CHOICES, ())
    return tuple(value)


def doc_of(field: attrs.Attribute[Any]) -> str:
    return str(field.metadata.get(META_DOC, ""))
