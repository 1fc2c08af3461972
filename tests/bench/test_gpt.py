from __future__ import annotations

import pytest

from primus_lang.bench.acceptance import TINY_GPT
from primus_lang.bench.gpt import build_gpt, build_layer, layer_params, model_params
from primus_lang.ir import Model

LLAMA_LIKE = Model(
    name="llama_like", num_layers=2, hidden=64, ffn_hidden=160, heads=8, kv_heads=2, head_dim=8, vocab=128,
    seq_len=32, max_position_embeddings=64,
)


@pytest.mark.parametrize("model", [TINY_GPT, LLAMA_LIKE, TINY_GPT.replace(bias=True)])
@pytest.mark.parametrize("tp", [1, 2, 4])  # LLAMA_LIKE at TP 4: past its 2 key/value heads, the QKV gathered
def test_closed_form_parameter_counts_match_the_built_modules(model: Model, tp: int) -> None:
    import torch

    layer = build_layer(model, tp, False, torch.float32, "cpu")
    assert sum(p.numel() for p in layer.parameters()) == layer_params(model, tp)
    net = build_gpt(model, 2, torch.float32, "cpu", tp=tp)
    assert sum(p.numel() for p in net.parameters()) == model_params(model, 2, tp)


def test_past_the_key_value_heads_a_rank_attends_with_its_own_query_heads_and_one_kv_head() -> None:
    import torch

    layer = build_layer(LLAMA_LIKE, 4, False, torch.float32, "cpu")
    assert layer.qkv.out_features == (8 + 2 * 2) * 8 // 4  # a TP-th of every head's q, k and v
    seen = []

    def core(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seen.append((q.shape, k.shape, v.shape))
        return q

    layer.core = core
    layer(torch.zeros(2, 16, LLAMA_LIKE.hidden))
    assert seen == [((2, 2, 16, 8), (2, 1, 16, 8), (2, 1, 16, 8))]  # heads/TP = 2 query heads, 1 kv head


def test_reduced_gpt_trains_with_every_recompute_mode() -> None:
    import torch

    losses = []
    for recompute, full in (("none", 0), ("selective", 0), ("full", 2)):
        net = build_gpt(LLAMA_LIKE, 2, torch.float32, "cpu", recompute=recompute, full_layers=full)
        ids = torch.randint(0, LLAMA_LIKE.vocab, (2, 16), generator=torch.Generator().manual_seed(0))
        loss = net(ids, ids)
        loss.backward()
        assert all(p.grad is not None for p in net.parameters())
        losses.append(float(loss.detach()))
    # recomputation changes when activations are made, never the numbers
    assert losses[0] == pytest.approx(losses[1]) == pytest.approx(losses[2])
