"""How well projections order the variants of a controlled sweep: what a search turns on.

Per sweep, over the variants that are both projected and measured: Spearman's rho and Kendall's
tau-b between projected and measured, the concordant pairs, the selection regret of taking the
projected best (top 1) or the best measured among the projected top 3, and each variant's ratio to
the base variant, projected against measured (a search compares candidates, not absolute values).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import attrs
from attrs import frozen

from primus_lang.ir import Efficiency, Settings
from primus_lang.project import project
from primus_lang.validate.sweeps import Sweep
from primus_lang.validate.validate import INTERNAL_ERROR, spearman

TOP = 3


@frozen
class VariantResult:
    id: str
    measured: float | None
    projected: float | None = None
    error: float | None = None  # (projected - measured) / measured; None for TFLOP/s sweeps
    ratio_error: float | None = None  # (projected / projected base) / (measured / measured base) - 1
    label: str = ""  # the candidate it was read as
    skipped: str = ""


@frozen
class SweepResult:
    id: str
    title: str
    metric: str
    gpu: str
    variants: tuple[VariantResult, ...]
    base: str = ""  # the variant ratios are taken to
    spearman: float | None = None
    kendall: float | None = None
    concordant: int = 0
    pairs: int = 0
    top1_regret: float | None = None
    top3_regret: float | None = None
    assumed: tuple[tuple[str, str], ...] = ()
    # leave one sweep out (``sweep_holdout``): the corpus rows the refit left out, and what projected it
    held_out: tuple[str, ...] = ()
    refit: str = ""

    @property
    def ranked(self) -> list[VariantResult]:
        return [v for v in self.variants if v.projected is not None and v.measured is not None]


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Kendall's tau-b (ties on either side leave a pair out of that side's count; nan when either
    side is constant). Values within a relative 1e-9 tie, as in ``spearman``."""
    concordant = discordant = tie_x = tie_y = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx, dy = _sign(xs[i], xs[j]), _sign(ys[i], ys[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tie_x += 1
            elif dy == 0:
                tie_y += 1
            elif dx == dy:
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tie_x) * (concordant + discordant + tie_y))
    return (concordant - discordant) / denominator if denominator else math.nan


def _sign(a: float, b: float) -> int:
    if math.isclose(a, b, rel_tol=1e-9):
        return 0
    return 1 if b > a else -1


def concordant_pairs(xs: Sequence[float], ys: Sequence[float]) -> tuple[int, int]:
    """(pairs ordered alike, pairs the measurement orders): a measured tie orders nothing, and a
    projected tie of a measured order is not concordant (the search could not choose)."""
    good = total = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dy = _sign(ys[i], ys[j])
            if dy == 0:
                continue
            total += 1
            good += _sign(xs[i], xs[j]) == dy
    return good, total


def regret(projected: Sequence[float], measured: Sequence[float], top: int) -> float:
    """The measured loss of choosing by projection: 1 - (best measured among the ``top`` projected
    best) / (best measured). Projected ties go to the variant listed first."""
    order = sorted(range(len(projected)), key=lambda i: (-projected[i], i))
    chosen = max(measured[i] for i in order[:top])
    return 1.0 - chosen / max(measured)


