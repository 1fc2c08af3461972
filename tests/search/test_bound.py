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
