"""The derived facts (ir/derived.py) agree between one candidate and a column of them.

Legality reads them from numpy columns (check/frame.py), memory from columns or scalars
(memory/knobs.py), projection and the benchmark from ``Candidate``; all must be the same integers,
illegal points included (knobs of 0 or larger than the world).
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.check.frame import frame_of
from primus_lang.ir import Candidate, derived
from primus_lang.lower import load_space
from primus_lang.memory.knobs import from_candidate, from_candidates
from primus_lang.resources import data_dir

SPACE = load_space(data_dir("examples") / "mixtral_8x22b_mi355x.prx")

sizes = st.sampled_from([1, 2, 3, 4, 8, 16, 64, 1000])
candidates = st.builds(
    Candidate, tp=sizes, pp=sizes, cp=sizes, ep=sizes, etp=st.sampled_from([0, 1, 2, 8]),
    mbs=sizes, gbs=st.sampled_from([1, 7, 64, 512, 4096]),
)


@settings(max_examples=60, deadline=None)
@given(cands=st.lists(candidates, min_size=1, max_size=8), nodes=st.sampled_from([1, 2, 5, 64]))
def test_scalar_and_column_forms_agree(cands: list[Candidate], nodes: int) -> None:
    space = attrs.evolve(SPACE, cluster=attrs.evolve(SPACE.cluster, nodes=nodes))
    world = space.cluster.world
    frame = frame_of(space, cands)
    columns = from_candidates(cands, world)
    for i, c in enumerate(cands):
        dp = derived.dp(world, c.tp, c.pp, c.cp)
        assert c.dp(world) == dp == frame["dp"][i]
        assert c.expert_tp == frame["$etp"][i] == columns.etp[i]
        assert c.expert_dp(world) == frame["edp"][i]
        assert c.microbatches(world) == frame["microbatches"][i] == derived.microbatches(c.gbs, c.mbs, dp)
        assert c.model_parallel == frame["$mp"][i]
        # memory's floor: the same quotients, never below one
        one = from_candidate(c, world)
        assert one.dp == columns.dp[i] == max(1, dp)
        assert one.edp == columns.edp[i] == max(1, c.expert_dp(world))
        assert one.dp_cp == columns.dp_cp[i] == max(1, world // (c.tp * c.pp))
        assert one.microbatches == columns.microbatches[i] == max(1, c.gbs // (c.mbs * max(1, dp)))


def test_quotients_are_exact_where_legality_needs_them() -> None:
    # 0, not 1: a point whose parallel sizes exceed the world is rejected through dp == 0
    assert derived.dp(8, 4, 4, 1) == 0
    assert derived.microbatches(64, 2, 0) == 64  # a divisor below 1 counts as 1, never a crash
    assert derived.expert_tp(0, 4) == 4 and derived.expert_tp(2, 4) == 2
    assert list(derived.expert_tp(np.array([0, 2]), np.array([4, 4]))) == [4, 2]


def test_model_defaults_are_one_table() -> None:
    from primus_lang.hfimport import mapping
    from primus_lang.ir import text
    from primus_lang.lower import load
    from primus_lang.syntax import doctables

    assert load.DERIVED_DEFAULTS[load.Model] is derived.MODEL_DEFAULTS
    assert mapping.model_default is derived.model_default
    assert doctables.field_default is text.field_default
    assert derived.model_default("head_dim", {"hidden": 4096, "heads": 32}) == 128
    assert derived.model_default("head_dim", {"heads": 32}) is None
    assert derived.model_default("kv_heads", {"heads": 32}) == 32
    assert derived.model_default("max_position_embeddings", {"seq_len": 8192}) == 8192
