"""Leave one sweep out: each controlled sweep projected on profiles that no measurement of it informed.

The sweeps feed no fit, but the published-runs corpus holds some of the same runs (torchtitan's and
Megatron-Bridge's tables are both a sweep's variants and corpus rows) and re-measurements of the same
recipes. So for each sweep, every corpus row on the sweep's GPU profile with one of its (model, GPU
count) pairs is left out, the profile and its vendor's pool (and the pool a vendor borrows its host
parameters from) are fitted again on the rest exactly as ``calibrate`` fits them, and the sweep is
ranked on that fit. A sweep no corpus row shares a recipe with is ranked on the fit of every row,
which never saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from primus_lang.ir import Efficiency, Gpu, Settings
from primus_lang.validate.calibrate import POOL_SIGMA, _fit_profiles, vendor_pools
from primus_lang.validate.ranking import SweepResult, rank_sweep
from primus_lang.validate.runs import Run, gpu_key
from primus_lang.validate.sweeps import Sweep

MIN_ROWS = 3  # calibrate's --min-rows: a profile with fewer rows is not fitted, it takes its vendor's pool


def _groups(runs: Sequence[Run], min_rows: int) -> dict[str, list[Run]]:
    by_gpu: dict[str, list[Run]] = {}
    for r in runs:
        by_gpu.setdefault(gpu_key(r), []).append(r)
    return {g: rows for g, rows in sorted(by_gpu.items()) if len(rows) >= min_rows}


def sweep_keys(sweep: Sweep) -> set[tuple[str, str, int]]:
    """(GPU profile, model, GPU count) of every variant that is projected."""
    return {(gpu_key(v.run), v.run.model.name, v.run.cluster.world) for v in sweep.variants
            if not v.reason and v.run is not None and v.run.model is not None and v.run.cluster is not None}


def refit_without(runs: Sequence[Run], gone: set[str], gpu: Gpu, key: str, settings: Settings,
                  min_rows: int = MIN_ROWS) -> tuple[Efficiency, str]:
    """``gpu``'s efficiencies fitted as ``calibrate`` fits them on ``runs`` less the ids in ``gone``
    (its own rows with the pull toward its vendor's pool when it keeps ``min_rows``, else the pool,
    else its spec sheet when its vendor has no row left to fit), and which of those it is."""
    train = _groups([r for r in runs if r.id not in gone], min_rows)
    bases = {g: rows[0].cluster.gpu.efficiency for g, rows in train.items() if rows[0].cluster}
    if key in train:
        return _fit_profiles(train, bases, POOL_SIGMA, settings, only={key})[key], f"fitted on {len(train[key])} rows"
    spec = next((r.cluster.gpu for r in runs if r.cluster and gpu_key(r) == key), None) or gpu
    pooled = vendor_pools(train, {key: spec}, settings)
    if key in pooled:
        return pooled[key], "its vendor's pool"
    return spec.efficiency, "its spec sheet (no row of its vendor left to fit)"


def leave_sweep_out(sweeps: Sequence[Sweep], corpus: Sequence[Run], settings: Settings | None = None,
                    progress: Callable[[str], None] | None = None) -> list[SweepResult]:
    """Each sweep ranked on a refit that left out the corpus rows of its recipes (module doc).
    ``corpus``: the published runs read on their spec-sheet profiles (``load_runs(..., False)``)."""
    import attrs

    settings = settings or Settings()
    runs = [r for r in corpus if not r.skip and r.cluster and r.model and r.cand]
    fitted = _groups(runs, MIN_ROWS)
    out = []
    for n, sweep in enumerate(sweeps):
        keys = sweep_keys(sweep)
        gone = {r.id for r in runs if (gpu_key(r), r.model.name if r.model else "",
                                       r.cluster.world if r.cluster else 0) in keys}
        fitted_gone = sorted(r.id for rows in fitted.values() for r in rows if r.id in gone)
        if not keys or not fitted_gone:
            # no row the shipped fit saw is one of this sweep's recipes: the calibrated profile is out of sample
            result = rank_sweep(sweep, settings)
            out.append(attrs.evolve(result, refit="the calibrated profile (no corpus row of its recipes was fitted)"))
            continue
        key = sorted(keys)[0][0]
        if progress:
            progress(f"sweep {n + 1}/{len(sweeps)}: {sweep.id} (refit {key} without {len(fitted_gone)} rows)")
        variant_gpu = next(v.run.cluster.gpu for v in sweep.variants if not v.reason and v.run and v.run.cluster)
        eff, how = refit_without(runs, gone, variant_gpu, key, settings)
        result = rank_sweep(sweep, settings, efficiency=eff)
        out.append(attrs.evolve(result, held_out=tuple(fitted_gone),
                                refit=f"{key} refitted without {len(fitted_gone)} corpus rows of its recipes: {how}"))
    return out
