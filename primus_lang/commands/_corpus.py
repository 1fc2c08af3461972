"""The runs ``validate`` and ``calibrate`` read: ``--runs FILE``, the bundled corpus when no file is
given, or both with ``--with-bundled``.

The bundled corpus is the evidence the shipped profiles were fitted on; a user adds their own runs to
it rather than replacing it, so their refit still rests on every published measurement. The leading
underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import NO_CORPUS, RUNS_DUPLICATE, RUNS_FILE

if TYPE_CHECKING:
    from primus_lang.validate import Profiles, Run

RUNS_HELP = "runs YAML (the schema of the bundled corpus: validation/published_runs.md); default: the bundled corpus"


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--with-bundled", action="store_true",
                   help="read the bundled corpus's rows as well as those of --runs")


def load(path: str, calibrated: Profiles) -> list[Run]:
    """Every row of one runs file, resolved; a file that is missing or not a list of rows is P6001."""
    from primus_lang.validate import load_runs

    if not Path(path).is_file():
        raise CompileError(Diagnostic(RUNS_FILE, f"no runs file `{path}`"))
    try:
        return load_runs(path, calibrated)
    except (AttributeError, TypeError) as exc:
        raise CompileError(Diagnostic(RUNS_FILE, f"`{path}` is not a runs file: {exc}")) from exc


def bundled_runs() -> Path:
    from primus_lang.validate import runs_file

    try:
        path = runs_file()
    except FileNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise CompileError(Diagnostic(NO_CORPUS, "no `--runs` given and no bundled validation corpus installed"))
    return path


def runs_inputs(args: argparse.Namespace) -> dict[str, Path]:
    """Every runs file the command reads, by what names it (for ``outputs.refuse_collisions``)."""
    bundled = {"the bundled corpus": bundled_runs()} if not args.runs or args.with_bundled else {}
    return bundled | ({"--runs": Path(args.runs)} if args.runs else {})


def runs_of(args: argparse.Namespace, calibrated: Profiles) -> tuple[list[Run], str]:
    """The rows to read and how to name them in a report: the file's name as given, the corpus by
    its version. The bundled rows come first, so adding a file never reorders them (a fit's sums
    run in row order)."""
    from primus_lang.validate import manifest

    bundled = not args.runs or args.with_bundled
    runs = [*load(str(bundled_runs()), calibrated)] if bundled else []
    label = manifest().label if bundled else ""
    if args.runs:
        seen = {r.id for r in runs}
        mine = load(args.runs, calibrated)
        twins = sorted({r.id for r in mine} & seen)
        if twins:
            more = f" and {len(twins) - 1} more" if len(twins) > 1 else ""
            raise CompileError(Diagnostic(RUNS_DUPLICATE, f"row `{twins[0]}`{more} of `{args.runs}` is also a row "
                                                          "of the bundled corpus"))
        _warn_skipped(args, mine)
        runs += mine
        label = f"{args.runs} and {label}" if bundled else args.runs
    return runs, label


def _warn_skipped(args: argparse.Namespace, runs: list[Run]) -> None:
    """A warning per row of the user's file that is skipped: W6011 for a malformed field, W6013 for what
    primusc cannot project (the bundled corpus's skipped rows are listed by --json alone)."""
    from primus_lang.commands.emit import print_warnings
    from primus_lang.diagnostics.codes_projection import RUNS_ROW_MALFORMED, RUNS_ROW_SKIPPED
    from primus_lang.validate import malformed

    said = [Diagnostic(RUNS_ROW_MALFORMED if malformed(r) else RUNS_ROW_SKIPPED,
                       f"row `{r.id[:60]}` of `{args.runs}` is skipped: {r.skip}",
                       help="fix the field; the other rows are read" if malformed(r) else
                       "the other rows are read; validation/published_runs.md says what a row holds")
            for r in runs if r.skip]
    print_warnings(said, getattr(args, "error_format", "human"))
