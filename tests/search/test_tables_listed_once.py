"""Objectives and strategy names are listed once, in the language's IR (ir/space.py)."""

from __future__ import annotations

from primus_lang.diagnostics import all_codes
from primus_lang.ir import space
from primus_lang.search import compare, landscape, strategies


def test_objectives_and_strategies_come_from_the_ir() -> None:
    assert landscape.OBJECTIVE_METRICS is space.OBJECTIVE_METRICS
    assert strategies.NAMES is space.STRATEGIES
    assert set(compare.DEFAULT_STRATEGIES) == set(space.STRATEGIES) - {"llm"}
    assert set(strategies.CLASSICAL) - {"refine"} <= set(space.STRATEGIES)


def test_an_empty_space_has_one_code_per_reporter() -> None:
    # P6004 said what P8006 says; P4099 and P8006 differ in who reports the empty space (their
    # explanations say how), and no other code is "no legal point".
    codes = {c.id: c for c in all_codes()}
    assert "P6004" not in codes
    assert "P8006" in codes["P4099"].explanation and "P4099" in codes["P8006"].explanation
