"""``primusc check FILE``: parse, lower and count the legal points of each space.

The report is built from sections: ``SECTIONS`` holds functions ``(space, summary, args) -> lines``;
the legality summary is the first, and later stages (the memory account) append their own.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path

from attrs import frozen

from primus_lang.check import (
    LegalitySummary,
    never_legal,
    require_legal,
    ruled_out_together,
    summarize,
)
from primus_lang.commands._options import add_cluster_argument
from primus_lang.diagnostics import CompileError
from primus_lang.emit import Inexpressible, check_target, inexpressible, target_warnings
from primus_lang.ir import Recompute, Space, serialize
from primus_lang.ir.candidate import format_value
from primus_lang.ir.serialize import to_data
from primus_lang.lower import load_program, pick_space


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="check a .prx file: names, units, domains and Megatron's legality rules")
    p.add_argument("file", nargs="+", help="the .prx file (several are each checked: a pre-commit hook passes them)")
    p.set_defaults(positional_rest="file")
    p.add_argument("--importers", action="store_true",
                   help="also check every .prx file of the repository that imports one of the files, directly or "
                        "through another (a library change that breaks a space built on it)")
    p.add_argument("--list", action="store_true",
                   help="with --importers: print the files it would check, one a line, and check none")
    p.add_argument("--space", help="check only this space")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--explain", action="store_true", help="print the memory account of --point term by term")
    p.add_argument("--point", help="the candidate for --explain, e.g. `tp=2,pp=4,recompute=full(8)`")
    add_cluster_argument(p)
    p.set_defaults(func=run)


def _first_cluster(space: Space) -> str:
    """The cluster the summary counts on: with cluster axes, the first they span, named for its values."""
    from primus_lang.ir import cluster_points

    return cluster_points(space)[0][1].cluster.name


def legality_lines(space: Space, summary: LegalitySummary, args: argparse.Namespace) -> list[str]:
    """The legality summary: raw size, removals per rule, what remains."""
    from primus_lang.commands._capacity import shape_note

    width = max([len(f"{r.removed:,}") for r in summary.rules] + [len(f"{summary.raw:,}")])
    shape = shape_note(space)
    lines = [
        f"space {space.name}: {space.model.name} on {_first_cluster(space)} ({space.cluster.world} GPUs)",
        *([f"  note: {shape}"] if shape else []),
        f"  raw points      {summary.raw:>{width},}",
    ]
    for r in summary.rules:
        if r.removed:
            what = r.detail if r.code == "P4100" else r.rule
            lines.append(f"  - {r.removed:>{width},}  {r.code} {what}")
    lines.append(
        f"  legal points    {summary.legal:>{width},}   (checked in {summary.seconds * 1000:.0f} ms)"
    )
    lines += [f"  no effect: recompute module `{module}` ({why})" for module, why in _idle_modules(space)]
    # with cluster axes the counts are the first cluster's, and what it rules out another may allow (FP8 on A100)
    never = "never legal on this first cluster" if space.cluster_axes else "never legal"
    if summary.legal:
        for axis, value, code, detail, among in never_legal(space):
            if code:
                # a space has many `require`s under one code: the one that rules the value out is named; and a
                # default the space does not write, where it is the cause
                hint = _DEFAULT_CAUSES.get((code, axis), "")
                which = "every point with it the other rules allow" if among else "every point with it"
                lines.append(f"  {never}: {axis} = {format_value(value)} ({which} breaks {code}"
                             f"{f' ({detail})' if detail else ''}; `primusc explain {code}`{hint})")
            else:
                why = ruled_out_together(space, axis, value) or "the checks rule it out together"
                lines.append(f"  {never}: {axis} = {format_value(value)} ({why})")
    return lines


# A never-legal value that a knob's default, not anything the space writes, rules out: what to write
_DEFAULT_CAUSES = {
    ("P4014", "sharding"): "; `overlap_param_gather` is true unless the space sets it: list `overlap_param_gather : "
                           "true | false` to keep plain data parallelism",
}


def _idle_modules(space: Space) -> list[tuple[str, str]]:
    """The selective recompute modules the space writes that find nothing of its model to recompute."""
    written = [v for a in space.axes if a.name == "recompute" for v in a.domain.values]
    written += [v for name, v in space.fixed if name == "recompute"]
    modules = dict.fromkeys(m for r in written if isinstance(r, Recompute) for m in r.modules)
    return [(m, why) for m in modules if (why := space.model.idle_recompute_module(m))]


def target_lines(space: Space, summary: LegalitySummary, args: argparse.Namespace) -> list[str]:
    """Legal values the space's target cannot express (P7001 at emission): `plan` would launch
    another recipe than the best, so say so before the search."""
    target = space.settings.target
    said = [f"  warning {d.code.id}: {d.message}" for d in target_warnings(space, target)]
    try:  # what `plan` and `emit` refuse before they start, without the `--var`s they may be given
        check_target(space, target, {})
    except CompileError as refused:
        said += [f"  warning {d.code.id}: {d.message} (`plan` and `emit` stop on it: {d.help})"
                 for d in refused.diagnostics]
    found = _inexpressible(space)
    if not found:
        return said
    lines = [*said, f"  warning P7001: target `{target}` cannot express some legal points:"]
    for item in found:
        # a framework's reason names the knob and value it refuses (`schedule` = zbv: ...)
        named = item.values and all(f"`{v.split(' = ')[0]}`" in item.reason for v in item.values)
        where = "" if named else (", ".join(item.values) if item.values else "every legal point") + ": "
        lines.append(f"    {where}{item.reason}")
    if any(not item.values for item in found):
        lines.append("    `plan` stops on it before it launches anything (P7001); change what the reason names or "
                     "`target`")
    else:
        lines.append("    `plan` launches the best evaluated recipe the target can express; narrow the axis or "
                     "change `target` to search only what it can launch")
    return lines


def memory_lines(space: Space, summary: LegalitySummary, args: argparse.Namespace) -> list[str]:
    """Nothing when some legal point fits in memory (`project` counts them); otherwise say so, with
    the least peak and the smallest cluster, in doublings of the nodes, on which a point would fit."""
    if not summary.legal:
        return []
    from primus_lang.search import fewest_nodes, least_peak, usable_bytes_of

    _, least, fits = least_peak(space)
    if fits:
        return []
    limit = usable_bytes_of(space)
    lines = [
        f"  warning: {_none_fits(summary.legal)}: the least peak is "
        f"{least / 2**30:.1f} GiB per GPU, {limit / 2**30:.1f} GiB usable",
    ]
    nodes, legal, tried = fewest_nodes(space)
    if nodes:
        lines.append(f"    with {nodes:,} nodes ({nodes * space.cluster.gpus_per_node:,} GPUs) at least one "
                     f"of its {legal:,} legal point{'s' if legal != 1 else ''} would fit")
    else:
        lines.append(f"    none would fit on up to {tried:,} nodes either")
    lines.append("    add recompute, larger TP/PP/CP/EP or a smaller MBS to the axes; `primusc check --explain "
                 "--point ...` shows one point's account term by term")
    return lines


def _none_fits(legal: int) -> str:
    if legal == 1:
        return "the only legal point does not fit in memory"
    return f"none of the {legal:,} legal points fits in memory"


@frozen
class ClusterCount:
    """One cluster a space's cluster axes span: its legal points, whether one fits, the least peak."""

    cluster: str
    gpus: int
    legal: int
    fits: bool
    least_peak: int  # bytes per GPU (0: no legal point)
    usable: int  # bytes per GPU the space's headroom leaves
    excluded: str = ""  # a `require` on the GPU count it fails, as `plan` words it ("" when none)


