"""``primusc project FILE [--point ...] [--json] [--top N]``: project every legal point of a space (or
one point) and print them ranked by the space's objective."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from primus_lang.commands._capacity import cluster_words, on_cluster, rate, run_cells, run_columns, run_json
from primus_lang.commands._options import (
    add_oracle_arguments,
    add_space_arguments,
    build_oracle,
    foreign_device,
    mfu_note,
    natural,
    oracle_kind,
    warn_trust,
)
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import BAD_POINT
from primus_lang.ir import serialize
from primus_lang.ir.candidate import shown_workload


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("project", help="project step time and throughput of a space's legal points")
    add_space_arguments(p)
    add_oracle_arguments(p)
    p.add_argument("--point", help="project one point: knob=value pairs, e.g. tp=4,pp=2,mbs=1")
    p.add_argument("--top", type=natural, default=20, help="rows to print (default 20; 0 for all)")
    p.add_argument("--json", action="store_true",
                   help='print {"cluster", "candidates", "legal", "fit", "seconds", "provenance", "results"} as JSON')
    p.set_defaults(func=run)


def _metric(result: Any, metric: str) -> float:
    return float(getattr(result, metric))


def run(args: argparse.Namespace) -> int:
    from primus_lang.check import legality, raw_size
    from primus_lang.commands._options import read_point, refuse_overflow_but_the_recipe
    from primus_lang.ir.serialize import to_data
    from primus_lang.lower import load_program, pick_space
    from primus_lang.memory import account
    from primus_lang.project import project_many
    from primus_lang.search import landscape_of

    space = on_cluster(pick_space(load_program(args.file), args.space), args)
    start = time.perf_counter()
    if args.point:
        cand = read_point(space, args.point, args.error_format)
        broken = legality(space, cand)
        if broken:
            raise CompileError(Diagnostic(BAD_POINT, f"`{args.point}` is not a legal point of `{space.name}`",
                                          notes=tuple(v.message for v in broken)))
        acc = account(space.model, space.cluster, cand, space.settings)
        refuse_overflow_but_the_recipe(space, cand, acc, "projected", args.error_format,
                                       " (`primusc explain` shows what it would cost)")
        cands, legal, total = [(cand, int(acc.peak.total))], 1, 1
        fit = int(acc.fits(space.headroom))  # 0: the space's recipe, projected though it does not fit (W5002)
    else:
        # The memory proof is part of what makes a point a candidate: only points that fit are ranked.
        land = landscape_of(space)
        cands = [(land.points[i], int(land.peaks[i])) for i in land.fitting]
        legal, total = len(land.points), raw_size(space)
        fit = len(cands)
    oracle = build_oracle(args, oracle_kind(args, space.settings), space.cluster, space.model, [c for c, _ in cands],
                          space.settings)
    projected = project_many(space.model, space.cluster, [c for c, _ in cands], space.settings, oracle=oracle)
    results = [(c, peak, p) for (c, peak), p in zip(cands, projected, strict=True)]
    seconds = time.perf_counter() - start
    metric = space.objective.metric if space.objective.metric != "memory_peak" else "tokens_per_gpu"
    reverse = space.objective.sense == "maximize"
    results.sort(key=lambda r: _metric(r[2], metric), reverse=reverse)
    shown = results if args.top <= 0 else results[: args.top]
    from primus_lang.validate import trust

    gpu = space.cluster.gpu
    best = _metric(results[0][2], metric) if results else 0.0
    tied = [bool(results) and trust.tied(gpu.provenance, _metric(p, metric), best) for _, _, p in shown]
    world = space.cluster.world
    stack = trust.target_stack(space.settings.target)
    foreign = foreign_device(oracle, gpu)
    if foreign:
        print(f"note: oracle {oracle_kind(args, space.settings)}: {foreign}; no band is given", file=sys.stderr)
    bands = [None if foreign else trust.band_on(space, c, p) for c, _, p in shown]
    # a space that varies its sequence or batch gives them in its labels, or two points would share one
    show = shown_workload(a.name for a in space.axes)
    warn_trust(gpu, [(c.label(show), p.mfu) for c, _, p in shown], args.error_format, space.model,
               [(c, world, trust.host_share(p)) for c, _, p in shown], stack)
    runs = [rate(p.tokens_per_gpu, (b.tokens_low, b.tokens_high) if b is not None else None)
            for (_, _, p), b in zip(shown, bands, strict=True)]
    if args.json:
        from primus_lang.report import projection_json

        out = [{"candidate": to_data(c), "label": c.label(show), "memory_peak": peak, "projection": projection_json(p),
                "band": to_data(b) if b is not None else None, "tied_with_best": t, "run": run_json(space, r, c)}
               for (c, peak, p), b, t, r in zip(shown, bands, tied, runs, strict=True)]
        print(serialize.to_json({"cluster": cluster_words(space), "candidates": total, "legal": legal, "fit": fit,
                                 "seconds": seconds,
                          "provenance": to_data(gpu.provenance), "results": out}))
        return 0
    from rich.console import Console
    from rich.table import Table

    from primus_lang.ir import units

    table = Table(title=f"{space.name} on {cluster_words(space)}: {legal:,} legal of {total:,} points, {fit:,} fit in memory, "
                        f"projected in {seconds:.2f} s (ranked by {metric})")
    coverage = f"{gpu.provenance.coverage:.0%} band"
    for col in ("#", "candidate", "tok/s/GPU", coverage, *run_columns(space), "TFLOP/s", "MFU", "step s", "bubble",
                "memory", "largest exposed"):
        # a label is what --point takes back: wrapped between its knobs where the table is narrow, never cut
        table.add_column(col, justify="left" if col == "candidate" else "right", no_wrap=col != "candidate",
                         overflow="fold" if col == "candidate" else "ellipsis")
    for i, ((c, peak, p), b, t, r) in enumerate(zip(shown, bands, tied, runs, strict=True), 1):
        parts = {k: v for k, v in p.breakdown if k not in ("compute", "optimizer")}
        worst = max(parts.items(), key=lambda kv: kv[1]) if parts else ("", 0.0)
        table.add_row(f"{i}{'≈' if t and i > 1 else ''}", units.label_cell(c.label(show)), f"{p.tokens_per_gpu:,.0f}",
                      units.band(b.tokens_low, b.tokens_high) if b is not None else "n/a", *run_cells(space, r, c),
                      f"{p.tflops_per_gpu:,.0f}", f"{p.mfu:.1%}",
                      f"{p.step_time:.2f}", f"{p.bubble_fraction:.1%}", units.gib(peak),
                      f"{worst[0]} {worst[1]:.2f} s")
    console = Console(width=max(Console().width, 160))
    console.print(table)
    console.print(f"profile `{gpu.name}`: its band is left out, since the oracle's timings are not of its GPU"
                  if foreign else trust.describe(gpu.name, gpu.provenance), highlight=False)
    mixed = mfu_note(gpu, (c.precision for c, _, _ in shown))
    if mixed:
        console.print(mixed, highlight=False)
    ties = sum(tied) - 1
    if ties > 0:
        console.print(f"≈: {ties} of the candidates shown are tied with #1 (#1 ahead by at most {gpu.provenance.paired:.1%}, "
                      "the typical error of the ratio of two projections); `primusc plan` prefers the one that "
                      "changes numerics least", highlight=False)
    counts = getattr(oracle, "source_counts", None)
    if counts is not None:
        # A benchmark projection is only as good as the share of its timings that were measured.
        where = ", ".join(f"{n:,} {source}" for source, n in sorted(counts().items()))
        console.print(f"oracle {oracle_kind(args, space.settings)}: op timings {where or 'none'}")
    return 0
