"""``primusc report TRACE``: rebuild a plan's HTML report from its JSONL search trace."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="write the HTML report of a search from its trace",
        description="Reads the JSONL trace of `primusc plan --trace FILE` and writes one self-contained HTML "
        "file. With the space (from the trace, or --space) the report also shows exact memory terms and the "
        "winner's pipeline timeline.",
    )
    p.add_argument("trace", help="the JSONL trace written by `primusc plan --trace`")
    p.add_argument("--out", default="report.html",
                   help="where to write the HTML (default: report.html); an existing file is kept unless --force")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--space", dest="space_file", help="the .prx file the search ran on (default: from the trace)")
    p.add_argument("--space-name", help="the space's name when the file defines several (default: from the trace)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands._options import check_outputs
    from primus_lang.report.rebuild import report_from_trace

    target = Path(args.out)
    check_outputs(None, {"out": target}, args.force)
    out = report_from_trace(Path(args.trace), Path(args.out), args.space_file, args.space_name)
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0
