"""The landscape-wide bound: points that agree on the knobs it reads share it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from primus_lang.check import legal_points
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from primus_lang.search.bound import FLOOR_KNOBS, step_time_floor


@pytest.mark.parametrize("path", sorted(data_dir("examples").glob("*.prx")), ids=lambda p: p.stem)
def test_points_that_agree_on_the_floor_knobs_share_the_floor(path: Path) -> None:
    space = load_space(path)
    floors: dict[object, tuple[float, str]] = {}
    for cand in itertools.islice(legal_points(space), 0, 4000, 3):
        floor = step_time_floor(space.model, space.cluster, cand)
        seen = floors.setdefault(FLOOR_KNOBS(cand), (floor, cand.label()))
        assert floor == seen[0], f"{cand.label()} against {seen[1]}"
    assert len(floors) > 1


@pytest.mark.parametrize("name", ["llama3_70b_h100", "mixtral_8x22b_mi355x"])
def test_floors_told_ahead_set_aside_what_floors_asked_one_by_one_do(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Branch and bound tells the refined bound the points ahead of it, whose floors are then computed
    together (``project.step_floors``): the search proposes, sets aside and proves exactly what it did
    when each floor was computed when asked (a refined bound that cannot be told ahead)."""
    import attrs

    from primus_lang.search.plan import prepare, run_search
    from primus_lang.search.strategies import exhaustive

    space = load_space(data_dir("examples") / f"{name}.prx")

    def searched(ahead: int | None) -> tuple[object, ...]:
        prep = prepare(space)
        if ahead is None:
            refine = prep.refine
            assert refine is not None
            prep = attrs.evolve(prep, refine=lambda i, enough: refine(i, enough))
        else:
            monkeypatch.setattr(exhaustive, "AHEAD", ahead)
        result = run_search(space, "exhaustive", prepared=prep)
        return (tuple((t.candidate, t.score) for t in result.trials), result.optimum_proven, result.stop_reason)

    one_by_one = searched(None)
    assert searched(2048) == one_by_one
    assert searched(3) == one_by_one
