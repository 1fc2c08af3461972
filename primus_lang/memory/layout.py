"""Which layers each pipeline stage holds.

The split itself is Megatron's, from ``primus_lang.ir.pipeline`` (shared with the projection): even,
uneven through the first/last stage knobs, or an explicit layout string. The first ``dense_layers`` layers of an MoE model are dense;
with interleaving they sit in the first chunk(s) of the first stage(s).
"""

from __future__ import annotations

import attrs

from primus_lang.ir import Model, pipeline
from primus_lang.memory.dual import Num
from primus_lang.memory.knobs import Knobs


def model_split(model: Model, k: Knobs) -> pipeline.Split:
    return attrs.evolve(k.split, num_layers=model.num_layers)


_split = model_split


def head_stage(k: Knobs) -> Num:
    """The rank with the output layer and the loss: the last stage, or stage 0 under ZBV's V shape."""
    return k.split.last_stage


def mtp_stage(k: Knobs) -> Num:
    """The rank with the MTP layers: the head's, unless an explicit layout puts them elsewhere."""
    return k.split.mtp_stage


def stage_layers(model: Model, k: Knobs, stage: Num) -> Num:
    return _split(model, k).stage_layers(stage)


def stage_dense_layers(model: Model, k: Knobs, stage: Num) -> Num:
    """Dense-MLP layers on a stage (all of them for a dense model)."""
    if model.moe is None:
        return stage_layers(model, k, stage)
    if model.interleaved:
        # dense layers among the MoE ones (Llama 4 Maverick): counted from the layers' kinds, as a hybrid's are
        return _split(model, k).stage_kind_layers(model.dense_prefix(), stage)
    return _split(model, k).stage_dense_layers(model.moe.dense_layers, stage)

