"""``primusc diff FILE A B``: what changes between two candidates of a space and why one is faster.
``primusc diff --rev A --rev B FILE``: what a change between two git revisions does to the space."""

from __future__ import annotations

import argparse
from typing import Any

import attrs

from primus_lang.commands._options import add_cluster_argument, mfu_note, natural
from primus_lang.ir import serialize


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two candidates: knobs, memory terms, time breakdown, and why one is faster",
        description="Points are written as for --point: `tp=2,pp=4,recompute=full(8)`; unnamed knobs take "
        "their default where the space allows it, else the first value of their axis. Give them as two arguments or with --a and --b. "
        "With --rev A --rev B (or one --rev: against the work tree), compare the space at two git revisions instead: "
        "what changed in it, its raw, legal and fitting counts, and the projected winner of a bounded search on each side.",
    )
    p.add_argument("file", help="a .prx file with a space")
    p.add_argument("points", nargs="*", metavar="POINT", help="the two candidates (A then B)")
    p.set_defaults(positional_rest="points")
    p.add_argument("--a", help="candidate A")
    p.add_argument("--b", help="candidate B")
    p.add_argument("--space", help="the space's name when the file defines several")
    add_cluster_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--rev", action="append", metavar="REV",
                   help="a git revision of FILE; twice to compare two revisions, once to compare it with the work tree")
    p.add_argument("--budget", type=natural, default=None, metavar="N",
                   help="with --rev: evaluations of the search on each side (default: the space's own "
                        "budget at the later revision, else 200)")
    p.add_argument("--markdown", action="store_true", help="with --rev: print the report as Markdown (for a pull request)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from primus_lang.commands._candidates import console, evaluated, load, print_broken
    from primus_lang.commands._capacity import point_rate, run_json, run_rows
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_report import NEEDS_TWO_POINTS
    from primus_lang.report import (
        diff,
        diff_view,
        explained_json,
        no_low_precision,
        precision_gain,
        precision_json,
        violations,
    )
    from primus_lang.validate import tied

    given = [p for p in (args.a, args.b) if p] + list(args.points or ())
    if args.rev:
        from primus_lang.commands._rev_diff import run_revisions

        return run_revisions(args, given)
    if len(given) != 2:
        raise CompileError(Diagnostic(NEEDS_TWO_POINTS, f"`primusc diff` needs two points, got {len(given)}",
                                      help="`primusc diff FILE tp=2,pp=4 tp=4,pp=2` or `--a ... --b ...`"))
    space = load(args)
    ea, eb = evaluated(space, given, args.error_format)
    broken_a, broken_b = violations(space, ea.candidate), violations(space, eb.candidate)
    va, vb = ea.view, eb.view
    for knob in ("gbs", "seq_len"):
        # left out of a label (the space fixes them), but named where the two differ in them
        a, b = getattr(ea.candidate, knob), getattr(eb.candidate, knob)
        if a != b:
            va, vb = attrs.evolve(va, label=f"{va.label},{knob}={a}"), attrs.evolve(vb, label=f"{vb.label},{knob}={b}")
    d = diff(va, vb)
    gains = [precision_gain(space, e.candidate) for e in (ea, eb)]
    # each point's whole run (days, cost) where the space says what a run trains
    runs = [point_rate(e.view, runs=not broken) for e, broken in ((ea, broken_a), (eb, broken_b))]
    if args.json:
        print(serialize.to_json({
            "a": {**explained_json(ea), "precision_gain": precision_json(gains[0]),
                  "violations": [list(v) for v in broken_a], "run": run_json(space, runs[0], ea.candidate)},
            "b": {**explained_json(eb), "precision_gain": precision_json(gains[1]),
                  "violations": [list(v) for v in broken_b], "run": run_json(space, runs[1], eb.candidate)},
            "knobs": [list(k) for k in d.knobs],
            "time": [{"part": c.name, "a": c.a, "b": c.b, "delta": c.delta} for c in d.time],
            "memory": [{"term": c.name, "a": int(c.a), "b": int(c.b), "delta": int(c.delta)} for c in d.memory],
            "summary": list(d.summary),
            # the two projections closer than the profile's paired band: their measured order may go either way
            # (by tokens/s: two steps of other batch sizes are not compared by their length)
            "tied": tied(space.cluster.gpu.provenance, ea.view.tokens_per_gpu, eb.view.tokens_per_gpu),
        }))
        return _refused(space.name, ((ea, broken_a), (eb, broken_b)), args.error_format)
    out = console()
    print_broken(out, broken_a, "A")
    print_broken(out, broken_b, "B")
    out.print(diff_view(d))
    from primus_lang.ir import units

    for name, e in zip("AB", (ea, eb), strict=True):
        if not e.view.fits:
            out.print(f"[yellow]{name} does not fit in memory: its fullest rank is over the limit by "
                      f"{units.gib(e.view.memory_peak - e.limit)}[/yellow] (`primusc explain` shows its terms)")
    if space.cluster.gpu.peak(ea.candidate.precision) != space.cluster.gpu.peak(eb.candidate.precision):
        # the MFU row subtracts figures of two peaks
        note = mfu_note(space.cluster.gpu, (ea.candidate.precision, eb.candidate.precision))
        if note:
            out.print(note, markup=False)
    for name, r, e in zip("AB", runs, (ea, eb), strict=True):
        for what, figures in run_rows(space, r, e.candidate):
            out.print(f"{name}: {what} {figures}", markup=False)
    for name, g in zip("AB", gains, strict=True):
        if g is None:
            out.print(f"{name}: {no_low_precision(space)}", markup=False)
            continue
        out.print(f"{name}: its recipe in {g.label} runs at {g.ratio:.2f}x the tokens/s of the same in BF16 "
                  "(`primusc explain` shows where the difference goes)")
    sys.stdout.flush()
    return _refused(space.name, ((ea, broken_a), (eb, broken_b)), args.error_format)


def _refused(space_name: str, points: Any, error_format: str) -> int:
    """P6003 for each of the two points a rule refuses, and the exit status: 1 where either is (a comparison
    with a launch that cannot start is no result a script should take as one)."""
    from primus_lang.commands._candidates import say_illegal

    status = 0
    for e, broken in points:
        say_illegal(space_name, e.candidate.label(), broken, error_format)
        status = 1 if broken else status
    return status
