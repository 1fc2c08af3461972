"""The bundled validation corpus: its manifest, its schema, every row projects or says why, and
``validate``/``calibrate`` read it when no ``--runs`` is given (alone or beside a file of one's own)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.cli import main
from primus_lang.validate import corpus
from primus_lang.validate.runs import load_runs
from primus_lang.validate.validate import INTERNAL_ERROR, validate_rows

ROWS = Path(__file__).parent / "data" / "runs.yaml"


def test_the_manifest_names_every_data_file_with_its_digest() -> None:
    found = corpus.manifest()
    assert re.fullmatch(r"\d{4}\.\d{1,2}\.\d{1,2}(\.\d+)?", found.version)
    assert {"published_runs.yaml", "model_cards.yaml", "hardware.yaml"} <= {name for name, _ in found.digests}
    for name, digest in found.digests:
        # a change to the data without a new digest (and version) is caught here
        assert corpus.digest(corpus.folder() / name) == digest, f"{name} changed: update manifest.yaml and bump version"
    assert corpus.runs_file().is_file()


def _fields(data: Any, prefix: str = "") -> set[str]:
    """A row's or card's field names, one level of sub-fields as ``parent.child``."""
    out = set()
    for key, value in data.items():
        out.add(prefix + key)
        if isinstance(value, dict) and not prefix:
            out |= _fields(value, f"{key}.")
    return out


def _documented(heading: str) -> set[str]:
    text = (corpus.folder() / "published_runs.md").read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, re.M))


OWN_ROWS_ONLY = {"recompute.main_grad_dtype"}


def test_every_field_of_the_corpus_is_documented() -> None:
    rows = yaml.safe_load(corpus.runs_file().read_text())
    cards = yaml.safe_load((corpus.folder() / "model_cards.yaml").read_text())
    row_fields = _documented("## A row of `published_runs.yaml`")
    card_fields = _documented("## A card of `model_cards.yaml`")
    used_rows = set().union(*(_fields(r) for r in rows))
    used_cards = set().union(*(_fields(c) for c in cards.values()))
    assert used_rows <= row_fields, f"undocumented row fields: {sorted(used_rows - row_fields)}"
    assert used_cards <= card_fields, f"undocumented card fields: {sorted(used_cards - card_fields)}"
    # and the page lists no field the corpus has dropped, but those a row of one's own gives that no
    # published source states (a run's gradient dtype: NeMo's and Bridge's rows fix it by framework)
    assert row_fields - OWN_ROWS_ONLY <= used_rows and card_fields <= used_cards
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert {"id", "source", "hardware", "num_gpus", "parallel", "measured", "config_complete"} <= set(r)


def test_every_row_projects_or_says_why() -> None:
    runs = load_runs(corpus.runs_file())
    rows = validate_rows(runs, memory=False)
    projected = [r for r in rows if not r.skipped]
    assert len(projected) >= 200
    for r in rows:
        if r.skipped:
            assert not r.skipped.startswith(INTERNAL_ERROR), (r.id, r.skipped)
            assert len(r.skipped) > 10
        else:
            assert r.projected is not None and math.isfinite(r.projected) and r.projected > 0, r.id
            assert r.measured is not None and r.measured > 0


@pytest.mark.slow
def test_validate_and_calibrate_read_the_bundled_corpus_without_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--summary", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == corpus.manifest().label
    lines = {(line["by"], line["group"]): line for line in out["summary"]}
    every = lines[("all", "all")]
    assert every["spec"]["rows"] == every["calibrated"]["rows"] >= 200
    # the spec sheets are optimistic everywhere; the shipped fit is close in-sample
    assert every["spec"]["signed"] > 0.3 and every["calibrated"]["mape"] < 0.15
    assert {("vendor", "NVIDIA"), ("vendor", "AMD"), ("GPU", "gb200"), ("precision", "BF16")} <= set(lines)


def test_with_bundled_adds_the_corpus_rows_after_the_bundled_ones(capsys: pytest.CaptureFixture[str]) -> None:
    bundled = [r.id for r in load_runs(corpus.runs_file())]
    mine = [r.id for r in load_runs(ROWS)]
    assert main(["validate", "--runs", str(ROWS), "--with-bundled", "--json", "--no-memory"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out["rows"]] == bundled + mine


def test_a_row_id_in_both_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = yaml.safe_load(ROWS.read_text())
    taken = yaml.safe_load(corpus.runs_file().read_text())[0]["id"]
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([{**rows[0], "id": taken}, *rows[1:]]))
    assert main(["validate", "--runs", str(path), "--with-bundled"]) == 1
    err = capsys.readouterr().err
    assert "P6030" in err and taken in err
    # alone, the same file is fine
    assert main(["validate", "--runs", str(path), "--no-memory"]) == 0


def test_an_installation_without_the_corpus_says_so(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    def missing() -> Path:
        raise FileNotFoundError("validation")

    monkeypatch.setattr(corpus, "runs_file", missing)
    assert main(["calibrate"]) == 1
    assert "P6031" in capsys.readouterr().err
    # a runs file of one's own still works
    assert main(["validate", "--runs", str(ROWS), "--no-memory"]) == 0


def test_summary_and_row_are_different_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--summary", "--row", "x"]) == 1
    assert "P2017" in capsys.readouterr().err


def test_the_header_says_how_to_refit_and_what_the_fit_measured(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.validate.calibration_notes import Setup

    assert Setup().command() == "primusc calibrate --out FILE"
    assert Setup(folds=3, pool_sigma=None, gpus=("b200",)).command() == (
        "primusc calibrate --folds 3 --no-pool --gpu b200 --out FILE")
    out = tmp_path / "x.prx"
    assert main(["calibrate", "--runs", str(ROWS), "--folds", "2", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    header = " ".join(line[2:] for line in out.read_text().splitlines() if line.startswith("# "))
    assert f"Refit: primusc calibrate --runs {ROWS} --folds 2 --out FILE" in header
    assert f"Fit on: {ROWS}, the rows primusc can project: {report['fits'][0]['rows']} rows over 1 profile" in header
    assert f"MAPE {report['cv_mape']:.1%} over" in header
