"""The generated tables of docs/language.md match the IR and the registries."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.ir.candidate import KNOBS
from primus_lang.syntax.doctables import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"


@pytest.mark.skipif(not DOC.is_file(), reason="docs are not shipped in the wheel")
def test_generated_sections_are_current() -> None:
    text = DOC.read_text()
    assert render(text) == text, "run `python -m primus_lang.syntax.doctables docs/language.md`"
    for knob in KNOBS:
        assert f"| `{knob}` |" in text
