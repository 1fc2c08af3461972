"""primusc against Megatron-LM's theoretical-memory formulas, where both describe the same thing.

Megatron-LM's ``theoretical_memory_usage.py`` (Korthikanti et al. 2022, Table 2): per layer with SP and
selective recompute ``s·b·h·(18 + 4·f/h) / t`` bytes; 18 bytes per parameter, ``6 + 12/DP`` with the
distributed optimizer. The formula leaves out the norms' FP32 statistics and the 4-byte flag selective
recompute saves, which the CPU ground truth measures.
"""

from __future__ import annotations

import pytest

from primus_lang.ir import Candidate, Cluster, Gpu, Model, Recompute, Settings
from primus_lang.memory import account
from primus_lang.memory import activations as act
from primus_lang.memory.knobs import from_candidate

GPT = Model(name="gpt3_like", num_layers=8, hidden=2048, ffn_hidden=8192, heads=16, kv_heads=16, head_dim=128,
            vocab=51200, seq_len=2048, max_position_embeddings=2048, activation="gelu", norm="layernorm",
            position="learned", bias=True, dropout=0.1, attention_dropout=0.1)
GPU = Gpu(name="g", vendor="other", peak_bf16=1e15, hbm_capacity=10**12, hbm_bandwidth=1e12,
          scale_up_bandwidth=1e11)


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize("attention", ["flash", "unfused"])
def test_layer_bytes_match_korthikanti_with_sp_and_selective(tp: int, attention: str) -> None:
    s, b, h, f = 2048, 2, GPT.hidden, GPT.ffn_hidden
    cand = Candidate(tp=tp, mbs=b, gbs=64, seq_len=s, recompute=Recompute("selective"), attention=attention)
    k = from_candidate(cand, 8)
    d = act.dims(GPT, k)
    per_layer = act.total(act.attention_items(GPT, k, d)) + act.total(act.dense_mlp_items(GPT, k, d))
    megatron = s * b * h * (18 + 4 * f // h) // tp
    ln_statistics = 2 * 2 * 4 * (s // tp) * b
    assert per_layer == megatron + ln_statistics + 4


@pytest.mark.parametrize("dp", [1, 2, 4])
def test_bytes_per_parameter(dp: int) -> None:
    cluster = Cluster(name="c", gpu=GPU, nodes=1, gpus_per_node=dp)
    model = GPT.replace(vocab=128 * 400)
    plain = account(model, cluster, Candidate(gbs=8 * dp, seq_len=2048, sharding="none"), Settings()).peak
    params = plain.term("parameters bf16").bytes // 2
    states = ("parameters bf16", "gradients", "master weights fp32", "adam moments")
    assert sum(plain.term(n).bytes for n in states) == 18 * params
    dist = account(model, cluster, Candidate(gbs=8 * dp, seq_len=2048, overlap_grad_reduce=False), Settings()).peak
    buffer = dist.term("parameters bf16").bytes // 2
    assert buffer >= params and buffer - params < 64 * 200  # start-of-parameter padding only
    assert sum(dist.term(n).bytes for n in states) == 6 * buffer + 12 * buffer // dp
