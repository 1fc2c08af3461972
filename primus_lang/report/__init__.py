"""The self-contained HTML report of a plan, and the terminal views of one or two candidates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from primus_lang.exports import lazy_exports
from primus_lang.ir import Space
from primus_lang.report.page import render_page
from primus_lang.report.view import ReportData


def render_report(result: Any, space: Space | None = None, capacity: Any = None) -> str:
    """One HTML document for a search result (or ready ``ReportData``); ``space`` adds the exact
    memory accounts and the winner's timeline, ``capacity`` (a ``search.CapacityPlan``) the clusters
    a plan across clusters compared."""
    if isinstance(result, ReportData):
        data = result
    else:
        from primus_lang.report.adapt import from_search

        data = from_search(result, space)
    if capacity is not None:
        import attrs

        from primus_lang.report.clusters import run_facts, views_of

        data = attrs.evolve(data, clusters=views_of(capacity), run=run_facts(capacity))
    return render_page(data)


def write_report(result: Any, path: str | Path, space: Space | None = None, force: bool = True,
                 capacity: Any = None) -> Path:
    """Write the report for ``primusc plan --report PATH`` (atomically, never through a link; an
    existing file only with ``force``); returns the path written."""
    from primus_lang.outputs import write_file

    return write_file(Path(path), render_report(result, space, capacity), force=force, option="report")


__all__ = ["ReportData", "render_report", "write_report"]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.report.compare import diff
    from primus_lang.report.evaluate import Evaluated
    from primus_lang.report.explain import (
        attention_note,
        evaluate_point,
        explained_json,
        layout_note,
        no_low_precision,
        precision_gain,
        precision_json,
        projection_json,
        violations,
    )
    from primus_lang.report.explain_row import explain_rows, rows_json, rows_view
    from primus_lang.report.rebuild import report_from_trace
    from primus_lang.report.terminal import diff_view, explain_view, precision_table

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["Evaluated", "attention_note", "diff", "diff_view", "evaluate_point", "explain_rows", "explain_view", "explained_json", "layout_note", "no_low_precision", "precision_gain", "precision_json", "precision_table", "projection_json", "report_from_trace", "rows_json", "rows_view", "violations"]
