"""Leave one sweep out (``validate --sweeps --cross-validate``): a sweep is ranked on a refit that never
saw the corpus rows of its recipes, and that refit is a real one (it moves with the rows it keeps)."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.validate.corpus import runs_file
from primus_lang.validate.runs import Run, load_runs
from primus_lang.validate.sweep_holdout import leave_sweep_out, sweep_keys
from primus_lang.validate.sweeps import load_sweeps

CORPUS = Path(__file__).resolve().parents[2] / "validation" / "sweeps.yaml"
SWEEP = "primus_llama3_70b_mi325x_precision"  # AMD: a small pool, so each refit takes seconds


def _amd_rows() -> list[Run]:
    """The corpus's AMD rows, each row outside the sweep's recipes three times under three ids: a
    profile needs three rows to be fitted (calibrate's --min-rows), and the corpus has one such row."""
    sweep = next(s for s in load_sweeps(CORPUS) if s.id == SWEEP)
    keys = sweep_keys(sweep)
    out = []
    for r in load_runs(str(runs_file()), False):
        if r.skip or r.cluster is None or r.model is None or r.cluster.gpu.vendor != "amd":
            continue
        if ("mi325x", r.model.name, r.cluster.world) in keys:
            out.append(r)
        else:
            out += [r] + [attrs.evolve(r, id=f"{r.id}#{n}") for n in (2, 3)]
    return out


def _scale(rows: list[Run], ids: set[str], factor: float) -> list[Run]:
    return [attrs.evolve(r, measured=(r.measured or 0.0) * factor) if r.id in ids else r for r in rows]


def _projected(rows: list[Run]) -> list[float | None]:
    sweep = next(s for s in load_sweeps(CORPUS) if s.id == SWEEP)
    (result,) = leave_sweep_out([sweep], rows)
    return [v.projected for v in result.variants]


def test_held_rows_do_not_reach_the_refit_and_the_others_do() -> None:
    sweep = next(s for s in load_sweeps(CORPUS) if s.id == SWEEP)
    rows = _amd_rows()
    keys = sweep_keys(sweep)
    held = {r.id for r in rows if ("mi325x", r.model.name if r.model else "", r.cluster.world if r.cluster else 0)
            in keys}
    kept = {r.id for r in rows} - held
    assert held and kept, "the test needs corpus rows of the sweep's recipes and others on its GPU"
    (result,) = leave_sweep_out([sweep], rows)
    assert set(result.held_out) == held and "refitted" in result.refit
    before = _projected(rows)
    # a held-out row measured 40% faster moves nothing: no fit that ranks the sweep saw it
    assert _projected(_scale(rows, held, 1.4)) == pytest.approx(before, rel=1e-12)
    # a kept row measured 40% faster moves the refit, so the sweep's projections move with it
    moved = _projected(_scale(rows, kept, 1.4))
    assert all(m is not None and b is not None and m > b * 1.05 for m, b in zip(moved, before, strict=True))


@pytest.mark.slow
def test_command_reports_the_refit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", str(CORPUS), "--sweep", SWEEP, "--cross-validate"]) == 0
    out = capsys.readouterr().out
    assert "leave one sweep out" in out and "refitted without" in out
    assert main(["validate", "--sweeps", str(CORPUS), "--sweep", SWEEP, "--cross-validate", "--json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    assert "refitted without" in sweep["refit"] and sweep["held_out"]


def test_cross_validate_and_spec_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--sweeps", str(CORPUS), "--spec", "--cross-validate"])
    assert "not allowed with" in capsys.readouterr().err
