"""Issue 20's model families: each stdlib card adds up to the published checkpoint total, and the
memory account's tensor list holds exactly the closed form's weights.

The published totals are the parameter counts Hugging Face shows for each checkpoint (the model
page's safetensors metadata, i.e. model.safetensors.index.json's total_size over the bytes per
parameter). Each agrees to the parameter with ``total_params``, which is computed independently
from the card's widths; Kimi K2's also holds one routing-correction bias per expert in each of its
60 MoE layers, a buffer the card deliberately does not count (as DeepSeek-V3's in test_cards.py).
"""

from __future__ import annotations

import pytest

from primus_lang.ir import Model
from primus_lang.ir.derived import padded_vocab
from primus_lang.memory.params import embedding_tensors, head_tensors, layer_tensors

from .params import total_params
from .test_cards import models

PUBLISHED = {
    # card: (parameters, checkpoint)
    "qwen2_5_7b": (7_615_616_512, "Qwen/Qwen2.5-7B"),
    "qwen2_5_72b": (72_706_203_648, "Qwen/Qwen2.5-72B"),
    "qwen3_8b": (8_190_735_360, "Qwen/Qwen3-8B"),
    "qwen3_32b": (32_762_123_264, "Qwen/Qwen3-32B"),
    "llama3_2_1b": (1_235_814_400, "meta-llama/Llama-3.2-1B"),
    "llama3_2_3b": (3_212_749_824, "meta-llama/Llama-3.2-3B"),
    "mistral_7b": (7_241_732_096, "mistralai/Mistral-7B-v0.1"),
    "phi3_mini": (3_821_079_552, "microsoft/Phi-3-mini-4k-instruct"),
    "phi4": (14_659_507_200, "microsoft/phi-4"),
    "olmo2_7b": (7_298_617_344, "allenai/OLMo-2-1124-7B"),
    "gemma2_2b": (2_614_341_888, "google/gemma-2-2b"),
    "gemma2_9b": (9_241_705_984, "google/gemma-2-9b"),
    "gemma2_27b": (27_227_128_320, "google/gemma-2-27b"),
    "deepseek_v2": (235_741_434_880, "deepseek-ai/DeepSeek-V2"),
    "deepseek_v2_lite": (15_706_484_224, "deepseek-ai/DeepSeek-V2-Lite"),
    "kimi_k2": (1_026_408_232_448 - 60 * 384, "moonshotai/Kimi-K2-Base, less 60 x 384 correction biases"),
}
# Published only to the billion (model cards): GLM-4.5-Air "106B total parameters" (zai-org/GLM-4.5-Air,
# without its MTP layer); OLMo 2 13B "13B" (allenai/OLMo-2-1124-13B); Llama 4 Scout's 109B counts
# its vision encoder, which the card leaves out, so it is checked against its parts instead.
TO_THE_BILLION = {"glm4_5_air": 106, "olmo2_13b": 13}


@pytest.mark.parametrize("card", sorted(PUBLISHED))
def test_card_adds_up_to_the_published_total(card: str) -> None:
    assert total_params(models()[card]) == PUBLISHED[card][0]


@pytest.mark.parametrize("card", sorted(TO_THE_BILLION))
def test_card_adds_up_to_the_published_billions(card: str) -> None:
    assert int(total_params(models()[card]) / 1e9) == TO_THE_BILLION[card]


def test_llama4_scout_parts() -> None:
    """Scout's 17B active parameters (the model card's name): attention, shared and one routed expert
    per layer plus the embeddings; its 16 experts make the total."""
    m = models()["llama4_scout"]
    assert m.moe is not None
    expert = 3 * m.hidden * m.moe.ffn_hidden
    active = total_params(m) - m.moe_layers * (m.moe.num_experts - m.moe.top_k) * expert
    assert round(active / 1e9) == 17
    assert (m.moe.shared_experts, m.moe.num_experts, m.moe_layers) == (1, 16, 48)


def _listed(m: Model) -> int:
    """The memory account's tensors of the whole model on one rank, vocabulary padding taken out."""
    n = sum(t.numel for t in embedding_tensors(m, 1))
    n += sum(t.numel for i in range(m.num_layers) for t in layer_tensors(m, 1, 1, 1, i >= m.dense_layers))
    n += sum(t.numel for t in head_tensors(m, 1, 1, 1, 1, mtp=False))
    copies = 1 if m.tied_embeddings else 2
    return n - (int(padded_vocab(m.vocab, 1)) - m.vocab) * m.hidden * copies


FAMILY_CARDS = sorted(set(PUBLISHED) | set(TO_THE_BILLION) | {"llama4_scout", "gemma3_27b"})


@pytest.mark.parametrize("card", FAMILY_CARDS)
def test_memory_account_holds_the_closed_form(card: str) -> None:
    m = models()[card]
    # routed experts carry no correction-bias parameter in either count
    assert _listed(m) == total_params(m)


def test_family_features() -> None:
    m = models()
    assert m["qwen2_5_72b"].qkv_bias and not m["qwen2_5_72b"].bias and not m["qwen2_5_72b"].qk_layernorm
    assert m["qwen3_8b"].qk_layernorm and not m["qwen3_8b"].qkv_bias
    assert m["qwen2_5_7b"].norm_epsilon == 1e-6 and m["qwen2_5_72b"].norm_epsilon == 1e-5
    g2, g3 = m["gemma2_9b"], m["gemma3_27b"]
    assert (g2.activation, g2.norm_placement, g2.tied_embeddings) == ("geglu", "sandwich", True)
    assert (g2.attention_softcap, g2.logit_softcap, g2.full_attention_every) == (50.0, 30.0, 2)
    assert g2.heads * g2.head_dim != g2.hidden
    assert (g3.windowed_layers, g3.attention_softcap, g3.qk_layernorm) == (52, 0.0, True)  # 62 - 62 // 6
    assert m["olmo2_7b"].norm_placement == "post" and m["olmo2_7b"].qk_norm_whole
    assert m["phi3_mini"].windowed_layers == 32 and m["mistral_7b"].full_attention_every == 0
    glm = m["glm4_5_air"]
    assert glm.qkv_bias and glm.moe is not None and glm.moe.dense_layers == 1 and glm.moe.shared_experts == 1
    assert m["kimi_k2"].mla == m["deepseek_v3"].mla and m["kimi_k2"].moe_layers == 60
    assert m["llama3_2_1b"].tied_embeddings and m["llama3_2_1b"].head_dim == 64
