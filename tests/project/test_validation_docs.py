"""docs/projection.md's tables of the bundled corpus are what `validate --summary` prints today."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.validate.doctables import SECTIONS, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "projection.md"


@pytest.mark.slow
@pytest.mark.skipif(not DOC.is_file(), reason="docs are not shipped in the wheel")
def test_generated_sections_are_current() -> None:
    text = DOC.read_text()
    for name in SECTIONS:
        assert f"<!-- generated: {name} -->" in text
    assert render(text) == text, "run `python -m primus_lang.validate.doctables docs/projection.md`"


@pytest.mark.slow
def test_summary_prints_the_table_the_docs_show(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    assert main(["validate", "--summary"]) == 0
    printed = capsys.readouterr().out
    table = SECTIONS["validation-summary"]().split("\n\n", 1)[1]
    assert table in printed
