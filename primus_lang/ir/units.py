"""How quantities read for people, in the report, the terminal and the search's explanations: one
formatting rule per quantity (sizes in GiB everywhere). Not the unit suffixes a source may write,
which are ``syntax/units.py``."""

from __future__ import annotations

import math

GIB = 1 << 30


def gib(n: float) -> str:
    return f"{n / GIB:,.1f} GiB"


def gib_tick(n: float) -> str:
    """An axis tick: whole GiB without the decimal."""
    whole = n / GIB
    return f"{whole:,.0f} GiB" if whole == int(whole) else f"{whole:,.1f} GiB"


def signed_gib(n: float) -> str:
    return f"{n / GIB:+,.2f} GiB"


def seconds(t: float) -> str:
    if not math.isfinite(t):
        return "n/a"
    if t == 0:
        return "0"
    if abs(t) >= 1.0:
        return f"{t:,.3f} s"
    if abs(t) >= 1e-3:
        return f"{t * 1e3:,.1f} ms"
    return f"{t * 1e6:,.1f} us"


def signed_seconds(t: float) -> str:
    return ("+" if t >= 0 else "-") + seconds(abs(t))


def percent(f: float) -> str:
    return "n/a" if not math.isfinite(f) else f"{f * 100:.1f}%"


def rate(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:,.0f}"


def band(low: float, high: float) -> str:
    """An interval of rates: ``1,320-1,760``."""
    return f"{rate(low)}–{rate(high)}"


def label_cell(label: str) -> str:
    """A candidate's label in a table cell: a space after each comma, so a narrow column breaks it
    between its knobs, never inside one (``--point`` reads it back, spaces and all)."""
    return label.replace(",", ", ")


def metric(name: str, value: float) -> str:
    """A metric named as in the language (``maximize tokens_per_gpu``) in its reading unit."""
    if name == "step_time":
        return seconds(value)
    if name == "memory_peak":
        return gib(value)
    if name == "mfu":
        return percent(value)
    if name == "tflops_per_gpu":
        return f"{value:,.1f}"
    return rate(value)


METRIC_TITLES = {
    "tokens_per_gpu": "tokens/s/GPU",
    "step_time": "step time",
    "mfu": "MFU",
    "tflops_per_gpu": "TFLOP/s/GPU",
    "memory_peak": "memory peak",
    "bubble_fraction": "bubble (busiest stage)",
}
