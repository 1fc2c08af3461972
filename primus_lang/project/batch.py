"""``project_many``: many candidates projected as arrays, each field equal to ``project``'s.

A candidate's step is its blocks' timings summed by counts, and candidates share both halves: the
layer shapes and timing knobs (``build.layers_of``) decide what each block costs, the pipeline split
(``build.stage_template``) which blocks each stage's chunks hold and how often. So blocks are timed
once per layer shape, templates built once per split, and the candidates of one template and
schedule shape are columns: their chunks' passes, the schedule (``schedule_batch.columns``), the
step tails, model FLOPs and the critical stage's breakdown are numpy operations over the columns.

Every sum adds its terms in the scalar path's order: the terms are laid out as ``projection.py``
visits them and ``np.add.accumulate`` adds left to right (a term the scalar path skips is a 0.0
added at the end, which changes no bit). ``tests/project/test_project_batch.py`` compares every
field with ``project``'s on every example space.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from primus_lang.ir import Candidate, Cluster, Model, Settings, derived
from primus_lang.memory import offload_bytes
from primus_lang.project.build import (
    DECODER_SLOTS,
    Layers,
    Slot,
    StepShapes,
    Template,
    layers_of,
    ops_key,
    slot_base,
    stage_template,
    step_shapes,
    token,
)
from primus_lang.project.ops import Collective, Task
from primus_lang.project.oracle import Oracle
from primus_lang.project.projection import (
    BREAKDOWN_KINDS,
    FLOOR_MARGIN,
    Projection,
    block_flops,
    block_passes,
    default_oracle,
    offload_exposed,
    schedule_of,
)
from primus_lang.project.schedule_batch import Columns, columns

Array = NDArray[np.float64]
Index = NDArray[np.intp]

_KIND = {k: i for i, k in enumerate(BREAKDOWN_KINDS)}
_NONE, _GRAD, _PARAM = 0, 1, 2
_MODE = {"grad": _GRAD, "param": _PARAM}


def project_many(model: Model, cluster: Cluster, cands: Sequence[Candidate], settings: Settings | None = None,
                 oracle: Oracle | None = None) -> list[Projection]:
    """``[project(model, cluster, c, settings, oracle) for c in cands]``, equal to it field by field,
    computed as arrays over the candidates (module doc): what a search or a benchmark that holds
    many candidates calls."""
    run = _Run(model, cluster, settings or Settings(), oracle or default_oracle(cluster))
    groups: dict[tuple[int, str], _Group] = {}
    for i, cand in enumerate(cands):
        run.add(groups, i, run.settings.as_launched(cand))
    shapes: dict[tuple[str, int, int], list[_Group]] = {}
    for g in groups.values():
        g.passes(run)
        shapes.setdefault((g.schedule, g.pp, g.v), []).append(g)
    out: list[Projection | None] = [None] * len(cands)
    for (schedule, pp, _v), members in shapes.items():
        done = columns(schedule, pp, np.concatenate([g.col_m for g in members]),
                       np.concatenate([g.dur for g in members], axis=-1), np.concatenate([g.p2p for g in members]))
        at = 0
        for g in members:
            n = len(g.col_m)
            part = Columns(done.finish[:, at:at + n], done.busy[:, at:at + n], done.last_backward[:, at:at + n],
                           done.inflight[at:at + n])
            for row, proj in zip(g.rows, g.finish(run, part), strict=True):
                out[row] = proj
            at += n
    return [p for p in out if p is not None]


def step_floors(model: Model, cluster: Cluster, cands: Sequence[Candidate], settings: Settings | None = None,
                oracle: Oracle | None = None, shared: bool = False) -> list[float]:
    """``[step_floor(model, cluster, c, settings, oracle, shared) for c in cands]``, equal to it value by
    value: ``project_many``'s passes and step tails without the schedule, as arrays (what branch and
    bound asks of the points ahead of it)."""
    run = _Run(model, cluster, settings or Settings(), oracle or default_oracle(cluster))
    groups: dict[tuple[int, str], _Group] = {}
    for i, cand in enumerate(cands):
        launched = run.settings.as_launched(cand)
        run.add(groups, i, ops_key(launched) if shared else launched)
    out = [0.0] * len(cands)
    for g in groups.values():
        g.passes(run, compute_only=shared, offload=False)
        floors = g.floors(run).tolist()
        for row, col in zip(g.rows, g.cand_col.tolist(), strict=True):
            out[row] = floors[col]
    return out


class _Timed:
    """One layer key under one setting of the timing knobs: what times its slots (``_Run.slot_row``,
    once per oracle: ``_Cache``)."""

    def __init__(self, layers: Layers, cand: Candidate, imbalance: float) -> None:
        self.layers, self.cand, self.imbalance = layers, cand, imbalance

    def timing(self, slot: Slot, run: _Run) -> tuple[list[float], list[list[float]], float]:
        """Per pass of one of ``slot``'s layers (a slot of count 1): totals, seconds by kind (a row
        per kind), model FLOPs."""
        block = self.layers.block(slot)[0]
        passes = block_passes(block, self.cand, run.oracle, self.imbalance, run.launch, run.slowdown)
        parts = [[0.0] * 3 for _ in BREAKDOWN_KINDS]
        for p, ps in enumerate(passes):
            for kind, x in ps.parts.items():
                parts[_KIND[kind]][p] = x
        return [ps.total for ps in passes], parts, block_flops(block)


# A stage's once-per-step work, timed: up to four collectives (a dense and an expert gradient
# reduction, each with its parameter gather) as (seconds, what it may hide under), then the optimizer's
# seconds summed as ``projection._step_tails`` sums them. Absent collectives are zeros, which cost 0.
_COMMS = 4
_StepRecord = tuple[float, ...]
_Params = tuple[tuple[int, int], ...]  # per stage, its dense and expert parameters


class _Step:
    """A stage set's once-per-step work and pipeline send, with the step-level knobs that read it:
    shared by the candidates that differ only in recomputation, kernels or timing knobs (``_STEP``)."""

    def __init__(self, run: _Run, layers: Layers, template: Template, cand: Candidate) -> None:
        self.grad, self.param = cand.overlap_grad_reduce, cand.overlap_param_gather
        self.peak = run.peak(cand.precision)
        self.mbs, self.dp, self.seq_len = cand.mbs, cand.dp(run.world), cand.seq_len
        shapes = step_shapes(run.model, run.cluster, cand, run.fsdp2)
        self.p2p = run.p2p(shapes)
        # a full recomputation splits a stage's layers into two slots of the same parameters: the
        # stage's sums, and so its step, are those of any recomputation of the same split
        self.steps = run.steps(shapes, run.stage_params(layers, template))
        self.copied = offload_bytes(run.model, cand, run.world, run.settings) if cand.offload_layers > 0 else 0


# What a ``_Step`` reads of a candidate: ``step_shapes``' key, the pipeline split that sums its
# stages' parameters (``stage_template``'s key but the recomputation) and the overlap flags. Read as
# one tuple of fields, a lookup costs a hash, not the calls that build the keys below it.
_STEP = attrgetter("tp", "cp", "pp", "ep", "etp", "sequence_parallel", "mbs", "seq_len", "precision", "fp8_recipe",
                   "sharding", "main_grad_dtype", "optimizer_dtype", "fp8_param_gather", "overlap_grad_reduce",
                   "overlap_param_gather", "vpp", "schedule", "first_stage_layers", "last_stage_layers",
                   "account_for_embedding", "account_for_loss", "pipeline_layout", "offload_layers")


# The candidates alike in everything but their micro-batch count and batch size: one timed layer
# key and one step (a plain pair: equal pairs are one set, and a tuple costs least to make and hash)
_Same = tuple[_Timed, _Step]


class _Cache:
    """What ``project_many`` keeps per oracle between calls (a search calls it again and again):
    timed layer keys, the ``_Step`` sets, stage parameters and step records. Keys hold ids of
    objects the build caches keep; each entry keeps its objects and is checked against them."""

    def __init__(self) -> None:
        self.timed: dict[tuple[object, ...], _Timed] = {}
        self.step_sets: dict[tuple[object, ...], _Step] = {}
        self.params: dict[tuple[object, int], tuple[Layers, Template, _Params]] = {}
        self.sums: dict[tuple[int, tuple[tuple[int, int], ...]], tuple[Template, _Params]] = {}
        self.steps: dict[tuple[int, int, int], tuple[StepShapes, int]] = {}
        self.records: dict[int, tuple[tuple[Task, ...], int]] = {}
        self.stage_steps: dict[tuple[int, int], tuple[StepShapes, _Params, tuple[int, ...]]] = {}
        self.p2p: dict[int, tuple[StepShapes, float]] = {}
        # per (timed layer key, slot of count 1) its row of the slot table: totals, parts by kind and
        # model FLOPs of the slot's F, B and W passes (row 0: zeros, never a slot's), kept as a grid
        # of their ids (0: not timed yet) that a group gathers at once; the same pairs recur in many
        # groups, which a lookup per pair made DeepSeek-V3's 111,440 lookups for 6,272 pairs
        self.timer_ids: dict[_Timed, int] = {}
        self.slot_ids: dict[Slot, int] = {}
        self._grid: Index = np.zeros((0, 0), dtype=np.intp)
        self._slot_table: tuple[Array, Array, Array]
        self._slot_count: int
        self._clear_slots()
        # the distinct step records, which ``steps`` and the ``_Step`` sets name by row: a stage set
        # of many candidates shares a few of them
        self.table: list[_StepRecord] = []
        self._array: Array = np.zeros((0, 2 * _COMMS + 1))

    def table_array(self) -> Array:
        """``table`` as an array (the table only grows between trims)."""
        if len(self._array) != len(self.table):
            self._array = np.array(self.table, dtype=np.float64).reshape(len(self.table), 2 * _COMMS + 1)
        return self._array

    def add_slot(self, total: list[float], parts: list[list[float]], flops: float) -> int:
        """A new row of the slot table: its index."""
        row = self._slot_count
        if row == len(self._slot_table[2]):  # grown by doubling: a row is written once, never copied per use
            bigger = _slot_table(2 * row)
            for old, new in zip(self._slot_table, bigger, strict=True):
                new[:row] = old
            self._slot_table = bigger
        self._slot_table[0][row] = total
        self._slot_table[1][row] = parts
        self._slot_table[2][row] = flops
        self._slot_count = row + 1
        return row

    def slot_rows(self, run: _Run, timers: list[_Timed], slots: list[Slot]) -> Index:
        """The slot table's rows of each of ``timers`` by each of ``slots`` (of count 1), [timer, slot],
        the pairs not yet timed timed now."""
        t = np.array([self.timer_ids.setdefault(x, len(self.timer_ids)) for x in timers], dtype=np.intp)
        b = np.array([self.slot_ids.setdefault(x, len(self.slot_ids)) for x in slots], dtype=np.intp)
        grid = self._grid
        if grid.shape[0] < len(self.timer_ids) or grid.shape[1] < len(self.slot_ids):
            grid = np.zeros((max(2 * grid.shape[0], len(self.timer_ids)), max(2 * grid.shape[1], len(self.slot_ids))),
                            dtype=np.intp)
            grid[:self._grid.shape[0], :self._grid.shape[1]] = self._grid
            self._grid = grid
        at: Index = grid[np.ix_(t, b)]
        for i, j in zip(*np.nonzero(at == 0), strict=True):
            # a slot listed twice was timed at its first listing
            at[i, j] = grid[t[i], b[j]] = grid[t[i], b[j]] or run.slot_row(timers[i], slots[j])
        return at

    def slot_arrays(self) -> tuple[Array, Array, Array]:
        """The slot table: [row, pass] totals, [row, kind, pass] parts, [row] FLOPs."""
        return self._slot_table

    def _clear_slots(self) -> None:
        self.timer_ids.clear()
        self.slot_ids.clear()
        self._grid = np.zeros((0, 0), dtype=np.intp)
        self._slot_table = _slot_table(1024)
        self._slot_count = 1

    def trim(self) -> None:
        caches: tuple[dict[Any, Any], ...] = (self.timed, self.step_sets, self.params, self.sums, self.steps, self.records,
                                              self.stage_steps, self.p2p, self.timer_ids)
        # all at once: rows in one cache name records of the table; the slot grid's rows and columns
        # grow apart, so its size is bounded too (32 MB)
        if any(len(cache) > 200_000 for cache in caches) or self._grid.size > 4_000_000:
            for cache in caches:
                cache.clear()
            self.table.clear()
            self._array = np.zeros((0, 2 * _COMMS + 1))
            self._clear_slots()


def _slot_table(rows: int) -> tuple[Array, Array, Array]:
    return np.zeros((rows, 3)), np.zeros((rows, len(BREAKDOWN_KINDS), 3)), np.zeros(rows)


_caches: weakref.WeakKeyDictionary[Oracle, _Cache] = weakref.WeakKeyDictionary()


def _cache_of(oracle: Oracle) -> _Cache:
    try:
        hit = _caches.get(oracle)
        if hit is None:
            hit = _caches[oracle] = _Cache()
    except TypeError:  # an oracle that cannot be weakly referenced or hashed: a cache for this call
        hit = _Cache()
    hit.trim()
    return hit


class _Run:
    """One ``project_many`` call: the cluster's constants and the oracle's caches."""

    def __init__(self, model: Model, cluster: Cluster, settings: Settings, oracle: Oracle) -> None:
        self.model, self.cluster, self.settings, self.oracle = model, cluster, settings, oracle
        eff = cluster.gpu.efficiency
        self.launch, self.slowdown = eff.host_launch, eff.overlap_slowdown
        self.world = cluster.world
        self.fsdp2 = settings.torch_fsdp2
        # the cache is the oracle's and outlives this call: a step is keyed by the model and cluster
        # it was built for too
        self.where = (token(model), token(cluster), self.fsdp2)
        self.cache = _cache_of(oracle)
        self.peaks: dict[str, float] = {}

    def add(self, groups: dict[tuple[int, str], _Group], row: int, cand: Candidate) -> None:
        layers = layers_of(self.model, self.cluster, cand, self.fsdp2)
        template = stage_template(self.model, cand)
        same = (self._timed(layers, cand), self._step(layers, template, cand))
        pp, v = cand.pp, len(template[0])
        schedule = schedule_of(cand, v)
        group = groups.get((id(template), schedule))
        if group is None:
            group = groups[(id(template), schedule)] = _Group(template, schedule, pp, v)
        group.rows.append(row)
        group.same.append(same)
        group.gbs.append(cand.gbs)

    def _step(self, layers: Layers, template: Template, cand: Candidate) -> _Step:
        # offloading copies activations, which the rest of the candidate decides: keyed by all of it
        key = (_STEP(cand), (cand, self.settings) if cand.offload_layers > 0 else None, self.where)
        hit = self.cache.step_sets.get(key)
        if hit is None:
            hit = self.cache.step_sets[key] = _Step(self, layers, template, cand)
        return hit

    def _timed(self, layers: Layers, cand: Candidate) -> _Timed:
        imbalance = self.settings.moe_imbalance if cand.ep > 1 else 1.0
        key = (id(layers), cand.tp_comm_overlap, cand.ep_comm_overlap, cand.cuda_graph, imbalance, self.launch,
               self.slowdown)
        hit = self.cache.timed.get(key)
        if hit is None or hit.layers is not layers:
            hit = self.cache.timed[key] = _Timed(layers, cand, imbalance)
        return hit

    def slot_row(self, timed: _Timed, slot: Slot) -> int:
        """The slot table's row of ``slot`` (of count 1) timed on ``timed``, timed on first use."""
        return self.cache.add_slot(*timed.timing(slot, self))

    def stage_params(self, layers: Layers, template: Template) -> _Params:
        """Per stage, the dense and expert parameters its blocks hold (``build._stage_ops``'s sums),
        one object per template and parameter counts of its slots: layer keys that differ in what
        parameters do not depend on (micro-batch, precision, recomputation) share it."""
        key = (layers.params_key, id(template))
        hit = self.cache.params.get(key)
        if hit is None or hit[1] is not template:
            slots = _slots(template)
            counts = tuple(layers.params(slot) for slot in slots)
            summed = self.cache.sums.get((id(template), counts))
            if summed is None or summed[0] is not template:
                per_slot = dict(zip(slots, counts, strict=True))
                out = []
                for stage in _tally(template):
                    dense = expert = 0
                    for slot, n in stage:
                        p_dense, p_expert = per_slot[slot]
                        dense += p_dense * n
                        expert += p_expert * n
                    out.append((dense, expert))
                summed = self.cache.sums[(id(template), counts)] = (template, tuple(out))
            hit = self.cache.params[key] = (layers, template, summed[1])
        return hit[2]

    def steps(self, shapes: StepShapes, params: _Params) -> tuple[int, ...]:
        """Each stage's step record, as its row of the table (``params``: from ``stage_params``, which
        keeps one object per value)."""
        key = (id(shapes), id(params))
        hit = self.cache.stage_steps.get(key)
        if hit is None or hit[0] is not shapes or hit[1] is not params:
            # middle stages hold the same parameters: each distinct count is looked up once
            distinct = {p: self.step(shapes, *p) for p in dict.fromkeys(params)}
            records = tuple(distinct[p] for p in params)
            hit = self.cache.stage_steps[key] = (shapes, params, records)
        return hit[2]

    def step(self, shapes: StepShapes, dense: int, expert: int) -> int:
        key = (id(shapes), dense, expert)
        hit = self.cache.steps.get(key)
        if hit is None or hit[0] is not shapes:
            # step tasks are kept per content (build._step_tasks): shapes of other micro-batch sizes,
            # precisions or recomputations often hand back the same tuple, timed once
            tasks = shapes.tasks(dense, expert)
            record = self.cache.records.get(id(tasks))
            if record is None or record[0] is not tasks:
                self.cache.table.append(self._record(tasks))
                record = self.cache.records[id(tasks)] = (tasks, len(self.cache.table) - 1)
            hit = self.cache.steps[key] = (shapes, record[1])
        return hit[1]

    def _record(self, tasks: tuple[Task, ...]) -> _StepRecord:
        comms: list[float] = []
        optimizer = 0.0
        for task in tasks:
            if isinstance(task.op, Collective):
                comms += [self.oracle.collective(task.op), _MODE.get(task.hides_under, _NONE)]
            else:
                optimizer += self.oracle.compute(task.op)
        if len(comms) > 2 * _COMMS:
            raise ValueError(f"a stage has {len(comms) // 2} step collectives; batch.py keeps {_COMMS}")
        return (*comms, *[0.0] * (2 * _COMMS - len(comms)), optimizer)

    def p2p(self, shapes: StepShapes) -> float:
        hit = self.cache.p2p.get(id(shapes))
        if hit is None or hit[0] is not shapes:
            op = shapes.p2p
            hit = self.cache.p2p[id(shapes)] = (shapes, self.oracle.collective(op) if op is not None else 0.0)
        return hit[1]

    def peak(self, precision: str) -> float:
        hit = self.peaks.get(precision)
        if hit is None:
            hit = self.peaks[precision] = self.cluster.gpu.peak(precision)
        return hit


