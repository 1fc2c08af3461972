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
@pytest.mark.parametrize("tp", [1, 2])
def test_closed_form_parameter_counts_match_the_built_modules(model: Model, tp: int) -> None:
    import torch

    layer = build_layer(model, tp, False, torch.float32, "cpu")
    assert sum(p.numel() for p in layer.parameters()) == layer_params(model, tp)
    net = build_gpt(model, 2, torch.float32, "cpu", tp=tp)
    assert sum(p.numel() for p in net.parameters()) == model_params(model, 2, tp)


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
