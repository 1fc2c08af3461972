"""Fit a few physical efficiency parameters per hardware profile to measured runs.

For one GPU profile the parameters are the GEMM plateau (BF16 and FP8), the GEMM knee (the fixed
per-kernel cost), flash-attention efficiency, the HBM share memory-bound kernels reach, the
grouped-GEMM (MoE expert) plateau, the bus efficiency of each link class, and the host's time per
launched op (it moves only with rows whose passes are host-bound). They are
fitted by Levenberg-Marquardt on the log ratio of projected to measured tokens/s/GPU in two levels:
one set of values pooled over every row of a vendor, then each profile on its own rows with a prior
toward its vendor's pool (so a GPU with three rows moves only what its rows can identify, and a GPU
with none takes the pool). Never one constant per row: every row of a GPU shares the same few
parameters. The error that matters is the k-fold cross-validated one: each row is projected with
parameters, pooled ones included, fitted on the other folds; ``transfer`` measures the pool on a GPU
it never saw.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Collection, Mapping, Sequence

import attrs
import numpy as np
from attrs import frozen

from primus_lang.ir import Efficiency, Gpu, Provenance, Settings, text
from primus_lang.ir.hardware import FP8_RATIO_MEASURED
from primus_lang.project import Projection, SimulateOracle, project
from primus_lang.validate.runs import Run

# parameter -> (lower, upper) bound; all fitted in a logit space inside the bounds
PARAMS: dict[str, tuple[float, float]] = {
    "gemm_max": (0.15, 0.95),
    "fp8_gemm_max": (0.10, 0.95),
    "fp4_gemm_max": (0.05, 0.95),
    "gemm_knee_flops": (1.0e7, 2.0e11),
    "attention": (0.10, 0.95),
    "scale_up_bus": (0.10, 1.0),
    "scale_out_bus": (0.05, 1.0),
    "hbm": (0.2, 1.0),
    "grouped_gemm": (0.2, 1.25),  # 1.0 (no penalty) must sit inside the bounds to move
    "host_launch": (1.0e-6, 3.0e-4),
    "overlap_slowdown": (0.0, 1.0),
    "sink_attention": (0.05, 1.25),  # 1.0 (as fast as flash attention) must sit inside to move
    "ssm_scan": (0.02, 1.25),
}
LOG_SCALE = ("gemm_knee_flops", "host_launch")  # fitted on a log scale: they span decades
# The FP8 plateau is the BF16 one times the profile's FP8/BF16 kernel ratio: on the vendors whose
# GEMMs it was measured on (``FP8_RATIO_MEASURED``) never fitted here, so every FP8 and BF16 row
# moves the one plateau and the FP8 gain a plan is projected to have is what the kernels measure,
# not what a corpus of mostly FP8 rows could trade against everything else a step does; on another
# vendor fitted from its rows of both dtypes (and kept where a profile has one dtype only).
# NVFP4's plateau is a ratio to the FP8 one (the same tensor-core GEMM kernels at twice the rate): a
# profile without NVFP4 rows reaches the same share of its FP4 peak as of its FP8 peak, times the
# ratio its vendor's NVFP4 rows say.
FIT_ONLY: dict[str, tuple[float, float]] = {"fp8_ratio": (0.3, 1.6), "fp4_ratio": (0.1, 1.6)}
# ratio -> (the plateau it sets, the plateau it is a ratio to), in the order they are applied
RATIOS = {"fp8_ratio": ("fp8_gemm_max", "gemm_max"), "fp4_ratio": ("fp4_gemm_max", "fp8_gemm_max")}
PRIOR_SIGMA = 10.0  # in the logit space: a weak pull toward the profile's own values
# Partial pooling: each profile is pulled with this sigma (logit space) toward the values fitted on
# the rows of every profile of its vendor, so a profile with few rows, or rows that cannot tell two
# parameters apart, borrows what its siblings' rows say about efficiencies that are fractions of a peak.
POOL_SIGMA = 4.0
# What the host does per launched op (PyTorch's dispatch, Transformer Engine's and the framework's
# Python, the launch call) is the same software on either vendor's GPUs, unlike the kernels' rates.
# A vendor whose rows cannot move it (the MI325X rows are large dense layers, never host-bound) would
# keep the stdlib's bare-launch 10 us, which projected DeepSeek-V2-Lite on MI355X at MBS 1 3.6x too
# fast (docs/projection.md, rank fidelity). So a vendor's pool starts from, and is pulled toward, the
# value pooled over the rows of the vendors with more rows than it; their rows decide it where they can.
HOST_PARAMS = ("host_launch",)
# A kernel class a vendor's rows never run (grouped GEMMs without an MoE row) cannot be fitted from
# them, and the spec sheet's value is no penalty at all: ragged groups tile less well than one large
# GEMM on any tensor core. Such a parameter takes the value the larger vendors' rows measured, the
# best evidence there is, where the vendor's own rows cannot move it.
UNSEEN_PARAMS = ("grouped_gemm",)


@frozen
class Fit:
    gpu: str
    efficiency: Efficiency
    rows: int
    in_sample: tuple[float, ...]  # signed relative error per row, fitted on all rows
    cross_validated: tuple[float, ...]  # signed relative error per row, fitted without its fold
    row_ids: tuple[str, ...]
    folds: int

    @property
    def cv_mape(self) -> float:
        return float(np.mean(np.abs(self.cross_validated))) if self.cross_validated else math.nan

    @property
    def in_sample_mape(self) -> float:
        return float(np.mean(np.abs(self.in_sample))) if self.in_sample else math.nan


def _bounds(name: str) -> tuple[float, float]:
    return PARAMS[name] if name in PARAMS else FIT_ONLY[name]


def _to_unit(name: str, value: float) -> float:
    lo, hi = _bounds(name)
    if name in LOG_SCALE:
        # a starting value at or below 0 (a profile's zero knee) has no logarithm; it maps to the
        # low end, as any value below the bounds does
        lo, hi, value = math.log(lo), math.log(hi), math.log(min(max(value, lo), hi))
    x = min(max((value - lo) / (hi - lo), 1e-6), 1 - 1e-6)
    return math.log(x / (1 - x))


def _from_unit(name: str, z: float) -> float:
    lo, hi = _bounds(name)
    x = 1 / (1 + math.exp(-z))
    if name in LOG_SCALE:
        return math.exp(math.log(lo) + x * (math.log(hi) - math.log(lo)))
    return lo + x * (hi - lo)


def projected(run: Run, eff: Efficiency, settings: Settings) -> float:
    return projection_of(run, eff, settings).tokens_per_gpu


def projection_of(run: Run, eff: Efficiency, settings: Settings) -> Projection:
    """``run`` projected on its GPU with the efficiencies ``eff``."""
    assert run.cluster is not None and run.model is not None and run.cand is not None
    cluster = attrs.evolve(run.cluster, gpu=attrs.evolve(run.cluster.gpu, efficiency=eff))
    return project(run.model, cluster, run.cand, run.settings(settings), oracle=SimulateOracle(cluster))


def identifiable(runs: Sequence[Run]) -> list[str]:
    """The parameters these rows can move: the GEMM plateau (BF16, and FP8/NVFP4 through their
    ratios to it), a low-precision ratio only with rows of that dtype beside others (else the plateau
    and the ratio trade off) and the FP8 one only on a vendor whose kernels never measured it, buses
    only where a layout communicates over that link class."""
    names = ["gemm_max", "gemm_knee_flops", "attention", "hbm", "host_launch"]
    dtypes = {r.cand.precision for r in runs if r.cand}
    if "fp4" in dtypes and dtypes & {"bf16", "fp8"}:
        names.insert(1, "fp4_ratio")
    unmeasured = any(r.cluster and r.cluster.gpu.vendor not in FP8_RATIO_MEASURED for r in runs)
    if {"bf16", "fp8"} <= dtypes and unmeasured:
        names.insert(1, "fp8_ratio")
    if any(r.cluster and r.cluster.world > 1 for r in runs):
        names += ["scale_up_bus", "overlap_slowdown"]
    if any(r.cluster and r.cluster.world > r.cluster.domain for r in runs):
        names.append("scale_out_bus")
    if any(r.model and r.model.moe for r in runs):
        names.append("grouped_gemm")
    if any(r.model and r.model.attention_sinks for r in runs):
        names.append("sink_attention")
    if any(r.model and r.model.mamba for r in runs):
        names.append("ssm_scan")
    return names


def _value(eff: Efficiency, name: str) -> float:
    if name in RATIOS:
        plateau, of = RATIOS[name]
        return float(getattr(eff, plateau)) / float(getattr(eff, of))
    return float(getattr(eff, name))


def _apply(base: Efficiency, values: dict[str, float]) -> Efficiency:
    """``base`` with fitted values; the FP8 plateau follows the BF16 one and the NVFP4 plateau the
    FP8 one, each through its ratio (fitted, or the base profile's)."""
    values = dict(values)
    for ratio_name, (plateau, of) in RATIOS.items():
        ratio = values.pop(ratio_name, _value(base, ratio_name))
        lo, hi = PARAMS[plateau]
        values[plateau] = min(max(values.get(of, float(getattr(base, of))) * ratio, lo), hi)
    return attrs.evolve(base, **values)


def _fit(runs: Sequence[Run], names: Sequence[str], center: np.ndarray, sigma: float,
         base_of: Callable[[Run], Efficiency], settings: Settings, iterations: int) -> dict[str, float]:
    """Levenberg-Marquardt on log(projected / measured) over ``runs``, each projected on its own base
    profile with the shared values, and a Gaussian prior of ``sigma`` (logit space) around ``center``."""

    def values(vec: np.ndarray) -> dict[str, float]:
        return {n: _from_unit(n, float(v)) for n, v in zip(names, vec, strict=True)}

    def full(vec: np.ndarray) -> np.ndarray:
        vals = values(vec)
        res = [math.log(projected(r, _apply(base_of(r), vals), settings) / (r.measured or 1.0)) for r in runs]
        return np.concatenate([np.array(res), (vec - center) / sigma])

    z = center.copy()
    r = full(z)
    lam = 1e-2
    for _ in range(iterations):
        jac = np.empty((len(r), len(z)))
        for j in range(len(z)):
            step = np.zeros_like(z)
            step[j] = 1e-3
            jac[:, j] = (full(z + step) - r) / 1e-3
        grad = jac.T @ r
        hess = jac.T @ jac
        improved = False
        for _ in range(8):
            delta = np.linalg.solve(hess + lam * np.diag(np.diag(hess) + 1e-9), -grad)
            trial = z + delta
            rt = full(trial)
            if rt @ rt < r @ r:
                z, r, lam, improved = trial, rt, max(lam / 3, 1e-6), True
                break
            lam *= 4
        if not improved or float(np.max(np.abs(delta))) < 1e-4:
            break
    return values(z)


# Parameters one class of rows alone identifies, fitted after the shared ones and from that class
# only: a hybrid model's Mamba scan is the one layer kind no other row has, and fitted jointly its
# rows also pushed what else they miss into the shared parameters (the pooled HBM efficiency fell
# from 0.87 to 0.72), which moved every other model's projection on a GPU the pool had not seen.
CLASS_PARAMS: dict[str, Callable[[Run], bool]] = {"ssm_scan": lambda r: bool(r.model and r.model.hybrid)}


def _fit_staged(runs: Sequence[Run], names: Sequence[str], center: Callable[[str], float], sigma: float,
                base_of: Callable[[Run], Efficiency], settings: Settings, iterations: int) -> dict[str, float]:
    """``_fit`` in two stages: the shared parameters on the rows outside every class of
    ``CLASS_PARAMS``, then each class parameter on its class's rows with the shared values fixed."""
    classes = [n for n in names if n in CLASS_PARAMS]
    outside = [r for r in runs if not any(CLASS_PARAMS[n](r) for n in CLASS_PARAMS)]
    movable = set(identifiable(outside)) if classes else set(names)
    shared = [n for n in names if n not in CLASS_PARAMS and n in movable]
    values: dict[str, float] = {}
    if shared and (outside or not classes):
        z0 = np.array([_to_unit(n, center(n)) for n in shared])
        values = _fit(outside if classes else runs, shared, z0, sigma, base_of, settings, iterations)
    fixed = dict(values)

    def with_shared(run: Run) -> Efficiency:
        return _apply(base_of(run), fixed)

    for name in classes:
        members = [r for r in runs if CLASS_PARAMS[name](r)]
        z0 = np.array([_to_unit(name, center(name))])
        values.update(_fit(members, [name], z0, sigma, with_shared, settings, iterations))
    return values


def fit_efficiency(runs: Sequence[Run], base: Efficiency, settings: Settings | None = None,
                   iterations: int = 25, center: Efficiency | None = None,
                   sigma: float = PRIOR_SIGMA) -> Efficiency:
    """One profile's parameters: Levenberg-Marquardt on log(projected / measured) with a prior of
    ``sigma`` toward ``center`` (default: ``base`` itself)."""
    names = identifiable(runs)
    mid = center or base
    # what these rows cannot move keeps the center's value: the vendor pool's, when there is one
    return _apply(mid, _fit_staged(runs, names, lambda n: _value(mid, n), sigma, lambda _r: mid,
                                   settings or Settings(), iterations))


def fit_pooled(runs: Sequence[Run], settings: Settings | None = None, iterations: int = 25,
               borrowed: Mapping[str, float] | None = None) -> dict[str, float]:
    """One set of values shared by every profile in ``runs`` (each row on its own GPU's peaks and
    bandwidths): the efficiencies a GPU without rows of its own would get from the others. The
    start and the weak prior are the mean of the profiles' own values (logit space), or for a
    parameter in ``borrowed`` that value (``vendor_pool``)."""
    # calibrate's fit on all rows and vendor_pools ask for the same pool: fit it once
    return dict(_fit_pooled(tuple(runs), settings or Settings(), iterations, tuple(sorted((borrowed or {}).items()))))


def vendor_pool(by_vendor: Mapping[str, Sequence[Run]], vendor: str, settings: Settings | None = None) -> dict[str, float]:
    """The values pooled over ``vendor``'s rows, its ``HOST_PARAMS`` started from and pulled toward
    the values pooled over the rows of every vendor with more rows (the host's software is shared;
    see ``HOST_PARAMS``), and its ``UNSEEN_PARAMS`` that none of its rows can move taken from them.
    The vendor with the most rows borrows nothing; a vendor without rows has
    no pool."""
    mine = by_vendor.get(vendor, ())
    larger = {v for v, rows in by_vendor.items() if v != vendor and len(rows) > len(mine)}
    borrowed: dict[str, float] = {}
    unseen: dict[str, float] = {}
    if larger and mine:
        # built as _fit_profiles builds a vendor's rows, so a vendor alone among the larger ones is a cache hit
        donors = [r for v, rows in by_vendor.items() if v in larger for r in rows]
        donor = fit_pooled(donors, settings)
        borrowed = {n: donor[n] for n in HOST_PARAMS if n in donor}
        own = set(identifiable(mine))
        unseen = {n: v for n, v in donor.items() if n in UNSEEN_PARAMS and n not in own}
    return {**unseen, **fit_pooled(mine, settings, borrowed=borrowed)} if mine else {}


@functools.lru_cache(maxsize=16)
def _fit_pooled(runs: tuple[Run, ...], settings: Settings, iterations: int,
                borrowed: tuple[tuple[str, float], ...] = ()) -> tuple[tuple[str, float], ...]:
    names = identifiable(runs)
    bases = {r.cluster.gpu.name: r.cluster.gpu.efficiency for r in runs if r.cluster}
    lent = dict(borrowed)

    def mean_unit(name: str) -> float:
        if name in lent:
            return lent[name]
        return _from_unit(name, float(np.mean([_to_unit(name, _value(b, name)) for b in bases.values()])))

    def base_of(run: Run) -> Efficiency:
        assert run.cluster is not None
        return run.cluster.gpu.efficiency

    return tuple(_fit_staged(runs, names, mean_unit, PRIOR_SIGMA, base_of, settings, iterations).items())


def layout_key(run: Run) -> str:
    assert run.model is not None and run.cand is not None and run.cluster is not None
    return f"{run.cluster.gpu.name}|{run.model.name}|{run.cluster.world}|{run.cand.label()}"


def _by_vendor(by_gpu: Mapping[str, Sequence[Run]]) -> dict[str, list[Run]]:
    """Every row by its GPU's vendor, in ``by_gpu``'s order (a pool's sums run in row order)."""
    out: dict[str, list[Run]] = {}
    for rows in by_gpu.values():
        for r in rows:
            if r.cluster:
                out.setdefault(r.cluster.gpu.vendor, []).append(r)
    return out


def _fit_profiles(by_gpu: Mapping[str, list[Run]], bases: Mapping[str, Efficiency], pool_sigma: float | None,
                  settings: Settings, only: Collection[str] | None = None) -> dict[str, Efficiency]:
    """Per-profile fits; with ``pool_sigma`` each is pulled toward the values pooled over the rows of
    every profile of its vendor (partial pooling), else toward its own base profile. Pools stop at the
    vendor because the software stack sets these efficiencies (cuBLAS and Transformer Engine on one
    side, hipBLASLt and ROCm's kernels on the other): NVIDIA's FP8/BF16 plateau ratio says nothing
    about an MI325X. ``only``: fit these profiles alone (and their vendors' pools)."""
    vendor_of = {g: rows[0].cluster.gpu.vendor for g, rows in by_gpu.items() if rows and rows[0].cluster}
    wanted = sorted(only) if only is not None else list(by_gpu)
    pooled: dict[str, dict[str, float]] = {}
    if pool_sigma is not None:
        by_vendor = _by_vendor(by_gpu)
        for vendor in sorted({vendor_of[g] for g in wanted if g in vendor_of}):
            pooled[vendor] = vendor_pool(by_vendor, vendor, settings)
    out = {}
    for gpu in wanted:
        rows = by_gpu[gpu]
        pool = pooled.get(vendor_of.get(gpu, ""))
        if not rows:
            out[gpu] = bases[gpu]
        elif pool is None or pool_sigma is None:
            out[gpu] = fit_efficiency(rows, bases[gpu], settings)
        else:
            out[gpu] = fit_efficiency(rows, bases[gpu], settings, center=_apply(bases[gpu], pool), sigma=pool_sigma)
    return out


def calibrate(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency], folds: int = 5, seed: int = 0,
              pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None,
              progress: Callable[[str], None] | None = None) -> list[Fit]:
    """Fit every profile on all its rows, and k-fold cross-validate: each row projected by fits
    (pooled ones included) that never saw its fold. Folds are drawn over distinct layouts: rows that
    repeat one layout (the same recipe re-measured in later releases) share a fold, so a held-out row
    never has its twin in the training folds."""
    return calibrate_shuffles(by_gpu, bases, folds, (seed,), pool_sigma, settings, progress)[0]


