"""``primusc report TRACE``: the trace, the space it names, and the report written from both."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_names import BAD_ARGUMENT
from primus_lang.diagnostics.codes_report import REPORT_WRITE, SPACE_NOT_FOUND
from primus_lang.diagnostics.codes_search import TRACE_MISMATCH
from primus_lang.ir import Space
from primus_lang.outputs import write_file
from primus_lang.report.adapt import from_search
from primus_lang.report.page import render_page
from primus_lang.report.trace import result_from_trace
from primus_lang.search import SearchResult

if TYPE_CHECKING:
    from primus_lang.search import Landscape


def report_from_trace(trace: Path, out: Path, space_file: str | None = None, space_name: str | None = None,
                      force: bool = False, cluster: str | None = None) -> tuple[Path, bool]:
    """Write the report of ``trace`` to ``out``; True with it when the space was known, so the report
    has its memory terms and timeline."""
    result, header = result_from_trace(trace)
    file = space_file or header.get("file")
    space: Space | None = None
    if file:
        from primus_lang.lower import load_space

        if not Path(file).is_file():
            raise CompileError(Diagnostic(SPACE_NOT_FOUND, f"no space file at `{file}`",
                                          help="pass `--space FILE`"))
        space = load_space(Path(file), space_name or header.get("space") or None)
        space = _on_cluster(space, cluster or header.get("cluster"))
        if header.get("target"):  # a plan for another target judged its points as that one launches them
            space = attrs.evolve(space, settings=space.settings.retarget(str(header["target"])))
        land = _refuse_foreign(trace, space, result)
        # the baseline plan's report compares with: the space's recipe where it has one, as plan shows it,
        # projected by the simulate oracle where the space plans with it (the trace does not record a
        # plan's `--oracle`, so one run with another still compares against the simulate projection)
        from primus_lang.search import evaluator_of, space_baseline

        given = space_baseline(space, land, evaluator_of(space)) if space.settings.oracle == "simulate" else None
        if given is not None:
            result = attrs.evolve(result, baseline=given)
    data = from_search(result, space)
    if space is None:
        data = attrs.evolve(data, notes=(*data.notes, (
            "note", "no space file: capacity is shown as the traced limit; pass --space for memory terms "
            "and the timeline")))
    try:
        write_file(out, render_page(data), force=force)
    except OSError as err:
        raise CompileError(Diagnostic(REPORT_WRITE, f"cannot write `{out}`: {err.strerror}")) from None
    return out, space is not None



def _on_cluster(space: Space, cluster: str | None) -> Space:
    """The space on the cluster the search ran on: a trace records one cluster's search, and the
    memory terms and timeline of another cluster would be wrong without a word."""
    from primus_lang.lower import select_cluster

    if cluster:
        return select_cluster(space, cluster)[1]
    if space.cluster_axes:
        raise CompileError(Diagnostic(BAD_ARGUMENT, f"space `{space.name}` has cluster axes, and the trace does "
                                      "not say which cluster it searched", help="name it with --cluster, as the "
                                      "plan printed it (its `plan --json` has it as `cluster`)"))
    return space


def _refuse_foreign(trace: Path, space: Space, result: SearchResult) -> Landscape:
    """A trace is data, not a proof: every evaluated candidate it names must be a legal point of the
    space the report is drawn with (a trace of another space, or edited by hand, would have its winner's
    memory terms and timeline computed for a layout the space cannot have). Returns the space's landscape."""
    from primus_lang.search import landscape_of

    land = landscape_of(space, require_fit=False)
    for t in result.trials:
        if t.candidate is not None and t.evaluation is not None and land.lookup(t.candidate) is None:
            raise CompileError(Diagnostic(
                TRACE_MISMATCH, f"`{trace}` evaluates {t.candidate.label()} (evaluation {t.number}), which is no legal "
                f"point of space `{space.name}`", notes=tuple(land.why_illegal(t.candidate))[:3],
                help="the trace is of another space or was edited: pass the space it was planned from with --space, "
                     "or plan again"))
    return land
