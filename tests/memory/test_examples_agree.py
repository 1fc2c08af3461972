"""The pre-filter and the exact account agree on the examples' legal points (issue 3, item 3).

Every point's pre-filter peak is compared; the exact account reads a candidate only through its
memory knobs (memory/account.py: ``from_candidate``), so points with the same knobs share one account,
computed once: about half as many accounts as points, the same comparison for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import legal_points
from primus_lang.lower import load_space
from primus_lang.memory import account, prefilter
from primus_lang.memory.knobs import Knobs, from_candidate
from primus_lang.resources import data_dir

EXAMPLES = sorted(Path(data_dir("examples")).glob("*.prx"))
# the examples whose sampled points alone take seconds (the pre-filter's cost is per distinct state):
# a sample of them would be as slow as the every-point test that holds it, so they have that one only
HEAVY = {"deepseek_v3_mi355x", "gpt_oss_120b_b200", "qwen3_235b_mi355x"}


def _agree(path: Path, every: int) -> int:
    space = load_space(str(path))
    points = list(legal_points(space))[::every]
    peaks = prefilter(space.model, space.cluster, points, space.settings)
    knobs = [from_candidate(c, space.cluster.world) for c in points]
    exact: dict[Knobs, int] = {}
    for c, k in zip(points, knobs, strict=True):
        if k not in exact:
            exact[k] = account(space.model, space.cluster, c, space.settings).peak.total
    assert [int(p) for p in peaks] == [exact[k] for k in knobs]
    return len(points)


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem not in HEAVY], ids=lambda p: p.stem)
def test_examples_sampled(path: Path) -> None:
    """The quick check, for a run that leaves the slow tests out (`-m "not slow"`)."""
    assert _agree(path, every=37) > 0


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_every_point(path: Path) -> None:
    assert _agree(path, every=1) > 0