def cluster_counts(space: Space) -> list[ClusterCount]:
    from primus_lang.ir import cluster_points
    from primus_lang.search import fails_unsearched, least_peak, usable_bytes_of

    out: list[ClusterCount] = []
    for label, sub in cluster_points(space) if space.cluster_axes else ():
        excluded = fails_unsearched(space, sub.cluster.world)
        if excluded:  # plan searches nothing there, and neither need the counts
            out.append(ClusterCount(label, sub.cluster.world, 0, False, 0, usable_bytes_of(sub), excluded))
            continue
        legal, least, fits = least_peak(sub)
        out.append(ClusterCount(label, sub.cluster.world, legal, fits, max(least, 0), usable_bytes_of(sub)))
    return out


def cluster_lines(space: Space, summary: LegalitySummary, args: argparse.Namespace) -> list[str]:
    """With cluster axes, the counts above are on the first cluster: the legal points of each, and
    whether any fits in memory (`plan` searches each)."""
    counts = cluster_counts(space)
    if not counts:
        return []
    sizes = " x ".join(f"{a.name} {len(a.values)}" for a in space.cluster_axes)
    lines = [f"  {len(counts)} clusters ({sizes}); the counts above are on the first, {counts[0].cluster}; "
             "`plan` searches each:"]
    for c in counts:
        if c.excluded:
            lines.append(f"    {c.cluster} ({c.gpus:,} GPUs): set aside, {c.excluded}")
            continue
        fit = "some fit in memory" if c.fits else (
            f"none fits: least peak {c.least_peak / 2**30:.1f} GiB of {c.usable / 2**30:.1f} GiB usable"
            if c.legal else "none is legal")
        lines.append(f"    {c.cluster} ({c.gpus:,} GPUs): {c.legal:,} legal, {fit}")
    return lines