def calibrate_shuffles(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency], folds: int,
                       seeds: Sequence[int], pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None,
                       progress: Callable[[str], None] | None = None) -> list[list[Fit]]:
    """``calibrate`` once per fold shuffle in ``seeds``; the fit on all rows, which no shuffle
    changes, is made once."""
    settings = settings or Settings()
    groups = {g: list(rows) for g, rows in sorted(by_gpu.items())}
    full_fit = {f.gpu: f for f in fit_all_rows(groups, bases, pool_sigma, settings)}
    out = []
    for seed in seeds:
        keys = sorted({layout_key(r) for rows in groups.values() for r in rows})
        random.Random(seed).shuffle(keys)
        # stratified by profile: each GPU's layouts are dealt round-robin over the folds (a stable sort
        # keeps the shuffle inside a GPU), so a GPU with k layouts or more is in every fold and one
        # with three never has two of them held out together
        keys.sort(key=lambda key: key.split("|", 1)[0])
        k = max(2, min(folds, len(keys)))
        fold_of = {key: n % k for n, key in enumerate(keys)}
        cv: dict[str, float] = {}
        for f in range(k):
            if progress:
                progress(f"fold {f + 1}/{k}" + (f" (shuffle {seed})" if len(seeds) > 1 else ""))
            train = {g: [r for r in rows if fold_of[layout_key(r)] != f] for g, rows in groups.items()}
            effs = _fit_profiles(train, bases, pool_sigma, settings)
            for g, rows in groups.items():
                for r in rows:
                    if fold_of[layout_key(r)] == f:
                        cv[r.id] = projected(r, effs[g], settings) / (r.measured or 1.0) - 1
        out.append([attrs.evolve(full_fit[g], cross_validated=tuple(cv[r.id] for r in rows),
                                 folds=len({fold_of[layout_key(r)] for r in rows}))
                    for g, rows in groups.items()])
    return out


