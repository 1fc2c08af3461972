"""``validate --summary``'s table: the error of the projection per vendor, per GPU profile and per
precision, on the spec sheets and on the calibrated profiles.

A reader deciding whether to trust a projection on their GPU and precision wants that line, not the
corpus-wide mean. The calibrated columns are in-sample (the shipped profiles were fitted on these rows);
the cross-validated error, which a run the fit never saw can expect, is ``calibrate``'s.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from attrs import frozen

from primus_lang.validate.runs import Run, gpu_key
from primus_lang.validate.validate import RowResult

_RECIPES = {"delayed": "FP8 delayed", "tensorwise": "FP8 tensorwise", "blockwise": "FP8 blockwise", "mxfp8": "MXFP8",
            "rowwise": "FP8 rowwise"}


@frozen
class Errors:
    rows: int
    mape: float
    median: float  # median absolute error
    signed: float  # mean signed error: above 0 projects too fast


@frozen
class Line:
    by: str  # all | vendor | GPU | precision
    name: str
    spec: Errors | None  # on the spec sheets' default efficiencies
    calibrated: Errors | None  # on the shipped calibrated profiles (in-sample)


def precision_name(run: Run) -> str:
    """The GEMM precision a row was projected at, FP8 by its scaling recipe."""
    assert run.cand is not None
    if run.cand.precision == "fp8":
        return _RECIPES[run.cand.fp8_recipe]
    return "NVFP4" if run.cand.precision == "fp4" else run.cand.precision.upper()


def _keys(run: Run) -> tuple[tuple[str, str], ...]:
    assert run.cluster is not None
    return (("all", "all"), ("vendor", run.cluster.gpu.vendor.upper()), ("GPU", gpu_key(run)),
            ("precision", precision_name(run)))


def _errors(values: Sequence[float]) -> Errors | None:
    if not values:
        return None
    ape = [abs(e) for e in values]
    return Errors(len(values), statistics.fmean(ape), statistics.median(ape), statistics.fmean(values))


def error_table(spec: tuple[Sequence[Run], Sequence[RowResult]],
                calibrated: tuple[Sequence[Run], Sequence[RowResult]]) -> tuple[Line, ...]:
    """One line per vendor, GPU and precision (and one for every row), each with the errors of the
    rows projected on either set of profiles; ``(runs, validate_rows(runs))`` for each."""
    cells: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for side, (runs, rows) in enumerate((spec, calibrated)):
        by_id = {r.id: r for r in runs}
        for row in rows:
            if row.error is None:
                continue
            for key in _keys(by_id[row.id]):
                cells.setdefault(key, ([], []))[side].append(row.error)
    order = ("all", "vendor", "GPU", "precision")
    return tuple(Line(by, name, _errors(s), _errors(c))
                 for (by, name), (s, c) in sorted(cells.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])))


def _cells(e: Errors | None, median: bool) -> list[str]:
    if e is None:
        return ["—"] * (3 if median else 2)
    return [f"{e.mape:.1%}", *([f"{e.median:.1%}"] if median else []), f"{e.signed:+.1%}".replace("-", "−")]


def to_markdown(lines: Sequence[Line]) -> str:
    """The table as docs/projection.md shows it."""
    out = ["| by | group | rows | spec sheet: MAPE | mean signed | calibrated (in-sample): MAPE | median | mean signed |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for line in lines:
        counts = {e.rows for e in (line.spec, line.calibrated) if e is not None}
        rows = " / ".join(str(n) for n in sorted(counts))
        name = "**all**" if line.by == "all" else (f"`{line.name}`" if line.by == "GPU" else line.name)
        out.append(f"| {'' if line.by == 'all' else line.by} | {name} | {rows} | "
                   + " | ".join(_cells(line.spec, False) + _cells(line.calibrated, True)) + " |")
    return "\n".join(out)


def to_json(lines: Sequence[Line]) -> list[dict[str, object]]:
    def side(e: Errors | None) -> dict[str, float | int] | None:
        return None if e is None else {"rows": e.rows, "mape": e.mape, "median_ape": e.median, "signed": e.signed}

    return [{"by": line.by, "group": line.name, "spec": side(line.spec), "calibrated": side(line.calibrated)}
            for line in lines]
