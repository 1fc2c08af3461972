"""How a candidate's label and a count are written in tables and messages."""

from __future__ import annotations

from primus_lang.ir import text, units


def test_a_label_in_a_cell_breaks_between_knobs_only() -> None:
    cell = units.label_cell("tp=4,pp=4,precision=fp8,recompute=full(1,block)")
    assert cell == "tp=4, pp=4, precision=fp8, recompute=full(1, block)"
    assert all(" " not in part for part in cell.split(", "))


def test_a_count_rounds_before_its_suffix_and_stays_writable_past_the_largest() -> None:
    assert text.count(999_600) == "1M" and text.count(15e12) == "15T" and text.count(1234.5) == "1.23K"
    assert text.count(2e16) == "2e16" and text.count(999e12) == "999T"
