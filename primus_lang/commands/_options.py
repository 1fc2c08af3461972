"""Options several commands share, declared once so they read and behave the same everywhere.

The leading underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from primus_lang.bench import ORACLE_KINDS
from primus_lang.datafiles import read_count
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import OUT_NOT_EMPTY

if TYPE_CHECKING:
    from primus_lang.ir import Candidate, Cluster, Gpu, Model, Settings, Space
    from primus_lang.memory import MemoryAccount
    from primus_lang.project import Oracle


def natural(text: str) -> int:
    """An argparse ``type`` for a count or a seed: a whole number of ASCII digits, 0 or more (``int``
    alone takes ``-1``, which a seed or a limit reads as something else or fails on deep inside)."""
    try:
        return read_count(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def whole_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for a count with a physical ceiling: ``natural`` from ``low`` to ``high``
    (a count of 10^30 seeds or a 1 TiB message is accepted by ``int`` and then runs for ever)."""

    def read(text: str) -> int:
        value = natural(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"`{text}` is not a whole number from {low:,} to {high:,}")
        return value

    return read


def positive(text: str) -> float:
    """An argparse ``type`` for a scale: a finite number above 0 (``float`` alone takes ``nan``, ``inf``,
    ``0`` and ``-1``, which a prior's width divides by or turns every fit into NaN with)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"`{text}` is not a finite number above 0")
    return value


def positive_up_to(high: float) -> Callable[[str], float]:
    """``positive`` with a ceiling: seconds of repeats per kernel past a minute never end a campaign."""

    def read(text: str) -> float:
        value = positive(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"`{text}` is above {high:g}")
        return value

    return read


def add_space_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the .prx file")
    p.add_argument("--space", default=None, help="the space's name when the file defines several")
    add_cluster_argument(p)


class _Once(argparse.Action):
    """An option given at most once: argparse keeps the last of several silently (`diff --cluster A --cluster
    B` compared both points on B)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} given twice: a command runs on one cluster (plan's table compares them)")
        setattr(namespace, self.dest, values)


def add_cluster_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", default=None, metavar="LABEL", action=_Once,
                   help="with cluster axes: the cluster to use, as `plan`'s table names it (e.g. "
                        "gpu=b200_calibrated,nodes=16; default: `plan` the one its objective chooses, the other "
                        "commands the first the axes span)")


def add_oracle_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--oracle",
        choices=ORACLE_KINDS,
        default=None,
        help="simulate: hardware spec and efficiency curves, CPU only; benchmark: measure missing kernels on "
        "--device into --db; hybrid: the profile database where it has a shape, simulate elsewhere "
        "(default: the space's `assume oracle`, else simulate)",
    )
    p.add_argument("--device", default="cpu", help="device the benchmark oracle measures on (cpu, cuda:0)")
    p.add_argument("--db", default=None, help="profile database (default ~/.cache/primusc/profile.sqlite)")


def oracle_kind(args: argparse.Namespace, settings: Settings | None = None) -> str:
    chosen = getattr(args, "oracle", None)
    if chosen:
        return str(chosen)
    return settings.oracle if settings is not None else "simulate"


def build_oracle(
    args: argparse.Namespace, kind: str, cluster: Cluster, model: Model | None = None,
    cands: Iterable[Candidate] = (), settings: Settings | None = None,
) -> Oracle | None:
    """The oracle ``kind`` names for ``cluster``; None means the projection's own simulate oracle. A
    benchmark oracle is anchored on ``cands`` as ``settings``' target launches them (what the
    projection then asks it for)."""
    if kind == "simulate":
        return None
    from primus_lang.bench import make_oracle
    from primus_lang.ir import Settings as SpaceSettings

    launched = settings or SpaceSettings()
    return make_oracle(kind, args.device, args.db, cluster=cluster, model=model,
                       cands=(launched.as_launched(c) for c in cands))


def foreign_device(oracle: object, gpu: Gpu) -> str:
    """What a benchmark or hybrid oracle's timings are, where they were not measured on the space's GPU (a
    CPU, or a GPU of another name): its compute ops are that device's times, its collectives still the
    space's links simulated, so the profile's band says nothing of them; "" for the simulate oracle, or a
    device whose name names the space's GPU."""
    info = getattr(oracle, "device", None)
    if info is None:
        return ""
    family = gpu.name.split("_")[0].lower()  # h100_sxm_calibrated -> h100
    if info.kind != "cpu" and family and family in info.name.lower().replace(" ", ""):
        return ""
    return (f"its compute ops were timed on {info.name} ({info.device}), not on the space's {gpu.name}, and its "
            "collectives simulated on the space's links: the figures mix the two and show that the benchmark "
            "path runs, not how fast the space's GPU is")


def _replaceable(path: Path, keep: set[Path]) -> bool:
    """Whether ``path`` in an output folder is the plan's to replace: primusc's own lock or leftover, one of
    ``keep``, or a folder (a shortlist's `campaign`) that holds nothing else."""
    from primus_lang.outputs import ours

    if ours(path.name) or path.resolve() in keep:
        return True
    if path.is_dir() and not path.is_symlink():
        return all(_replaceable(p, keep) for p in path.iterdir())
    return False


