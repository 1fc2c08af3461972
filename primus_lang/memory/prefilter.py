"""The vectorized pre-filter: every candidate's peak bytes at once, equal to ``account(...).peak.total``.

Activation bytes are the same dual formulas as the account, evaluated on numpy columns. Persistent
bytes (parameters, buffers, optimizer) depend on a handful of knobs only, so they are computed by the
account's own code once per distinct (TP, PP, EP, ETP, CP, sharding, dtypes, FP8, overlap, split,
stage).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from primus_lang.ir import Candidate, Cluster, Model, Settings, derived
from primus_lang.memory.knobs import (
    FP8_RECIPE_CODES,
    RECOMPUTE_CODES,
    SCALARS,
    SCHEDULE_CODES,
    SHARDING_CODES,
    Knobs,
    fp8_param,
    module_mask,
)
from primus_lang.memory.stage import layer_totals, stage_activation_total
from primus_lang.memory.states import state_terms

_STATIC = ("tp", "pp", "ep", "etp", "cp", "sharding", "grad_bytes", "state_bytes", "fp8", "fp4", "fp8_recipe",
           "fp8_param", "overlap_grad_reduce", "vpp", "first", "last", "embedding", "loss", "schedule")
_FIELDS = tuple(f.name for f in Knobs.__attrs_attrs__ if f.name not in SCALARS)


def _row(c: Candidate) -> tuple[int, ...]:
    # The same values as knobs.from_candidate, in _FIELDS order, without building a Knobs per point.
    rc = c.recompute
    return (
        c.tp, c.pp, derived.virtual_stages(c.schedule, c.vpp), c.first_stage_layers, c.last_stage_layers,
        c.account_for_embedding, c.account_for_loss, c.cp, c.ep, c.etp or c.tp, c.mbs, c.gbs, c.seq_len,
        c.precision == "fp8", c.precision == "fp4", FP8_RECIPE_CODES[c.fp8_recipe], fp8_param(c),
        RECOMPUTE_CODES[rc.kind], rc.layers,
        rc.method == "uniform", module_mask(c), c.offload_layers, SHARDING_CODES[c.sharding], SCHEDULE_CODES[c.schedule],
        c.sequence_parallel and c.tp > 1, c.attention != "unfused", c.overlap_grad_reduce,
        derived.dtype_bytes(c.main_grad_dtype), derived.dtype_bytes(c.optimizer_dtype), c.cross_entropy == "te",
    )


_BOOL = frozenset({"fp8", "fp4", "fp8_param", "recompute_uniform", "sp", "flash", "overlap_grad_reduce", "embedding", "loss",
                   "te_cross_entropy"})


def knob_columns(cands: Sequence[Candidate], world: int, layout: str = "") -> Knobs:
    """The candidates as numpy columns (one pass over the objects); all of them have ``layout``."""
    table = np.asarray([_row(c) for c in cands], dtype=np.int64).reshape(len(cands), len(_FIELDS))
    cols = {name: table[:, i].astype(bool) if name in _BOOL else table[:, i] for i, name in enumerate(_FIELDS)}
    return Knobs(world=world, layout=layout, **cols)


def _static_key(k: Knobs) -> np.ndarray:
    key = np.zeros(len(k.tp), dtype=np.int64)
    for name in _STATIC:
        col = np.asarray(getattr(k, name), dtype=np.int64)
        key = key * (int(col.max()) + 1) + col
    return key


def _subset(k: Knobs, idx: np.ndarray, pp: int, vpp: int | None) -> Knobs:
    cols = {f: getattr(k, f)[idx] for f in _FIELDS}
    # A scalar pp makes every layer count and stage flag a Python integer: only the schedule's
    # in-flight count stays a column inside the stage loop. An explicit layout reads pp and vpp as
    # scalars (its table depends on both).
    cols["pp"] = pp
    if vpp is not None:
        cols["vpp"] = vpp
    return Knobs(world=k.world, layout=k.layout, **cols)


def prefilter_columns(model: Model, cluster: Cluster, k: Knobs, settings: Settings) -> np.ndarray:
    n = len(k.tp)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    key = _static_key(k)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    any_layout = cluster.gpu.fp8_layouts == "any"
    reps = [Knobs(world=k.world, layout=k.layout, fp8_any_layout=any_layout, torch_fsdp2=settings.torch_fsdp2,
                  **{f: getattr(k, f)[i].item() for f in _FIELDS}) for i in first]
    reserved = cluster.gpu.reserved_memory
    peak = np.zeros(n, dtype=np.int64)
    groups = np.unique(np.stack([k.pp, k.vpp if k.layout else np.zeros_like(k.pp)], axis=1), axis=0)
    for pp, vpp in groups.tolist():
        idx = np.nonzero((k.pp == pp) & ((k.vpp == vpp) if k.layout else True))[0]
        sub = _subset(k, idx, pp, vpp if k.layout else None)
        lt = layer_totals(model, sub, settings)
        inv = inverse[idx]
        best = np.zeros(len(idx), dtype=np.int64)
        for stage in range(pp):
            static = np.asarray(
                [sum(t.bytes for t in state_terms(model, r, stage)) if r.pp == pp and (not k.layout or r.vpp == vpp)
                 else 0 for r in reps],
                dtype=np.int64,
            )[inv]
            best = np.maximum(best, static + stage_activation_total(model, sub, lt, stage, reserved))
        peak[idx] = best
    return peak


def prefilter(model: Model, cluster: Cluster, cands: Sequence[Candidate], settings: Settings) -> np.ndarray:
    """Peak bytes (int64) of every candidate: the fullest stage's total, as ``account`` computes it.

    A layout string is no column: each distinct ``pipeline_layout`` (almost always just "") is its own
    batch."""
    cands = settings.all_as_launched(cands)
    by_layout: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        by_layout.setdefault(c.pipeline_layout, []).append(i)
    if len(by_layout) == 1:
        (layout,) = by_layout
        return prefilter_columns(model, cluster, knob_columns(cands, cluster.world, layout), settings)
    peak = np.zeros(len(cands), dtype=np.int64)
    for layout, rows in by_layout.items():
        group = [cands[i] for i in rows]
        peak[rows] = prefilter_columns(model, cluster, knob_columns(group, cluster.world, layout), settings)
    return peak
