"""``primusc emit FILE --point ... --target F+L --out DIR``: write the launch files of one point."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from primus_lang.commands._capacity import on_cluster
from primus_lang.commands._options import add_space_arguments
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_emit import BAD_VARIABLE, OUTPUT_NOT_EMPTY
from primus_lang.emit import (
    START_UP_S,
    TARGETS,
    VARIABLES,
    EmitContext,
    emit,
    left_out,
    refuse_illegal,
    target_warnings,
    time_warnings,
    tokenizer_warnings,
)
from primus_lang.ir import Candidate, Space
from primus_lang.ir.serialize import to_data


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "emit",
        help="write runnable launch files for one point of a space",
        description="Write the launch files (Megatron-LM, Primus or Megatron-Bridge; Slurm, Kubernetes or a "
        "node) for one point of a space, with a manifest.json recording what and from what.",
        epilog="variables: " + "; ".join(f"{v.name} ({v.doc})" for v in VARIABLES.values()),
    )
    add_space_arguments(p)
    p.add_argument("--point", required=True, help="knob values, e.g. tp=2,pp=4,mbs=1")
    p.add_argument("--target", default=None, help=f"framework+launcher, one of {', '.join(TARGETS)} "
                   "(default: the space's `target`)")
    p.add_argument("--out", required=True, help="output folder: empty, or holding only what primusc wrote there "
                   "and nobody changed since (replaced, and what is not written again removed), unless --force")
    p.add_argument("--force", action="store_true", help="write into a folder that holds other files, replacing "
                   "same-named ones")
    p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="an emission variable")
    p.set_defaults(func=run)


def parse_vars(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CompileError(
                Diagnostic(BAD_VARIABLE, f"`--var {item}` is not NAME=VALUE", help="e.g. `--var partition=gpu`")
            )
        out[name.strip()] = value
    return out


def figures(space: Space, cand: Candidate, acc: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The projection and memory account recorded in the manifest (``acc``: the account, if the caller
    has it already)."""
    from primus_lang.memory import account
    from primus_lang.project import project
    from primus_lang.validate import trust

    memory: dict[str, Any] = to_data(acc if acc is not None else account(space.model, space.cluster, cand,
                                                                            space.settings))
    projected = project(space.model, space.cluster, cand, space.settings)
    full = to_data(projected)
    # The per-op timeline is for the report; the manifest keeps the figures and their breakdown, and the band
    # `project` and `plan` state beside them (why it is widened, where it is)
    projection = {k: v for k, v in full.items() if k != "timeline"}
    projection["band"] = to_data(trust.band_on(space, cand, projected))
    return projection, memory


def refuse_non_empty(out: Path, force: bool, own: set[Path] | frozenset[Path] = frozenset()) -> None:
    """Refuse an ``out`` that holds files other than ``own`` (what primusc wrote there, unchanged since:
    its ledger's), unless ``force``: nothing the user put or changed there is replaced without asking."""
    from primus_lang.outputs import foreign_files

    if out.exists() and not out.is_dir():
        raise CompileError(Diagnostic(OUTPUT_NOT_EMPTY, f"output folder `{out}` is a file", help="choose another --out"))
    others = foreign_files(out, set(own)) if out.exists() and not force else []
    if others:
        named = ", ".join(str(p.relative_to(out)) for p in others[:3]) + (", ..." if len(others) > 3 else "")
        raise CompileError(Diagnostic(
            OUTPUT_NOT_EMPTY, f"output folder `{out}` holds files primusc did not write there, or that were changed "
            f"since: {named}", help="pass --force to write into it (same-named files are replaced), or choose "
            "another --out"))


def executable(rel: str) -> bool:
    return rel.endswith((".sh", ".sbatch"))


def write_files(out: Path, files: dict[str, str], force: bool) -> list[str]:
    """Write ``files`` into ``out`` as ``refuse_non_empty`` allows, keeping its ledger: the notes that say
    what was removed or replaced."""
    from primus_lang.outputs import keep_ledger, written_before
    from primus_lang.outputs import write_files as write

    prior, edited = written_before(out)
    refuse_non_empty(out, force, prior)
    mine = {p.resolve() for p in prior}
    written = write(out, files, force=lambda rel: force or (out / rel).resolve() in mine, executable=executable)
    return keep_ledger(out, written, prior, edited)


def print_warnings(found: list[Diagnostic], error_format: str) -> None:
    import sys

    from primus_lang.diagnostics import render

    if found:
        print(render(found, error_format), file=sys.stderr)


def _refuse_illegal(space: Space, cand: Candidate, point: str) -> None:
    """``refuse_illegal``, its help naming a legal ``--point`` that keeps the knobs the user named."""
    import attrs

    from primus_lang.commands._candidates import nearer_help, nearer_point

    try:
        refuse_illegal(space, cand)
    except CompileError as err:
        help = nearer_help(nearer_point(space, point, cand))
        if help is None:
            raise
        raise CompileError([attrs.evolve(d, help=help) for d in err.diagnostics]) from None


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands._options import launched_space, read_point, refuse_overflow_but_the_recipe
    from primus_lang.lower import load_space
    from primus_lang.memory import account
    from primus_lang.outputs import written_before

    out = Path(args.out)
    refuse_non_empty(out, args.force, written_before(out)[0])
    source = Path(args.file)
    space: Space = on_cluster(load_space(source, args.space), args)
    cand: Candidate = read_point(space, args.point, args.error_format)
    target = args.target or space.settings.target
    # judged as the chosen target launches it (its FSDP, its argument checks, the releases `--var` names),
    # not as the space's own
    space = launched_space(space, target, parse_vars(args.var))
    # The figures need a pipeline split Megatron accepts: an illegal point is refused before them.
    _refuse_illegal(space, cand, args.point)
    acc = account(space.model, space.cluster, cand, space.settings)
    source_target = space.settings.source_target
    change = space.settings.launch_change(cand)
    refuse_overflow_but_the_recipe(space, cand, acc, "emitted", args.error_format,
                                   f" for {target}, which launches it otherwise than the space's own "
                                   f"{source_target}" + (f" ({change})" if change else "") if source_target else "")
    projection, memory = figures(space, cand, acc)
    ctx = EmitContext(
        source_name=source.name,
        source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(),
        projection=projection,
        memory=memory,
        variables=parse_vars(args.var),
    )
    files = emit(space, cand, target, ctx)
    # what `project` says of the point's projection (W6012 beyond the profile's runs, W6003, W6010), said here too
    from primus_lang.commands._options import warn_trust
    from primus_lang.validate import trust

    host = trust.host_share(SimpleNamespace(**projection))  # the manifest's figures, read as a Projection's
    warn_trust(space.cluster.gpu, [(cand.label(), float(projection["mfu"]))], args.error_format, space.model,
               [(cand, space.cluster.world, host)], trust.target_stack(target))
    from primus_lang.commands._capacity import rate, requirement_warnings

    print_warnings(target_warnings(space, target) + tokenizer_warnings(space, target, parse_vars(args.var))
                   + left_out(space, cand, target, ctx)
                   + requirement_warnings(space, rate(float(projection["tokens_per_gpu"]), None), cand,
                                          getattr(args, "cluster", None)), args.error_format)
    # the iterations the launch runs against the scheduler's limit, as plan says of its winner
    print_warnings(time_warnings(space, target, float(projection["step_time"]), parse_vars(args.var), START_UP_S,
                                 cand.gbs), args.error_format)
    for note in write_files(out, files, args.force):
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {len(files)} files to {out} for `{cand.label()}` ({target})")
    return 0