def rank_sweep(sweep: Sweep, settings: Settings | None = None, efficiency: Efficiency | None = None) -> SweepResult:
    """Project every resolved variant of ``sweep`` and score the order; ``efficiency``: project on the
    variants' GPU with these efficiencies instead of its profile's (a refit without the sweep)."""
    settings = settings or Settings()
    results: list[VariantResult] = []
    gpu = ""
    for v in sweep.variants:
        run = v.run
        if v.reason or run is None or run.model is None or run.cluster is None or run.cand is None:
            results.append(VariantResult(v.id, v.measured, skipped=v.reason or "not resolved"))
            continue
        gpu = gpu or run.cluster.gpu.name
        cluster = run.cluster
        if efficiency is not None:
            cluster = attrs.evolve(cluster, gpu=attrs.evolve(cluster.gpu, efficiency=efficiency))
        try:
            p = project(run.model, cluster, run.cand, run.settings(settings))
        except Exception as exc:  # a bug on one variant is reported there, not by dropping the sweep
            results.append(VariantResult(v.id, v.measured, skipped=f"{INTERNAL_ERROR}: {type(exc).__name__}: {exc}"))
            continue
        value = p.tflops_per_gpu if sweep.metric == "model_tflops_per_gpu" else p.tokens_per_gpu
        error = None
        if sweep.metric != "model_tflops_per_gpu" and run.measured:
            error = (value - run.measured) / run.measured
        results.append(VariantResult(v.id, run.measured, value, error, label=run.cand.label()))
    ranked = [r for r in results if r.projected is not None and r.measured is not None]
    if not ranked:
        return SweepResult(sweep.id, sweep.title, sweep.metric, gpu, tuple(results), assumed=sweep.assumed)
    base = ranked[0]
    assert base.projected is not None and base.measured is not None
    with_ratios = []
    for r in results:
        if r.projected is None or r.measured is None:
            with_ratios.append(r)
            continue
        ratio = (r.projected / base.projected) / (r.measured / base.measured) - 1
        with_ratios.append(VariantResult(r.id, r.measured, r.projected, r.error, ratio, r.label))
    proj = [r.projected or 0.0 for r in ranked]
    meas = [r.measured or 0.0 for r in ranked]
    rho = spearman(proj, meas) if len(ranked) >= 2 else math.nan
    tau = kendall_tau_b(proj, meas) if len(ranked) >= 2 else math.nan
    good, total = concordant_pairs(proj, meas)
    return SweepResult(
        sweep.id, sweep.title, sweep.metric, gpu, tuple(with_ratios), base.id,
        None if math.isnan(rho) else rho, None if math.isnan(tau) else tau, good, total,
        regret(proj, meas, 1), regret(proj, meas, TOP), sweep.assumed,
    )


def summary(results: Sequence[SweepResult]) -> dict[str, object]:
    """Medians over the sweeps that can be judged (at least two projected variants; Spearman and
    Kendall only where the measurements order something)."""
    judged = [r for r in results if len(r.ranked) >= 2]
    rhos = [r.spearman for r in judged if r.spearman is not None]
    taus = [r.kendall for r in judged if r.kendall is not None]
    top1 = [r.top1_regret for r in judged if r.top1_regret is not None]
    ratios = [abs(v.ratio_error) for r in judged for v in r.ranked if v.ratio_error is not None and v.id != r.base]
    return {
        "sweeps": len(results),
        "judged": len(judged),
        "variants": sum(len(r.variants) for r in results),
        "projected": sum(len(r.ranked) for r in results),
        "median_spearman": statistics.median(rhos) if rhos else None,
        "median_kendall": statistics.median(taus) if taus else None,
        "median_top1_regret": statistics.median(top1) if top1 else None,
        "worst_top1_regret": max(top1) if top1 else None,
        "concordant_pairs": sum(r.concordant for r in judged),
        "pairs": sum(r.pairs for r in judged),
        "median_abs_ratio_error": statistics.median(ratios) if ratios else None,
    }


def to_json(results: Sequence[SweepResult]) -> dict[str, object]:
    return {
        "sweeps": [
            {"id": r.id, "title": r.title, "metric": r.metric, "gpu": r.gpu, "base": r.base or None,
             "spearman": r.spearman, "kendall": r.kendall, "concordant": r.concordant, "pairs": r.pairs,
             "top1_regret": r.top1_regret, "top3_regret": r.top3_regret, "assumed": dict(r.assumed),
             **({"refit": r.refit, "held_out": list(r.held_out)} if r.refit else {}),
             "variants": [{"id": v.id, "label": v.label or None, "projected": v.projected, "measured": v.measured,
                           "error": v.error, "ratio_error": v.ratio_error, "skipped": v.skipped or None}
                          for v in r.variants]}
            for r in results
        ],
        "summary": summary(results),
    }
