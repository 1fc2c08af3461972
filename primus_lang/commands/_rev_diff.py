"""The `--rev` mode of ``primusc diff``: load the space at each revision, then report."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from primus_lang.commands._rev_report import Side, as_json, changes, render, side
from primus_lang.commands._revisions import checkout, commit_of, locate, renamed
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import DIFF_REVISIONS
from primus_lang.ir import serialize
from primus_lang.ir.space import Space
from primus_lang.lower import load_space

MAX_BUDGET = 100_000
DEFAULT_BUDGET = 200  # evaluations a side, where neither revision's space gives its own


def _load(file: str, rev: str | None, name: str | None, tmp: Path) -> tuple[str, Space]:
    if rev is None:
        return "work tree", load_space(file, name)
    where = locate(file)
    commit = commit_of(where, rev)
    dest = tmp / commit
    path = checkout(where, commit, dest)
    label = f"{rev} ({commit[:8]})" if not commit.startswith(rev) else commit[:8]
    try:
        return label, load_space(path, name)
    except CompileError as err:
        raise renamed(err, dest, rev) from None


def run_revisions(args: argparse.Namespace, points: list[str]) -> int:
    revs = list(args.rev)
    if points or len(revs) > 2:
        raise CompileError(Diagnostic(
            DIFF_REVISIONS, f"`diff --rev` takes one or two revisions and no points, got {len(revs)} and {len(points)}",
            help="`primusc diff --rev main --rev HEAD FILE`, or `primusc diff FILE A B` for two points"))
    if args.budget is not None and not 1 <= args.budget <= MAX_BUDGET:
        raise CompileError(Diagnostic(DIFF_REVISIONS, f"`--budget` is {args.budget}, not 1 to {MAX_BUDGET:,}",
                                      help="evaluations of each side's search; the space's own budget is the default"))
    file = args.file
    with tempfile.TemporaryDirectory(prefix="primusc-rev-") as tmp:
        la, a = _load(file, revs[0], args.space, Path(tmp))
        lb, b = _load(file, revs[1] if len(revs) > 1 else None, args.space, Path(tmp))
    seed = a.settings.seed
    # one budget for both sides, so that a winner moves for the space's change, not the search's
    budget = args.budget or b.budget.evaluations or a.budget.evaluations or DEFAULT_BUDGET
    sa: Side = side(la, a, budget, seed)
    sb: Side = side(lb, b, budget, seed)
    changed = changes(a, b)
    if args.json:
        print(serialize.to_json(as_json(sa, sb, changed)))
    else:
        print(render(sa, sb, changed, budget, args.markdown))
    return 0
