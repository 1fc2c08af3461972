"""``primusc calibrate --runs FILE.yaml [--out FILE.prx] [--folds K]``: fit efficiency parameters per
hardware profile to measured runs, report the k-fold cross-validated error, write profiles."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from primus_lang.commands._corpus import RUNS_HELP, add_corpus_arguments, runs_inputs, runs_of
from primus_lang.commands._options import natural
from primus_lang.diagnostics import CompileError, Diagnostic, render
from primus_lang.diagnostics.codes_projection import BAD_FOLDS, NO_RUNS, SITE_FIT_WORSE
from primus_lang.ir import serialize

if TYPE_CHECKING:
    from primus_lang.ir import Efficiency, Gpu, Provenance
    from primus_lang.validate import Fit, Run

POOL_SIGMA = 4.0  # primus_lang.validate.calibrate.POOL_SIGMA, kept here so --help needs no projection import
# a site fit whose held-out Spearman in a group falls this far below the shipped profile's is said (W6014):
# a fifth of the scale, more than a swap of two neighbours in a group of five (0.1)
RANK_WORSE = 0.2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from primus_lang.commands._options import positive

    p = sub.add_parser("calibrate", help="fit hardware efficiency parameters to measured runs (k-fold CV)")
    p.add_argument("--runs", help=RUNS_HELP)
    add_corpus_arguments(p)
    p.add_argument("--out", help="write the calibrated profiles to this .prx file (kept if it exists, unless --force)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--folds", type=natural, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--seed", type=natural, default=0, help="shuffle of the layouts into folds (default 0)")
    p.add_argument("--repeats", type=natural, default=1,
                   help="repeat the cross-validation with seeds SEED, SEED+1, ... and report each MAPE (default 1)")
    p.add_argument("--gpu", action="append", help="calibrate only this profile (repeatable)")
    p.add_argument("--min-rows", type=natural, default=3, help="skip profiles with fewer rows (default 3)")
    p.add_argument("--pool-sigma", type=positive, default=POOL_SIGMA,
                   help=f"pull of each profile toward the values pooled over all profiles, logit space (default {POOL_SIGMA})")
    p.add_argument("--no-pool", action="store_true", help="fit each profile alone, with a weak prior to its base")
    p.add_argument("--transfer", action="store_true",
                   help="also project each GPU's rows with values pooled over the other GPUs of its vendor "
                        "(leave one GPU out), and GPUs with too few rows with their vendor's pool")
    p.add_argument("--hold-out-groups", action="store_true",
                   help="also rank each (model, GPU, precision) group of >= 4 rows with one fit that never saw "
                        "any of its rows (leave one group out), as a search ranks its candidates")
    p.add_argument("--hold-out-models", action="store_true",
                   help="also project each model's rows, on every GPU, with fits that never saw that model "
                        "(leave one model out): the error a new model can expect")
    p.add_argument("--hold-out-sources", action="store_true",
                   help="also project each source's rows (a vendor's table, a framework's benchmarks, a paper), on "
                        "every GPU, with fits that never saw that source, and count those inside the band their "
                        "profile ships with: how the bands hold on a new kind of data")
    p.add_argument("--json", action="store_true", help="print the fits as JSON")
    p.set_defaults(func=run)


@frozen
class _Corpus:
    """The rows to fit, by GPU: ``kept`` the GPUs with enough rows to fit, ``bases`` their stdlib efficiency."""

    source: str
    runs: list[Run]
    by_gpu: dict[str, list[Run]]
    kept: dict[str, list[Run]]
    bases: dict[str, Efficiency]


@frozen
class _Outcome:
    """What ``calibrate`` measured, for the JSON or the text report."""

    runs: list[Run]
    fits: list[Fit]  # the first shuffle's
    seeds: range
    by_seed: list[float]  # cross-validated MAPE per shuffle
    ranks: dict[str, object]  # cross-validated rank agreement of the first shuffle
    shuffled: list[dict[str, object]]  # the same, per shuffle
    bands: dict[str, object]
    moved: dict[str, tuple[tuple[str, float], ...]]
    siblings: dict[str, tuple[str, tuple[tuple[str, float], ...]]]
    held: dict[str, object]
    unseen: dict[str, float]
    sources: dict[str, Any]
    started: dict[str, Efficiency]  # each fitted GPU's efficiencies before the fit
    wrote: tuple[str, ...] = ()  # the profiles ``--out`` holds, by name
    shipped: dict[str, float] = field(factory=dict)  # each row's error on the profiles the fit started from


def run(args: argparse.Namespace) -> int:
    if args.folds < 2:
        raise CompileError(Diagnostic(BAD_FOLDS, f"`--folds {args.folds}` is below 2"))
    if args.out:
        from primus_lang.commands._options import check_outputs
        from primus_lang.outputs import refuse_collisions

        # refused before the fit, not after it
        refuse_collisions({"--out": Path(args.out)}, runs_inputs(args))
        check_outputs(None, {"out": Path(args.out)}, args.force)
    # a site's own rows alone refine the shipped profiles (what they cannot move keeps what the published
    # runs measured); a refit on the bundled corpus starts from the spec sheets, as the shipped ones did
    read, source = runs_of(args, _site_only(args))
    runs = [r for r in read if not r.skip]
    if not runs:
        raise CompileError(Diagnostic(NO_RUNS, f"no row of `{source}` can be projected"))
    corpus = _corpus(args, runs, source)
    _check_gpus(args, corpus)
    outcome = _calibrate(args, corpus)
    _warn_if_worse(args, outcome)
    if args.json:
        print(serialize.to_json(_json_report(args, outcome)))
    else:
        _print_report(args, outcome)
    return 0


def _warn_if_worse(args: argparse.Namespace, o: _Outcome) -> None:
    """W6014 where a fit on the site's rows alone projects them worse held out than the shipped profiles
    do (``bands.spec`` is the shipped profiles' error on the same rows in that mode)."""
    shipped = o.bands.get("spec") if _site_only(args) else None
    if not isinstance(shipped, dict) or not shipped.get("rows"):
        return
    cv = [e for f in o.fits for e in f.cross_validated]
    said = []
    if o.by_seed[0] > shipped["error"]:
        said.append(Diagnostic(SITE_FIT_WORSE, f"the fit on {len(cv)} of your runs projects them {o.by_seed[0]:.1%} "
                               f"off held out, the shipped calibrated profiles {shipped['error']:.1%} on the same runs",
                               help="keep the shipped profile, add runs, or fit them beside the published corpus "
                                    "(`--with-bundled`)"))
    # a search compares candidates of one group: a fit nearer in level can still order them worse
    mine, theirs = o.ranks.get("spearman_by_group"), _ranks_of(o.shipped, o.runs).get("spearman_by_group")
    worse = {g: (r, theirs[g]) for g, r in (mine.items() if isinstance(mine, dict) else ())
             if isinstance(theirs, dict) and r is not None and theirs.get(g) is not None and theirs[g] - r >= RANK_WORSE}
    if worse:
        g, (r, t) = next(iter(worse.items()))
        said.append(Diagnostic(SITE_FIT_WORSE, f"the fit on your runs orders {len(worse)} group(s) of them worse held "
                               f"out than the shipped calibrated profiles: `{g}` at Spearman {r:+.2f} against {t:+.2f}",
                               help="a search ranks candidates by that order: keep the shipped profile for ranking, add "
                                    "runs that vary the recipe, or fit them beside the published corpus "
                                    "(`--with-bundled`)"))
    if said:
        print(render(said, args.error_format), file=sys.stderr)


def _corpus(args: argparse.Namespace, runs: list[Run], source: str) -> _Corpus:
    from primus_lang.validate import gpu_key

    by_gpu: dict[str, list[Run]] = {}
    for r in runs:
        by_gpu.setdefault(gpu_key(r), []).append(r)
    kept = {g: rows for g, rows in by_gpu.items() if len(rows) >= args.min_rows}
    bases = {g: rows[0].cluster.gpu.efficiency for g, rows in kept.items() if rows[0].cluster}
    return _Corpus(source, runs, by_gpu, kept, bases)


def _site_only(args: argparse.Namespace) -> bool:
    """A fit on the user's rows alone (`--runs` without `--with-bundled`)."""
    return bool(args.runs) and not args.with_bundled


def _check_gpus(args: argparse.Namespace, corpus: _Corpus) -> None:
    """Each `--gpu` names a profile the runs can fit: a name that fits nothing is a mistake to say, not
    an empty file to write."""
    import difflib

    if not corpus.kept:  # a fit of nothing wrote a file of comments that no space could import
        counts = ", ".join(f"{g} {len(rows)}" for g, rows in sorted(corpus.by_gpu.items()))
        raise CompileError(Diagnostic(NO_RUNS, f"no GPU has the {args.min_rows} rows a fit needs (rows by GPU: {counts})",
                                      help="add runs of one GPU, lower --min-rows, or fit them beside the published "
                                           "corpus (`--with-bundled`)"))
    for name in args.gpu or ():
        if name in corpus.kept:
            continue
        rows = len(corpus.by_gpu.get(name, ()))
        near = [g for g in sorted(corpus.by_gpu) if g.startswith(name)] or \
            difflib.get_close_matches(name, sorted(corpus.by_gpu), n=1, cutoff=0.5)
        why = (f"its {rows} row(s) are under --min-rows {args.min_rows}" if rows else
               "no row of the runs is on it" + (f" (did you mean `{near[0]}`?)" if near else ""))
        raise CompileError(Diagnostic(NO_RUNS, f"--gpu `{name}` has nothing to fit: {why}",
                                      help="the profiles the runs can fit: " + (", ".join(sorted(corpus.kept)) or "none")))


def _pool(args: argparse.Namespace) -> float | None:
    pool: float | None = None if args.no_pool else args.pool_sigma
    return pool


def _calibrate(args: argparse.Namespace, corpus: _Corpus) -> _Outcome:
    """The fits, their cross-validation, and every transfer and hold-out the arguments ask for; writes
    ``--out`` once the profiles and their bands are known."""
    from primus_lang.validate import calibrate_shuffles

    kept, bases, runs = corpus.kept, corpus.bases, corpus.runs
    pool = _pool(args)
    seeds = range(args.seed, args.seed + max(args.repeats, 1))

    def log(message: str) -> None:
        if not args.json:
            print(message, file=sys.stderr)

    repeats = [[f for f in shuffle if not args.gpu or f.gpu in args.gpu]
               for shuffle in calibrate_shuffles(kept, bases, args.folds, seeds, pool_sigma=pool, progress=log)]
    fits = repeats[0]
    by_seed = [_mape(r) for r in repeats]
    others = _unfitted_gpus(fits)
    # a site's fit writes the profiles its rows fit, not the other GPUs pooled from them
    pooling = pool is not None and not args.gpu and not _site_only(args)
    moved: dict[str, tuple[tuple[str, float], ...]] = {}
    # the pooled profiles' error band is the measured leave-one-GPU-out transfer
    if args.transfer or (pooling and others):
        from primus_lang.validate import transfer

        few = [r for g, rows in corpus.by_gpu.items() if g not in kept for r in rows]
        moved = transfer(kept, few, progress=log)
    siblings: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {}
    if args.transfer:
        from primus_lang.validate import sibling_transfer

        siblings = sibling_transfer(corpus.by_gpu, {f.gpu: f.efficiency for f in fits})
    from primus_lang.validate import host_shares, provenances, spec_errors

    spec = spec_errors([r for rows in kept.values() for r in rows])
    # runs of a source projected by fits on the other sources: the far band, what a kind of run no
    # fit saw can expect (minutes of refits: run where the profiles are written or it is asked for)
    unseen_sources: dict[str, float] = {}
    if args.out or args.hold_out_sources:
        from primus_lang.validate import hold_out_sources

        unseen_sources = hold_out_sources(kept, bases, pool, progress=log, gpus=args.gpu)
    # which rows the host bounds, on the profiles as fitted: what `host_launch` was measured on
    host = host_shares(kept, {f.gpu: f.efficiency for f in fits})
    provs, bands = provenances(fits, runs, [(g, gpu.vendor) for g, gpu in others.items()] if pooling else [],
                               moved, spec, unseen_sources, host)
    wrote: tuple[str, ...] = ()
    if args.out:
        wrote = _write_profiles(args, corpus, fits, others if pooling else None, provs, moved, bands)
    held = _held_out_groups(args, corpus, log) if args.hold_out_groups else {}
    unseen: dict[str, float] = {}
    if args.hold_out_models:
        from primus_lang.validate import hold_out_models

        unseen = hold_out_models(kept, bases, pool, progress=log, gpus=args.gpu)
    sources = _held_out_sources(corpus, provs, unseen_sources, host) if args.hold_out_sources and unseen_sources else {}
    # rank agreement moves with the folds as much as MAPE does: every shuffle's, not only the first
    return _Outcome(runs, fits, seeds, by_seed, _cv_ranks(fits, runs), [_cv_ranks(r, runs) for r in repeats],
                    bands, moved, siblings, held, unseen, sources, dict(bases), wrote, dict(spec))


def _unfitted_gpus(fits: list[Fit]) -> dict[str, Gpu]:
    """The corpus's GPUs without a fit of their own: they get their vendor's pooled values."""
    from primus_lang.validate import GPU_NAMES, stdlib_definitions

    gpus = stdlib_definitions()[1]
    return {g: gpus[g] for g in sorted(set(GPU_NAMES.values())) if g in gpus and g not in {f.gpu for f in fits}}


def _write_profiles(args: argparse.Namespace, corpus: _Corpus, fits: list[Fit], others: dict[str, Gpu] | None,
                    provs: dict[str, Provenance], moved: dict[str, tuple[tuple[str, float], ...]],
                    bands: dict[str, object]) -> tuple[str, ...]:
    """``--out``: the fitted profiles, and with ``others`` (when pooling) their vendors' pooled ones; their
    names, fitted first."""
    from primus_lang.outputs import write_file
    from primus_lang.validate import to_prx, vendor_pools

    pooled = vendor_pools(corpus.kept, others) if others is not None else {}
    imports = {g: _module_of(g) for g in [f.gpu for f in fits] + list(pooled)}
    from primus_lang.validate import Setup
    from primus_lang.validate import calibration_notes_header as header

    setup = Setup(args.runs, args.with_bundled, args.folds, args.seed, _pool(args), args.min_rows,
                  tuple(args.gpu or ()))
    thin = {g: len(rows) for g, rows in corpus.by_gpu.items() if g not in corpus.kept}
    notes = header(setup, corpus.source, fits, corpus.runs, thin, moved, bands)
    # a site's fit is named apart from the shipped profiles it starts from (as `learn`'s), so a space or a
    # footer says which one it projects on
    # with the user's rows in the fit (`--with-bundled` too), not the stdlib's `_calibrated` name it would shadow
    suffix = "_site" if args.runs else "_calibrated"
    text = to_prx(fits, corpus.source, imports, pooled, provs, notes, suffix)
    write_file(Path(args.out), text, force=args.force)
    return tuple(f"{g}{suffix}" for g in [f.gpu for f in fits] + sorted(pooled))


def _held_out_groups(args: argparse.Namespace, corpus: _Corpus, log: Callable[[str], None]) -> dict[str, object]:
    from primus_lang.validate import MIN_GROUP, hold_out_groups

    kept, bases, pool = corpus.kept, corpus.bases, _pool(args)
    held = _ranks_of(hold_out_groups(kept, bases, MIN_GROUP, pool, progress=log, gpus=args.gpu), corpus.runs)
    by_layout = hold_out_groups(kept, bases, MIN_GROUP, pool, progress=log, gpus=args.gpu, by_layout=True)
    held["spearman_by_layout_group"] = _ranks_of(by_layout, corpus.runs)["spearman_by_layout_group"]
    return held


def _held_out_sources(corpus: _Corpus, provs: dict[str, Provenance], errors: dict[str, float],
                      host: Mapping[str, float]) -> dict[str, Any]:
    gpu_of = {r.id: g for g, rows in corpus.kept.items() for r in rows}
    return _by_source(errors, corpus, provs, gpu_of, host)


def _json_report(args: argparse.Namespace, o: _Outcome) -> dict[str, Any]:
    from primus_lang.validate import PARAMS

    held, ranks = o.held, o.ranks
    return {
        "fits": [{"gpu": f.gpu, "rows": f.rows, "folds": f.folds, "in_sample_mape": f.in_sample_mape,
                  "cv_mape": f.cv_mape, "efficiency": {k: getattr(f.efficiency, k) for k in PARAMS},
                  "cv_errors": dict(zip(f.row_ids, f.cross_validated, strict=True))} for f in o.fits],
        "cv_mape": o.by_seed[0],
        "cv_mape_by_seed": dict(zip(range(args.seed, args.seed + len(o.by_seed)), o.by_seed, strict=True)),
        "cv_spearman_by_group": ranks["spearman_by_group"],
        "spearman_ceiling_by_group": ranks["spearman_ceiling_by_group"],
        "cv_spearman_by_layout_group": ranks["spearman_by_layout_group"],
        "cv_signed_error_by_group": ranks["signed_error_by_group"],
        "cv_spearman_by_seed": {seed: {k: r[k] for k in ("spearman_by_group", "spearman_by_layout_group")}
                                for seed, r in zip(o.seeds, o.shuffled, strict=True)},
        **({"holdout_spearman_by_group": held["spearman_by_group"],
            "holdout_spearman_by_layout_group": held["spearman_by_layout_group"],
            "holdout_signed_error_by_group": held["signed_error_by_group"],
            "holdout_mape": held["mape"]} if held else {}),
        **({"holdout_models": _by_model(o.unseen, o.runs)} if args.hold_out_models else {}),
        **({"holdout_sources": o.sources} if o.sources else {}),
        **({"wrote": {"file": args.out, "profiles": list(o.wrote)}} if o.wrote else {}),
        "bands": o.bands,
        **({"sibling_transfer": {g: {"sibling": near, **_errors_summary(e)} for g, (near, e) in o.siblings.items()},
            "transfer": {g: _errors_summary(e) for g, e in o.moved.items()}} if args.transfer else {}),
    }


def _errors_summary(errors: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    """Signed errors per row, summed up: how many, their MAPE and mean."""
    return {"rows": len(errors), "mape": _mean(abs(x) for _, x in errors), "signed": _mean(x for _, x in errors),
            "errors": dict(errors)}


def _moved(start: Efficiency, fitted: Efficiency) -> str:
    """The efficiencies a fit moved by more than 1%, each as it started and as fitted."""
    from primus_lang.validate import PARAMS

    def shown(name: str, value: float) -> str:
        return f"{value * 1e6:.1f} us" if name == "host_launch" else f"{value:.3g}"

    moved = [f"{n} {shown(n, a)} -> {shown(n, b)}" for n in PARAMS
             if (a := getattr(start, n)) != (b := getattr(fitted, n)) and abs(b - a) > 0.01 * max(abs(a), 1e-30)]
    return ", ".join(moved) or "nothing by more than 1%"


def _print_report(args: argparse.Namespace, o: _Outcome) -> None:
    for f in o.fits:
        e = f.efficiency
        print(f"{f.gpu:12} rows {f.rows:3}  in-sample MAPE {f.in_sample_mape:6.1%}  {f.folds}-fold CV MAPE "
              f"{f.cv_mape:6.1%}  gemm_max {e.gemm_max:.3f} fp8 {e.fp8_gemm_max:.3f} fp4 {e.fp4_gemm_max:.3f} "
              f"knee {e.gemm_knee_flops:.2e} attention {e.attention:.3f} up {e.scale_up_bus:.3f} out {e.scale_out_bus:.3f} "
              f"grouped {e.grouped_gemm:.3f} host {e.host_launch * 1e6:.1f} us overlap {e.overlap_slowdown:.3f}")
        if args.runs and f.gpu in o.started:
            print(f"{'':12} moved from the profile it started from: {_moved(o.started[f.gpu], e)}")
    cv = [abs(e) for f in o.fits for e in f.cross_validated]
    print(f"all profiles: cross-validated MAPE {o.by_seed[0]:.1%} over {len(cv)} rows")
    _print_bands(o.bands, _site_only(args))
    _print_transfers(o.moved if args.transfer else {}, o.siblings)
    if len(o.by_seed) > 1:
        print(f"  over {len(o.by_seed)} fold shuffles: {', '.join(f'{m:.1%}' for m in o.by_seed)}; "
              f"mean {sum(o.by_seed) / len(o.by_seed):.1%}")
    if o.held:
        _print_held_out_groups(o.held, o.ranks)
    if args.hold_out_models:
        _print_held_out_models(_by_model(o.unseen, o.runs))
    if o.sources:
        _print_held_out_sources(o.sources)
    elif args.hold_out_sources:
        print("leave one source out: no source has other rows to be held out against (a fit of nothing else "
              "would project it on the profiles it started from), so no figure")
    _print_rank_agreement(o.shuffled, o.ranks, o.seeds)
    if o.wrote:
        # an import is read relative to the importing file: the absolute path works from any space
        print(f"wrote {args.out}: {', '.join(o.wrote)}; a space uses it with "
              f"`import \"{Path(args.out).resolve()}\" ({o.wrote[0]})` and `gpu = {o.wrote[0]}` in its cluster "
              "(or the path relative to the space's own file; docs/projection.md, Calibration)")


def _print_transfers(moved: dict[str, tuple[tuple[str, float], ...]],
                     siblings: dict[str, tuple[str, tuple[tuple[str, float], ...]]]) -> None:
    for g, errs in moved.items():
        print(f"  transfer to {g:10} ({len(errs)} rows, vendor pool without them): MAPE "
              f"{_mean(abs(x) for _, x in errs):6.1%}, mean signed {_mean(x for _, x in errs):+6.1%}")
    for g, (near, errs) in siblings.items():
        print(f"  {g:10} on its nearest sibling's fit ({near}, {len(errs)} rows): MAPE "
              f"{_mean(abs(x) for _, x in errs):6.1%}, mean signed {_mean(x for _, x in errs):+6.1%}")
    if siblings:
        every = [x for _, errs in siblings.values() for _, x in errs]
        print(f"  nearest sibling, every GPU: MAPE {_mean(abs(x) for x in every):.1%} over {len(every)} rows")


def _print_held_out_groups(held: dict[str, object], ranks: dict[str, object]) -> None:
    reach = _rho(ranks, "spearman_ceiling_by_group")
    print(f"rank agreement, each group held out whole and ranked by one fit (reachable); "
          f"MAPE of those rows {held['mape']:.1%}")
    for name, rho in _rho(held, "spearman_by_group").items():
        print(f"  {name:60} " + "  ".join("  n/a" if v is None else f"{v:+.2f}" for v in (rho, reach.get(name))))
    print("  over distinct layouts, each such group held out whole")
    for name, rho in _rho(held, "spearman_by_layout_group").items():
        print(f"  {name:60} " + ("  n/a" if rho is None else f"{rho:+.2f}"))


def _print_held_out_models(table: dict[str, Any]) -> None:
    print(f"each model held out on every GPU (leave one model out): MAPE {table['mape']:.1%} over "
          f"{table['rows']} rows")
    for name, m in table["models"].items():
        print(f"  {name:40} rows {m['rows']:3}  MAPE {m['mape']:6.1%}  mean signed {m['signed']:+6.1%}")


def _print_held_out_sources(sources: dict[str, Any]) -> None:
    print(f"each source held out on every GPU (leave one source out): MAPE {sources['mape']:.1%} over "
          f"{sources['rows']} rows; inside the band their profile ships with {sources['inside']}/{sources['rows']}, "
          f"inside the band a fit without their source gives them (the far band beyond what it saw) "
          f"{sources['inside_judged']}/{sources['rows']}, inside the far band {sources['inside_far']}/{sources['rows']}")
    for name, m in sources["sources"].items():
        print(f"  {name[:48]:48} rows {m['rows']:3}  MAPE {m['mape']:6.1%}  mean signed {m['signed']:+6.1%}  "
              f"inside {m['inside']:3}/{m['rows']:<3} judged {m['inside_judged']:3} far {m['inside_far']:3}")


def _print_rank_agreement(shuffled: list[dict[str, object]], ranks: dict[str, object], seeds: range) -> None:
    for title, key in (("rank agreement, cross-validated (Spearman, groups of >= 4 rows)", "spearman_by_group"),
                       ("over distinct layouts (re-measured recipes merged)", "spearman_by_layout_group")):
        tables = [_rho(r, key) for r in shuffled]
        # the most any projection could reach: re-measurements of one recipe share its projection
        reach = _rho(ranks, "spearman_ceiling_by_group") if key == "spearman_by_group" else {}
        print(title + (f", shuffles {', '.join(str(s) for s in seeds)}" if len(tables) > 1 else "")
              + (" (reachable)" if reach else ""))
        for name in tables[0]:
            cells = [t.get(name) for t in tables] + ([reach.get(name)] if reach else [])
            print(f"  {name:60} " + "  ".join("  n/a" if rho is None else f"{rho:+.2f}" for rho in cells))


def _by_model(errors: dict[str, float], runs: list[Run]) -> dict[str, Any]:
    """Held-out errors summed up per model card."""
    model_of = {r.id: r.group[0] for r in runs}
    models: dict[str, list[float]] = {}
    for rid, e in sorted(errors.items()):
        models.setdefault(model_of[rid], []).append(e)
    return {"rows": len(errors), "mape": _mean(abs(e) for e in errors.values()),
            "models": {m: {"rows": len(es), "mape": _mean(abs(e) for e in es), "signed": _mean(es)}
                       for m, es in sorted(models.items())},
            "errors": dict(sorted(errors.items()))}


def _by_source(errors: dict[str, float], corpus: _Corpus, provs: Mapping[str, Provenance],
               gpu_of: Mapping[str, str], host: Mapping[str, float]) -> dict[str, Any]:
    """Held-out errors per source, and how many land inside each band ``source_coverage`` judges."""
    from primus_lang.validate import source_coverage

    runs = {r.id: r for r in corpus.runs}
    inside = source_coverage(errors, corpus.runs, corpus.kept, provs, gpu_of, host)

    def counts(items: list[tuple[str, float]]) -> dict[str, Any]:
        es = [e for _, e in items]
        return {"rows": len(es), "mape": _mean(abs(e) for e in es), "signed": _mean(es),
                **{f"inside{suffix}": sum(inside[rid][how] for rid, _ in items)
                   for suffix, how in (("", "own"), ("_judged", "judged"), ("_far", "far"))}}

    by: dict[str, list[tuple[str, float]]] = {}
    for rid, e in sorted(errors.items()):
        by.setdefault(runs[rid].source, []).append((rid, e))
    return {**counts(sorted(errors.items())), "sources": {s: counts(items) for s, items in sorted(by.items())},
            "errors": dict(sorted(errors.items()))}


def _rho(summary: dict[str, object], key: str) -> dict[str, float | None]:
    table = summary[key]
    assert isinstance(table, dict)
    return table


def _mean(values: Iterable[float]) -> float:
    v = list(values)
    return sum(v) / len(v) if v else float("nan")


def _mape(fits: list[Fit]) -> float:
    cv = [abs(e) for f in fits for e in f.cross_validated]
    return sum(cv) / len(cv) if cv else float("nan")


def _cv_ranks(fits: list[Fit], runs: list[Run]) -> dict[str, object]:
    """``validate``'s summary over the cross-validated projections: each row as a fit that never saw
    its fold projects it."""
    return _ranks_of({rid: e for f in fits for rid, e in zip(f.row_ids, f.cross_validated, strict=True)}, runs)


def _ranks_of(errors: dict[str, float], runs: list[Run]) -> dict[str, object]:
    """``validate``'s summary over rows projected with these signed errors."""
    from primus_lang.validate import row_result
    from primus_lang.validate import validate_summarize as summarize

    by_id = {r.id: r for r in runs}
    return summarize([row_result(by_id[rid], (by_id[rid].measured or 0.0) * (1 + e)) for rid, e in errors.items()])


def _module_of(gpu: str) -> tuple[str, str]:
    """The stdlib spec sheet a corpus GPU's calibrated profile derives from: (module, definition).
    The plain names (``hardware.nvidia (h100_sxm)``) are the calibrated profiles themselves."""
    from primus_lang.lower import load_program
    from primus_lang.resources import data_dir

    for path in sorted((data_dir("stdlib") / "hardware").glob("*_spec.prx")):
        if any(g.name == f"{gpu}_spec" for g in load_program(str(path)).gpus):
            return f"hardware.{path.stem}", f"{gpu}_spec"
    return "hardware.nvidia_spec", f"{gpu}_spec"


def _paired(band: dict[str, Any]) -> str:
    return f"paired ±{band['paired']:.1%}" if band["paired"] is not None else "paired: no pair measured"


def _print_bands(bands: dict[str, Any], site: bool = False) -> None:
    """The error band each profile's provenance states, and how many held-out rows fall inside (``site``:
    the base the rows were first projected on is the shipped profile, not the spec sheet)."""
    base, on = ("shipped", "the shipped calibrated profiles") if site else ("spec sheet", "the stdlib defaults")
    print(f"error bands: measured/projected tokens/s/GPU for {bands['coverage']:.0%} of held-out rows; the error of "
          f"the ratio of two candidates' projections for {bands['paired_coverage']:.0%} of held-out pairs")
    for kind in ("fitted", "pooled"):
        for gpu, b in bands.get(kind, {}).items():
            print(f"  {gpu:12} {kind:6} {b['low']:.2f}-{b['high']:.2f}, {_paired(b)}  "
                  f"({b['rows']} residuals of {b['evidence']}, {b['pairs']} pairs)")
    if "spec" in bands:
        b = bands["spec"]
        print(f"  {base:12} {'':6} {b['low']:.2f}-{b['high']:.2f}, {_paired(b)}  "
              f"({b['rows']} rows on {on}, {b['pairs']} pairs)")
    cover = [("your fitted profiles" if site else f"{v} fitted profiles", c)
             for v, c in bands.get("held_out_coverage", {}).items()]
    cover += [(name, bands[key]) for name, key in (("transfer", "transfer_held_out_coverage"),
                                                   (base, "spec_held_out_coverage")) if key in bands]
    for name, c in cover:
        if c["rows"]:
            # each row against the band its evidence gives without it and its layout's twins: on few rows
            # narrower than the band the profile states, which no fewer than 9 residuals may narrow
            print(f"  held out, inside the band measured without the row: {name}: {c['inside']}/{c['rows']} "
                  f"({c['share']:.0%})")
