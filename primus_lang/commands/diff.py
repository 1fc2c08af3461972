"""``primusc diff FILE A B``: what changes between two candidates of a space and why one is faster."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two candidates: knobs, memory terms, time breakdown, and why one is faster",
        description="Points are written as for --point: `tp=2,pp=4,recompute=full(8)`; unnamed knobs take "
        "their default where the space allows it, else the first value of their axis. Give them as two arguments or with --a and --b.",
    )
    p.add_argument("file", help="a .prx file with a space")
    p.add_argument("points", nargs="*", metavar="POINT", help="the two candidates (A then B)")
    p.add_argument("--a", help="candidate A")
    p.add_argument("--b", help="candidate B")
    p.add_argument("--space", help="the space's name when the file defines several")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.report.explain import diff_candidates

    return diff_candidates(args)