def fit_all_rows(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency],
                 pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None) -> list[Fit]:
    """Every profile fitted on all its rows (and, pooling, toward its vendor's pool of all its rows),
    by GPU name, with its in-sample errors: the efficiencies ``calibrate`` ships, without the folds
    (no cross-validated errors, ``folds`` 0). A tenth of ``calibrate``'s work, so a test refits every
    shipped profile with it (tests/project/test_calibrated_reproduces.py)."""
    settings = settings or Settings()
    groups = {g: list(rows) for g, rows in sorted(by_gpu.items())}
    effs = _fit_profiles(groups, bases, pool_sigma, settings)
    return [Fit(g, effs[g], len(rows), tuple(projected(r, effs[g], settings) / (r.measured or 1.0) - 1 for r in rows),
                (), tuple(r.id for r in rows), 0) for g, rows in groups.items()]


def hold_out_groups(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency], min_size: int,
                    pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None,
                    progress: Callable[[str], None] | None = None, gpus: Collection[str] | None = None,
                    by_layout: bool = False) -> dict[str, float]:
    """Leave one group out: each (model, GPU, precision) group of at least ``min_size`` rows held out
    whole, its profile (and its vendor's pool) fitted on every other row, and all its rows projected
    by that one fit. Signed error per row of those groups. This is how a search ranks: every
    candidate of a space by one profile that has never seen them. k-fold projections of one group
    come from up to k different fits, whose differences can swap candidates that one fit orders.
    ``by_layout``: the groups of ``validate``'s rank over distinct layouts instead, (model, GPU,
    dtype) with at least ``min_size`` layouts. ``gpus``: hold out only the groups on these profiles."""

    def group(r: Run) -> str:
        return " / ".join((r.group[0], r.group[1], r.cand.precision if r.cand else "") if by_layout else r.group)

    def enough(rows: list[Run]) -> bool:
        return (len({layout_key(r) for r in rows}) if by_layout else len(rows)) >= min_size

    return _held_out(by_gpu, bases, group, enough, gpus, pool_sigma, settings, progress, "group")