def check_outputs(out: Path | None, files: dict[str, Path], force: bool, resume: Path | None = None,
                  own: Iterable[Path] = ()) -> None:
    """Refuse, before any work, to write where a user's files would be lost: into a non-empty ``out``
    folder, or over an existing file of ``files`` (keyed by their option's name) other than the trace
    ``resume`` continues and the files ``own`` a resumed plan wrote there itself. ``force`` allows
    both; a folder that is a file, and an output that is a link or a folder, are refused regardless."""
    from primus_lang.outputs import refuse_link, refuse_unwritable

    if out is not None and out.exists() and not out.is_dir():
        raise CompileError(Diagnostic(OUT_NOT_EMPTY, f"output folder `{out}` is a file", help="choose another --out"))
    for what, path in files.items():
        refuse_link(path, what)
        refuse_unwritable(path, what)
    if force:
        return
    keep = {p.resolve() for p in own} | ({resume.resolve()} if resume is not None else set())
    held = sorted(p.name for p in out.iterdir() if not _replaceable(p, keep)) if out is not None and out.exists() else []
    if held:
        shown = ", ".join(f"`{n}`" for n in held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        raise CompileError(
            Diagnostic(OUT_NOT_EMPTY, f"output folder `{out}` is not empty",
                       notes=(f"it holds {shown}: files no plan wrote there, or changed since one did",),
                       help="choose another --out, or pass --force to write into it")
        )
    for what, path in files.items():
        if path.exists() and path.resolve() not in keep:
            raise CompileError(
                Diagnostic(OUT_NOT_EMPTY, f"`{path}` already exists",
                           help=f"choose another --{what}, or pass --force to replace it")
            )


def warn_trust(gpu: Gpu, mfu: Iterable[tuple[str, float]], error_format: str = "human",
               model: Model | None = None, shown: Sequence[tuple[Candidate, int, float]] = (), stack: str = "") -> None:
    """W6002 (a profile never fitted) and W6003 (a projection above any measured MFU) on stderr, with
    the import or command that gives the space a fitted profile; W6010 for what ``model`` has that
    the projection does not cost; W6012 for the candidates of ``shown`` (each with its GPU count and
    its projection's ``trust.host_share``) beyond the runs the profile was fitted on."""
    import sys

    from primus_lang.diagnostics import render
    from primus_lang.project import feature_warnings
    from primus_lang.validate import trust

    found = trust.warnings(gpu, list(mfu), trust.fix_for(gpu), shown, model, stack)
    if model is not None:
        found += feature_warnings(model)
    if found:
        print(render(found, error_format), file=sys.stderr)


def read_point(space: Space, text: str, error_format: str = "human") -> Candidate:
    """A command's ``--point``: the candidate, with W6001 on stderr when the space would never search it."""
    import sys

    from primus_lang.check import outside_warning, parse_point
    from primus_lang.diagnostics import render

    cand = parse_point(space, text)
    warning = outside_warning(space, cand)
    if warning is not None:
        print(render([warning], error_format), file=sys.stderr)
    return cand


def refuse_overflow_but_the_recipe(space: Space, cand: Candidate, acc: MemoryAccount, what: str,
                                   error_format: str = "human", hint: str = "") -> None:
    """A ``--point`` that the account says does not fit is refused (P5001), but the space's own recipe
    (its ``baseline``) on the space's own target: someone ran it, so the command goes on and says so
    (W5002). Launched for another target (``Settings.source_target``), no one has."""
    import sys

    from primus_lang.check import baseline_point
    from primus_lang.diagnostics import render
    from primus_lang.diagnostics.codes_memory import RECIPE_OVER_MEMORY
    from primus_lang.memory import explain_overflow, refuse_overflow

    if cand == baseline_point(space) and not space.settings.source_target and not acc.fits(space.headroom):
        over = explain_overflow(acc, space.headroom)
        print(render([Diagnostic(RECIPE_OVER_MEMORY, f"the space's recipe `{cand.label()}` is {what} though the "
                                 f"account says it does not fit: {over.message}", notes=over.notes,
                                 help="if it runs as it is, the account overcounts it; `primusc check FILE "
                                      "--explain --point baseline` lists its terms")], error_format), file=sys.stderr)
        return
    refuse_overflow(acc, space.headroom, f"`{cand.label()}` was not {what}{hint}")


# the `--var`s that name the releases a launch runs, which legality reads as the space's `assume` would
RELEASE_VARIABLES = ("megatron_version", "bridge_version")


def launched_space(space: Space, target: str, given: Mapping[str, str]) -> Space:
    """``space`` as ``target`` launches its candidates (``Settings.retarget``) at the releases ``given``'s
    `--var`s name, each checked first (a bad value is its diagnostic, not a later failure)."""
    from primus_lang.emit import resolve_variables

    releases = {k: given[k] for k in RELEASE_VARIABLES if k in given}
    settings = space.settings.retarget(target)
    if releases:
        resolve_variables(releases, space.name)
        settings = attrs.evolve(settings, megatron_version=releases.get("megatron_version", settings.megatron_version),
                                bridge_version=releases.get("bridge_version", settings.bridge_version))
    return attrs.evolve(space, settings=settings)


def mfu_note(gpu: Gpu, precisions: Iterable[str]) -> str | None:
    """The line under a table whose MFU column mixes peaks: each candidate's MFU is of its own
    precision's peak (docs/projection.md, FLOP convention), so an FP8 candidate reads lower than a BF16
    one as fast. None where every candidate shown runs at the BF16 peak."""
    low = sorted({p for p in precisions if gpu.peak(p) != gpu.peak_bf16})
    if not low:
        return None
    peaks = "; ".join(f"{p.upper()} {gpu.peak(p) / 1e12:,.0f}" for p in low)
    return (f"MFU: of each candidate's own precision's dense peak on {gpu.name} ({peaks}; BF16 "
            f"{gpu.peak_bf16 / 1e12:,.0f} TFLOP/s): a low-precision candidate's MFU reads lower than a BF16 one's "
            "at the same speed; tokens/s compares them")
