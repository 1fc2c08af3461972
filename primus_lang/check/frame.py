"""Columns of candidate values (numpy arrays) and the names expressions read from them.

A frame holds one array per knob for a batch of points; derived values (``dp``, ``microbatches``,
...), model facts and ``let`` names are computed on first use. Scalars broadcast, so a fixed knob is
stored once. ``recompute`` is split into its kind (the column ``recompute``), ``recompute_layers``
and ``recompute_method``; ``$recompute`` keeps the values themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import numpy as np

from primus_lang.ir import derived
from primus_lang.ir.candidate import KNOBS, Candidate, Recompute
from primus_lang.ir.expr import DERIVED, MODEL_FACTS, names_in
from primus_lang.ir.space import Space, Value

Array = Any  # a numpy array or a numpy/python scalar that broadcasts


def knob_defaults() -> dict[str, Value]:
    # A default-constructed candidate holds every default, factories included.
    blank = Candidate()
    return {f.name: getattr(blank, f.name) for f in attrs.fields(Candidate)}


DEFAULTS = knob_defaults()


def columns_of(name: str, values: list[Value]) -> dict[str, np.ndarray[Any, Any]]:
    """The column(s) for one knob's list of values (three for ``recompute``)."""
    if name == "recompute":
        recs = [v if isinstance(v, Recompute) else Recompute() for v in values]
        whole = np.empty(len(recs), dtype=object)
        whole[:] = recs
        return {
            "$recompute": whole,  # the values themselves, whatever fields Recompute grows
            "recompute": np.array([r.kind for r in recs]),
            "recompute_layers": np.array([r.layers for r in recs], dtype=np.int64),
            "recompute_method": np.array([r.method for r in recs]),
        }
    if values and isinstance(values[0], bool):
        return {name: np.array(values, dtype=bool)}
    if values and isinstance(values[0], int):
        return {name: np.array(values, dtype=np.int64)}
    return {name: np.array(values)}


def knob_column_names(name: str) -> tuple[str, ...]:
    return ("recompute", "recompute_layers", "recompute_method") if name == "recompute" else (name,)


class Frame(Mapping[str, Array]):
    """Knob columns for ``size`` points of ``space`` plus lazily derived names.

    Internal helper columns start with ``$`` so that no ``let`` name can shadow them.
    """

    def __init__(self, space: Space, columns: dict[str, Array], size: int) -> None:
        self.space = space
        self.size = size
        self._cols: dict[str, Array] = dict(columns)

    def __getitem__(self, name: str) -> Array:
        if name not in self._cols:
            self._cols[name] = self._derive(name)
        return self._cols[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __len__(self) -> int:
        return len(self._cols)

    def _derive(self, name: str) -> Array:
        sp = self.space
        cl, m = sp.cluster, sp.model
        if name == "world":
            return cl.world
        if name == "nodes":
            return cl.nodes
        if name == "gpus_per_node":
            return cl.gpus_per_node
        if name == "$mp":
            return derived.model_parallel(self["tp"], self["pp"], self["cp"])
        if name == "dp":
            return derived.dp(cl.world, self["tp"], self["pp"], self["cp"])
        if name == "$etp":
            return derived.expert_tp(self["etp"], self["tp"])
        if name == "edp":
            return derived.edp(cl.world, self["$etp"], self["ep"], self["pp"])
        if name == "microbatches":
            return derived.microbatches(self["gbs"], self["mbs"], self["dp"])
        if name == "layers_per_stage":
            # the fullest pipeline stage: every stage of an even split, else the first, last or a middle one
            from primus_lang.ir.pipeline import Split

            pp = np.maximum(self["pp"], 1)
            split = Split(m.num_layers, pp, 1, self["first_stage_layers"], self["last_stage_layers"],
                          self["account_for_embedding"], self["account_for_loss"], self["schedule"] == "zbv")
            middle = np.where(pp > 2, split.per_middle, 0)
            knobs = np.maximum(np.maximum(split.stage_layers(0), split.stage_layers(pp - 1)), middle)
            text = np.asarray(self["pipeline_layout"])
            if not np.any(text != ""):
                return knobs
            # an explicit layout: its fullest stage, row by row (a string is no column; layouts are few)
            cols = np.broadcast_arrays(text, np.asarray(self["pp"]), np.asarray(self["vpp"]), knobs)
            out = cols[3].astype(np.int64).copy()
            for i in np.ndindex(out.shape):
                if cols[0][i]:
                    one = Split(m.num_layers, int(cols[1][i]), int(cols[2][i]), layout=str(cols[0][i]))
                    out[i] = max(int(one.stage_layers(s)) for s in range(int(cols[1][i])))
            return out
        if name == "num_experts":
            return m.moe.num_experts if m.moe is not None else 0
        if name in MODEL_FACTS:
            return getattr(m, name)
        lets = {let.name: let for let in sp.lets}
        if name not in lets:
            raise KeyError(name)
        # the lets this one reads, earliest first: each finds the ones it reads already derived, so a
        # chain of 10,000 lets is 10,000 evaluations, not 10,000 nested ones (a RecursionError)
        from primus_lang.check.evaluate import evaluate

        needed, todo = {name}, [name]
        while todo:
            for dep in names_in(lets[todo.pop()].expr):
                if dep in lets and dep not in needed and dep not in self._cols:
                    needed.add(dep)
                    todo.append(dep)
        for let in sp.lets:
            if let.name in needed and let.name not in self._cols:
                self._cols[let.name] = evaluate(let.expr, self)
        return self._cols[name]


def constant_columns(space: Space, exclude: set[str]) -> dict[str, Array]:
    """Every knob column not in ``exclude``: the fixed value, else the knob default."""
    fixed = dict(space.fixed)
    out: dict[str, Array] = {}
    for name in KNOBS:
        if name in exclude:
            continue
        value = fixed.get(name, DEFAULTS[name])
        for col, arr in columns_of(name, [value]).items():
            out[col] = arr[0]
    return out


def frame_of(space: Space, cands: list[Candidate]) -> Frame:
    cols: dict[str, Array] = {}
    for name in KNOBS:
        cols.update(columns_of(name, [getattr(c, name) for c in cands]))
    return Frame(space, cols, len(cands))


def knob_deps(space: Space, names: set[str]) -> set[str]:
    """The knobs a set of expression names depends on (through derived values and lets)."""
    lets = {let.name: let for let in space.lets}
    out: set[str] = set()
    todo = list(names)
    seen: set[str] = set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in KNOBS:
            out.add(n)
        elif n in DERIVED:
            out.update(DERIVED[n])
        elif n in lets:
            todo.extend(names_in(lets[n].expr))
    return out
