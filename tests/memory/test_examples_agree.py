"""The pre-filter and the exact account agree on the examples' legal points (issue 3, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import legal_points
from primus_lang.lower import load_space
from primus_lang.memory import account, prefilter
from primus_lang.resources import data_dir

EXAMPLES = sorted(Path(data_dir("examples")).glob("*.prx"))


def _agree(path: Path, every: int) -> int:
    space = load_space(str(path))
    points = list(legal_points(space))[::every]
    peaks = prefilter(space.model, space.cluster, points, space.settings)
    exact = [account(space.model, space.cluster, c, space.settings).peak.total for c in points]
    assert [int(p) for p in peaks] == exact
    return len(points)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_sampled(path: Path) -> None:
    assert _agree(path, every=37) > 0


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_every_point(path: Path) -> None:
    assert _agree(path, every=1) > 0
