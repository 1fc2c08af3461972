"""Each calibrated profile's provenance: where its efficiencies come from and the band measured for
that kind of evidence.

- A profile fitted on its own rows takes the band of its k-fold cross-validated residuals: its own
  when it has ``MIN_ROWS`` rows or more, else its vendor's (every fitted profile of the vendor), else
  every vendor's, since three points cannot place a 10% quantile.
- A profile that carries its vendor's pooled values (no rows of its own) takes the band of the
  leave-one-GPU-out transfer: each GPU's rows projected with the pool of its vendor's *other* GPUs.
  A vendor with a single fitted GPU has no transfer to measure; it takes every vendor's, and says so.
- A spec sheet takes the band of the stdlib defaults on every row (which saw nothing).

The paired band is the median error of the ratio of two rows' projections, over the pairs a search
compares: one model on one GPU at one GPU count, different layouts. Pairs inside one profile are
few, so every fitted profile takes the pairs of all cross-validated rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from primus_lang.ir import Efficiency, Gpu, Provenance, Settings
from primus_lang.validate import trust
from primus_lang.validate.bands import (
    COVERAGE,
    PAIRED_COVERAGE,
    MeasuredBand,
    band_of,
    held_out_coverage,
    measure,
    pair_errors,
)
from primus_lang.validate.calibrate import Fit, layout_key, projected, projection_of
from primus_lang.validate.runs import Run

MIN_ROWS = 15  # residuals a band needs (its 10% tails are then 1.5 rows each)


def spec_errors(runs: Sequence[Run], settings: Settings | None = None) -> dict[str, float]:
    """Each row projected with its GPU's stdlib defaults: the spec sheet's residuals."""
    settings = settings or Settings()
    return {r.id: projected(r, r.cluster.gpu.efficiency, settings) / (r.measured or 1.0) - 1
            for r in runs if r.cluster}


def host_shares(by_gpu: Mapping[str, Sequence[Run]], fitted: Mapping[str, Efficiency],
                settings: Settings | None = None) -> dict[str, float]:
    """Each row's share of its projected step that the host exposes (``trust.host_share``), on its
    profile's fitted efficiencies (``fitted``, by the keys of ``by_gpu``; rows of another are left out)."""
    settings = settings or Settings()
    return {r.id: trust.host_share(projection_of(r, fitted[gpu], settings))
            for gpu, rows in sorted(by_gpu.items()) if gpu in fitted for r in rows if r.cluster}


# the fewest held-out residuals that bound a split-conformal interval at COVERAGE: (1 - (1-c)/2)(n+1) <= n
BOUNDED = math.ceil(round((1 + COVERAGE) / (1 - COVERAGE), 9))


class _Rows:
    """Row facts the band measurements group by (``host``: each row's host share, ``host_shares``; the
    ``host_bound`` a profile records is every vendor's, since the host's software is shared:
    calibrate.HOST_PARAMS)."""

    def __init__(self, runs: Sequence[Run], host: Mapping[str, float] | None = None) -> None:
        self.by_id = {r.id: r for r in runs}
        self.host_bound = {"host_bound": trust.host_bound_kinds(host, runs)} if host is not None else {}

    def started(self, ids: Sequence[str]) -> Gpu | None:
        """The profile ``ids``' rows were projected on before a fit (the first row's GPU, as its row named
        it), where it states a band measured on rows."""
        for rid in ids:
            r = self.by_id.get(rid)
            if r is not None and r.cluster is not None:
                return r.cluster.gpu if r.cluster.gpu.provenance.basis in ("fitted", "pooled") else None
        return None

    def group(self, rid: str) -> str:
        """What a space holds fixed: the model, the GPU and the GPU count."""
        r = self.by_id[rid]
        return f"{r.group[0]}|{r.cluster.gpu.name if r.cluster else ''}|{r.cluster.world if r.cluster else 0}"

    def layout(self, rid: str) -> str:
        return layout_key(self.by_id[rid])

    def vendor(self, rid: str) -> str:
        r = self.by_id[rid]
        return r.cluster.gpu.vendor if r.cluster else ""

    def pairs(self, errors: Mapping[str, float]) -> list[float]:
        return pair_errors(errors, self.group, self.layout)

    def coverage(self, targets: Mapping[str, float], evidence: Mapping[str, float]) -> tuple[int, int]:
        return held_out_coverage(targets, evidence, self.layout)

    def seen(self, ids: Iterable[str]) -> dict[str, Any]:
        return {**seen_in([self.by_id[i] for i in ids]), **self.host_bound}


