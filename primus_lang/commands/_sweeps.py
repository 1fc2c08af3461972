"""``primusc validate --sweeps FILE``: rank fidelity on controlled sweeps (docs/projection.md)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import NO_SWEEP, SWEEPS_FILE
from primus_lang.ir import serialize


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def run_sweeps(args: argparse.Namespace) -> int:
    from primus_lang.validate import INTERNAL_ERROR, load_sweeps, rank_sweep
    from primus_lang.validate import ranking_summary as summary
    from primus_lang.validate import ranking_to_json as to_json

    if not Path(args.sweeps).is_file():
        raise CompileError(Diagnostic(SWEEPS_FILE, f"no sweeps file `{args.sweeps}`"))
    try:
        sweeps = load_sweeps(args.sweeps, calibrated=not args.spec)
    except (AttributeError, TypeError, KeyError) as exc:
        raise CompileError(Diagnostic(SWEEPS_FILE, f"`{args.sweeps}` is not a sweeps file: {exc}")) from exc
    if args.sweep:
        by_id = {s.id: s for s in sweeps}
        for sid in args.sweep:
            if sid not in by_id:
                near = difflib.get_close_matches(sid, list(by_id), n=3)
                raise CompileError(Diagnostic(NO_SWEEP, f"no sweep `{sid}` in `{args.sweeps}`",
                                              help=f"did you mean {', '.join(f'`{n}`' for n in near)}?"
                                              if near else ""))
        sweeps = [s for s in sweeps if s.id in set(args.sweep)]
    if args.cross_validate:
        from primus_lang.commands._corpus import bundled_runs, load
        from primus_lang.validate import leave_sweep_out

        def log(message: str) -> None:
            if not args.json:
                print(message, file=sys.stderr)

        results = leave_sweep_out(sweeps, load(str(bundled_runs()), False), progress=log)
    else:
        results = [rank_sweep(s) for s in sweeps]
    broken = [f"{r.id}/{v.id}" for r in results for v in r.variants if v.skipped.startswith(INTERNAL_ERROR)]
    if broken:
        print(f"primusc: {INTERNAL_ERROR} on {len(broken)} variant(s): {', '.join(broken)}; "
              "every other variant is reported", file=sys.stderr)
    status = 2 if broken else 0
    if args.json:
        print(serialize.to_json(to_json(results)))
        return status
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 160), highlight=False)
    profile = "spec-sheet" if args.spec else "calibrated, leave one sweep out" if args.cross_validate else "calibrated"
    table = Table(title=f"rank fidelity on controlled sweeps ({args.sweeps}, {profile} profiles)")
    for col in ("sweep", "gpu", "projected", "Spearman", "Kendall", "concordant", "top-1 regret", "top-3 regret",
                "ratio error (median |.|)"):
        table.add_column(col, justify="left" if col in ("sweep", "gpu") else "right")
    for r in results:
        ratios = sorted(abs(v.ratio_error) for v in r.ranked if v.ratio_error is not None and v.id != r.base)
        middle = ratios[len(ratios) // 2] if len(ratios) % 2 else (
            (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2 if ratios else None)
        table.add_row(r.id, r.gpu.removesuffix("_calibrated"), f"{len(r.ranked)}/{len(r.variants)}", _num(r.spearman),
                      _num(r.kendall), f"{r.concordant}/{r.pairs}", _pct(r.top1_regret, False),
                      _pct(r.top3_regret, False), _pct(middle, False))
    console.print(table)
    for r in results:
        console.print(f"\n[bold]{r.id}[/bold]: {r.title}" + (f" (ratios to `{r.base}`)" if r.base else ""))
        if r.refit:
            console.print(f"  projected on: {r.refit}" + (f" ({', '.join(r.held_out)})" if r.held_out else ""))
        for field, why in r.assumed:
            console.print(f"  assumed {field} = {why}")
        for v in r.variants:
            if v.skipped:
                console.print(f"  {v.id}: skipped: {v.skipped}")
                continue
            error = "" if v.error is None else f", error {_pct(v.error)}"
            console.print(f"  {v.id} ({v.label}): projected {v.projected:,.1f}, measured {v.measured:,.1f}{error}, "
                          f"error of the ratio to base {_pct(v.ratio_error)}")
    s = summary(results)
    console.print(f"\nsweeps: {s['sweeps']} ({s['judged']} with two or more projected variants); variants: "
                  f"{s['variants']}, projected: {s['projected']}")
    console.print(f"median Spearman {_num(s['median_spearman'])}, median Kendall {_num(s['median_kendall'])}, "  # type: ignore[arg-type]
                  f"concordant pairs {s['concordant_pairs']}/{s['pairs']}, median top-1 regret "
                  f"{_pct(s['median_top1_regret'], False)} (worst {_pct(s['worst_top1_regret'], False)}), "  # type: ignore[arg-type]
                  f"median |ratio error| {_pct(s['median_abs_ratio_error'], False)}")  # type: ignore[arg-type]
    return status
