"""``primusc validate --runs FILE.yaml [--json]``: projected vs measured tokens/s/GPU on published runs."""

from __future__ import annotations

import argparse
import sys
from statistics import median
from typing import Any

from primus_lang.commands._corpus import RUNS_HELP, add_corpus_arguments, runs_of
from primus_lang.commands._options import add_oracle_arguments, build_oracle, oracle_kind
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_names import BAD_ARGUMENT
from primus_lang.diagnostics.codes_projection import NO_RUNS
from primus_lang.ir import serialize


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="compare projections with published measured runs")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--runs", help=RUNS_HELP)
    what.add_argument("--sweeps", metavar="FILE",
                      help="controlled sweeps YAML (schema of validation/sweeps.yaml): how well projections order "
                           "each sweep's variants")
    p.add_argument("--sweep", action="append", metavar="ID", help="with --sweeps: report only this sweep (repeatable)")
    profiles = p.add_mutually_exclusive_group()
    profiles.add_argument("--spec", action="store_true",
                          help="with --sweeps: project on the spec-sheet profiles instead of the calibrated ones")
    profiles.add_argument("--cross-validate", action="store_true",
                          help="with --sweeps: leave one sweep out, each ranked on its GPU's profile refitted without "
                               "the corpus rows of its recipes (minutes)")
    p.add_argument("--json", action="store_true", help="print rows and summary as JSON")
    p.add_argument("--calibrated", action="store_true",
                   help="use the calibrated profiles of stdlib/hardware/calibrated.prx where present")
    p.add_argument("--profiles", metavar="FILE.prx",
                   help="use the profiles this file defines (what `calibrate --out` or `learn` wrote) over the "
                        "calibrated ones: how a site's own fit projects its runs")
    p.add_argument("--no-memory", action="store_true", help="skip the memory verdict per row")
    p.add_argument("--row", action="append", metavar="ID",
                   help="explain this row instead of the table: what it was read as, its memory account and "
                        "where its projected step time goes (repeatable)")
    add_oracle_arguments(p)
    add_corpus_arguments(p)
    p.add_argument("--pairs", action="store_true",
                   help="compare the projected and measured ratio of tokens/s of the recipes measured in BF16 and "
                        "in FP8 or NVFP4 (the table docs/projection.md shows)")
    p.add_argument("--summary", action="store_true",
                   help="print the error per vendor, GPU and precision, on the spec sheets and on the calibrated "
                        "profiles (the table docs/projection.md shows)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.validate import INTERNAL_ERROR, to_json_rows, validate_rows
    from primus_lang.validate import validate_summarize as summarize

    if args.sweeps:
        from primus_lang.commands._sweeps import run_sweeps

        return run_sweeps(args)
    if sum(bool(x) for x in (args.summary, args.row, args.pairs)) > 1:
        raise CompileError(Diagnostic(BAD_ARGUMENT, "`--summary`, `--row` and `--pairs` ask for different reports: give one"))
    profiles = args.profiles or args.calibrated
    runs, label = runs_of(args, profiles)
    kind = oracle_kind(args)
    oracles: dict[object, Any] = {}

    def oracle_for(run: Any) -> Any:
        # One oracle per cluster: the benchmark oracle's collective fits depend on the topology.
        if run.cluster not in oracles:
            oracles[run.cluster] = build_oracle(args, kind, run.cluster)
        return oracles[run.cluster]

    if args.row:
        from primus_lang.report import explain_rows, rows_json, rows_view

        explained = explain_rows(runs, args.row, lambda run: None if kind == "simulate" else oracle_for(run))
        if args.json:
            print(serialize.to_json(rows_json(explained)))
        else:
            from rich.console import Console

            Console(soft_wrap=False, highlight=False).print(rows_view(explained))
        return 0
    if args.summary:
        return _summary(args, runs, label, None if kind == "simulate" else oracle_for)
    rows = validate_rows(runs, memory=not args.no_memory and not args.pairs,
                         oracle_for=None if kind == "simulate" else oracle_for)
    if args.pairs:
        return _pairs(args, runs, rows, label)
    summary = summarize(rows)
    broken = [r.id for r in rows if r.skipped.startswith(INTERNAL_ERROR)]
    if broken:
        print(f"primusc: {INTERNAL_ERROR} on {len(broken)} row(s): {', '.join(broken)}; "
              "every other row is reported", file=sys.stderr)
    status = 2 if broken else 0
    if args.json:
        print(serialize.to_json({"rows": to_json_rows(rows), "summary": summary}))
        _refuse_empty(rows, label)
        return status
    from rich.console import Console
    from rich.table import Table

    on = f"the profiles of {args.profiles}, the calibrated ones for other GPUs" if args.profiles else \
        "the calibrated profiles" if args.calibrated else "the spec sheets (--calibrated: the fitted profiles)"
    table = Table(title=f"projected vs measured tokens/s/GPU ({label}; on {on})")
    for col in ("id", "model", "gpu", "precision", "projected", "measured", "error", "band", "memory"):
        table.add_column(col, justify="right" if col in ("projected", "measured", "error") else "left")
    for r in rows:
        if r.skipped:
            continue
        mem = r.memory.verdict if r.memory else ""
        # inside or outside the band, `far` where the row lies beyond the runs its profile was fitted on
        band = "" if r.inside is None else ("in" if r.inside else "out") + (" far" if r.beyond else "")
        table.add_row(r.id, r.group[0], r.group[1], r.group[2], f"{r.projected:,.0f}", f"{r.measured:,.0f}",
                      f"{r.error:+.1%}", band, mem)
    console = Console(width=max(Console().width, 160))
    console.print(table)
    mape, median = summary["mape"], summary["median_ape"]
    console.print(f"rows projected: {summary['n']}, skipped: {summary['skipped']}"
                  + (" (why: `--json` lists each skipped row's reason, `--row ID` explains one row)"
                     if summary["skipped"] else ""))
    if isinstance(mape, float) and isinstance(median, float):
        console.print(f"MAPE {mape:.1%}, median APE {median:.1%}")
    cover = summary.get("band_coverage")
    if isinstance(cover, dict) and cover.get("rows"):
        far = (f"{cover['beyond_inside']} of {cover['beyond_rows']} inside" if cover["beyond_rows"] else "none")
        console.print(f"inside the band their profile gives them: {cover['inside']} of {cover['rows']} rows "
                      f"({cover['share']:.0%}); beyond the runs a profile was fitted on (the far band): {far}")
    if "false_ooms" in summary:
        ooms = summary["false_ooms"]
        named = ", ".join(str(r) for r in ooms) if isinstance(ooms, list) else ""
        console.print(f"memory: {summary['memory_judged']} rows judged ({summary['memory_offloaded']} offload "
                      f"activations to host memory); false OOMs: {named or 'none'}")
        from primus_lang.ir import units

        terms_of = summary.get("false_oom_terms")
        for rid, why in (terms_of.items() if isinstance(terms_of, dict) else ()):
            terms = ", ".join(f"{name} {units.gib(size)}" for name, size in why["terms"])
            console.print(f"  {rid}: over by {units.gib(why['over_bytes'])} on its fullest rank; largest terms: {terms}")
        said = _measured_memory(rows)
        if said:
            console.print(said)
    rho, ceiling = summary["spearman_by_group"], summary["spearman_ceiling_by_group"]
    if isinstance(rho, dict) and isinstance(ceiling, dict):
        for g, value in rho.items():
            best = ceiling.get(g)
            console.print(f"  Spearman {g}: {'n/a' if value is None else f'{value:+.2f}'}"
                          f" (reachable: {'no order' if best is None else f'{best:+.2f}'})")
    _refuse_empty(rows, label)
    return status


def _measured_memory(rows: list[Any]) -> str:
    """The account against the memory the rows measured: where a row publishes every knob the account
    reads, their ratio; one read at the least-memory setting of knobs it leaves out is not compared."""
    measured = [r.memory for r in rows if not r.skipped and r.memory and r.memory.measured_bytes and r.memory.peak_bytes]
    if not measured:
        return ""
    ratios = sorted(m.peak_bytes / m.measured_bytes for m in measured if m.reading == "published")
    out = []
    if ratios:
        mid = median(ratios)
        span = f"{ratios[0]:.2f}" if len(ratios) == 1 else f"{ratios[0]:.2f}-{ratios[-1]:.2f} (median {mid:.2f})"
        out.append(f"memory: primusc's account is {span} of what {len(ratios)} run(s) measured"
                   + (": below what ran, so a plan can take a point that does not fit (a GPU's own figure also "
                      "holds the allocator's cache)" if mid < 0.9 else ""))
    if len(ratios) < len(measured):
        knobs = sorted({k for m in measured if m.reading != "published" for k, _ in m.assumed})
        out.append(f"memory: {len(measured) - len(ratios)} run(s) with a measured figure leave out "
                   f"{', '.join(f'`{k}`' for k in knobs)}, so their account is not compared (the run may have kept "
                   "more; validation/published_runs.md says where a row gives them)")
    return "\n".join(out)


def _refuse_empty(rows: list[Any], label: str) -> None:
    """P6002 after the report where no row was projected: a check in CI that validated nothing fails, as
    `calibrate` on the same file does."""
    if rows and all(r.skipped for r in rows):
        raise CompileError(Diagnostic(NO_RUNS, f"no row of `{label}` can be projected: all {len(rows)} were skipped",
                                      help="`--json` lists each row's reason; validation/published_runs.md says what "
                                           "a row holds"))


def _summary(args: argparse.Namespace, runs: list[Any], label: str, oracle_for: Any) -> int:
    """The error table per vendor, GPU and precision; both profile sets, whatever ``--calibrated`` says."""
    from primus_lang.validate import error_table, validate_rows
    from primus_lang.validate import summary_to_json as to_json
    from primus_lang.validate import summary_to_markdown as to_markdown

    other, _ = runs_of(args, not args.calibrated)
    spec, calibrated = (other, runs) if args.calibrated else (runs, other)
    lines = error_table(*[(rs, validate_rows(rs, memory=False, oracle_for=oracle_for)) for rs in (spec, calibrated)])
    if args.json:
        print(serialize.to_json({"source": label, "summary": to_json(lines)}))
    else:
        print(f"projected vs measured tokens/s/GPU on {label}: error of the projection (above 0: too fast)")
        print(to_markdown(lines))
    return 0


def _pairs(args: argparse.Namespace, runs: list[Any], rows: list[Any], label: str) -> int:
    from primus_lang.validate import bundled_pairs, pairs_summary
    from primus_lang.validate import pair_rows as precision_pairs
    from primus_lang.validate import precision_pairs_to_markdown as to_markdown

    projected = {r.id: r.projected for r in rows if r.projected is not None}
    # the bundled corpus brings its controlled sweeps; a user's runs file stands alone
    bundled = not args.runs or args.with_bundled
    pairs = (bundled_pairs if bundled else precision_pairs)(runs, projected)
    if args.json:
        print(serialize.to_json({"source": label, "pairs": [
            {"bf16": p.bf16_id, "low": p.low_id, "recipe": p.group, "precision": p.low, "measured": p.measured,
             "projected": p.projected, "error": p.error} for p in pairs], "summary": pairs_summary(pairs)}))
        return 0
    print(f"recipes measured in BF16 and in a low precision on {label}: tokens/s ratio, low precision over BF16 "
          "(error above 0: the gain is overestimated)")
    print(to_markdown(pairs) if pairs else "no recipe of these rows was measured in both precisions")
    return 0
