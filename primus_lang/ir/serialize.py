"""IR <-> JSON/YAML through cattrs. Unions carry explicit tags; the round trip is exact."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import cattrs
import yaml
from cattrs.strategies import configure_tagged_union

from primus_lang.ir.candidate import Recompute
from primus_lang.ir.expr import Binary, Call, Const, Expr, Name, Tuple_, Unary
from primus_lang.ir.hardware import Gpu
from primus_lang.ir.space import ClusterValue, Value

T = TypeVar("T")


def _structure_value(obj: Any, _: Any) -> Value:
    if isinstance(obj, dict):
        return converter.structure(obj, Recompute)
    if isinstance(obj, bool | int | float | str):
        return obj
    raise ValueError(f"not an axis value: {obj!r}")


def _structure_const(obj: Any, _: Any) -> bool | int | float | str:
    if isinstance(obj, bool | int | float | str):
        return obj
    raise ValueError(f"not a constant: {obj!r}")


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(bool | int | float | str, _structure_const)
    conv.register_structure_hook(Value, _structure_value)
    conv.register_unstructure_hook(Value, lambda v: conv.unstructure(v))

    def structure_cluster_value(obj: Any, _: Any) -> ClusterValue:
        if isinstance(obj, dict):
            return conv.structure(obj, Gpu)
        if isinstance(obj, int | float) and not isinstance(obj, bool):
            return obj
        raise ValueError(f"not a cluster axis value: {obj!r}")

    conv.register_structure_hook(ClusterValue, structure_cluster_value)
    conv.register_unstructure_hook(ClusterValue, lambda v: conv.unstructure(v))
    configure_tagged_union(Name | Const | Unary | Binary | Call | Tuple_, conv, tag_name="expr")
    return conv


converter = _make_converter()
_ = Expr  # the union configured above


def to_data(obj: Any) -> Any:
    return converter.unstructure(obj)


def from_data(data: Any, cls: type[T]) -> T:
    return converter.structure(data, cls)


def to_json(obj: Any, indent: int | None = 2) -> str:
    return json.dumps(to_data(obj), indent=indent, sort_keys=False)


def from_json(text: str, cls: type[T]) -> T:
    return from_data(json.loads(text), cls)


def to_yaml(obj: Any) -> str:
    return yaml.safe_dump(to_data(obj), sort_keys=False)


def from_yaml(text: str, cls: type[T]) -> T:
    return from_data(yaml.safe_load(text), cls)
