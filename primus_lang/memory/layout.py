"""Which layers each pipeline stage holds, and the padded vocabulary.

Megatron needs ``layers % pp == 0`` for an even split; published recipes for odd layer counts
(DeepSeek-V3's 61) use uneven layouts that lighten the first and last stages, which hold the embedding
and the output layer. primusc splits ``layers // pp`` per stage and hands the remainder to the middle
stages first (1, 2, ..., pp-2), then to the last stage. The first ``dense_layers`` layers of an MoE
model are dense and sit at the front of the first stage.
"""

from __future__ import annotations

from primus_lang.ir import Model
from primus_lang.memory.dual import Num, cdiv, maximum, minimum, where

# Megatron-LM pads the vocabulary to a multiple of 128 * TP (--make-vocab-size-divisible-by 128).
VOCAB_DIVISOR = 128

def padded_vocab(model: Model, tp: Num) -> Num:
    return cdiv(model.vocab, VOCAB_DIVISOR * tp) * VOCAB_DIVISOR * tp

def stage_layers(layers: int, pp: Num, stage: Num) -> Num:
    base = layers // pp
    rem = layers % pp
    # Order in which stages take a remainder layer: middle stages, then the last, then the first.
    rank = where(stage == 0, pp - 1, where(stage == pp - 1, pp - 2, stage - 1))
    return base + where(rank < rem, 1, 0)

def stage_start(layers: int, pp: Num, stage: Num) -> Num:
    base = layers // pp
    rem = layers % pp
    before = where(stage == 0, 0, minimum(maximum(stage - 1, 0), rem))
    return stage * base + before

def stage_dense_layers(model: Model, pp: Num, stage: Num) -> Num:
    """Dense-MLP layers on a stage (all of them for a dense model)."""
    n = stage_layers(model.num_layers, pp, stage)
    if model.moe is None:
        return n
    left = maximum(model.moe.dense_layers - stage_start(model.num_layers, pp, stage), 0)
    return minimum(left, n)
