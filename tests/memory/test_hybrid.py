"""Hybrid Mamba/attention models (megatron-core's MambaStack): layer kinds per stage, parameters and
activations by kind, and the pre-filter equal to the account."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_models import HYBRID_SMALL, X64

from primus_lang.ir import Candidate, Recompute, Settings, pipeline
from primus_lang.memory import account, prefilter
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.params import hybrid_layer_tensors, stage_tensors
from primus_lang.memory.stage import HYBRID_KINDS, held

S = Settings()


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2]), st.sampled_from([0, 2, 4]), st.sampled_from([0, 2]),
       st.integers(0, 5))
def test_stage_kind_counts_equal_the_layers_each_chunk_holds(pp: int, vpp: int, first: int, last: int,
                                                           limit: int) -> None:
    split = pipeline.Split(HYBRID_SMALL.num_layers, pp, vpp, first if pp > 1 else 0, last if pp > 2 else 0)
    if pipeline.problems(split):
        return
    layout = pipeline.layout(split)
    for stage in range(pp):
        for kind in HYBRID_KINDS:
            text = [HYBRID_SMALL.pattern[c.start:c.start + c.layers] for c in layout.on_stage(stage)]
            want = sum(t.count(kind) for t in text)
            assert split.stage_kind_layers(HYBRID_SMALL.kind_prefix(kind), stage) == want
            firsts = sum(t[:limit].count(kind) for t in text)
            assert split.stage_kind_layers(HYBRID_SMALL.kind_prefix(kind), stage, limit) == firsts


def test_every_stage_holds_its_pattern_slice() -> None:
    for pp in (1, 2, 4):
        k = from_candidate(Candidate(pp=pp, mbs=1, gbs=64, seq_len=4096), X64.world)
        total = 0
        for stage in range(pp):
            names = [t.name for t in stage_tensors(HYBRID_SMALL, k, stage)]
            lo = stage * HYBRID_SMALL.num_layers // pp
            chars = HYBRID_SMALL.pattern[lo:lo + HYBRID_SMALL.num_layers // pp]
            assert sum(n.endswith("mixer.in_proj.weight") for n in names) == chars.count("M")
            assert sum(n.endswith("linear_qkv.weight") for n in names) == chars.count("*")
            assert sum(n.endswith("router.weight") for n in names) == chars.count("E")
            total += sum(t.numel for t in stage_tensors(HYBRID_SMALL, k, stage))
        if pp == 1:
            whole = total
        assert total == whole  # the split moves layers, it neither adds nor drops any


def test_mamba_layer_shapes_per_tp_rank() -> None:
    m = HYBRID_SMALL.mamba
    assert m is not None
    for tp in (1, 2, 4, 8):
        t = {x.name: x.numel for x in hybrid_layer_tensors(HYBRID_SMALL, "M", tp, 1, 1)}
        inner, bc = m.inner // tp, 2 * (m.groups // tp) * m.state_dim
        assert t["mixer.in_proj.weight"] == (2 * inner + bc + m.heads // tp) * HYBRID_SMALL.hidden
        assert t["mixer.conv1d.weight"] == (inner + bc) * m.conv_kernel
        assert t["mixer.out_proj.weight"] == HYBRID_SMALL.hidden * inner
        assert t["mixer.A_log"] == t["mixer.D"] == t["mixer.dt_bias"] == m.heads // tp


def test_latent_moe_experts_work_at_the_latent_width() -> None:
    moe = HYBRID_SMALL.moe
    assert moe is not None
    t = {x.name: x.numel for x in hybrid_layer_tensors(HYBRID_SMALL, "E", 1, 1, 1)}
    assert t["mlp.fc1_latent_proj.weight"] == t["mlp.fc2_latent_proj.weight"] == moe.latent * HYBRID_SMALL.hidden
    assert t["mlp.experts.local_experts.0.linear_fc1.weight"] == moe.ffn_hidden * moe.latent
    assert t["mlp.shared_experts.linear_fc1.weight"] == moe.ffn_hidden * HYBRID_SMALL.hidden


def test_held_layers_by_kind_add_up_to_the_stage() -> None:
    cand = Candidate(pp=2, mbs=1, gbs=64, seq_len=4096)
    k = from_candidate(cand, X64.world)
    for stage in range(2):
        hd = held(HYBRID_SMALL, k, stage)
        per_mb = (hd.mamba + hd.attn + hd.dense + hd.moe) // hd.chunks
        assert per_mb == HYBRID_SMALL.num_layers // 2
    full = from_candidate(attrs.evolve(cand, recompute=Recompute("full", 1, "uniform")), X64.world)
    hd = held(HYBRID_SMALL, full, 0)
    assert (hd.mamba, hd.attn, hd.dense, hd.moe) == (0, 0, 0, 0) and hd.recomputed == 8


def test_mamba_activations_scale_with_its_width() -> None:
    plain = account(HYBRID_SMALL, X64, Candidate(mbs=1, gbs=64, seq_len=4096), S)
    names = [t.name for t in plain.ranks[0].terms]
    assert "act: in_proj output (z|x|B|C|dt)" in names and "act: out_proj input" in names
    wider = HYBRID_SMALL.replace(mamba=attrs.evolve(HYBRID_SMALL.mamba, heads=64))
    assert account(wider, X64, Candidate(mbs=1, gbs=64, seq_len=4096), S).peak.total > plain.peak.total


def test_prefilter_equals_account_on_hybrid_points() -> None:
    cands = [
        Candidate(tp=tp, pp=pp, ep=ep, mbs=mbs, gbs=128, seq_len=4096, recompute=rc, precision=precision,
                  sharding=sharding)
        for tp in (1, 2, 8) for pp in (1, 2, 4) for ep in (1, 4) for mbs in (1, 2)
        for rc in (Recompute(), Recompute("selective"), Recompute("full", 2, "uniform"), Recompute("full", 3))
        for precision in ("bf16", "fp8") for sharding in ("dist_opt", "fsdp")
    ]
    peaks = prefilter(HYBRID_SMALL, X64, cands, S)
    assert [int(p) for p in peaks] == [account(HYBRID_SMALL, X64, c, S).peak.total for c in cands]