def seen_in(runs: Sequence[Run]) -> dict[str, Any]:
    """What a fit on ``runs`` saw, as a provenance's fields: the longest sequence, the most GPUs, and
    the model architectures, GEMM precisions, training software and GPU architectures among them (a
    candidate beyond any of them carries the far band: ``trust.beyond``)."""
    def listed(values: Iterable[str]) -> str:
        return ",".join(sorted({v for v in values if v}))

    return {"seq_max": max((r.cand.seq_len for r in runs if r.cand), default=0),
            "world_max": max((r.cluster.world for r in runs if r.cluster), default=0),
            "kinds": listed(trust.architecture(r.model) for r in runs if r.model),
            "precisions": listed(trust.gemm_precision(r.cand) for r in runs if r.cand),
            "stacks": listed(trust.stack_of(r.framework) for r in runs),
            "archs": listed(r.cluster.gpu.arch for r in runs if r.cluster)}


def source_coverage(errors: Mapping[str, float], runs: Sequence[Run], by_gpu: Mapping[str, Sequence[Run]],
                    provs: Mapping[str, Provenance], gpu_of: Mapping[str, str],
                    host: Mapping[str, float] | None = None) -> dict[str, dict[str, bool]]:
    """Whether each row held out with its source (``errors``: ``hold_out_sources``) lands inside its
    profile's band as shipped (``own``), inside the band a fit without its source gives it
    (``judged``: the far band where the row lies beyond what that fit saw, ``trust.beyond``), and
    inside the far band (``far``). The far band of both is measured without the row's source too, on
    the other sources' held-out residuals, so no row is judged by a band its own error helped measure.
    ``by_gpu``: the rows each profile is fitted on; ``host``: each row's host share (``host_shares``), the
    host-bound rows of the other sources being what a fit without the row's source saw."""
    by_id = {r.id: r for r in runs}
    sources = sorted({by_id[rid].source for rid in errors})
    others = {s: [e for rid, e in sorted(errors.items()) if by_id[rid].source != s] for s in sources}
    far_without = {s: band_of(errs) for s, errs in others.items() if errs}

    def seen_without(run: Run, gpu: str) -> dict[str, Any]:
        train = [r for r in by_gpu.get(gpu, ()) if r.source != run.source]
        if not train and run.cluster is not None:  # the profile is then its vendor's pool of the other sources
            vendor = run.cluster.gpu.vendor
            train = [r for rows in by_gpu.values() for r in rows
                     if r.source != run.source and r.cluster is not None and r.cluster.gpu.vendor == vendor]
        hosted = {"host_bound": trust.host_bound_kinds(host, [r for r in runs if r.source != run.source])} \
            if host is not None else {}
        return {**seen_in(train), **hosted}

    out: dict[str, dict[str, bool]] = {}
    for rid, e in errors.items():
        run, gpu = by_id[rid], gpu_of.get(rid, "")
        p = provs.get(gpu)
        if p is None:
            out[rid] = {"own": False, "judged": False, "far": False}
            continue
        band = far_without.get(run.source)
        p_out = attrs.evolve(p, far_low=band[0], far_high=band[1]) if band else p
        judged = (trust.factors(attrs.evolve(p_out, **seen_without(run, gpu)), run.cand, run.cluster.world,
                                run.model, trust.stack_of(run.framework), run.cluster.gpu.arch,
                                (host or {}).get(rid, 0.0))
                  if run.cand is not None and run.cluster is not None else (p.low, p.high))
        ratio = 1 / (1 + e)
        out[rid] = {how: low <= ratio <= high
                    for how, (low, high) in (("own", (p.low, p.high)), ("judged", judged), ("far", trust.far(p_out)))}
    return out


