"""Invariants of every strategy on random synthetic landscapes (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.search.budget import Limits
from primus_lang.search.landscape import AxisView, Landscape
from primus_lang.search.run import search_landscape
from primus_lang.search.trial import EVALUATED
from tests.search import synthetic


@settings(max_examples=12, deadline=None)
@given(
    strategy=st.sampled_from(["planner", "exhaustive", "random", "evolutionary", "auto"]),
    budget=st.integers(1, 60),
    seed=st.integers(0, 2**16),
    limit_gib=st.integers(30, 120),
)
def test_every_strategy_keeps_the_contract(strategy: str, budget: int, seed: int, limit_gib: int) -> None:
    land = synthetic.landscape(limit=limit_gib * synthetic.GIB)
    if not land.fits.any():
        return
    result = search_landscape(land, synthetic.evaluator(), strategy, Limits(evaluations=budget), seed=seed,
                              upper=synthetic.upper_bound(land))
    charged = [t for t in result.trials if t.charged]
    assert len(charged) == result.evaluations <= budget
    assert all(t.verdict == EVALUATED and land.fits[land.lookup(t.candidate)] for t in charged)
    assert len({t.candidate for t in charged}) == len(charged)  # nothing is charged twice
    assert result.best is not None
    assert result.best.score == max(t.score for t in charged)
    if result.optimum_proven:
        assert np.isclose(result.best.score, synthetic.optimum(land))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=400), st.integers(0, 10_000))
def test_baseline_index_is_the_least_baseline_key(fit_bits: list[bool], shift: int) -> None:
    """The baseline read as columns is the first fitting point of least ``baseline_key``, as the key read
    point by point says (a plan across clusters asks it of every cluster's points)."""
    from primus_lang.search.strategies.planner import baseline_index, baseline_key

    land = synthetic.landscape()
    if shift % 2:  # axes that leave some points' values off them (coordinate -1), as a conditional axis does
        axes = tuple(AxisView(a.name, a.values[1:]) if a.name in ("tp", "recompute") else a for a in land.axes)
        land = Landscape("off axes", axes, land.points, land.peaks, land.limit)
    n = len(land.points)
    fits = np.zeros(n, dtype=bool)
    for j, bit in enumerate(fit_bits):
        fits[(shift + 7 * j) % n] = bit
    land.fits = fits
    axes = tuple(a.name for a in land.axes)
    keyed = [(baseline_key(land.points[int(i)], axes), int(i)) for i in np.flatnonzero(fits)]
    assert baseline_index(land) == (min(keyed)[1] if keyed else None)


def test_by_distinct_tells_flags_from_integers() -> None:
    """Mixed types keep their own values: ``True == 1`` in Python, not on an axis."""
    from primus_lang.memo import by_distinct

    values: list[object] = [True, 1, 1, False, 0, True]
    assert by_distinct(values, repr) == [repr(v) for v in values]
    assert by_distinct([2, 1, 2, 2], lambda v: v * 10) == [20, 10, 20, 20]
