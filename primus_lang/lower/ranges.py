"""What a model, GPU or cluster field can physically be: a count of zero nodes or heads, a negative
bandwidth or query groups that do not divide the heads are refused where they are written, rather
than found later as a division by zero in the memory account or the projection."""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.ir.model import Mamba, Model, Moe
from primus_lang.ir.quantity import META_DOC, Kind, kind_of, lowest

Problem = tuple[str, str, str]  # (field, message, help)


def _bound(field: attrs.Attribute[Any], value: Any) -> Problem | None:
    bound = lowest(field)
    if bound is None or not isinstance(value, int | float) or isinstance(value, bool):
        return None
    low, strict = bound
    if value > low or (value == low and not strict):
        return None
    if kind_of(field) is Kind.COUNT:
        need = "at least 1" if low else "0 or more"
    else:
        need = "positive" if strict else "0 or more"
    return field.name, f"`{field.name}` must be {need}, not {value:g}", str(field.metadata.get(META_DOC, ""))


def _divides(values: dict[str, Any], part: str, whole: str, why: str) -> Problem | None:
    a, b = values.get(part), values.get(whole)
    if isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0 and b % a:
        return part, f"`{part}` ({a}) must divide `{whole}` ({b})", why
    return None


def range_problems(cls: type, values: dict[str, Any]) -> list[Problem]:
    """Each field of ``values`` (a block about to become ``cls``) outside its range, in field order."""
    out = [p for f in attrs.fields(cls) if f.name in values and (p := _bound(f, values[f.name])) is not None]
    if any(p[0] in ("heads", "kv_heads", "groups", "top_k", "num_experts") for p in out):
        return out  # a relation between fields already out of range says nothing more
    related: list[Problem | None] = []
    if cls is Model:
        related.append(_divides(values, "kv_heads", "heads", "each key/value head serves heads/kv_heads query heads"))
    elif cls is Mamba:
        related.append(_divides(values, "groups", "heads", "each B/C group serves heads/groups SSM heads"))
    elif cls is Moe:
        k, n = values.get("top_k"), values.get("num_experts")
        if isinstance(k, int) and isinstance(n, int) and k > n:
            related.append(("top_k", f"`top_k` ({k}) cannot exceed `num_experts` ({n})",
                            "a token is routed to top_k distinct experts"))
        if values.get("bias_balancing") and values.get("router_score", "softmax") != "sigmoid":
            related.append(("bias_balancing", "`bias_balancing` needs `router_score = sigmoid`",
                            "Megatron balances with an expert bias only on sigmoid scores"))
    return out + [p for p in related if p is not None]


def object_problems(obj: Any) -> list[Problem]:
    """``range_problems`` of an IR object built in Python (a card read from YAML, say), its nested
    blocks included."""
    values = {f.name: getattr(obj, f.name) for f in attrs.fields(type(obj))}
    out = range_problems(type(obj), values)
    for value in values.values():
        if attrs.has(type(value)):
            out += object_problems(value)
    return out
