"""Unknown units: the hint names the unit meant, bits kept apart from bytes (a factor of 8)."""

from __future__ import annotations

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.syntax import parse
from primus_lang.syntax.units import UNITS, suggest_unit


@pytest.mark.parametrize(("written", "meant"), [
    ("Gb/s", "Gbps"), ("Gbit/s", "Gbps"), ("Tb/s", "Tbps"), ("Mb/s", "Mbps"), ("Gb", "Gbps"),
    ("GBps", "GB/s"), ("GiBps", "GiB/s"), ("gib", "GiB"), ("tflops", "TFLOP/s"), ("hours", "h"),
])
def test_a_near_miss_names_the_unit_meant(written: str, meant: str) -> None:
    assert suggest_unit(written) == meant
    assert meant in UNITS


def test_a_nic_written_in_bits_per_second_is_pointed_at_gbps() -> None:
    """`400 Gb/s` is 50 GB/s: the hint said `GB/s`, eight times the NIC it meant."""
    with pytest.raises(CompileError) as err:
        parse("gpu g { nic_bandwidth = 400 Gb/s }", "g.prx")
    [d] = err.value.diagnostics
    assert d.code.id == "P1005" and d.help.startswith("did you mean `Gbps`?")


def test_a_unit_after_a_count_says_the_count_takes_none() -> None:
    """`nodes = 16 Gb` was hinted `Gbps`, a bandwidth, for a node count."""
    with pytest.raises(CompileError) as err:
        parse("cluster c = base { nodes = 16 Gb }", "c.prx")
    [d] = err.value.diagnostics
    assert d.code.id == "P1005" and d.message == "`nodes` takes no unit: `Gb` after its number"
    assert d.help == "write the number alone (`nodes = 16`)"


def test_two_bars_with_no_value_between_are_said_as_such() -> None:
    """`cp : 1 | | 2` was reported as "a `|` ends the line", mid-line."""
    with pytest.raises(CompileError) as err:
        parse("space s on c {\n  cp : 1 | | 2\n}\n", "s.prx")
    [d] = err.value.diagnostics
    assert d.message == "a `|` with no value after it" and d.span is not None and (d.span.line, d.span.column) == (2, 10)
    with pytest.raises(CompileError) as err:
        parse("space s on c {\n  cp : 1 | 2 |\n}\n", "s.prx")
    assert err.value.diagnostics[0].message == "a `|` ends the line with no value after it"


@pytest.mark.parametrize(("written", "word"), [("tp <= 4 && pp <= 2", "and"), ("tp <= 4 || pp <= 2", "or"),
                                               ("!(tp > 4)", "not")])
def test_another_language_s_operator_is_pointed_at_the_word(written: str, word: str) -> None:
    with pytest.raises(CompileError) as err:
        parse(f"space s on c {{\n  require {written}\n}}\n", "s.prx")
    assert err.value.diagnostics[0].help.startswith(f"write `{word}`")