def hold_out_models(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency],
                    pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None,
                    progress: Callable[[str], None] | None = None,
                    gpus: Collection[str] | None = None) -> dict[str, float]:
    """Leave one model out: every row of a model card, on every GPU, held out at once; the profiles
    (and pools) are fitted on the other models' rows and project it. What a model no calibration
    has seen can expect. Signed error per row; ``gpus``: only the rows on these profiles."""
    return _held_out(by_gpu, bases, lambda r: r.group[0], lambda _rows: True, gpus, pool_sigma, settings,
                     progress, "model")


def hold_out_sources(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency],
                     pool_sigma: float | None = POOL_SIGMA, settings: Settings | None = None,
                     progress: Callable[[str], None] | None = None,
                     gpus: Collection[str] | None = None) -> dict[str, float]:
    """Leave one source out: every row of a source (a vendor's performance table, a framework's
    benchmarks, a paper), on every GPU, held out at once and projected by fits of the other sources'
    rows. Rows of one source share a software stack, a way of measuring and a kind of recipe, so this
    is what a band can expect of a new kind of data, where k-fold folds only ever hide rows whose
    siblings stay in. Signed error per row; ``gpus``: only the rows on these profiles."""
    return _held_out(by_gpu, bases, lambda r: r.source, lambda _rows: True, gpus, pool_sigma, settings,
                     progress, "source")


