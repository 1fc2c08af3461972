"""The tables of docs/projection.md that come from the bundled corpus, regenerated rather than copied,
so the figures a reader trusts are the ones ``primusc validate --summary`` prints on their machine:

    python -m primus_lang.project.doctables docs/projection.md

A section is the text between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``
(``primus_lang.syntax.doctables`` does the same for the language reference).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def validation_summary() -> str:
    """``validate --summary`` on the bundled corpus, spec sheets beside the calibrated profiles."""
    from primus_lang.project.corpus import manifest, runs_file
    from primus_lang.project.runs import load_runs
    from primus_lang.project.summary import error_table, to_markdown
    from primus_lang.project.validate import validate_rows

    sides = []
    for calibrated in (False, True):
        runs = load_runs(runs_file(), calibrated)
        sides.append((runs, validate_rows(runs, memory=False)))
    return (f"(`primusc validate --summary`, {manifest().label})\n\n" + to_markdown(error_table(*sides)))


SECTIONS: dict[str, Callable[[], str]] = {"validation-summary": validation_summary}


def render(text: str) -> str:
    """``text`` with every generated section brought up to date (each computed only if present)."""
    from primus_lang.syntax import render_sections

    return render_sections(text, SECTIONS)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    path.write_text(render(path.read_text()))
