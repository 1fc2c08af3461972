"""``primusc report TRACE``: rebuild a plan's HTML report from its JSONL search trace."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from primus_lang.commands._options import add_cluster_argument


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="write the HTML report of a search from its trace",
        description="Reads the JSONL trace of `primusc plan --trace FILE` and writes one self-contained HTML "
        "file. With the space's file (--space) the report also shows exact memory terms, the winner's "
        "pipeline timeline and the GPU's capacity; without it, it says so.",
    )
    p.add_argument("trace", help="the JSONL trace written by `primusc plan --trace`")
    p.add_argument("--out", default="report.html",
                   help="where to write the HTML (default: report.html); an existing file is kept unless --force")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--space", dest="space_file",
                   help="the .prx file the search ran on (without it: no memory terms, no timeline)")
    p.add_argument("--space-name", help="the space's name when the file defines several (default: from the trace)")
    add_cluster_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands._options import check_outputs
    from primus_lang.outputs import refuse_collisions
    from primus_lang.report import report_from_trace

    target = Path(args.out)
    inputs = {"the trace": Path(args.trace)}
    if args.space_file:
        inputs["--space"] = Path(args.space_file)
    refuse_collisions({"--out": target}, inputs)
    check_outputs(None, {"out": target}, args.force)
    out, full = report_from_trace(Path(args.trace), target, args.space_file, args.space_name, args.force,
                                  args.cluster)
    if not full:
        # the trace records results, not the space: the page lacks what only the space can recompute
        print("warning: no --space: the report has no memory terms, no pipeline timeline for the winner, and "
              "shows the traced memory limit as the capacity; pass --space FILE.prx for the full report",
              file=sys.stderr)
    if full and _compares_clusters(args):
        # the trace is one cluster's search; the comparison of clusters is plan's, and not traced
        print("note: the report is of the planned cluster's search; the comparison of the space's clusters (the "
              "days-against-cost section) is written by `primusc plan` only", file=sys.stderr)
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


def _compares_clusters(args: argparse.Namespace) -> bool:
    from primus_lang.commands._capacity import applies
    from primus_lang.lower import load_space

    return applies(load_space(Path(args.space_file), args.space_name))