def _held_out(by_gpu: Mapping[str, Sequence[Run]], bases: Mapping[str, Efficiency], key: Callable[[Run], str],
              enough: Callable[[list[Run]], bool], gpus: Collection[str] | None, pool_sigma: float | None,
              settings: Settings | None, progress: Callable[[str], None] | None, noun: str) -> dict[str, float]:
    """The rows on ``gpus`` grouped by ``key``; each group that is ``enough`` left out at once, the
    profiles its rows sit on (and their vendors' pools) fitted on every other row, and its rows
    projected by those fits. Signed error per row."""
    settings = settings or Settings()
    sets: dict[str, list[Run]] = {}
    gpu_of: dict[str, str] = {}
    for g, rows in sorted(by_gpu.items()):
        for r in rows:
            if gpus is None or g in gpus:
                sets.setdefault(key(r), []).append(r)
            gpu_of[r.id] = g
    held = {name: rows for name, rows in sorted(sets.items()) if enough(rows)}
    out: dict[str, float] = {}
    for n, (name, rows) in enumerate(held.items()):
        if progress:
            progress(f"{noun} {n + 1}/{len(held)}: {name}")
        gone = {r.id for r in rows}
        train = {g: [r for r in rs if r.id not in gone] for g, rs in by_gpu.items()}
        if not any(train.values()):
            # nothing else to fit on: its rows would be projected on the starting profiles, whose error
            # the fit has already taken out (a site's runs of one source), not by fits of other data
            continue
        effs = _fit_profiles(train, bases, pool_sigma, settings, only={gpu_of[r.id] for r in rows})
        for r in rows:
            out[r.id] = projected(r, effs[gpu_of[r.id]], settings) / (r.measured or 1.0) - 1
    return out


