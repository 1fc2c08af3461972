"""Projected vs measured throughput over published runs: per-row errors and summary statistics.

Groups are (model card, GPU, precision label) with at least ``MIN_GROUP`` projected rows; inside a
group Spearman's rank correlation says whether the projection orders layouts as the measurements do.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator, Sequence

from attrs import frozen

from primus_lang.ir import Settings
from primus_lang.project import Oracle, project
from primus_lang.validate.runs import Run

MIN_GROUP = 4


@frozen
class MemoryVerdict:
    verdict: str  # fits | exceeds | unknown
    peak_bytes: int | None = None
    capacity_bytes: int | None = None
    # "published" when the row publishes every knob the account needs, else "least memory": the
    # account at the least-memory setting of the knobs in ``assumed`` (the run may have used it)
    reading: str = "published"
    assumed: tuple[tuple[str, str], ...] = ()  # (knob, value judged) for each unpublished knob
    offload: int = 0  # decoder layers whose activations the run offloaded to host memory (accounted)
    spare_bytes: int | None = None  # usable bytes (capacity less the runtime's reserve) minus the peak
    measured_bytes: int | None = None  # what the source measured, where it says
    terms: tuple[tuple[str, int], ...] = ()  # the largest terms of the fullest rank, (name, bytes)

    @property
    def margin(self) -> float | None:
        """Spare memory as a share of capacity (negative: judged not to fit)."""
        if self.spare_bytes is None or not self.capacity_bytes:
            return None
        return self.spare_bytes / self.capacity_bytes

    @property
    def false_oom(self) -> bool:
        """A run that really ran, judged not to fit."""
        return self.verdict == "exceeds"


@frozen
class RowResult:
    id: str
    group: tuple[str, str, str]
    projected: float | None
    measured: float | None
    error: float | None  # (projected - measured) / measured
    memory: MemoryVerdict | None
    skipped: str = ""
    layout: str = ""  # GPU count and candidate label: rows re-measuring one recipe share it
    dtype: str = ""  # bf16 or fp8, whatever the published recipe label
    # measured over projected tokens/s the row's profile expects for ``coverage`` of runs, with why it
    # is widened (the row lies beyond the runs the profile was fitted on: ``trust.beyond``)
    band: tuple[float, float] | None = None
    beyond: tuple[str, ...] = ()
    measured_from: str = ""  # how the measurement was derived where the row publishes no tokens/s/GPU

    @property
    def inside(self) -> bool | None:
        """Whether the measurement fell inside the band (None: not projected, or no band)."""
        if self.band is None or not self.projected or self.measured is None:
            return None
        return self.band[0] <= self.measured / self.projected <= self.band[1]


def memory_verdict(run: Run, settings: Settings) -> MemoryVerdict:
    """The memory account's verdict for the run's layout at the least-memory setting of the knobs
    the row does not publish. An account that fails is a bug to see, not a verdict to hide."""
    from primus_lang.memory import least_memory

    assert run.model is not None and run.cluster is not None and run.cand is not None
    acc, cand = least_memory(run.model, run.cluster, run.cand, settings, run.unpublished)
    assumed = tuple((knob, str(getattr(cand, knob))) for knob in run.unpublished)
    return MemoryVerdict("fits" if acc.fits() else "exceeds", acc.peak.total, acc.capacity,
                         "least memory" if run.unpublished else "published", assumed, run.cand.offload_layers,
                         acc.spare(0), run.measured_memory,
                         tuple((t.name, int(t.bytes)) for t in acc.peak.largest(TERMS)))


def validate_rows(
    runs: Sequence[Run], settings: Settings | None = None, memory: bool = True,
    oracle_for: Callable[[Run], Oracle | None] | None = None,
) -> list[RowResult]:
    """``oracle_for`` gives each row its oracle (None: simulate), e.g. a benchmark oracle per cluster."""
    from primus_lang.validate import trust

    settings = settings or Settings()
    out: list[RowResult] = []
    for run in runs:
        if run.skip:
            out.append(RowResult(run.id, run.group, None, run.measured, None, None, run.skip))
            continue
        assert run.model is not None and run.cluster is not None and run.cand is not None
        row_settings = run.settings(settings)
        oracle = oracle_for(run) if oracle_for is not None else None
        try:
            proj = project(run.model, run.cluster, run.cand, row_settings, oracle=oracle)
            out.append(row_result(run, proj.tokens_per_gpu, memory_verdict(run, row_settings) if memory else None,
                                  trust.host_share(proj)))
        except Exception as exc:  # a bug on one row is reported on that row, not by dropping the rest
            out.append(RowResult(run.id, run.group, None, run.measured, None, None,
                                 f"{INTERNAL_ERROR}: {type(exc).__name__}: {exc}"))
    return out


TERMS = 3  # the largest terms of a false OOM's fullest rank that validate names
INTERNAL_ERROR = "internal error (a bug in primusc; please report it)"


def row_result(run: Run, projected: float, memory: MemoryVerdict | None = None, host: float = 0.0) -> RowResult:
    """A projected row: its signed error and the layout it shares with re-measurements of its recipe
    (``host``: the share of its projected step the host exposes, ``trust.host_share``)."""
    from primus_lang.validate import trust

    assert run.cluster is not None and run.cand is not None
    err = (projected - run.measured) / run.measured if run.measured else None
    layout = f"{run.cluster.world}:{run.cand.label()}"
    low, high, why = trust.bounds(run.cluster.gpu.provenance, run.cand, run.cluster.world, run.model,
                                  trust.stack_of(run.framework), run.cluster.gpu.arch, host)
    return RowResult(run.id, run.group, projected, run.measured, err, memory, "", layout, run.cand.precision,
                     (low, high), why, run.measured_from)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho with average ranks for ties (nan when either side is constant). Values within
    a relative 1e-9 tie: one recipe projected twice must not be ranked by float rounding (calibrate
    rebuilds cross-validated projections from errors, which leaves last-bit differences)."""

    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and math.isclose(v[order[j + 1]], v[order[i]], rel_tol=1e-9):
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def group_name(group: tuple[str, str, str]) -> str:
    return " / ".join(group)


