"""Tables of the language reference generated from the IR's metadata and the registries.

``python -m primus_lang.syntax.doctables docs/language.md`` rewrites the sections between
``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``; a test fails when they are stale.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from primus_lang.diagnostics import all_codes
from primus_lang.ir.candidate import KNOBS, Candidate
from primus_lang.ir.hardware import Cluster, Efficiency, Gpu, Provenance
from primus_lang.ir.model import Mamba, Mla, Model, Moe
from primus_lang.ir.quantity import Kind, choices_of, doc_of, kind_of
from primus_lang.ir.text import field_default, is_model_rule
from primus_lang.syntax.units import UNITS


def _default(f: attrs.Attribute[Any]) -> str:
    # a rule over other fields reads as code; a value as itself
    return f"`{field_default(f)}`" if is_model_rule(f) else field_default(f)


def _values(f: attrs.Attribute[Any]) -> str:
    kind = kind_of(f)
    if kind is Kind.ENUM:
        return " \\| ".join(choices_of(f))
    if kind is Kind.FLAG:
        return "true \\| false"
    if f.name == "recompute":
        return "none \\| selective \\| op \\| full(layers: N, method: uniform \\| block)"
    return str(kind.value)


def knobs() -> str:
    rows = ["| knob | values | default | meaning |", "|---|---|---|---|"]
    for name, f in KNOBS.items():
        rows.append(f"| `{name}` | {_values(f)} | {_default(f)} | {doc_of(f)} |")
    return "\n".join(rows)


def fields(cls: type) -> str:
    rows = ["| field | kind | default | meaning |", "|---|---|---|---|"]
    for f in attrs.fields(cls):
        if f.name in ("name", "span"):
            continue
        rows.append(f"| `{f.name}` | {_values(f)} | {_default(f)} | {doc_of(f)} |")
    if cls is Cluster:
        rows.append("| `nic` | `N x BANDWIDTH` | — | sets `nics_per_node` and `nic_bandwidth` together |")
    return "\n".join(rows)


def _factor(f: float) -> str:
    import math

    for scale, suffix in ((1.0, ""), (8.0, "/8")):
        n = f * scale
        if n >= 1 and n == int(n):
            k = int(n)
            if k > 1 and k & (k - 1) == 0:
                return f"2^{k.bit_length() - 1}{suffix}"
            exp = round(math.log10(k))
            if 10**exp == k:
                return f"10^{exp}{suffix}" if exp else f"1{suffix}"
    return f"{f:g}"


def units() -> str:
    by_kind: dict[Kind, list[str]] = {}
    for unit, (kind, factor) in UNITS.items():
        by_kind.setdefault(kind, []).append(f"`{unit}` = {_factor(factor)}")
    rows = ["| quantity | units (factor to the SI base unit) |", "|---|---|"]
    for kind, items in by_kind.items():
        rows.append(f"| {kind.value} | {', '.join(items)} |")
    return "\n".join(rows)


def codes() -> str:
    rows = ["| code | name | meaning |", "|---|---|---|"]
    for c in all_codes():
        if c.id[:2] in ("P1", "P2", "P3", "P4"):
            summary = c.summary.replace("|", "\\|")
            rows.append(f"| {c.id} | `{c.name}` | {summary} |")
    return "\n".join(rows)


SECTIONS: dict[str, Callable[[], str]] = {
    "knobs": knobs,
    "units": units,
    "model": lambda: fields(Model),
    "moe": lambda: fields(Moe),
    "mla": lambda: fields(Mla),
    "mamba": lambda: fields(Mamba),
    "gpu": lambda: fields(Gpu),
    "efficiency": lambda: fields(Efficiency),
    "provenance": lambda: fields(Provenance),
    "cluster": lambda: fields(Cluster),
    "codes": codes,
}
_ = Candidate  # the knob table is the Candidate's fields


def render(text: str) -> str:
    """``text`` with every generated section of the language reference brought up to date."""
    from primus_lang.syntax.generated import render_sections

    return render_sections(text, SECTIONS)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    path.write_text(render(path.read_text()))
