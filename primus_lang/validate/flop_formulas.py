"""Model FLOPs per token as a source counted them, so that a run published only as model TFLOP/s/GPU
gives its tokens/s/GPU exactly: tokens/s/GPU = TFLOP/s/GPU / (FLOPs the source counts per token).

A corpus row names its source's formula in ``measured.flops_formula``. Sources count differently
(causal attention halved or not, padded or unpadded vocabulary, embeddings in or out), so a
formula is only ever the one the source's own code documents; a row whose source documents none
keeps its TFLOP/s as published and is not projected.
"""

from __future__ import annotations

from collections.abc import Callable

from primus_lang.ir import Model


def megatron_2024(model: Model, seq: int) -> float:
    """Megatron-LM's ``num_floating_point_operations`` of 2024 (training.py), which NeMo's
    ``flops_formulas.py`` restates for its llama2, llama3 and nemotron families: forward and
    backward (3 x 2 FLOPs per multiply-add) of the QKV and output projections, the full square of
    attention scores (causal masking not halved), the MLP (three matrices when gated, two
    otherwise) and the logits over the unpadded vocabulary (NeMo's ``LLM_VOCAB_SIZE_MAP``).
    Dense models only: its MoE terms differ between the two codes."""
    h, layers = model.hidden, model.num_layers
    q_ratio = model.heads * model.head_dim / h
    attention = (1 + model.kv_heads / model.heads + seq / h) * q_ratio
    mlp = model.ffn_hidden / h * (1.5 if model.gated else 1.0)
    return 12.0 * layers * h * h * (attention + mlp) + 6.0 * h * model.vocab


FLOP_FORMULAS: dict[str, Callable[[Model, int], float]] = {"megatron_2024": megatron_2024}


def tokens_from_tflops(formula: str, tflops: float, model: Model, seq: int) -> float | str:
    """Tokens/s/GPU from model TFLOP/s/GPU counted by ``formula``, or why it cannot be derived."""
    count = FLOP_FORMULAS.get(formula)
    if count is None:
        return f"unknown `measured.flops_formula` `{formula}` (known: {', '.join(sorted(FLOP_FORMULAS))})"
    if model.moe is not None or model.mla is not None or model.mamba is not None:
        return f"`measured.flops_formula` `{formula}` counts dense models only; `{model.name}` is not one"
    return tflops * 1e12 / count(model, seq)
