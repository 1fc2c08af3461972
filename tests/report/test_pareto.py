from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from primus_lang.report.pareto import pareto_front
from primus_lang.report.view import CandidateView


def view(i: int, tokens: float, peak: int, fits: bool = True) -> CandidateView:
    return CandidateView(f"c{i}", (), 1.0, tokens, 0.0, 0.0, 0.0, peak, fits, evaluation=i)


def dominates(a: CandidateView, b: CandidateView) -> bool:
    return (a.tokens_per_gpu >= b.tokens_per_gpu and a.memory_peak <= b.memory_peak
            and (a.tokens_per_gpu > b.tokens_per_gpu or a.memory_peak < b.memory_peak))


points = st.lists(st.tuples(st.integers(1, 50), st.integers(1, 50), st.booleans()), max_size=40)


@given(points)
def test_front_is_exactly_the_non_dominated_fitting_points(raw: list[tuple[int, int, bool]]) -> None:
    cands = [view(i, float(t), p, f) for i, (t, p, f) in enumerate(raw)]
    front = pareto_front(cands)
    fitting = [c for c in cands if c.fits]
    for c in front:
        assert c.fits
        assert not any(dominates(o, c) for o in fitting)
    for c in fitting:
        if c not in front:
            assert any(dominates(o, c) or (o.tokens_per_gpu, o.memory_peak) == (c.tokens_per_gpu, c.memory_peak)
                       for o in front)
    assert [c.memory_peak for c in front] == sorted(c.memory_peak for c in front)
    assert all(a.tokens_per_gpu < b.tokens_per_gpu for a, b in itertools.pairwise(front))


def test_front_ignores_candidates_that_do_not_fit() -> None:
    front = pareto_front([view(0, 10.0, 5), view(1, 99.0, 1, fits=False), view(2, 20.0, 8)])
    assert [c.label for c in front] == ["c0", "c2"]


def test_unprojected_candidates_are_skipped() -> None:
    assert pareto_front([view(0, float("nan"), 1), view(1, 3.0, 2)])[0].label == "c1"