def _share(inside: int, rows: int) -> dict[str, object]:
    return {"inside": inside, "rows": rows, "share": inside / rows if rows else None}


# The paired band a profile states when its runs hold no pair of one model, GPU and GPU count (a few site
# runs): the stdlib's, measured on the development corpus (Provenance's default), said in its note
_PAIRED_DEFAULT = float(attrs.fields(Provenance).paired.default or 0.0)


def _provenance(basis: str, band: MeasuredBand, rows: int, note: str, seen: dict[str, Any],
                far: MeasuredBand | None) -> Provenance:
    paired = round(band.paired, 3)
    if not band.pairs:
        paired = _PAIRED_DEFAULT
        note += f"; with no pair measured, the paired band is the stdlib's ±{paired:.1%} (the development corpus's)"
    return Provenance(basis=basis, rows=rows, error=round(band.error, 3), low=round(band.low, 3),
                      high=round(band.high, 3), paired=paired, coverage=band.coverage,
                      paired_coverage=band.paired_coverage, note=note, **seen,
                      far_low=round(far.low, 3) if far else 0.0, far_high=round(far.high, 3) if far else 0.0)


def _evidence(own: Mapping[str, float], vendor: Mapping[str, float], every: Mapping[str, float],
              vendor_name: str) -> tuple[Mapping[str, float], str]:
    if len(own) >= MIN_ROWS:
        return own, "its own"
    if len(vendor) >= MIN_ROWS:
        return vendor, f"every {vendor_name} profile's"
    if len(every) == len(own):  # a site's few rows of one GPU: "every profile's" would be these same rows
        return own, f"its own (under {MIN_ROWS}, and no other profile's to add)"
    return every, "every profile's (too few of its vendor's)"


