"""``primusc plan --shortlist K``: the campaign that measures the plan's top candidates.

Kept apart from ``plan.py`` so that a plan without ``--shortlist`` runs exactly the code it ran
before. The leading underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from primus_lang.commands._options import natural
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import BAD_SHORTLIST

MAX_JOBS = 64  # a campaign measures a shortlist, not a space: more is a sweep for a scheduler of its own


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shortlist", type=natural, default=None, metavar="K",
                   help="also write <out>/campaign/: a job per top-K candidate (the tied group first), run for a "
                        "few dozen iterations on your cluster to decide by measurement; see docs/emit.md")
    p.add_argument("--campaign-var", action="append", default=[], metavar="NAME=VALUE",
                   help="an emission variable for the campaign's jobs only (e.g. train_iters=50, time_limit=00:40:00)")


def check(args: argparse.Namespace, out: Path, target: str) -> tuple[Path, ...]:
    """Refuse a shortlist that cannot be written, before the search; the campaign's paths."""
    from primus_lang.commands.emit import parse_vars
    from primus_lang.emit.campaign import FOLDER, campaign_variables, file_names
    from primus_lang.emit.context import resolve_variables

    k = args.shortlist
    if k is None:
        if args.campaign_var:
            raise CompileError(Diagnostic(BAD_SHORTLIST, "--campaign-var without --shortlist writes no campaign",
                                          help="add --shortlist K"))
        return ()
    if not 1 <= k <= MAX_JOBS:
        raise CompileError(Diagnostic(BAD_SHORTLIST, f"--shortlist {k} is not from 1 to {MAX_JOBS}",
                                      help="a campaign measures a handful of candidates: try --shortlist 4"))
    if args.no_emit:
        raise CompileError(Diagnostic(BAD_SHORTLIST, "--shortlist with --no-emit: a campaign is launch files",
                                      help="drop --no-emit, or drop --shortlist"))
    resolve_variables(campaign_variables(parse_vars(args.var), parse_vars(args.campaign_var)), "x")
    return tuple(out / FOLDER / rel for rel in file_names(target, k))


def shortlist(space: Any, ranked: tuple[Any, ...], target: str, k: int) -> list[Any]:
    """The first ``k`` trials of ``ranked`` (the tied group first) that ``target`` can express."""
    from primus_lang.emit import unsupported

    chosen = []
    for trial in ranked:
        if trial.candidate is not None and trial.evaluation is not None and not unsupported(space, trial.candidate,
                                                                                             target):
            chosen.append(trial)
        if len(chosen) == k:
            break
    return chosen


def write(args: argparse.Namespace, source: Path, space: Any, settled: Any, target: str, out: Path,
          replace: Callable[[Path], bool]) -> tuple[list[str], str]:
    """Write the campaign; the paths written and a sentence for the terminal."""
    from primus_lang.commands.emit import executable, parse_vars
    from primus_lang.emit import EmitContext
    from primus_lang.emit.campaign import FOLDER, Job, campaign
    from primus_lang.outputs import write_files

    tied = {id(t) for t in settled.tied}
    trials = shortlist(space, settled.ranked, target, args.shortlist)
    jobs = [Job(t.candidate, t.evaluation.tokens_per_gpu, t.evaluation.step_time, id(t) in tied) for t in trials]
    if not jobs:
        return [], "no candidate the target can express: no campaign written"
    root = out / FOLDER
    gpu = space.cluster.gpu
    defined = Path(gpu.span.file) if gpu.span is not None and not gpu.span.file.startswith("<") else None
    profile_file = os.path.relpath(defined.resolve(), root.resolve()) if defined is not None else ""
    ctx = EmitContext(source_name=source.name, source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(),
                      variables=parse_vars(args.var))
    files = campaign(space, jobs, target, ctx, parse_vars(args.campaign_var), profile_file,
                     os.path.relpath(source.resolve(), root.resolve()))
    # written from --out, not from the campaign folder: a link planted as `campaign` is refused as any
    # link below --out is, not followed
    written = write_files(out, {f"{FOLDER}/{rel}": text for rel, text in files.items()},
                          force=lambda rel: replace(out / rel), executable=executable)
    short = f" ({len(jobs)} of the {args.shortlist} asked: the others are not evaluated or the target cannot " \
            "express them)" if len(jobs) < args.shortlist else ""
    return [str(p) for p in written], (f"campaign: {len(jobs)} jobs{short} in {root}; run them, then "
                                       f"`primusc learn {root}`")
