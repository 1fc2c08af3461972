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


def q(kind: Kind, doc: str, choices: tuple[str, ...] = ()) -> dict[str, Any]:
    """Metadata for an attrs field: what it holds, its documentation, its enum choices."""
    return {META_KIND: kind, META_DOC: doc, META_CHOICES: choices}


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