def transfer(by_gpu: Mapping[str, Sequence[Run]], unseen: Sequence[Run] = (), settings: Settings | None = None,
             progress: Callable[[str], None] | None = None) -> dict[str, tuple[tuple[str, float], ...]]:
    """How the vendor pool carries to a GPU it never saw: each GPU's rows projected with values
    pooled over the rows of the other GPUs of its vendor (leave one GPU out), and ``unseen`` rows
    (GPUs with too few rows to fit) with the pool of all of their vendor's rows. Signed errors per row,
    by GPU; a GPU alone in its vendor has no pool to borrow from and is left out."""
    settings = settings or Settings()

    def vendor(run: Run) -> str:
        return run.cluster.gpu.vendor if run.cluster else ""

    def errors(rows: Sequence[Run], train: list[Run]) -> tuple[tuple[str, float], ...]:
        pool = fit_pooled(train, settings)
        return tuple((r.id, projected(r, _apply(r.cluster.gpu.efficiency, pool), settings) / (r.measured or 1.0) - 1)
                     for r in rows if r.cluster)

    out: dict[str, tuple[tuple[str, float], ...]] = {}
    for gpu, rows in sorted(by_gpu.items()):
        train = [r for g, rs in by_gpu.items() if g != gpu for r in rs if rows and vendor(r) == vendor(rows[0])]
        if rows and train:
            if progress:
                progress(f"transfer: {gpu}")
            out[gpu] = errors(rows, train)
    for gpu in sorted({r.cluster.gpu.name for r in unseen if r.cluster}):
        rows = [r for r in unseen if r.cluster and r.cluster.gpu.name == gpu]
        train = [r for rs in by_gpu.values() for r in rs if vendor(r) == vendor(rows[0])]
        if train:
            out[gpu] = errors(rows, train)
    return out


