"""The tables of docs/projection.md that come from the bundled corpus, regenerated rather than copied,
so the figures a reader trusts are the ones ``primusc validate --summary`` prints on their machine:

    python -m primus_lang.validate.doctables docs/projection.md

A section is the text between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``
(``primus_lang.syntax.doctables`` does the same for the language reference).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def validation_summary() -> str:
    """``validate --summary`` on the bundled corpus, spec sheets beside the calibrated profiles."""
    from primus_lang.validate.corpus import manifest, runs_file
    from primus_lang.validate.runs import load_runs
    from primus_lang.validate.summary import error_table, to_markdown
    from primus_lang.validate.validate import validate_rows

    sides = []
    for calibrated in (False, True):
        runs = load_runs(runs_file(), calibrated)
        sides.append((runs, validate_rows(runs, memory=False)))
    return (f"(`primusc validate --summary`, {manifest().label})\n\n" + to_markdown(error_table(*sides)))


def sweeps_table() -> str:
    """``validate --sweeps`` on the bundled sweeps, calibrated profiles: one row per sweep and the
    medians (the leave-one-sweep-out figures take minutes and are quoted, not generated)."""
    from primus_lang.validate.corpus import folder
    from primus_lang.validate.ranking import rank_sweep, summary
    from primus_lang.validate.sweeps import load_sweeps

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:+.2f}".replace("-", "\u2212")

    results = [rank_sweep(s) for s in load_sweeps(folder() / "sweeps.yaml")]
    lines = ["| sweep | GPU | projected | Spearman | Kendall | concordant | top-1 regret | top-3 regret | "
             "median \\|ratio error\\| |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        ratios = sorted(abs(v.ratio_error) for v in r.ranked if v.ratio_error is not None and v.id != r.base)
        mid = (ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
               ) if ratios else None
        lines.append(f"| `{r.id}` | {r.gpu.removesuffix('_calibrated')} | {len(r.ranked)}/{len(r.variants)} | "
                     f"{num(r.spearman)} | {num(r.kendall)} | {r.concordant}/{r.pairs} | {pct(r.top1_regret)} | "
                     f"{pct(r.top3_regret)} | {pct(mid)} |")
    s = summary(results)
    lines.append(f"| **all ({s['judged']} judged)** | | **{s['projected']}/{s['variants']}** | "
                 f"**median {num(s['median_spearman'])}** | **median {num(s['median_kendall'])}** | "  # type: ignore[arg-type]
                 f"**{s['concordant_pairs']}/{s['pairs']}** | **median {pct(s['median_top1_regret'])}, worst "  # type: ignore[arg-type]
                 f"{pct(s['worst_top1_regret'])}** | | **{pct(s['median_abs_ratio_error'])}** |")  # type: ignore[arg-type]
    return "(`primusc validate --sweeps validation/sweeps.yaml`, calibrated profiles)\n\n" + "\n".join(lines)


def precision_pairs_table() -> str:
    """``validate --pairs`` on the bundled corpus, calibrated profiles."""
    from primus_lang.validate.corpus import runs_file
    from primus_lang.validate.precision_pairs import bundled_pairs, to_markdown
    from primus_lang.validate.runs import load_runs
    from primus_lang.validate.validate import validate_rows

    runs = load_runs(runs_file(), True)
    projected = {r.id: r.projected for r in validate_rows(runs, memory=False) if r.projected is not None}
    return "(`primusc validate --calibrated --pairs`)\n\n" + to_markdown(bundled_pairs(runs, projected))


SECTIONS: dict[str, Callable[[], str]] = {"validation-summary": validation_summary, "sweeps": sweeps_table,
                                          "precision-pairs": precision_pairs_table}


def render(text: str) -> str:
    """``text`` with every generated section brought up to date (each computed only if present)."""
    from primus_lang.syntax import render_sections

    return render_sections(text, SECTIONS)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    path.write_text(render(path.read_text()))
