"""Invariants of every strategy on random synthetic landscapes (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.search.budget import Limits
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
