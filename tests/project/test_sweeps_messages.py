"""`validate --sweeps` says what its numbers are: the variant line's percentage is the error of its
ratio to the base (JSON's ratio_error), and a file without `schema` is said to lack the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.project.test_sweeps import FIXTURE, _fixture, _write


def test_variant_line_labels_the_ratio_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--sweeps", str(FIXTURE), "--sweep", "mbs"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "projected " in line and "measured" in line]
    assert lines and all(re.search(r"error of the ratio to base [+-]\d", line) for line in lines)
    assert not any(re.search(r", ratio to base", line) for line in lines)


def test_missing_schema_key_is_said_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _fixture()
    del doc["schema"]
    assert main(["validate", "--sweeps", _write(tmp_path, doc)]) == 1
    err = capsys.readouterr().err
    assert "P6041" in err and "no `schema` key" in err and "None" not in err


@pytest.mark.parametrize("source", ["a title", ["a", "b"], 1e999])
def test_a_source_that_is_not_a_mapping_is_p6040(source: object, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # `source: "a title"` used to reach dict() and end in an internal error (ValueError)
    doc = _fixture()
    doc["sweeps"][0]["source"] = source  # type: ignore[index]
    assert main(["validate", "--sweeps", _write(tmp_path, doc)]) == 1
    err = capsys.readouterr().err
    assert "P6040" in err and "`source` that is not a mapping" in err and "P9001" not in err
