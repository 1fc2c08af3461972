import pytest

from primus_lang.ir.candidate import Recompute
from primus_lang.search.gate import coerce_recompute, gate_candidate, gate_changes
from tests.search import synthetic


def test_axis_moves_pass_and_are_coerced() -> None:
    land = synthetic.landscape()
    v = gate_changes(land, [("tp", "4"), ("recompute", "full(4)"), ("tp_comm_overlap", "true")], land.base)
    assert v.allowed, v.reasons
    assert dict(v.changes) == {"tp": 4, "recompute": Recompute("full", 4), "tp_comm_overlap": True}


def test_changing_what_is_trained_is_refused() -> None:
    land = synthetic.landscape()
    for name, value in [("gbs", 512), ("seq_len", 8192), ("global_batch_size", 1024), ("lr", 3e-4),
                        ("moe_router_topk", 4), ("model", "llama")]:
        v = gate_changes(land, [(name, value)], land.base)
        assert not v.allowed
        assert "changes what is trained" in v.reasons[0], (name, v.reasons)


def test_unchanged_trained_knob_passes() -> None:
    land = synthetic.landscape()
    assert gate_changes(land, [("gbs", 256), ("tp", 2)], land.base).allowed


def test_fixed_knob_and_out_of_domain_and_unknown_are_refused() -> None:
    land = synthetic.landscape()
    assert "fixed by the space" in gate_changes(land, [("sharding", "fsdp")], land.base).reasons[0]
    assert "outside the axis domain" in gate_changes(land, [("tp", 16)], land.base).reasons[0]
    assert "not a knob" in gate_changes(land, [("warp_speed", 9)], land.base).reasons[0]
    assert "integer" in gate_changes(land, [("tp", "four")], land.base).reasons[0]
    assert "one of" in gate_changes(land, [("precision", "fp6")], land.base).reasons[0]


def test_gate_candidate_compares_every_non_axis_knob() -> None:
    land = synthetic.landscape()
    assert gate_candidate(land, land.points[3]).allowed
    bad = land.points[3].replace(gbs=128, schedule="zbv")
    reasons = gate_candidate(land, bad).reasons
    assert any("gbs" in r for r in reasons) and any("schedule" in r for r in reasons)


def test_recompute_spellings() -> None:
    assert coerce_recompute("none") == Recompute()
    assert coerce_recompute("full(layers: 8, method: uniform)") == Recompute("full", 8, "uniform")
    assert coerce_recompute({"kind": "full", "layers": 2}) == Recompute("full", 2)


def test_values_as_a_model_writes_them() -> None:
    """An LLM's `"--4"` was refused with Python's "invalid literal for int()"; `"FP8"` as an enum value
    was refused though `"FULL"` was read as a recompute kind (a new user's trial)."""
    from primus_lang.search.gate import coerce

    assert coerce("tp", " 4 ") == 4 and coerce("precision", "FP8") == "fp8"
    with pytest.raises(ValueError, match="`tp` takes an integer, got '--4'"):
        coerce("tp", "--4")
