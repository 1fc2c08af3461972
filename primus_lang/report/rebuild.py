"""``primusc report TRACE``: the trace, the space it names, and the report written from both."""

from __future__ import annotations

from pathlib import Path

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_report import REPORT_WRITE, SPACE_NOT_FOUND
from primus_lang.ir import Space
from primus_lang.outputs import write_file
from primus_lang.report.adapt import from_search
from primus_lang.report.page import render_page
from primus_lang.report.trace import result_from_trace


def report_from_trace(trace: Path, out: Path, space_file: str | None = None, space_name: str | None = None,
                      force: bool = False) -> tuple[Path, bool]:
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