def summarize(rows: Sequence[RowResult]) -> dict[str, object]:
    done = [r for r in rows if r.error is not None]
    ape = [abs(r.error) for r in done if r.error is not None]
    groups: dict[tuple[str, str, str], list[RowResult]] = {}
    for r in done:
        groups.setdefault(r.group, []).append(r)
    rho: dict[str, float | None] = {}
    signed: dict[str, float] = {}
    for g, members in sorted(groups.items()):
        signed[group_name(g)] = statistics.fmean(r.error for r in members if r.error is not None)
        if len(members) >= MIN_GROUP:
            value = spearman([r.projected or 0.0 for r in members], [r.measured or 0.0 for r in members])
            rho[group_name(g)] = None if math.isnan(value) else value
    return {
        "n": len(done),
        "skipped": len(rows) - len(done),
        "mape": statistics.fmean(ape) if ape else None,
        "median_ape": statistics.median(ape) if ape else None,
        "spearman_by_group": rho,
        "spearman_ceiling_by_group": {group_name(g): spearman_ceiling(members) for g, members in sorted(groups.items())
                                      if len(members) >= MIN_GROUP
                                      and len({r.layout for r in members}) <= MAX_LAYOUTS},
        "signed_error_by_group": signed,
        "spearman_by_layout_group": _layout_spearman(done),
        "replicates": _replicates(done),
        "band_coverage": _band_coverage(done),
        **_memory_summary(rows),
    }


def _band_coverage(done: Sequence[RowResult]) -> dict[str, object]:
    """How many measurements fell inside the band their profile gives them, and of the rows beyond
    the runs a profile was fitted on (which get the wider far band), how many."""
    judged = [r for r in done if r.inside is not None]
    far = [r for r in judged if r.beyond]
    return {"inside": sum(bool(r.inside) for r in judged), "rows": len(judged),
            "share": sum(bool(r.inside) for r in judged) / len(judged) if judged else None,
            "beyond_inside": sum(bool(r.inside) for r in far), "beyond_rows": len(far)}


TIGHTEST = 5
MAX_LAYOUTS = 6  # 4,683 weak orders of 6 layouts; 47,293 of 7


def spearman_ceiling(members: Sequence[RowResult]) -> float | None:
    """The highest Spearman any projection can reach on these rows: rows that re-measure one recipe
    (same GPU count and candidate) get one projection, so their measured spread is unrankable.
    Exact: every weak order of the distinct layouts (distinct layouts may tie too) is tried. None
    when there is no order to judge (one layout, or every measurement equal) and for groups of
    more than ``MAX_LAYOUTS`` layouts, which ``summarize`` leaves out."""
    layouts: dict[str, list[int]] = {}
    for i, r in enumerate(members):
        layouts.setdefault(r.layout, []).append(i)
    measured = [r.measured or 0.0 for r in members]
    if len(layouts) < 2 or len(layouts) > MAX_LAYOUTS:
        return None
    best: float | None = None
    for order in _weak_orders(list(layouts.values())):
        rank = [0.0] * len(members)
        for position, block in enumerate(order):
            for idx in block:
                for i in idx:
                    rank[i] = float(position)
        value = spearman(rank, measured)
        if not math.isnan(value) and (best is None or value > best):
            best = value
    return best


def _weak_orders(items: list[list[int]]) -> Iterator[list[list[list[int]]]]:
    """Every ordered partition of ``items`` into non-empty blocks (a block: items that tie)."""
    if not items:
        yield []
        return
    n = len(items)
    for mask in range(1, 1 << n):
        first = [items[i] for i in range(n) if mask >> i & 1]
        rest = [items[i] for i in range(n) if not mask >> i & 1]
        for tail in _weak_orders(rest):
            yield [first, *tail]


