"""A value over its ceiling is named in a few characters, however many digits it has."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.ir.model import Model
from primus_lang.ir.ranges import ceiling_problem

HIDDEN = attrs.fields_dict(Model)["hidden"]


@pytest.mark.parametrize(("value", "shown"), [
    (int(1e308), "1e+308"),  # a model card's `hidden_size: 1e308`, read as an integer
    (1e308, "1e+308"),
    (10**30, "1e+30"),
    (10**400, "more than 1.8e+308"),
    (200_000, "200,000"),  # within the readable range: every digit, as before
])
def test_the_reason_stays_short(value: int | float, shown: str) -> None:
    problem = ceiling_problem(HIDDEN, value)
    assert problem is not None
    assert problem[1] == f"`hidden` is {shown}, above the largest it can be (131,072)"
    assert len(problem[1]) + len(problem[2]) < 200
