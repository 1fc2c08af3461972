"""The units a number may carry: each unit's quantity kind and its factor to the SI base unit.

GB is 10^9 bytes and GiB 2^30: they are distinct. ``Gbps`` is bits, so 10^9 / 8 bytes per second.
"""

from __future__ import annotations

import functools
import re

import attrs

from primus_lang.ir.quantity import META_KIND, Kind

_BYTE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
}

# unit -> (kind, factor to bytes, bytes/s, FLOP/s, seconds or a fraction)
UNITS: dict[str, tuple[Kind, float]] = {
    **{u: (Kind.BYTES, float(f)) for u, f in _BYTE_UNITS.items()},
    **{f"{u}/s": (Kind.BANDWIDTH, float(f)) for u, f in _BYTE_UNITS.items()},
    "Mbps": (Kind.BANDWIDTH, 1e6 / 8),
    "Gbps": (Kind.BANDWIDTH, 1e9 / 8),
    "Tbps": (Kind.BANDWIDTH, 1e12 / 8),
    "FLOP/s": (Kind.FLOPS, 1.0),
    "GFLOP/s": (Kind.FLOPS, 1e9),
    "TFLOP/s": (Kind.FLOPS, 1e12),
    "PFLOP/s": (Kind.FLOPS, 1e15),
    "ns": (Kind.TIME, 1e-9),
    "us": (Kind.TIME, 1e-6),
    "ms": (Kind.TIME, 1e-3),
    "s": (Kind.TIME, 1.0),
    "min": (Kind.TIME, 60.0),
    "h": (Kind.TIME, 3600.0),
    "%": (Kind.FRACTION, 0.01),
}

# The unit the formatter, ``dump`` and the docs use when they print a value of each kind.
CANONICAL: dict[Kind, str] = {
    Kind.BYTES: "GiB",
    Kind.BANDWIDTH: "GB/s",
    Kind.FLOPS: "TFLOP/s",
    Kind.TIME: "s",
}


def with_unit(kind: Kind, value: float) -> str:
    """An IR value (SI base units) in its kind's canonical unit, as a reader writes it: `288 GiB`,
    `2,517 TFLOP/s`; a count or a number as it is."""
    unit = CANONICAL.get(kind)
    if unit is None:
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    return f"{value / UNITS[unit][1]:,.4g} {unit}"


# Common spellings that are not units of the language, mapped to the unit meant (for hints only).
ALIASES: dict[str, str] = {
    "flops": "FLOP/s",
    "gflops": "GFLOP/s",
    "tflops": "TFLOP/s",
    "pflops": "PFLOP/s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "usec": "us",
    "msec": "ms",
    "gbit": "Gbps",
    "gbits": "Gbps",
}


# `Gb/s`, `Gbit/s`, `Gb`: a lowercase b is bits, which the language writes `Gbps` (GB/s is 8 times as much)
_BITS = re.compile(r"([MGT])(?:b|bit|bits)(?:/s|ps)?")
_BYTES_PS = re.compile(r"([KMGTP]i?B)ps")  # `GBps`: bytes a second, which the language writes `GB/s`


def suggest_unit(word: str) -> str | None:
    """The unit a near-miss spelling most likely means, or None."""
    import difflib

    bits = _BITS.fullmatch(word)
    if bits is not None:
        return f"{bits.group(1)}bps"
    per_second = _BYTES_PS.fullmatch(word)
    if per_second is not None:
        return f"{per_second.group(1)}/s"
    if word.lower() in ALIASES:
        return ALIASES[word.lower()]
    folded = {u.lower(): u for u in UNITS}
    if word.lower() in folded:
        return folded[word.lower()]
    close = difflib.get_close_matches(word, list(UNITS), n=1, cutoff=0.6)
    return close[0] if close else None


@functools.cache
def takes_no_unit(name: str) -> bool:
    """Whether every IR field called ``name`` is a plain count or number (``nodes``, ``mbs``): a unit
    after its value is a slip, whatever unit it resembles."""
    import primus_lang.ir as ir

    kinds = {f.metadata.get(META_KIND) for cls in vars(ir).values() if isinstance(cls, type) and attrs.has(cls)
             for f in attrs.fields(cls) if f.name == name}
    return bool(kinds) and kinds <= {Kind.COUNT, Kind.NUMBER}


def byte_units() -> dict[str, int]:
    return dict(_BYTE_UNITS)