Section = Callable[[Space, LegalitySummary, argparse.Namespace], list[str]]
SECTIONS: list[Section] = [legality_lines, memory_lines, target_lines, cluster_lines]


def run(args: argparse.Namespace) -> int:
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_names import BAD_ARGUMENT

    files = [args.file] if isinstance(args.file, str) else list(args.file)
    if getattr(args, "importers", False):
        from primus_lang.commands._importers import importers

        files += [_shown(p) for p in importers(Path(f) for f in files)]
        if args.list:
            print("\n".join(files))
            return 0
    if len(files) == 1:
        return _run_one(files[0], args)
    if args.space or args.explain or args.point or args.json:
        raise CompileError(Diagnostic(BAD_ARGUMENT, "`--space`, `--explain`, `--point` and `--json` take one file",
                                      help=f"got {len(files)} files; check them one at a time"))
    errors: list[Diagnostic] = []
    for file in files:
        try:
            _run_one(file, args)
        except CompileError as err:
            errors.extend(err.diagnostics)  # every file's problems at once, as a hook should show them
    if errors:
        raise CompileError(errors)
    return 0


def _shown(path: Path) -> str:
    """``path`` as the user would type it: relative to the working folder where it lies below it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _run_one(file: str, args: argparse.Namespace) -> int:
    program = load_program(file)
    spaces = [pick_space(program, args.space)] if args.space else list(program.spaces)
    if getattr(args, "explain", False) and getattr(args, "point", None):
        from primus_lang.commands._capacity import on_cluster

        return _explain_point(on_cluster(spaces[0], args), args.point, args.json, args.error_format)
    if getattr(args, "cluster", None):
        from primus_lang.diagnostics import Diagnostic
        from primus_lang.diagnostics.codes_names import BAD_ARGUMENT

        raise CompileError(Diagnostic(BAD_ARGUMENT, "`--cluster` chooses the cluster of `--explain --point`",
                                      help="the summary counts every cluster a space's axes span"))
    summaries = [(space, summarize(space)) for space in spaces]
    from primus_lang.search import all_set_aside

    set_aside = [d for space, _ in summaries if (d := all_set_aside(space)) is not None]
    if set_aside:
        raise CompileError(set_aside)  # plan would search no cluster of them
    for space, summary in summaries:
        # the summary is on a space's first cluster; another of its clusters may hold what that one does not
        if not (space.cluster_axes and any(c.legal for c in cluster_counts(space))):
            require_legal(space, summary)
    if args.json:
        print(
            serialize.to_json({
                    "file": program.file,
                    "models": len(program.models),
                    "gpus": len(program.gpus),
                    "clusters": len(program.clusters),
                    "spaces": [to_data(s) for _, s in summaries],
                    # per space: what its target cannot express, and the axis values that bring it
                    "inexpressible": {space.name: [{"reason": i.reason, "values": list(i.values)}
                                                   for i in _inexpressible(space)] for space, _ in summaries},
                    # per space with cluster axes: each cluster's counts (the summary's are on the first)
                    "cluster_points": {space.name: cluster_counts(space) for space, _ in summaries
                                       if space.cluster_axes},
                })
        )
        return _unlaunchable(spaces, args.error_format)
    # what the file itself defines: a space that imports its model card or GPU from the stdlib counts none
    defined = ", ".join(f"{n} {word if n == 1 else plural}" for n, word, plural in (
        (len(program.models), "model", "models"), (len(program.gpus), "GPU", "GPUs"),
        (len(program.clusters), "cluster", "clusters"), (len(program.spaces), "space", "spaces")) if n)
    print(f"{program.file}: ok (defines {defined or 'nothing'})")
    for space, summary in summaries:
        for section in SECTIONS:
            for line in _section_lines(section, space, summary, args):
                print(line)
    return _unlaunchable(spaces, args.error_format)


@functools.lru_cache(maxsize=8)
def _inexpressible(space: Space) -> list[Inexpressible]:
    """``inexpressible`` once per space: its report lines and the exit status both read it (half a second
    on the largest example)."""
    return inexpressible(space)


def _unlaunchable(spaces: list[Space], error_format: str) -> int:
    """1, with P7001 on stderr, where a space's target can launch none of its legal points: `plan` stops
    on it, so the pre-commit hook that runs `check` must not pass it."""
    import sys

    from primus_lang.diagnostics import Diagnostic, render
    from primus_lang.diagnostics.codes_emit import UNSUPPORTED

    out = [Diagnostic(UNSUPPORTED, f"space `{space.name}`: target `{space.settings.target}` can launch none of its "
                      f"legal points: {item.reason}", help="change what the reason names, or `target` (see "
                      "`primusc explain P7001`)")
           for space in spaces for item in _inexpressible(space) if not item.values]
    if out:
        print(render(out, error_format), file=sys.stderr)
    return 1 if out else 0


def _section_lines(section: Section, space: Space, summary: LegalitySummary, args: argparse.Namespace) -> list[str]:
    """A section's lines; a space too large to walk (P4190) keeps its counts and says what was not walked."""
    from primus_lang.diagnostics import CompileError
    from primus_lang.diagnostics.codes_legality import SPACE_TOO_LARGE

    try:
        return section(space, summary, args)
    except CompileError as err:
        if not all(d.code is SPACE_TOO_LARGE for d in err.diagnostics):
            raise
        name = section.__name__.removesuffix("_lines")
        return [f"  warning {d.code.id}: {name} not checked: {d.message}" for d in err.diagnostics]


