"""P4004 by release: megatron-core takes a TP that is a multiple of the key/value heads from Megatron-LM
f7dfb99 on (core_v0.16, Primus's pins, Megatron-Bridge's), gathering the QKV output whole; core_v0.15 and
older take only a TP dividing them. The projection and the memory account follow the gathered layout."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.check import legal_points, legality
from primus_lang.ir import Candidate, Space
from primus_lang.lower import loads_program
from primus_lang.project.build import stage_ops
from primus_lang.project.ops import Collective, Gemm
from tests.project.fixtures import H100, LLAMA3_1_8B, cluster

# 2 key/value heads, as Nemotron 3's attention layers have: TP 4 and 8 are multiples of them
GQA2 = LLAMA3_1_8B.replace(name="gqa2", kv_heads=2)


def _space(assume: str = "", target: str = "megatron + slurm") -> Space:
    text = f"""import models.llama3 (llama3_1_8b)
import clusters.nvidia (h100_x8)
space s on h100_x8 {{
  model = llama3_1_8b {{ kv_heads = 2 }}
  gbs = 256
  tp : 1 | 2 | 4 | 8
  target {target}
  {assume}
}}
"""
    return loads_program(text, "t.prx").spaces[0]


@pytest.mark.parametrize(("assume", "target", "tps"), [
    ("", "megatron + slurm", [1, 2, 4, 8]),  # core_v0.16, the default
    ('assume megatron_version = "core_v0.19"', "megatron + slurm", [1, 2, 4, 8]),
    ('assume megatron_version = "core_v0.15"', "megatron + slurm", [1, 2]),
    ('assume megatron_version = "core_v0.12"', "megatron + slurm", [1, 2]),
    ("", "primus + slurm", [1, 2, 4, 8]),
    ("", "bridge + slurm", [1, 2, 4, 8]),
])
def test_tp_over_the_key_value_heads_is_legal_where_megatron_takes_it(assume: str, target: str,
                                                                      tps: list[int]) -> None:
    space = _space(assume, target)
    assert sorted({c.tp for c in legal_points(space)}) == tps


def test_the_refusal_says_which_release_takes_it() -> None:
    old = _space('assume megatron_version = "core_v0.15"')
    [v] = [v for v in legality(old, Candidate(tp=4, gbs=256)) if v.code == "P4004"]
    assert "2 key/value heads (query groups) are not divisible by TP 4" in v.message
    assert "core_v0.16" in v.help
    three = attrs.evolve(_space(), model=GQA2.replace(heads=24, kv_heads=8))
    [v] = [v for v in legality(three, Candidate(tp=3, gbs=256)) if v.code == "P4004"]
    assert "8 key/value heads (query groups) and TP 3: neither divides the other" in v.message
    # 24 is a multiple of 8 dividing the heads, but not the QKV projection's (24 + 2·8)·128 columns
    assert v.help == "use a TP among 1, 2, 4, 8"


def test_a_multiple_of_the_groups_must_split_the_qkv_projection_evenly() -> None:
    """megatron-core's column-parallel linear asserts that TP divides its output (``divide``): 48 heads and
    2 key/value heads of 128 channels are 6,656 columns, which TP 6 does not divide (a review's find)."""
    space = attrs.evolve(_space(), model=GQA2.replace(heads=48, kv_heads=2))
    [v] = [v for v in legality(space, Candidate(tp=6, gbs=256)) if v.code == "P4004"]
    assert "TP 6 is a multiple of the 2 key/value heads (query groups) but does not divide the QKV projection's " \
           "6,656 columns" in v.message
    assert v.help == "use a TP among 1, 2 or a multiple of 2: 4, 8, 16"
    assert not [v for v in legality(space, Candidate(tp=8, gbs=256)) if v.code == "P4004"]
    one = attrs.evolve(_space('assume megatron_version = "core_v0.15"'), model=GQA2.replace(kv_heads=1))
    [v] = [v for v in legality(one, Candidate(tp=2, gbs=256)) if v.code == "P4004"]
    assert v.message.startswith("1 key/value head (query group) is not divisible by TP 2")
    assert 'assume megatron_version = "core_v0.16"' in v.help


def _attention_ops(tp: int) -> tuple[list[Gemm], list[tuple[str, str, int]]]:
    [stage] = stage_ops(GQA2, cluster(H100, nodes=4), Candidate(tp=tp, gbs=64, seq_len=4096))
    layer = next(b for ch in stage.chunks for b in ch if b.name.endswith("_layer"))
    gemms = [t.op for t in layer.tasks if t.phase == "F" and isinstance(t.op, Gemm)]
    comms = [(t.op.kind, t.phase, t.op.bytes) for t in layer.tasks
             if isinstance(t.op, Collective) and t.kind == "tp_comm" and t.hides_under == ""]
    return gemms, comms


def test_past_tp_equal_to_the_groups_the_qkv_output_is_gathered_whole() -> None:
    tokens, whole = 4096, (32 + 2 * 2) * 128  # one micro-batch's tokens; every head's q, k and v
    for tp in (1, 2):
        gemms, comms = _attention_ops(tp)
        assert gemms[0].n == whole // tp and comms == []
    for tp in (4, 8):
        gemms, comms = _attention_ops(tp)
        assert gemms[0].n == whole // tp  # the projection splits over TP as ever
        assert comms == [("all_gather", "F", tokens * whole * 2), ("reduce_scatter", "B", tokens * whole * 2)]
