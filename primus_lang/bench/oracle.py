"""``BenchmarkOracle``: the projection stage's ``Oracle`` backed by measurements.

Compute ops are looked up in the profile database by (op, shape, dtype): measured, else
interpolated from measured neighbours, else timed by the simulate oracle; every key remembers which
(``sources``). Collectives inside the measured scope are read off the measured points, beyond it they
are restored with the hierarchical alpha-beta model over the measured link and the NIC spec.

``kind`` "benchmark" measures a missing kernel on first sight; "hybrid" never measures and uses the
database as it stands (fast, for search loops), falling back to simulate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from primus_lang.bench.collectives import NET, LinkFit, backend_of, fit_link, fit_links, interpolate_measured
from primus_lang.bench.database import DEFAULT_DB, CollectiveRow, KernelRow, ProfileDB
from primus_lang.bench.kernels import KernelSpec, prepare
from primus_lang.bench.profile import estimate
from primus_lang.bench.runtime import DeviceInfo, describe
from primus_lang.bench.timing import time_call
from primus_lang.ir import Candidate, Cluster, Model

if TYPE_CHECKING:
    from primus_lang.project import Collective, Compute, Op, Oracle, Task

SOURCES = ("measured", "interpolated", "restored", "simulated")  # restored: collectives beyond scope
ORACLE_KINDS = ("simulate", "benchmark", "hybrid")


def spec_of(op: Op) -> KernelSpec | None:
    """The harness kernel that times a projection op (None for collectives)."""
    from primus_lang.project import Attention, Gemm, GroupedGemm, MemoryOp

    if isinstance(op, Gemm):
        return KernelSpec("gemm", (op.m, op.n, op.k, op.batch), op.dtype)
    if isinstance(op, GroupedGemm):
        return KernelSpec("grouped_gemm", (op.groups, op.m, op.n, op.k), op.dtype)
    if isinstance(op, Attention):
        name = "attention_bwd" if op.backward else "attention"
        shape = (op.batch, op.heads, op.seq_q, op.seq_kv, op.head_dim, op.v_head_dim, int(op.causal), op.window)
        return KernelSpec(name, shape, op.dtype)
    if isinstance(op, MemoryOp):
        # On GPUs these kernels are bandwidth-bound: a stream of the same bytes times them.
        return KernelSpec("stream", (max(2, op.bytes),), "bf16")
    return None


class BenchmarkOracle:
    """Implements ``primus_lang.project.Oracle`` from a profile database on one device."""

    def __init__(
        self, db: ProfileDB, device: DeviceInfo, cluster: Cluster, *, measure: bool = True, budget_s: float = 0.1
    ) -> None:
        from primus_lang.project import SimulateOracle

        self.db, self.device, self.cluster, self.measure = db, device, cluster, measure
        self.budget_s = budget_s
        self.fallback = SimulateOracle(cluster)
        self.sources: dict[tuple[object, ...], str] = {}
        self._cache: dict[tuple[object, ...], float] = {}
        self.scale: dict[tuple[object, ...], float] = {}  # per op key, from anchor()
        self._rows: list[CollectiveRow] = db.collectives(device.key, backend_of(device))
        self.links: dict[str, LinkFit] = fit_links(self._rows)
        # measured between nodes by a benchmark campaign: replaces the NIC spec sheet across domains
        self.net: LinkFit | None = fit_link(db.collectives(device.key, backend_of(device) + NET))

    def compute(self, op: Compute) -> float:
        key = op.key
        hit = self._cache.get(key)
        if hit is None:
            hit, self.sources[key] = self._compute(op)
            self._cache[key] = hit
        return hit * self.scale.get(key, 1.0)

    def anchor(self, model: Model, cands: Iterable[Candidate]) -> int:
        """Downscale, measure, upscale inside ``project()``: for each distinct layer shape among
        ``cands`` run the reduced model's blocks for real (``bench.downscale``) and scale the
        kernel-level times of that layer's ops so they sum to the measured layer; likewise the
        embedding + head against the measured outer block and the once-per-step ops against the
        measured optimizer tail. Returns how many block shapes were measured now (the rest came
        from the database). A key shared by two anchored blocks keeps the first block's scale.
        MoE layers have no reduced counterpart yet and stay kernel-level. The hybrid oracle
        (``measure=False``) anchors only the shapes the database already holds. Call it before the
        first ``project()`` with this oracle: the projection caches block timings per oracle."""
        from primus_lang.bench.downscale import BlockShape, block_times, tail_time
        from primus_lang.project import Collective, stage_ops

        def kernel_sum(tasks: Iterable[Task]) -> tuple[float, list[tuple[object, ...]]]:
            total, keys = 0.0, []
            for task in tasks:
                if isinstance(task.op, Collective):
                    continue
                total += self.compute(task.op) / self.scale.get(task.op.key, 1.0) * task.times
                keys.append(task.op.key)
            return total, keys

        def set_scale(measured: float, tasks: Iterable[Task]) -> None:
            total, keys = kernel_sum(tasks)
            if total <= 0 or measured <= 0:
                return
            for key in keys:
                self.scale.setdefault(key, measured / total)

        measured_now = 0
        seen: set[tuple[object, ...]] = set()
        for cand in cands:
            if cand.recompute.kind == "op":
                # No measured block runs op-level checkpointing: its kernels keep their own timings.
                continue
            shape = BlockShape(model, cand.tp, cand.mbs, cand.seq_len)
            ident = (shape.key, cand.recompute.kind == "selective", cand.pp, cand.vpp, cand.sharding)
            if ident in seen:
                continue
            seen.add(ident)
            stages = stage_ops(model, self.cluster, cand)
            blocks = {b.name: b for stage in stages for chunk in stage.chunks for b in chunk}
            layer = blocks.get("dense_layer") or blocks.get("dense_layer_recomputed")
            if layer is None:
                continue
            if not self.measure and self.db.block(self.device.key, shape.key) is None:
                continue  # hybrid: only what the database already holds
            times, fresh = block_times(shape, self.db, self.device)
            measured_now += fresh
            if "dense_layer" in blocks:
                kind = "selective" if cand.recompute.kind == "selective" else "none"
                set_scale(times.layer(kind), layer.tasks)
            else:
                set_scale(times.layer_fb_full, layer.tasks)
            ends = [t for name in ("embedding", "output") if name in blocks for t in blocks[name].tasks]
            set_scale(times.outer_fb, ends)
            layers = max(sum(b.count for chunk in st.chunks for b in chunk if "layer" in b.name) for st in stages)
            set_scale(tail_time(model, layers, cand.tp, self.db, self.device), stages[0].step_tasks)
        return measured_now

    def _compute(self, op: Compute) -> tuple[float, str]:
        spec = spec_of(op)
        if spec is not None:
            found = estimate(self.db, self.device.key, spec)
            if found is not None and (found.source == "measured" or not self.measure):
                return found.seconds, found.source
            if self.measure:
                try:
                    timing = time_call(prepare(spec, self.device.device), self.device.device, budget_s=self.budget_s)
                except (RuntimeError, NotImplementedError, TypeError):
                    timing = None
                if timing is not None:
                    self.db.put_kernel(self.device.key, KernelRow(spec, timing.best(self.device.device), timing.minimum,
                                                                       timing.repeats))
                    return timing.best(self.device.device), "measured"
            if found is not None:
                return found.seconds, found.source
        return self.fallback.compute(op), "simulated"

    def collective(self, op: Collective) -> float:
        key = op.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        seconds, source = self._collective(op)
        self._cache[key], self.sources[key] = seconds, source
        return seconds

    def _collective(self, op: Collective) -> tuple[float, str]:
        from primus_lang.project import Links, collective_time

        inside = op.group.domains == 1
        if inside:
            got = interpolate_measured(self._rows, op.kind, op.group.size, op.bytes)
            if got is not None:
                return got, "measured"
        fit = self.links.get(op.kind) or self.links.get("")
        if fit is None:
            return self.fallback.collective(op), "simulated"
        spec = Links.of(self.cluster)
        # the measured link replaces the spec sheet inside the domain; across it the link a campaign
        # measured between two nodes, else the NIC spec
        out_bw, out_alpha = (self.net.bandwidth, self.net.alpha) if self.net else (spec.out_bandwidth, spec.out_latency)
        links = Links(fit.bandwidth, fit.alpha, out_bw, out_alpha, spec.domain, mesh=False)
        return collective_time(op, links), "interpolated" if inside else "restored"

    def source_counts(self) -> dict[str, int]:
        return dict(Counter(self.sources.values()))


def make_oracle(
    kind: str, device: str = "cpu", db: str | None = None, *, cluster: Cluster, model: Model | None = None,
    cands: Iterable[Candidate] = (),
) -> Oracle:
    """Build the oracle ``--oracle KIND`` names: ``simulate`` needs no torch, the others do.
    With ``model`` and ``cands`` the benchmark oracles are anchored to measured layers (``anchor``)."""
    from primus_lang.project import SimulateOracle

    if kind == "simulate":
        return SimulateOracle(cluster)
    if kind not in ORACLE_KINDS:
        raise ValueError(f"unknown oracle kind {kind!r}")
    database = ProfileDB(db or DEFAULT_DB)
    info = resolve_device(database, device, measure=kind == "benchmark")
    oracle = BenchmarkOracle(database, info, cluster, measure=kind == "benchmark")
    if model is not None:
        oracle.anchor(model, cands)
    return oracle


def resolve_device(db: ProfileDB, device: str, *, measure: bool) -> DeviceInfo:
    """A device of this machine (``cpu``, ``cuda``, ``cuda:N``), or, for an oracle that never
    measures, one measured elsewhere and merged: named by its campaign's target (``h200``), its
    device name or its full key."""
    from primus_lang.bench.provenance import device_of
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_bench import DEVICE_AMBIGUOUS, DEVICE_NOT_MEASURED

    if device == "cpu" or device.startswith("cuda"):
        return describe(device)
    if measure:
        raise CompileError(Diagnostic(
            DEVICE_NOT_MEASURED, f"`--oracle benchmark` measures on this machine, and `{device}` is none of its devices",
            help="use `--device cpu|cuda:N`, or `--oracle hybrid` to read a merged campaign's measurements"))
    by_target = {d for t, d in db.targets() if t == device}
    matches = sorted(by_target or {d for d in db.devices() if device in (d, db.provenance(d).get("device_name"))})
    if len(matches) > 1:
        raise CompileError(Diagnostic(
            DEVICE_AMBIGUOUS, f"`--device {device}` matches {len(matches)} measured devices in `{db.path}`",
            notes=tuple(f"`{m}`" for m in matches), help="pass one of these full keys to `--device`"))
    facts = db.provenance(matches[0]) if matches else {}
    if not facts:
        known = sorted({t for t, _ in db.targets()})
        raise CompileError(Diagnostic(
            DEVICE_NOT_MEASURED, f"`--device {device}` is not a device of this machine nor one measured in `{db.path}`",
            notes=(f"targets merged there: {', '.join(f'`{t}`' for t in known)}",) if known else (),
            help="merge its campaign file first (`primusc bench --merge FILE`), or use `--device cpu|cuda:N`"))
    return device_of(matches[0], facts)