def _explain_point(space: Space, point: str, as_json: bool, error_format: str) -> int:
    """``check --explain --point``: print the account of ``point`` in ``space``; the exit status is 1
    when it does not fit or is not a legal point (its account is still printed: what an illegal point
    would hold is often the question, but the reader must know it cannot run, and a refused split is
    accounted by its knobs alone)."""
    from rich.console import Console

    from primus_lang.check import legality
    from primus_lang.commands._options import read_point
    from primus_lang.diagnostics import render
    from primus_lang.memory import account, account_to_json, explain_overflow, render_account

    cand = read_point(space, point, error_format)
    broken = [f"{v.code} {v.message}" for v in legality(space, cand)]
    headroom = space.headroom
    acc = account(space.model, space.cluster, cand, space.settings)
    if as_json:
        c = space.cluster
        data = {"space": space.name, "point": cand.label(), "violations": broken,
                "cluster": {"name": c.name, "nodes": c.nodes, "gpus_per_node": c.gpus_per_node, "gpu": c.gpu.name},
                **account_to_json(acc, headroom)}
        print(serialize.to_json(data))
    else:
        out = Console()
        out.print(f"space {space.name}: {cand.label()} on {space.cluster.name} ({space.cluster.world} GPUs)")
        if broken:
            out.print("this point is not a legal point of the space:", *(f"  {b}" for b in broken), sep="\n",
                      markup=False, highlight=False)
        out.print(render_account(acc, headroom))
        if not acc.fits(headroom):
            out.print(render([explain_overflow(acc, headroom)]), markup=False, highlight=False)
    from primus_lang.commands._candidates import nearer_point, say_illegal

    say_illegal(space.name, cand.label(), broken, error_format, nearer_point(space, point, cand) if broken else None)
    return 0 if acc.fits(headroom) and not broken else 1
