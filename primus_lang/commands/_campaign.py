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

import attrs

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
    from primus_lang.emit import FOLDER, campaign_variables, file_names, resolve_variables

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


def shortlist(space: Any, ranked: tuple[Any, ...], target: str, k: int, baseline: Any = None) -> list[Any]:
    """``k`` trials of ``ranked`` (the tied group first) that ``target`` can express, spread over layouts:
    each first pick differs from the ones before in more than its recomputation depth (four recompute
    depths of one layout measure one decision), then the rest in order; and ``baseline`` (the space's
    own recipe) among them when there is one, so the campaign says whether the plan beats it."""
    from primus_lang.emit import unsupported

    def expressible(t: Any) -> bool:
        return t is not None and t.candidate is not None and t.evaluation is not None \
            and not unsupported(space, t.candidate, target)

    def layout(t: Any) -> Any:
        return attrs.evolve(t.candidate, recompute=type(t.candidate.recompute)()), t.candidate.recompute.kind

    usable = [t for t in ranked if expressible(t)]
    room = k - 1 if expressible(baseline) and all(t.candidate != baseline.candidate for t in usable[:k]) else k
    chosen: list[Any] = []
    seen: set[Any] = set()
    for t in usable:  # a new layout each
        if len(chosen) < room and layout(t) not in seen:
            chosen.append(t)
            seen.add(layout(t))
    for t in usable:  # then the best of what is left
        if len(chosen) < room and t not in chosen:
            chosen.append(t)
    if room < k:
        chosen.append(baseline)
    return chosen


def write(args: argparse.Namespace, source: Path, space: Any, settled: Any, target: str, out: Path,
          replace: Callable[[Path], bool], baseline: Any = None) -> tuple[list[str], str]:
    """Write the campaign; the paths written and a sentence for the terminal."""
    from primus_lang.commands.emit import executable, parse_vars, print_warnings
    from primus_lang.emit import FOLDER, EmitContext, Job, left_out
    from primus_lang.emit import campaign_files as campaign
    from primus_lang.outputs import write_files

    tied = {id(t) for t in settled.tied}
    trials = shortlist(space, settled.ranked, target, args.shortlist, baseline)
    ours = baseline.candidate if baseline is not None else None
    jobs = [Job(t.candidate, t.evaluation.tokens_per_gpu, t.evaluation.step_time, id(t) in tied,
                t.candidate == ours) for t in trials]
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
    # a job whose launch leaves out a setting of the imported recipe says so, as `emit` does; and the slowest job's
    # time against the campaign's limit (a trial's `--campaign-var time_limit=00:05:00` killed every job unsaid)
    from primus_lang.emit import START_UP_S, campaign_variables, time_warnings

    slowest = max(jobs, key=lambda job: job.step_time)
    given = campaign_variables(parse_vars(args.var), parse_vars(args.campaign_var))
    print_warnings(left_out(space, [job.candidate for job in jobs], target, ctx)
                   + time_warnings(space, target, slowest.step_time, given, START_UP_S, slowest.candidate.gbs),
                   args.error_format)
    # the logs of an earlier campaign in this folder stay (--force replaces what primusc wrote, never a run's
    # log), and `learn` would read them as these jobs'
    earlier = sorted(str(p.relative_to(root)) for p in root.glob("job-*/*.log")) if root.is_dir() else []
    # written from --out, not from the campaign folder: a link planted as `campaign` is refused as any
    # link below --out is, not followed
    written = write_files(out, {f"{FOLDER}/{rel}": text for rel, text in files.items()},
                          force=lambda rel: replace(out / rel), executable=executable)
    if earlier:
        import sys

        print(f"note: `{root}` already holds {len(earlier)} log(s) of an earlier campaign ({', '.join(earlier[:3])}"
              f"{', ...' if len(earlier) > 3 else ''}): `primusc learn` would read them as these jobs'; move them "
              "away before running the new jobs (learn notes a log written before the campaign's manifest)",
              file=sys.stderr)
    short = f" ({len(jobs)} of the {args.shortlist} asked: the others are not evaluated or the target cannot " \
            "express them)" if len(jobs) < args.shortlist else ""
    return [str(p) for p in written], (f"campaign: {len(jobs)} jobs{short} in {root}; run them, then "
                                       f"`primusc learn {root}`")
