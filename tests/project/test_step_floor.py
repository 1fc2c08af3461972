"""The schedule-free step floor that branch and bound sets points aside by, and the op lists it shares
between candidates that differ only in timing knobs."""

from __future__ import annotations

import itertools
from pathlib import Path

import attrs
import pytest

from primus_lang.check import legal_points
from primus_lang.ir import Candidate
from primus_lang.ir.candidate import CUDA_GRAPHS
from primus_lang.lower import load_space
from primus_lang.project import build, project, step_floor
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))


def _sample(path: Path, every: int = 97, most: int = 40) -> tuple[object, list[Candidate]]:
    space = load_space(path)
    points = list(itertools.islice(legal_points(space), 0, None, every))[:most]
    return space, points


def _variants(cand: Candidate) -> list[Candidate]:
    """``cand`` with each timing knob set to another value."""
    out = []
    for name in build.TIMING_KNOBS:
        value = getattr(cand, name)
        others = [g for g in CUDA_GRAPHS if g != value] if name == "cuda_graph" else [not value]
        out += [attrs.evolve(cand, **{name: other}) for other in others]
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_floor_never_exceeds_the_projected_step(path: Path) -> None:
    space, points = _sample(path)
    assert points
    for cand in points:
        for c in (cand, *_variants(cand)[:3]):
            step = project(space.model, space.cluster, c, space.settings).step_time
            floor = step_floor(space.model, space.cluster, c, space.settings)
            assert 0 < floor <= step, c.label()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_timing_knobs_do_not_change_the_op_lists(path: Path) -> None:
    # stage_ops builds one op list for all of them: any of them read by build.py would be lost
    space, points = _sample(path, every=211, most=12)
    plain = build._plain_cluster(space.cluster, 0)
    built = build._stage_ops.__wrapped__  # past the cache, which keys on ops_key already
    for cand in points:
        ref = built(space.model, plain, cand)
        key = build._layer_key(space.model, plain, cand)
        for variant in _variants(cand):
            assert built(space.model, plain, variant) == ref, variant.label()
            # layers_of looks its layers up by this key before it makes ops_key's candidate
            assert build._layer_key(space.model, plain, variant) == key, variant.label()


def test_the_floor_is_tight_where_the_schedule_adds_little() -> None:
    space, points = _sample(data_dir("examples") / "llama3_1_70b_mi325x.prx", every=13, most=200)
    ratios = sorted(step_floor(space.model, space.cluster, c, space.settings)
                    / project(space.model, space.cluster, c, space.settings).step_time for c in points)
    assert ratios[len(ratios) // 2] > 0.95  # what makes it worth asking before projecting


MOE = [p for p in EXAMPLES if load_space(p).model.is_moe]


@pytest.mark.parametrize("path", MOE, ids=lambda p: p.stem)
def test_expert_layouts_do_not_change_dense_layers_or_ends(path: Path) -> None:
    # their blocks are cached without the expert fields (build._layer_of, build._end_of)
    space, points = _sample(path, every=307, most=6)
    plain = build._plain_cluster(space.cluster, 0)
    model = space.model
    kinds = sorted(k for k in (set(model.pattern) if model.hybrid else {"T-"}) if not build._is_moe(k))
    for cand in points:
        ref = build._Shapes(space.model, plain, cand)
        for ep, etp, dispatcher in itertools.product((1, 2, 8), (1, 2), ("alltoall", "flex")):
            other = build._Shapes(space.model, plain, attrs.evolve(cand, ep=ep, etp=etp, moe_dispatcher=dispatcher))
            assert build._attention_part(other) == build._attention_part(ref)
            for kind in kinds:
                body = build._body(other, kind)
                assert body == build._body(ref, kind), (kind, ep, etp)
                for recompute in (False, True):
                    assert build._layer(other, kind, body[0], recompute) == build._layer(ref, kind, body[0], recompute)
            assert build._embedding(other) == build._embedding(ref)
            assert build._head(other) == build._head(ref)