def provenances(fits: Sequence[Fit], runs: Sequence[Run], pooled: Sequence[tuple[str, str]],
                transferred: Mapping[str, Sequence[tuple[str, float]]],
                spec: Mapping[str, float],
                unseen_sources: Mapping[str, float] | None = None,
                host: Mapping[str, float] | None = None) -> tuple[dict[str, Provenance], dict[str, object]]:
    """The provenance of every fitted profile and of every pooled one (``pooled``: (GPU, vendor)),
    and a report of the bands and of their held-out coverage, per vendor (for ``calibrate --json``).
    Coverage counts each row inside or outside a band measured without it and its layout's twins,
    the band it would get as the profile ships. The ``far`` band, for a candidate beyond what a fit
    saw, comes from ``unseen_sources`` (each row projected by fits on the other sources: a new kind
    of run) where given, else from the leave-one-GPU-out transfer. ``host``: each row's host share
    (``host_shares``), from which every profile records the kinds of model whose runs are host-bound."""
    rows = _Rows(runs, host)
    cv = {rid: e for f in fits for rid, e in zip(f.row_ids, f.cross_validated, strict=True)}
    vendors = sorted({rows.vendor(rid) for rid in cv})
    vendor_cv = {v: {k: e for k, e in cv.items() if rows.vendor(k) == v} for v in vendors}
    cv_pairs = rows.pairs(cv)
    moved = {rid: e for errs in transferred.values() for rid, e in errs}
    moved_pairs = rows.pairs(moved)
    # beyond what a fit saw, the nearest measured stand-in: runs of a source projected by fits on the
    # others (else GPUs' runs projected by fits without them)
    far = (measure(unseen_sources, rows.pairs(unseen_sources)) if unseen_sources
           else measure(moved, moved_pairs) if moved else None)
    out: dict[str, Provenance] = {}
    fitted: dict[str, object] = {}
    inside: dict[str, list[int]] = {v: [0, 0] for v in vendors}
    for f in fits:
        own = dict(zip(f.row_ids, f.cross_validated, strict=True))
        vendor = rows.vendor(f.row_ids[0]) if f.row_ids else ""
        evidence, whose = _evidence(own, vendor_cv.get(vendor, {}), cv, vendor)
        # the band from the evidence, the error from the profile's own rows
        band = attrs.evolve(measure(evidence, cv_pairs), error=float(np.mean(np.abs([own[k] for k in sorted(own)]))))
        note = (f"{f.folds}-fold cross-validated on {len(own)} rows; band from {whose} {band.rows} "
                f"held-out residuals; paired band from {band.pairs} pairs of rows of one model, GPU and GPU count")
        start = rows.started(f.row_ids)
        started = start.provenance if start is not None else None
        mine_far = far
        if band.rows < BOUNDED and start is not None and started is not None:
            # too few residuals to bound an 80% interval (conformal needs 9): no narrower than the band of
            # the profile the fit started from, measured on the evidence behind it
            band = attrs.evolve(band, low=min(band.low, started.low), high=max(band.high, started.high),
                                paired=max(band.paired, started.paired) if band.pairs else band.paired)
            note += (f"; under {BOUNDED} residuals cannot bound an {COVERAGE:.0%} band: widened to that of "
                     f"`{start.name}`, the profile it was fitted from")
        if far is None and started is not None and started.far_high:
            # no other source or GPU to hold out against (a site's own runs): the far band of the profile
            # it was fitted from, measured on the sources behind it
            mine_far = MeasuredBand(started.far_low, started.far_high, started.paired, 0, 0)
        out[f.gpu] = _provenance("fitted", band, f.rows, note, rows.seen(f.row_ids), mine_far)
        hit, judged = rows.coverage(own, evidence)
        inside[vendor][0] += hit
        inside[vendor][1] += judged
        fitted[f.gpu] = {**band.to_json(), "basis": "fitted", "evidence": whose}
    report: dict[str, object] = {
        "coverage": COVERAGE,
        "paired_coverage": PAIRED_COVERAGE,
        "fitted": fitted,
        "held_out_coverage": {v: _share(i, n) for v, (i, n) in inside.items()},
    }
    pooled_report: dict[str, object] = {}
    for gpu, vendor in pooled:
        mine = {k: e for k, e in moved.items() if rows.vendor(k) == vendor}
        if len(mine) >= MIN_ROWS:
            evidence, pairs, whose = mine, moved_pairs, f"the leave-one-GPU-out transfer of {len(mine)} rows of {vendor} GPUs"
        elif moved:
            evidence, pairs, whose = moved, moved_pairs, (f"the leave-one-GPU-out transfer of {len(moved)} rows of "
                                                          "every vendor's GPUs (too few of its vendor's)")
        else:
            # no second GPU to leave out: the fitted profiles' own held-out residuals, which a GPU the
            # fit never saw will err beyond
            evidence, pairs, whose = cv, cv_pairs, (f"the fitted profiles' {len(cv)} cross-validated residuals "
                                                    "(no second GPU to measure a transfer on: expect more)")
        if not evidence:
            continue
        band = measure(evidence, pairs)
        note = f"no rows of its own: its vendor's pooled values; band from {whose}"
        seen = rows.seen(k for k in rows.by_id if rows.vendor(k) == vendor)
        out[gpu] = _provenance("pooled", band, 0, note, seen, far)
        pooled_report[gpu] = {**band.to_json(), "basis": "pooled", "evidence": whose}
    report["pooled"] = pooled_report
    if moved:
        report["transfer_held_out_coverage"] = _share(*rows.coverage(moved, moved))
    if spec:
        report["spec"] = measure(spec, rows.pairs(spec)).to_json()
        report["spec_held_out_coverage"] = _share(*rows.coverage(spec, spec))
    return out, report
