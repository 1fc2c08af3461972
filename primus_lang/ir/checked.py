"""An IR object rebuilt from a data file primusc wrote and a person may have edited since (a
campaign manifest's candidates and GPU profile): every field is checked against what it declares
(its kind, its enum choices, its range and ceiling, a pipeline layout that parses) before the object
is built, so a string where a count goes, ``"cuda_graph": "x"`` or ``"pp": -1`` is refused where it
is read, never found later as a KeyError, an IndexError or a division by zero in the projection.
``cattrs`` alone structures such values without a word (``"x"`` is a fine ``str``)."""

from __future__ import annotations

import math
from typing import Any, TypeVar

import attrs

from primus_lang.ir import serialize
from primus_lang.ir.pipeline import parse_layout
from primus_lang.ir.quantity import META_CHOICES, META_KIND, Kind
from primus_lang.ir.ranges import object_problems

T = TypeVar("T")

_NUMBERS = (Kind.NUMBER, Kind.FRACTION, Kind.BYTES, Kind.BANDWIDTH, Kind.FLOPS, Kind.TIME)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field_problem(f: attrs.Attribute[Any], value: Any, where: str) -> str:
    kind = f.metadata.get(META_KIND)
    name = f"`{where}{f.name}`"
    if isinstance(f.type, type) and attrs.has(f.type):
        return _problem(value, f.type, f"{where}{f.name}.")
    if kind is Kind.FLAG and not isinstance(value, bool):
        return f"{name} is {_shown(value)}, not true or false"
    if kind is Kind.COUNT and (not isinstance(value, int) or isinstance(value, bool)):
        return f"{name} is {_shown(value)}, not an integer"
    if kind in _NUMBERS and (not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value)):
        return f"{name} is {_shown(value)}, not a finite number"
    choices = f.metadata.get(META_CHOICES)
    if kind is Kind.ENUM and choices and value not in choices:
        return f"{name} is {_shown(value)}, not one of {', '.join(map(str, choices))}"
    if f.type is str and not isinstance(value, str):
        return f"{name} is {_shown(value)}, not a string"
    return ""


def _problem(raw: Any, cls: type, where: str = "") -> str:
    """Why ``raw`` (JSON data) is not a ``cls``; "" when each field it gives is of its kind."""
    if not isinstance(raw, dict):
        return f"`{where.rstrip('.') or cls.__name__.lower()}` is {_shown(raw)}, not a mapping"
    attrs.resolve_types(cls)
    for f in attrs.fields(cls):
        if f.name in raw and (why := _field_problem(f, raw[f.name], where)):
            return why
    return ""


_RESOLVED: dict[type, tuple[attrs.Attribute[Any], ...]] = {}


def _resolved(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    hit = _RESOLVED.get(cls)
    if hit is None:
        attrs.resolve_types(cls)
        hit = _RESOLVED[cls] = tuple(attrs.fields(cls))
    return hit


def problem_of(obj: Any) -> tuple[str, str]:
    """Why an IR object built in Python (a hand-made ``Candidate``) is not one primusc can read: the kind
    of problem (``type``, ``choice`` or ``range``) and its message for its first bad field, ("", "") when
    every field is of its kind, among its choices and in its range. A wrong type would otherwise surface
    as a numpy error deep in the checker, and ``tp = 0`` as a division by zero."""
    kind, why = _kind_problem(obj, "")
    if kind:
        return kind, why
    problems = object_problems(obj)  # ranges, of the nested blocks too
    return ("range", problems[0].message) if problems else ("", "")


def _kind_problem(obj: Any, where: str) -> tuple[str, str]:
    """``problem_of``'s types and choices, nested blocks named by their path (``recompute.kind``)."""
    for f in _resolved(type(obj)):
        value = getattr(obj, f.name)
        if isinstance(f.type, type) and attrs.has(f.type):
            if not isinstance(value, f.type):
                return "type", f"`{where}{f.name}` is {_shown(value)}, not a {f.type.__name__}"
            found = _kind_problem(value, f"{where}{f.name}.")
            if found[0]:
                return found
            continue
        why = _field_problem(f, value, where)
        if why:
            return ("choice" if f.metadata.get(META_KIND) is Kind.ENUM else "type"), why
    return "", ""


def from_checked(raw: Any, cls: type[T]) -> tuple[T | None, str]:
    """(the ``cls`` that ``raw`` describes, "") or (None, why it describes none)."""
    why = _problem(raw, cls)
    if why:
        return None, why
    try:
        value = serialize.from_data(raw, cls)
    except Exception as exc:  # cattrs raises validation groups (a missing field, an unknown key) beside ValueError
        notes = [str(e) for e in getattr(exc, "exceptions", ())]
        return None, f"not a {cls.__name__.lower()}: {'; '.join(notes) or exc}"[:200]
    problems = object_problems(value)
    if problems:
        return None, problems[0].message
    layout = getattr(value, "pipeline_layout", "")
    if layout:
        try:
            parse_layout(layout)
        except ValueError as exc:
            return None, str(exc)[:200]
    return value, ""