def sibling_transfer(by_gpu: Mapping[str, Sequence[Run]], fitted: Mapping[str, Efficiency],
                     settings: Settings | None = None) -> dict[str, tuple[str, tuple[tuple[str, float], ...]]]:
    """The other fallback for a GPU without runs: the fitted efficiencies of its nearest sibling (the
    same vendor's fitted profile whose BF16 peak is closest; ties by name), applied to its own peaks
    and bandwidths. Each GPU's rows projected that way, by GPU: (the sibling, signed errors)."""
    settings = settings or Settings()
    gpus = {g: rows[0].cluster.gpu for g, rows in by_gpu.items() if rows and rows[0].cluster}
    out = {}
    for g, rows in sorted(by_gpu.items()):
        if g not in gpus:
            continue
        siblings = [s for s in fitted if s != g and s in gpus and gpus[s].vendor == gpus[g].vendor]
        if not siblings:
            continue
        near = min(siblings, key=lambda s: (abs(math.log(gpus[s].peak_bf16 / gpus[g].peak_bf16)), s))
        out[g] = (near, tuple((r.id, projected(r, fitted[near], settings) / (r.measured or 1.0) - 1) for r in rows))
    return out


def vendor_pools(by_gpu: Mapping[str, Sequence[Run]], others: Mapping[str, Gpu],
                 settings: Settings | None = None) -> dict[str, Efficiency]:
    """Profiles for GPUs without rows of their own (``others``): each base profile with the values
    pooled over every row of its vendor (``transfer`` measures how well such values carry to a GPU
    the pool never saw)."""
    by_vendor = _by_vendor(by_gpu)
    out = {}
    for vendor in sorted({g.vendor for g in others.values()}):
        values = vendor_pool(by_vendor, vendor, settings)
        if values:
            out.update({name: _apply(g.efficiency, values) for name, g in sorted(others.items()) if g.vendor == vendor})
    return out


