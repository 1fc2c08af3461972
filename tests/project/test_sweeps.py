"""Controlled sweeps: reading a sweeps file, the rank metrics (checked by hand), the real corpus, and
each diagnostic of ``primusc validate --sweeps``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from primus_lang.cli import main
from primus_lang.validate.ranking import concordant_pairs, kendall_tau_b, rank_sweep, regret
from primus_lang.validate.sweeps import load_sweeps

DATA = Path(__file__).parent / "data" / "sweeps"
FIXTURE = DATA / "sweeps.yaml"
CORPUS = Path(__file__).resolve().parents[2] / "validation" / "sweeps.yaml"


def test_metrics_by_hand() -> None:
    sweep = next(s for s in load_sweeps(FIXTURE) if s.id == "mbs")
    result = rank_sweep(sweep)
    ranked = result.ranked
    assert [v.id for v in ranked] == ["m1", "m2", "m4", "m8"]
    proj = [v.projected or 0.0 for v in ranked]
    # the projection orders MBS 1 < 2 < 4 < 8; the hand figures below rest on that order
    assert proj == sorted(proj) and len(set(proj)) == 4
    # measured 1000, 1200, 1100, 900: measured ranks 2, 4, 3, 1 against projected 1, 2, 3, 4
    # Spearman: d = -1, -2, 0, 3; sum d^2 = 14; 1 - 6 * 14 / (4 * 15) = -0.4
    assert result.spearman == pytest.approx(-0.4)
    # pairs in projected order: (m1,m2) (m1,m4) concordant; (m1,m8) (m2,m4) (m2,m8) (m4,m8) discordant
    assert (result.concordant, result.pairs) == (2, 6)
    assert result.kendall == pytest.approx((2 - 4) / 6)
    # the projected best is m8 (900 measured) against the measured best m2 (1200)
    assert result.top1_regret == pytest.approx(1 - 900 / 1200)
    # the projected top 3 (m8, m4, m2) hold the measured best
    assert result.top3_regret == pytest.approx(0.0)
    assert result.base == "m1"
    measured = {"m1": 1000.0, "m2": 1200.0, "m4": 1100.0, "m8": 900.0}
    for v in ranked:
        assert v.measured == measured[v.id]
        assert v.ratio_error == pytest.approx((v.projected or 0) / proj[0] / (measured[v.id] / 1000.0) - 1)
        assert v.error == pytest.approx(((v.projected or 0) - measured[v.id]) / measured[v.id])


def test_skipped_variants_say_why() -> None:
    sweep = next(s for s in load_sweeps(FIXTURE) if s.id == "mbs")
    reasons = {v.id: v.skipped for v in rank_sweep(sweep).variants if v.skipped}
    assert reasons["eager"] == "unsupported feature: eager mode"
    assert reasons["oom"] == "no measurement: out of memory"
    assert reasons["badknob"].startswith("unsupported feature: knob `warp_speed`")
    assert reasons["zbv1"] == "layout inconsistent: the ZBV schedule runs 2 chunks per rank, not 1"
    assert sweep.assumed == (("gbs", "64: test"),)


def test_step_time_becomes_tokens_exactly() -> None:
    sweep = next(s for s in load_sweeps(FIXTURE) if s.id == "steps")
    result = rank_sweep(sweep)
    a, b = result.variants
    assert a.measured == 64 * 4096 / (2.0 * 8)
    assert b.skipped == "unknown model `no_such_model`: no stdlib card has the name, nor has a model_cards.yaml beside the file"
    # one projected variant orders nothing
    assert result.spearman is None and result.kendall is None and result.pairs == 0


def test_rank_functions_with_ties() -> None:
    # projected tie on a measured order: not concordant; a measured tie orders nothing
    assert concordant_pairs([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]) == (1, 2)
    # tau-b: x = 1,1,2 and y = 1,2,2 -> concordant 1 (pair 0-2), one tie in x, one in y:
    # (1 - 0) / sqrt((1 + 0 + 1) * (1 + 0 + 1)) = 0.5
    assert kendall_tau_b([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]) == pytest.approx(0.5)
    assert math.isnan(kendall_tau_b([1.0, 1.0], [1.0, 2.0]))
    # projected ties go to the variant listed first
    assert regret([2.0, 2.0, 1.0], [1.0, 3.0, 2.0], 1) == pytest.approx(1 - 1 / 3)


def test_the_corpus_projects_or_says_why() -> None:
    sweeps = load_sweeps(CORPUS)
    assert len(sweeps) >= 10
    assert sum(len(s.variants) for s in sweeps) >= 60
    projected = 0
    for sweep in sweeps:
        assert sweep.source.get("title") and sweep.source.get("url"), sweep.id
        assert sweep.source.get("read_from") in ("table", "figure labels"), sweep.id
        result = rank_sweep(sweep)
        for v in result.variants:
            assert (v.projected is not None) != bool(v.skipped), (sweep.id, v.id)
            assert not v.skipped.startswith("internal error"), (sweep.id, v.id, v.skipped)
        projected += len(result.ranked)
    assert projected >= 55
    gpus = {rank_sweep(s).gpu.removesuffix("_calibrated") for s in sweeps}
    assert {"mi300x", "mi325x", "mi355x"} <= gpus and {"h100_96gb", "gb200"} <= gpus


def test_command_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", str(FIXTURE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["sweeps"][0]
    assert first["id"] == "mbs" and first["pairs"] == 6 and first["top1_regret"] == pytest.approx(0.25)
    assert out["summary"]["sweeps"] == 2 and out["summary"]["judged"] == 1
    assert main(["validate", "--sweeps", str(FIXTURE), "--sweep", "steps"]) == 0
    text = capsys.readouterr().out
    assert "steps" in text and "no_such_model" in text
    # deterministic
    assert main(["validate", "--sweeps", str(FIXTURE), "--json"]) == 0
    again = capsys.readouterr().out
    assert json.loads(again) == out


def _write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _fixture() -> dict[str, object]:
    return yaml.safe_load(FIXTURE.read_text())  # type: ignore[no-any-return]


def test_p6040_missing_or_not_a_sweeps_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", str(tmp_path / "none.yaml")]) == 1
    assert "P6040" in capsys.readouterr().err
    assert main(["validate", "--sweeps", _write(tmp_path, {"schema": 1, "sweeps": [{"id": "x"}]})]) == 1
    assert "P6040" in capsys.readouterr().err


def test_p6041_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", _write(tmp_path, {**_fixture(), "schema": 2})]) == 1
    assert "P6041" in capsys.readouterr().err


def test_p6042_duplicate_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _fixture()
    sweeps = doc["sweeps"]
    assert isinstance(sweeps, list)
    assert main(["validate", "--sweeps", _write(tmp_path, {**doc, "sweeps": [sweeps[0], sweeps[0]]})]) == 1
    assert "P6042" in capsys.readouterr().err


def test_p6043_unknown_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", str(FIXTURE), "--sweep", "mb"]) == 1
    err = capsys.readouterr().err
    assert "P6043" in err and "`mbs`" in err


def test_p6044_bad_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _fixture()
    sweeps = doc["sweeps"]
    assert isinstance(sweeps, list)
    assert main(["validate", "--sweeps", _write(tmp_path, {**doc, "sweeps": [{**sweeps[0], "metric": "mfu"}]})]) == 1
    assert "P6044" in capsys.readouterr().err
