"""P4036-P4038: what megatron-core 0.16.1's Mamba stack takes. The vectorised mask, the lazy
enumeration and the one-point path agree; the language reports a malformed pattern with a code."""

from __future__ import annotations

import pytest

from primus_lang.check import legal_mask, legal_points, legality, raw_points
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Candidate, Recompute, Space
from primus_lang.lower import loads_program

MODEL = """
model h {
  num_layers = 8; hidden = 1024; ffn_hidden = 2048; heads = 16; kv_heads = 4; vocab = 32000; seq_len = 4096
  position = none; activation = squared_relu
  pattern = "M*M-M*ME"
  mamba { heads = 24; head_dim = 64; state_dim = 64; groups = 4 }
  moe { num_experts = 8; top_k = 2; ffn_hidden = 512 }
}
gpu g { vendor = nvidia; peak_bf16 = 989 TFLOP/s; hbm_capacity = 80 GB; hbm_bandwidth = 3.35 TB/s
  scale_up_bandwidth = 450 GB/s }
cluster c { gpu = g; nodes = 2; gpus_per_node = 8 }
"""


def space(axes: str) -> Space:
    return loads_program(MODEL + f"space s on c {{ model = h\n gbs = 64\n {axes}\n}}", "t.prx").spaces[0]


def refused(s: Space, cand: Candidate) -> dict[str, str]:
    return {v.code: v.message for v in legality(s, cand)}


def test_mamba_heads_and_groups_divide_by_tp() -> None:
    s = space("tp : 1 | 2 | 4 | 8")
    assert "P4036" in refused(s, Candidate(gbs=64, tp=8))  # 4 groups
    assert "(mamba-tp-divisibility)" in refused(s, Candidate(gbs=64, tp=8))["P4036"]
    assert "P4036" not in refused(s, Candidate(gbs=64, tp=4))
    points = list(raw_points(s))
    one = [c for c in points if not legality(s, c)]
    assert [c for c, ok in zip(points, legal_mask(s, points), strict=True) if ok] == one == list(legal_points(s))
    assert {c.tp for c in one} == {1, 2, 4}


@pytest.mark.parametrize("cand", [
    Candidate(gbs=64, pp=2, vpp=2, schedule="interleaved"),
    Candidate(gbs=64, pp=2, vpp=2, schedule="zbv"),
    Candidate(gbs=64, pp=2, account_for_loss=True),
])
def test_the_mamba_stack_takes_no_virtual_pipeline(cand: Candidate) -> None:
    s = space("pp : 1 | 2")
    assert "P4037" in refused(s, cand)
    assert "P4037" not in refused(s, Candidate(gbs=64, pp=2))
    assert "P4037" not in refused(s, Candidate(gbs=64, pp=2, first_stage_layers=2))


def test_op_level_checkpointing_is_refused() -> None:
    s = space("pp : 1")
    assert "P4038" in refused(s, Candidate(gbs=64, recompute=Recompute("op")))
    assert "P4038" not in refused(s, Candidate(gbs=64, recompute=Recompute("full", 1)))


@pytest.mark.parametrize(("pattern", "why"), [
    ("M*M-M*MX", "pattern holds 'X'"),
    ("M*M-M*M", "pattern has 7 layers"),
])
def test_a_malformed_pattern_is_a_diagnostic(pattern: str, why: str) -> None:
    with pytest.raises(CompileError) as err:
        loads_program(MODEL.replace('"M*M-M*ME"', f'"{pattern}"'), "t.prx")
    diagnostic = err.value.diagnostics[0]
    assert why in diagnostic.message and diagnostic.span is not None


def test_mamba_layers_need_a_mamba_block() -> None:
    with pytest.raises(CompileError) as err:
        loads_program(MODEL.replace("mamba { heads = 24; head_dim = 64; state_dim = 64; groups = 4 }", ""), "t.prx")
    assert "no `mamba` block" in err.value.diagnostics[0].message


@pytest.mark.parametrize(("tp", "cp", "legal"), [(2, 2, True), (1, 8, True), (4, 2, True), (2, 8, False), (1, 3, False)])
def test_context_parallel_splits_each_ranks_heads(tp: int, cp: int, legal: bool) -> None:
    """24 heads in 4 groups: CP splits the heads of a TP rank (24 % (TP·CP)) and its groups, or
    repeats the groups when it has fewer than CP (TP 1, CP 8: 4 groups, each on two ranks; TP 4,
    CP 2: one group a rank, on both); CP 3 neither splits nor repeats 4 groups."""
    s = space("cp : 1 | 2 | 3 | 8")
    assert ("P4036" not in refused(s, Candidate(gbs=64, tp=tp, cp=cp))) == legal