def calibrate_gpu(runs: Sequence[Run], base: Efficiency, folds: int = 5, seed: int = 0,
                  settings: Settings | None = None,
                  progress: Callable[[str], None] | None = None) -> Fit:
    """One profile alone (no pooling): its fit and its k-fold cross-validated errors."""
    gpu = runs[0].cluster.gpu.name if runs and runs[0].cluster else ""
    return calibrate({gpu: runs}, {gpu: base}, folds, seed, None, settings, progress)[0]


def to_prx(fits: Sequence[Fit], source: str, imports: dict[str, tuple[str, str]],
           pooled: Mapping[str, Efficiency] | None = None,
           provenance: Mapping[str, Provenance] | None = None, notes: Sequence[str] | None = None,
           suffix: str = "_calibrated") -> str:
    """Calibrated profiles in the language: ``gpu X_calibrated = X_spec { efficiency { ... } provenance { ... } }``.

    ``imports`` maps a GPU name to the stdlib module and definition it derives from
    (``("hardware.nvidia_spec", "h100_sxm_spec")``: the spec sheet); ``pooled`` gives GPUs
    without rows of their own their vendor's pooled values (``vendor_pools``); ``provenance`` each
    profile's evidence and error band (``project.provenance``); ``suffix`` ends each profile's name (a site's
    own fit: ``_site``); ``notes`` the header's comment lines
    (``project.calibration_notes.header``), else a short one naming ``source``."""
    pooled = pooled or {}
    provenance = provenance or {}
    lines = list(notes) if notes is not None else [
        "# Calibrated hardware profiles written by `primusc calibrate`.",
        f"# Fit on: {source}",
        "# Each profile: Levenberg-Marquardt on log(projected/measured tokens/s/GPU) over that GPU's",
        "# rows, with a prior toward the values fitted on its vendor's rows (partial pooling); error",
        "# is k-fold cross-validated (CV), each row projected with parameters (pooled ones included)",
        "# fitted without its fold.",
    ]
    cv = [abs(e) for fit in fits for e in fit.cross_validated]
    if cv and notes is None:
        lines.append(f"# All profiles: {len(cv)} rows, cross-validated MAPE {sum(cv) / len(cv):.1%}.")
    lines.append("")
    modules: dict[str, list[str]] = {}
    for gpu in [f.gpu for f in fits] + list(pooled):
        module, base = imports[gpu]
        modules.setdefault(module, []).append(base)
    for module, names in sorted(modules.items()):
        lines.append(f"import {module} ({', '.join(sorted(names))})")
    lines.append("")
    profiles = [(f.gpu, f.efficiency, f"{f.rows} rows, in-sample MAPE {f.in_sample_mape:.1%}, "
                 f"{f.folds}-fold CV MAPE {f.cv_mape:.1%}") for f in fits]
    profiles += [(gpu, eff, "no rows of its own to fit: its vendor's pooled values") for gpu, eff in pooled.items()]
    for gpu, eff, note in profiles:
        body = "; ".join(f"{n} = {text.fitted(n, getattr(eff, n))}" for n in PARAMS)
        prov = (" provenance { " + "; ".join(f"{k} = {v}" for k, v in text.provenance_fields(provenance[gpu])) + " }"
                if gpu in provenance else "")
        lines.append(f"# {gpu}: {note}")
        lines.append(f"gpu {gpu}{suffix} = {imports[gpu][1]} {{ efficiency {{ {body} }}{prov} }}")
        lines.append("")
    from primus_lang.syntax import format_source

    return format_source("\n".join(lines), "calibrated.prx")
