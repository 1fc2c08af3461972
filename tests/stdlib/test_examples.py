"""Every example is a realistic space: 10^3-10^6 raw points, legal points left, some that fit memory."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from primus_lang.check import legal_points, summarize
from primus_lang.ir import cluster_points
from primus_lang.lower import load_program
from primus_lang.memory import account
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_space_is_searchable(path: Path) -> None:
    (space,) = load_program(path).spaces
    summary = summarize(space)
    # a space with cluster axes is searched on each of its clusters: what a plan walks is their sum
    summaries = [summarize(sub) for _, sub in cluster_points(space)]
    assert 10**3 <= sum(s.raw for s in summaries) <= 10**6
    assert sum(s.legal for s in summaries) >= 1000
    assert space.memory is not None and space.objective.metric == "tokens_per_gpu"
    headroom = space.memory.headroom
    sample = itertools.islice(legal_points(space), 0, None, max(1, summary.legal // 25))
    assert any(account(space.model, space.cluster, c, space.settings).fits(headroom) for c in sample)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_axis_value_is_reachable(path: Path) -> None:
    """A value no legal point takes is dead weight in the space (or a rule the author overlooked)."""
    (space,) = load_program(path).spaces
    seen: dict[str, set[object]] = {a.name: set() for a in space.axes}
    for cand in legal_points(space):
        for axis in space.axes:
            seen[axis.name].add(getattr(cand, axis.name))
    dead = {a.name: [v for v in a.domain.values if v not in seen[a.name]] for a in space.axes}
    assert {k: v for k, v in dead.items() if v} == {}
