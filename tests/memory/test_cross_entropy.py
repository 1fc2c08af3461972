"""The loss's cross-entropy kernel (`cross_entropy`): Megatron's, fused or not, saves the softmax in FP32;
Transformer Engine's saves the BF16 logits, overwritten by their gradient, and three FP32 values per token
and TP rank (transformer_engine/pytorch/cross_entropy.py: save_for_backward(_input, target, m_d_X_y)).
Primus's experiments ask for TE's (204 of its example files), where the account kept FP32 logits: its
Llama 3.1 8B FP8 example on one MI355X came out over the headroom."""

from __future__ import annotations

import attrs
from memory_models import LLAMA70B, X64

from primus_lang.ir import Candidate, Settings
from primus_lang.memory import account, prefilter
from primus_lang.project import project

S = Settings()
BASE = Candidate(tp=2, pp=4, gbs=256, mbs=2, seq_len=8192)


def _last(cand: Candidate) -> dict[str, int]:
    last = account(LLAMA70B, X64, cand, S).ranks[-1]
    return {t.name: t.bytes for t in last.terms}


def test_te_keeps_the_logits_in_bf16() -> None:
    tokens, vocab = 2 * 8192, LLAMA70B.vocab // 2
    fused = [_last(attrs.evolve(BASE, cross_entropy=k)) for k in ("unfused", "native", "te")]
    assert fused[0] == fused[1]  # Megatron's fused kernel saves what its unfused one saves
    unfused, te = fused[0], fused[2]
    assert unfused["act: logits fp32 (cross-entropy)"] == 4 * tokens * vocab
    assert "act: logits fp32 (cross-entropy)" not in te
    assert te["act: logits bf16 (TE cross-entropy)"] == 2 * tokens * vocab
    assert te["act: cross-entropy max, sum, target logit fp32"] == 12 * tokens * 2
    # only the last stage holds the loss
    first = account(LLAMA70B, X64, attrs.evolve(BASE, cross_entropy="te"), S).ranks[0]
    assert first.total == account(LLAMA70B, X64, BASE, S).ranks[0].total


def test_the_prefilter_agrees_and_te_moves_fewer_bytes() -> None:
    cands = [attrs.evolve(BASE, cross_entropy=k) for k in ("unfused", "native", "te")]
    assert prefilter(LLAMA70B, X64, cands, S).tolist() == [account(LLAMA70B, X64, c, S).peak.total for c in cands]
    times = [project(LLAMA70B, X64, c, S) for c in cands]
    assert times[0].step_time == times[1].step_time > times[2].step_time
