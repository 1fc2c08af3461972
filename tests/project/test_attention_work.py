"""Flash-attention timing: the softmax's share grows as heads narrow; sliding windows scan whole blocks."""

from __future__ import annotations

import pytest

from primus_lang.project.ops import Attention
from primus_lang.project.oracle import EXP_RATIO, TILE, SimulateOracle, attention_work

from .fixtures import cluster


def attn(head_dim: int, window: int = 0, seq: int = 4096) -> Attention:
    return Attention(batch=1, heads=8, seq_q=seq, seq_kv=seq, head_dim=head_dim, v_head_dim=head_dim, window=window)


def test_128_dim_heads_are_the_reference() -> None:
    op = attn(128)
    assert attention_work(op) == pytest.approx(op.flops, rel=1e-12)


def test_narrow_heads_cost_more_per_flop() -> None:
    narrow, wide = attn(64), attn(128)
    per_flop = (attention_work(narrow) / narrow.flops) / (attention_work(wide) / wide.flops)
    # one exponential per pair against 2*(d_qk + d_v) matmul FLOPs: 256 for 64-dim heads, 512 for 128
    assert per_flop == pytest.approx((1 + EXP_RATIO / 256) / (1 + EXP_RATIO / 512), rel=1e-12)
    assert 1.25 < per_flop < 1.4  # FlashAttention-3 reports 64-dim heads at ~0.7-0.8x the 128-dim rate
    # wider (MLA 192 + 128) heads are cheaper per FLOP than the reference
    mla = Attention(batch=1, heads=8, seq_q=4096, seq_kv=4096, head_dim=192, v_head_dim=128)
    assert attention_work(mla) < mla.flops


def test_a_sliding_window_scans_the_blocks_it_straddles() -> None:
    windowed = attn(128, window=128)
    assert windowed.flops == pytest.approx(attn(128).flops * 128 / (4096 / 2))  # model FLOPs: s * w pairs
    assert attention_work(windowed) == pytest.approx(windowed.flops * (128 + TILE) / 128, rel=1e-12)
    # a window as wide as the sequence is plain causal attention
    assert attention_work(attn(128, window=4096)) == pytest.approx(attn(128).flops, rel=1e-12)


def test_the_oracle_times_attention_by_its_work() -> None:
    oracle = SimulateOracle(cluster())
    narrow, wide = attn(64, seq=32768), attn(128, seq=32768)
    assert oracle.compute(narrow) / narrow.flops > 1.25 * oracle.compute(wide) / wide.flops
