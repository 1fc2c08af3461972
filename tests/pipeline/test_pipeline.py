"""The one pipeline split (primus_lang.ir.pipeline) against megatron-core 0.16.1's own functions."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from primus_lang.ir import pipeline


def _megatron() -> tuple[object, object, object, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        from megatron.core.transformer.transformer_block import get_num_layers_to_build
        from megatron.core.transformer.transformer_config import TransformerConfig
        from megatron.core.transformer.transformer_layer import get_transformer_layer_offset
    return torch, TransformerConfig, get_num_layers_to_build, get_transformer_layer_offset


def _megatron_split(layers: int, pp: int, vpp: int, first: int, last: int) -> list[list[tuple[int, int]]] | None:
    """(layers, offset) per stage and chunk as Megatron builds them; None where Megatron refuses."""
    torch, config_cls, build, offset = _megatron()
    try:
        config = config_cls(  # type: ignore[operator]
            num_layers=layers, hidden_size=64, num_attention_heads=4, pipeline_model_parallel_size=pp,
            virtual_pipeline_model_parallel_size=vpp if vpp > 1 else None, pipeline_dtype=torch.bfloat16,  # type: ignore[attr-defined]
            num_layers_in_first_pipeline_stage=first or None, num_layers_in_last_pipeline_stage=last or None,
        )
        chunks = [None] if vpp == 1 else list(range(vpp))
        split = [[(build(config, v, s), offset(config, v, s)) for v in chunks] for s in range(pp)]  # type: ignore[operator]
    except (AssertionError, ValueError, ZeroDivisionError):  # the last: see pipeline.problems
        return None
    # Megatron checks only that the middle count divides: first + last > layers builds negative stages
    return None if any(n < 0 for stage in split for n, _ in stage) else split


CASES = [
    (layers, pp, vpp, first, last)
    for layers, pp, vpp in itertools.product((12, 61, 62, 94), (2, 3, 4, 8), (1, 2, 3))
    for first, last in ((0, 0), (0, 5), (0, 13), (4, 0), (6, 6), (8, 2), (0, 1), (14, 16), (2, 0))
]


@pytest.mark.slow
def test_split_and_offsets_match_megatron_core() -> None:
    for layers, pp, vpp, first, last in CASES:
        theirs = _megatron_split(layers, pp, vpp, first, last)
        why = pipeline.problems(layers, pp, vpp, first, last)
        assert (theirs is None) == bool(why), (layers, pp, vpp, first, last, why)
        if theirs is None:
            continue
        ours = pipeline.layout(layers, pp, vpp, first, last)
        assert [[(c.layers, c.start) for c in ours.on_stage(s)] for s in range(pp)] == theirs


def test_a_few_megatron_splits_by_hand() -> None:
    # DeepSeek-V3 (61 layers) at PP 8 with 5 on the last stage: Megatron-Bridge's PP 8 layout
    split = pipeline.layout(61, 8, 1, 0, 5, mtp_layers=1)
    assert [split.stage_layers(s) for s in range(8)] == [8] * 7 + [5]
    assert split.chunks[-1].mtp == 1 and split.chunks[-1].stage == 7
    assert pipeline.problems(61, 8) == ["61 layers do not divide over PP 8"]
    assert pipeline.problems(61, 1, 1, 0, 5) == ["uneven first/last stage layers need PP > 1"]
    # interleaved: 8 layers, PP 2, VPP 2 -> stage 0 holds [0, 1] and [4, 5]
    split = pipeline.layout(8, 2, 2)
    assert [(c.stage, c.chunk, c.start) for c in split.chunks] == [(0, 0, 0), (1, 0, 2), (0, 1, 4), (1, 1, 6)]


def test_zbv_runs_the_second_chunk_backwards() -> None:
    split = pipeline.layout(16, 4, 2, 0, 0, mtp_layers=1, zbv=True)
    assert [(c.stage, c.chunk) for c in split.chunks] == [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (2, 1), (1, 1), (0, 1)]
    assert [c.start for c in split.chunks] == list(range(0, 16, 2))
    assert split.chunks[-1].stage == pipeline.mtp_stage(4, zbv=True) == 0


def test_dense_first_layers_land_on_the_right_stage() -> None:
    # 3 dense layers of 61 at PP 8, last stage 5 layers: all on stage 0
    assert [pipeline.stage_dense_layers(61, 3, 8, 1, s, 0, 5) for s in range(8)] == [3] + [0] * 7
    # 10 dense layers at PP 4, VPP 2, 16 layers: chunks of 2 -> stage 0 chunk 0 [0,1], stage 1 [2,3], ...
    # chunk 1 starts at 8: stage 0 [8, 9] dense too
    assert [pipeline.stage_dense_layers(16, 10, 4, 2, s) for s in range(4)] == [4, 2, 2, 2]


def test_array_and_scalar_forms_agree() -> None:
    pps = np.array([2, 4, 8, 8])
    firsts = np.array([0, 0, 0, 8])
    lasts = np.array([1, 13, 5, 5])
    for stage in range(8):
        vec = pipeline.stage_layers(61, pps, np.int64(stage), firsts, lasts)
        one = [pipeline.stage_layers(61, int(p), stage, int(f), int(la)) for p, f, la in zip(pps, firsts, lasts, strict=True)]
        assert vec.tolist() == one