def _tally(template: Template) -> tuple[tuple[tuple[Slot, int], ...], ...]:
    """Per stage, each distinct slot and how many of its chunks hold it."""
    return _shape_of(template)[0]


def _slots(template: Template) -> tuple[Slot, ...]:
    """The template's distinct slots, in the order its stages first hold them."""
    return _shape_of(template)[1]


_Shape = tuple[tuple[tuple[tuple[Slot, int], ...], ...], tuple[Slot, ...]]


def _shape_of(template: Template) -> _Shape:
    hit = _shapes.get(id(template))
    if hit is None or hit[0] is not template:
        if len(_shapes) > 20_000:
            _shapes.clear()
        stages = tuple(tuple(Counter(slot for chunk in chunks for slot in chunk).items()) for chunks in template)
        slots = tuple(dict.fromkeys(slot for stage in stages for slot, _n in stage))
        hit = _shapes[id(template)] = (template, (stages, slots))
    return hit[1]


_shapes: dict[int, tuple[Template, _Shape]] = {}


class _Group:
    """The candidates of one template and schedule. Tables are per distinct ``_Same`` (``u``), the
    schedule and what follows it per distinct (``_Same``, micro-batches) pair (a column), and the
    projections per candidate."""

    def __init__(self, template: Template, schedule: str, pp: int, v: int) -> None:
        self.template, self.schedule, self.pp, self.v = template, schedule, pp, v
        self.rows: list[int] = []
        self.same: list[_Same] = []
        self.gbs: list[int] = []
        slots = _slots(template)
        self.slots = slots
        self.slot_index = {s: j for j, s in enumerate(slots)}

    def passes(self, run: _Run, compute_only: bool = False, offload: bool = True) -> None:
        """Each column's per-chunk F, B and W seconds (``projection._stage_passes``, with its
        ``compute_only``), and the tables the rest reads: per slot and ``_Same``, the passes by kind and
        the model FLOPs. ``offload``: the exposed activation copies added, as ``project`` adds them."""
        unique = list(dict.fromkeys(self.same))
        row_of = {s: u for u, s in enumerate(unique)}
        u_of = np.array([row_of[s] for s in self.same], dtype=np.intp)
        steps = self.steps = [step for _timed, step in unique]
        # the distinct (same, micro-batches) pairs are the columns
        gbs = np.array(self.gbs, dtype=np.int64)
        per = np.array([(s.mbs, s.dp, s.seq_len) for s in steps], dtype=np.int64)[u_of]
        m = derived.at_least_one(derived.microbatches(gbs, per[:, 0], per[:, 1]))
        self.tokens: Array = (gbs * per[:, 2]).astype(np.float64)
        span = int(m.max()) + 1
        pairs, self.cand_col = np.unique(u_of * span + m, return_inverse=True)
        self.col_u, self.col_m = pairs // span, pairs % span
        zero = len(self.slots)  # a slot of zeros: what pads shorter term lists at their end
        # the slots are timed per distinct timed layer key (many _Same sets share one), then spread
        timers = list(dict.fromkeys(timed for timed, _step in unique))
        timer_of = {t: i for i, t in enumerate(timers)}
        t_of = np.array([timer_of[timed] for timed, _step in unique], dtype=np.intp)
        # each (timer, slot) pair's timing is a row of the cache's slot table, gathered at once
        at = run.cache.slot_rows(run, timers, [slot_base(slot) for slot in self.slots])[t_of]  # [same, slot]
        tab_total, tab_parts, tab_flops = run.cache.slot_arrays()
        total = np.zeros((3, zero + 1, len(unique)))
        parts = np.zeros((len(BREAKDOWN_KINDS), 3, zero + 1, len(unique)))
        flops = np.zeros((zero + 1, len(unique)))
        parts[:, :, :zero] = tab_parts[at].transpose(2, 3, 1, 0)
        total[:, :zero] = parts[_KIND["compute"], :, :zero] if compute_only else tab_total[at].transpose(2, 1, 0)
        flops[:zero] = tab_flops[at].T
        self.kinds = [k for k in range(len(BREAKDOWN_KINDS)) if parts[k].any()]
        self.parts = parts[self.kinds]
        self.flops = flops
        # chunk terms in the order _stage_passes adds them, padded with the zero slot
        pp, v = self.pp, self.v
        width = max(len(chunk) for chunks in self.template for chunk in chunks)
        j_idx = np.full((pp, v, width), zero, dtype=np.intp)
        count = np.ones((pp, v, width))
        for stage, chunks in enumerate(self.template):
            for c, chunk in enumerate(chunks):
                for k, slot in enumerate(chunk):
                    j_idx[stage, c, k] = self.slot_index[slot]
                    count[stage, c, k] = slot.count
        terms = total[:, j_idx] * count[None, :, :, :, None]
        dur_u = np.add.accumulate(terms, axis=3)[:, :, :, -1, :]
        copied = np.array([s.copied for s in steps], dtype=np.float64)
        self.offload = np.zeros(len(unique))
        if offload and copied.any():  # projection._prepare: one stage, one chunk, its decoder layers' passes
            decoder = np.zeros((pp, v, width))
            for k, slot in enumerate(self.template[0][0]):
                decoder[0, 0, k] = slot.what in DECODER_SLOTS
            layers = np.add.accumulate(terms * decoder[None, :, :, :, None], axis=3)[:, 0, 0, -1, :]
            off_f, off_b = offload_exposed(layers[0], layers[1] + layers[2], copied, run.cluster.gpu.host_bandwidth)
            dur_u[0, 0, 0] += off_f
            dur_u[1, 0, 0] += off_b
            self.offload = off_f + off_b
        self.dur = dur_u[..., self.col_u]
        self.p2p = np.array([s.p2p for s in steps])[self.col_u]

    def finish(self, run: _Run, sched: Columns) -> list[Projection]:
        """``projection._finish`` for every column, then each candidate's projection from its column."""
        pp, v, m, u = self.pp, self.v, self.col_m, self.col_u
        n = len(m)
        tails = self._tails(run, sched.last_backward, self.dur[0, :, 0, :])
        ends = sched.finish + tails.sum(axis=0)
        critical = np.argmax(ends, axis=0)
        cols = np.arange(n)
        step = ends[critical, cols]
        tflops = self._model_flops()[u] * m / pp / step / 1e12
        makespan = sched.finish.max(axis=0)
        safe = np.where(makespan > 0, makespan, 1.0)
        bubble = np.where(makespan > 0, np.maximum(0.0, (makespan - sched.busy.max(axis=0)) / safe), 0.0)
        idle = np.maximum(0.0, sched.finish[critical, cols] - sched.busy[critical, cols])
        pp_comm = np.minimum(idle, 2 * (pp * v - 1) * self.p2p) if pp > 1 else np.zeros(n)
        breakdown = np.zeros((len(BREAKDOWN_KINDS), n))
        breakdown[self.kinds] = self._critical_parts(critical) * m
        breakdown[_KIND["pp_comm"]] = pp_comm
        breakdown[_KIND["bubble"]] = idle - pp_comm
        breakdown[_KIND["dp_comm"]] += tails[0][critical, cols]
        breakdown[_KIND["optimizer"]] = tails[1][critical, cols]
        breakdown[_KIND["offload"]] += self.offload[u] * m
        peaks = np.array([s.peak for s in self.steps])[u]
        col = self.cand_col
        tokens = self.tokens / step[col] / run.world
        per_col = list(zip(step.tolist(), tflops.tolist(), (tflops * 1e12 / peaks).tolist(),
                           (tflops * 1e12 / run.cluster.gpu.peak_bf16).tolist(), bubble.tolist(),
                           [tuple(zip(BREAKDOWN_KINDS, b, strict=True)) for b in breakdown.T.tolist()],
                           sched.inflight, strict=True))
        out = []
        for c, tok in zip(col.tolist(), tokens.tolist(), strict=True):
            st, tf, mfu, mfu16, bub, bd, peak = per_col[c]
            out.append(Projection(step_time=st, tokens_per_gpu=tok, tflops_per_gpu=tf, mfu=mfu, mfu_bf16=mfu16,
                                  bubble_fraction=bub, breakdown=bd, inflight=peak))
        return out

    def floors(self, run: _Run) -> Array:
        """``projection.step_floor`` of every column, from ``passes`` (its ``compute_only`` for the floor
        its timing knobs share, and without ``offload``), in the scalar floor's order of operations."""
        pp, n = self.pp, len(self.col_m)
        never = np.full((pp, n), np.inf)  # every collective hidden as far as it can be
        dp_comm, optimizer = self._tails(run, never, never)
        tails = dp_comm + optimizer
        f, b, w = self.dur
        chunks = np.add.accumulate(f + b + w, axis=1)[:, -1, :]  # [stage, column]
        p2p, m = self.p2p, self.col_m
        merged = pp == 1 or self.schedule not in ("zero_bubble", "zbv")
        floor, lead, trail = np.zeros(n), np.zeros(n), np.zeros(n)
        for s in range(pp):
            busy = m * chunks[s]
            floor = np.maximum(floor, lead + busy + tails[s])
            if merged:
                floor = np.maximum(floor, lead + busy + trail + tails[0])
            lead = lead + (f[s, 0] + p2p)
            trail = trail + (b[s, 0] + w[s, 0] + p2p)
        return floor * FLOOR_MARGIN

    def _tails(self, run: _Run, last_backward: Array, first_fwd: Array) -> Array:
        """``projection._step_tails``: per stage and column, [dp_comm, optimizer] seconds, where the
        gradient reduction may hide under ``last_backward`` and the parameter gather under
        ``first_fwd`` ([stage, column])."""
        u = self.col_u
        rows = np.array([s.steps for s in self.steps], dtype=np.intp)  # [same, stage]: rows of the table
        records = run.cache.table_array()[rows[u]].transpose(1, 2, 0)  # [stage, field, column]
        t, how = records[:, 0:2 * _COMMS:2], records[:, 1:2 * _COMMS:2]
        grad = np.array([s.grad for s in self.steps])[u]
        param = np.array([s.param for s in self.steps])[u]
        layers = np.array([sum(slot.count for chunk in chunks for slot in chunk) or 1 for chunks in self.template],
                          dtype=np.float64)
        hide = np.where((how == _GRAD) & grad, last_backward[:, None, :],
                        np.where((how == _PARAM) & param, first_fwd[:, None, :], 0.0))
        hide = np.minimum(hide, t - t / layers[:, None, None])
        hidden = np.minimum(t, hide)
        cost = t - hidden + run.slowdown * hidden
        return np.stack([np.add.accumulate(cost, axis=1)[:, -1, :], records[:, 2 * _COMMS]])

    def _model_flops(self) -> Array:
        """``projection.model_flops`` before its ``* m / pp``, per ``_Same``: every block's FLOPs by
        count, summed in stage, chunk and block order."""
        j = [self.slot_index[slot] for chunks in self.template for chunk in chunks for slot in chunk]
        count = np.array([slot.count for chunks in self.template for chunk in chunks for slot in chunk],
                         dtype=np.float64)
        acc: Array = np.add.accumulate(self.flops[j] * count[:, None], axis=0)[-1]
        return acc

    def _critical_parts(self, critical: Index) -> Array:
        """``projection._stage_parts`` of each column's critical stage, for the kinds the group has:
        by chunk, block and pass, each kind summed on its own."""
        order = [[(p, self.slot_index[slot], slot.count) for chunk in chunks for slot in chunk for p in range(3)]
                 for chunks in self.template]
        width = max(len(o) for o in order)
        p_idx = np.zeros((self.pp, width), dtype=np.intp)
        j_idx = np.full((self.pp, width), len(self.slots), dtype=np.intp)
        count = np.ones((self.pp, width))
        for s, terms in enumerate(order):
            for k, (p, j, c) in enumerate(terms):
                p_idx[s, k], j_idx[s, k], count[s, k] = p, j, c
        # only each column's critical stage: [kind, column, term]
        vals = self.parts[:, p_idx[critical], j_idx[critical], self.col_u[:, None]] * count[critical][None]
        acc: Array = np.add.accumulate(vals, axis=2)[..., -1]
        return acc