def _memory_summary(rows: Sequence[RowResult]) -> dict[str, object]:
    """False OOMs (rows that ran but are judged not to fit) and the tightest
    margins among the rows judged to fit."""
    judged = [r for r in rows if r.memory is not None and r.memory.margin is not None]
    if not judged:
        return {}
    fitting = sorted((r for r in judged if r.memory and r.memory.verdict == "fits"),
                     key=lambda r: r.memory.margin if r.memory and r.memory.margin is not None else 0.0)
    return {
        "memory_judged": len(judged),
        "memory_offloaded": sum(1 for r in judged if r.memory and r.memory.offload),
        "false_ooms": [r.id for r in judged if r.memory and r.memory.false_oom],
        # a run that ran is evidence it fits: what the account says exceeds, to correct the model
        "false_oom_terms": {r.id: {"over_bytes": -(r.memory.spare_bytes or 0), "terms": [list(t) for t in r.memory.terms]}
                            for r in judged if r.memory and r.memory.false_oom},
        "tightest_memory_margins": {r.id: r.memory.margin for r in fitting[:TIGHTEST] if r.memory},
        # account / measured where the source reports memory; the account is of the Megatron recipe
        # the row maps to, at Megatron's defaults where the row says nothing (its unfused FP32
        # cross-entropy, except on Bridge's rows, whose recipes run Transformer Engine's), so a framework
        # that keeps more (torchtitan's FP32 gradients) measures above it
        "account_over_measured": {r.id: r.memory.peak_bytes / r.memory.measured_bytes for r in judged
                                  if r.memory and r.memory.measured_bytes and r.memory.peak_bytes},
    }


def _layout_spearman(done: Sequence[RowResult]) -> dict[str, float | None]:
    """Rank agreement over distinct layouts: inside (model card, GPU, dtype), rows that re-measure
    one recipe (later releases) are merged by their mean, and groups need ``MIN_GROUP`` layouts.
    Row-level groups are mostly one recipe measured several times, whose projections tie."""
    groups: dict[tuple[str, str, str], dict[str, list[RowResult]]] = {}
    for r in done:
        groups.setdefault((r.group[0], r.group[1], r.dtype), {}).setdefault(r.layout, []).append(r)
    out: dict[str, float | None] = {}
    for g, layouts in sorted(groups.items()):
        if len(layouts) < MIN_GROUP:
            continue
        proj = [statistics.fmean(r.projected or 0.0 for r in rs) for rs in layouts.values()]
        meas = [statistics.fmean(r.measured or 0.0 for r in rs) for rs in layouts.values()]
        value = spearman(proj, meas)
        out[group_name(g)] = None if math.isnan(value) else value
    return out


def _replicates(done: Sequence[RowResult]) -> dict[str, object]:
    """How far re-measurements of one recipe (same model, GPU, GPU count and candidate, in another
    release or table) disagree: ``max / min - 1`` of their measured tokens/s/GPU. Projections of such
    rows tie, so this spread is noise no projection can rank; layouts that differ by less cannot be
    ordered reliably from this corpus."""
    twins: dict[tuple[str, str, str], list[RowResult]] = {}
    for r in done:
        twins.setdefault((r.group[0], r.group[1], r.layout), []).append(r)
    spreads = {" / ".join((g[0], g[1], g[2])): max(r.measured or 0.0 for r in rs) / min(r.measured or 1.0 for r in rs) - 1
               for g, rs in sorted(twins.items()) if len(rs) >= 2}
    if not spreads:
        return {"layouts": 0}
    worst = sorted(spreads.items(), key=lambda kv: -kv[1])[:TIGHTEST]
    return {"layouts": len(spreads), "rows": sum(len(rs) for rs in twins.values() if len(rs) >= 2),
            "median_spread": statistics.median(spreads.values()), "max_spread": worst[0][1],
            "widest": dict(worst)}


def to_json_rows(rows: Sequence[RowResult]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for r in rows:
        mem = None
        if r.memory is not None:
            mem = {"verdict": r.memory.verdict, "peak_bytes": r.memory.peak_bytes,
                   "capacity_bytes": r.memory.capacity_bytes, "margin": r.memory.margin,
                   "reading": r.memory.reading, "assumed": dict(r.memory.assumed),
                   "cpu_offload": r.memory.offload, "false_oom": r.memory.false_oom,
                   "measured_bytes": r.memory.measured_bytes}
        band = None if r.band is None or r.projected is None else {
            "tokens_low": r.projected * r.band[0], "tokens_high": r.projected * r.band[1], "inside": r.inside,
            "beyond": list(r.beyond)}
        row: dict[str, object] = {"id": r.id, "projected": r.projected, "measured": r.measured, "error": r.error,
                               "band": band, "memory": mem, "skipped": r.skipped or None,
                               "layout": r.layout or None}
        if r.measured_from:
            row["measured_from"] = r.measured_from
        out.append(row)
    return out
