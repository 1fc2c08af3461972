"""The one pipeline split (primus_lang.ir.pipeline) against megatron-core 0.16.1's own functions."""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

from primus_lang.ir import pipeline


def _megatron() -> tuple[object, object, object, object]:
    # megatron-core and torch are the ground truth's, outside the base install: skip without them
    pytest.importorskip("torch", reason="torch is in the `bench` extra")
    pytest.importorskip("megatron.core", reason="megatron-core is installed beside the `bench` extra")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        from megatron.core.transformer.transformer_block import get_num_layers_to_build
        from megatron.core.transformer.transformer_config import TransformerConfig
        from megatron.core.transformer.transformer_layer import get_transformer_layer_offset
    return torch, TransformerConfig, get_num_layers_to_build, get_transformer_layer_offset


def _megatron_split(layers: int, pp: int, vpp: int, first: int, last: int, emb: bool = False,
                    loss: bool = False) -> list[list[tuple[int, int]]] | None:
    """(layers, offset) per stage and chunk as Megatron builds them; None where Megatron refuses."""
    torch, config_cls, build, offset = _megatron()
    try:
        config = config_cls(  # type: ignore[operator]
            num_layers=layers, hidden_size=64, num_attention_heads=4, pipeline_model_parallel_size=pp,
            virtual_pipeline_model_parallel_size=vpp if vpp > 1 else None, pipeline_dtype=torch.bfloat16,  # type: ignore[attr-defined]
            num_layers_in_first_pipeline_stage=first or None, num_layers_in_last_pipeline_stage=last or None,
            account_for_embedding_in_pipeline_split=emb, account_for_loss_in_pipeline_split=loss,
        )
        chunks = [None] if vpp == 1 else list(range(vpp))
        split = [[(build(config, v, s), offset(config, v, s)) for v in chunks] for s in range(pp)]  # type: ignore[operator]
    except (AssertionError, ValueError, ZeroDivisionError):  # the last: see pipeline.problems
        return None
    # Megatron checks only that the middle count divides: first + last > layers builds negative stages
    return None if any(n < 0 for stage in split for n, _ in stage) else split


CASES = [
    (layers, pp, vpp, first, last, emb, loss)
    for layers, pp, vpp in itertools.product((12, 61, 62, 94), (2, 3, 4, 8), (1, 2, 3))
    for first, last, emb, loss in (
        (0, 0, False, False), (0, 5, False, False), (0, 13, False, False), (4, 0, False, False),
        (6, 6, False, False), (8, 2, False, False), (0, 1, False, False), (14, 16, False, False),
        (2, 0, False, False), (0, 0, True, True), (0, 0, True, False), (0, 0, False, True), (0, 4, True, False),
    )
]


@pytest.mark.slow
def test_split_and_offsets_match_megatron_core() -> None:
    for layers, pp, vpp, first, last, emb, loss in CASES:
        theirs = _megatron_split(layers, pp, vpp, first, last, emb, loss)
        split = pipeline.Split(layers, pp, vpp, first, last, emb, loss)
        why = pipeline.problems(split)
        assert (theirs is None) == bool(why), (layers, pp, vpp, first, last, emb, loss, why)
        if theirs is None:
            continue
        ours = pipeline.layout(split)
        assert [[(c.layers, c.start) for c in ours.on_stage(s)] for s in range(pp)] == theirs


def test_a_few_megatron_splits_by_hand() -> None:
    # DeepSeek-V3 (61 layers) at PP 8 with 5 on the last stage
    split = pipeline.layout(pipeline.Split(61, 8, last=5), mtp_layers=1)
    assert [split.stage_layers(s) for s in range(8)] == [8] * 7 + [5]
    assert split.chunks[-1].mtp == 1 and split.chunks[-1].stage == 7
    assert pipeline.problems(pipeline.Split(61, 8)) == ["61 layers do not divide over PP 8"]
    assert pipeline.problems(pipeline.Split(61, 1, last=5)) == ["uneven first/last stage layers need PP > 1"]
    # Llama-3.1-405B's 126 layers, the embedding and the loss: 128 units, 2 a chunk at PP 8 x VPP 8
    split = pipeline.layout(pipeline.Split(126, 8, 8, embedding=True, loss=True))
    assert [c.layers for c in split.chunks] == [1] + [2] * 62 + [1]
    # interleaved: 8 layers, PP 2, VPP 2 -> stage 0 holds [0, 1] and [4, 5]
    split = pipeline.layout(pipeline.Split(8, 2, 2))
    assert [(c.stage, c.chunk, c.start) for c in split.chunks] == [(0, 0, 0), (1, 0, 2), (0, 1, 4), (1, 1, 6)]


def test_zbv_runs_the_second_chunk_backwards() -> None:
    split = pipeline.Split(16, 4, 2, zbv=True)
    chunks = pipeline.layout(split, mtp_layers=1).chunks
    assert [(c.stage, c.chunk) for c in chunks] == [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (2, 1), (1, 1), (0, 1)]
    assert [c.start for c in chunks] == list(range(0, 16, 2))
    assert chunks[-1].stage == split.last_stage == 0
    # with the loss counted, ZBV's last virtual stage (on rank 0) builds the layer fewer
    lossy = pipeline.Split(15, 4, 2, loss=True, zbv=True)
    assert [lossy.stage_layers(s) for s in range(4)] == [3, 4, 4, 4]


def test_dense_first_layers_land_on_the_right_stage() -> None:
    # 3 dense layers of 61 at PP 8, last stage 5 layers: all on stage 0
    split = pipeline.Split(61, 8, 1, 0, 5)
    assert [split.stage_dense_layers(3, s) for s in range(8)] == [3] + [0] * 7
    # 10 dense layers of 16 at PP 4, VPP 2: chunks of 2, so stages 0-3 take [0,1] .. [6,7], then stage 0 [8,9]
    split = pipeline.Split(16, 4, 2)
    assert [split.stage_dense_layers(10, s) for s in range(4)] == [4, 2, 2, 2]


def test_array_and_scalar_forms_agree() -> None:
    pps = np.array([2, 4, 8, 8, 8])
    vpps = np.array([1, 2, 1, 1, 8])
    firsts = np.array([0, 0, 0, 8, 0])
    lasts = np.array([1, 13, 5, 5, 0])
    emb = np.array([False, False, False, False, True])
    many = pipeline.Split(61, pps, vpps, firsts, lasts, emb, emb)
    for stage in range(8):
        one = [pipeline.Split(61, int(p), int(v), int(f), int(la), bool(e), bool(e)) for p, v, f, la, e
               in zip(pps, vpps, firsts, lasts, emb, strict=True)]
        assert many.stage_layers(np.int64(stage)).tolist() == [s.stage_layers(stage) for s in one]
        assert many.stage_dense_layers(3, np.int64(stage)).tolist() == [s.stage_dense_layers(3, stage) for s in one]


def _megatron_layout(layout: str, layers: int, pp: int, vpp: int,
                     mtp: int) -> list[list[tuple[int, int, int]]] | None:
    """(decoder layers, offset, MTP layers) per stage and chunk as megatron-core builds an explicit
    layout; None where its config refuses. The layout reads the ranks from parallel_state, so they are
    set here (and reset after)."""
    torch, config_cls, build, offset = _megatron()
    from megatron.core import parallel_state as ps
    from megatron.core.transformer.multi_token_prediction import get_mtp_num_layers_to_build

    try:
        config = config_cls(  # type: ignore[operator]
            num_layers=layers, hidden_size=64, num_attention_heads=4, pipeline_model_parallel_size=pp,
            virtual_pipeline_model_parallel_size=vpp if vpp > 1 else None, pipeline_dtype=torch.bfloat16,  # type: ignore[attr-defined]
            pipeline_model_parallel_layout=layout, mtp_num_layers=mtp or None,
        )
    except (AssertionError, ValueError):
        return None
    ps.set_virtual_pipeline_model_parallel_world_size(vpp if vpp > 1 else None)
    try:
        out = []
        for s in range(pp):
            ps.set_pipeline_model_parallel_rank(s)
            chunks = [None] if vpp == 1 else list(range(vpp))
            out.append([(build(config, v, s), offset(config, v, s), get_mtp_num_layers_to_build(config, v))  # type: ignore[operator]
                        for v in chunks])
        return out
    finally:
        ps.set_pipeline_model_parallel_rank(None)
        ps.set_virtual_pipeline_model_parallel_world_size(None)


DSV3 = "Et*4|(t*4|)*14tmL"
LAYOUT_CASES = [
    # (layout, layers, pp, vpp, mtp)
    (DSV3, 61, 8, 2, 1), (DSV3, 61, 4, 4, 1), (DSV3, 61, 2, 8, 1), (DSV3, 61, 16, 1, 1),
    ("Et*16|t*16|t*16|t*13mL", 61, 4, 1, 1),
    ("Et*8|(t*8|)*6t*5mL", 61, 4, 2, 1),
    # uneven by hand: chunks of one stage differ, an empty virtual stage, a lone loss stage
    ("Ettt|tt|t|tttt,L", 10, 2, 2, 0), ("Et|ttt||tttL", 7, 2, 2, 0), ("E|t*5|t*3|L", 8, 4, 1, 0),
    ("Et*3|(tt|)*5t,mm|L", 14, 2, 4, 2), ("Et|tt|tm|L", 4, 2, 2, 1), ("Ett|tt|mL", 4, 3, 1, 1),
    # refusals: stage count, decoder count, MTP count, E/L placement, MTP before a decoder layer or
    # outside a rank's last chunk
    ("(t|)*2EL", 2, 3, 1, 0),
    (DSV3, 61, 4, 2, 1), (DSV3, 61, 3, 1, 1), (DSV3, 60, 8, 2, 1), (DSV3, 61, 8, 2, 0),
    ("tEt|tL", 3, 2, 1, 0), ("Ett|Lt", 3, 2, 1, 0), ("Etm|ttL", 3, 2, 1, 1), ("Etm|t|t|L", 3, 2, 2, 1),
]


@pytest.mark.slow
def test_explicit_layouts_match_megatron_core() -> None:
    for layout, layers, pp, vpp, mtp in LAYOUT_CASES:
        theirs = _megatron_layout(layout, layers, pp, vpp, mtp)
        split = pipeline.Split(layers, pp, vpp, layout=layout)
        why = pipeline.problems(split, mtp)
        assert (theirs is None) == bool(why), (layout, layers, pp, vpp, mtp, why)
        if theirs is None:
            continue
        ours = pipeline.layout(split, mtp)
        assert [[(c.layers, c.start, c.mtp) for c in ours.on_stage(s)] for s in range(pp)] == theirs, layout
        assert [split.stage_layers(s) for s in range(pp)] == [sum(n for n, _, _ in st) for st in theirs]


def test_dsv3_layout_by_hand() -> None:
    split = pipeline.Split(61, 4, 4, layout=DSV3)
    assert [split.stage_layers(s) for s in range(4)] == [16, 16, 16, 13]
    assert [split.chunk_layers(3, c) for c in range(4)] == [4, 4, 4, 1]
    assert split.chunk_start(3, 3) == 60 and split.last_stage == split.mtp_stage == 3
    # 3 dense layers: all in stage 0's first chunk
    assert [split.stage_dense_layers(3, s) for s in range(4)] == [3, 0, 0, 0]
    # the stage argument may be a column
    assert split.stage_layers(np.arange(4)).tolist() == [16, 16, 16, 13]
    # MTP on its own rank's last chunk, loss after it
    alone = pipeline.Split(4, 3, 1, layout="Ett|tt|mL")
    assert alone.mtp_stage == 2 and alone.stage_layers(2) == 0
    alone = pipeline.Split(4, 2, 2, layout="Et|tt|tm|L")
    assert alone.mtp_stage == 0 and [c.mtp for c in pipeline.layout(alone, 1).chunks] == [0, 0, 1, 0]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Et*4|(t*4|*14tmL", "`(` at position 5 is never closed"),
        ("((t|)*2)*3", "parentheses cannot nest"),
        ("Ex|tL", "`x` in virtual stage 0 is no layer"),
        ("Et*|L", "`*` at position 2 is not followed by a count"),
        ("E()*2|L", "empty `()` at position 1"),
        ("Et)|L", "`)` at position 2 closes nothing"),
        ("E(t|)L", "must be followed by a repeat count"),
        ("*3Et|L", "`*` at position 0 repeats nothing"),
        # positions inside a group count from the start of the whole text
        ("Et|(t*|)*2L", "`*` at position 5 is not followed by a count"),
        ("Et|(t|(t)*2)*2L", "parentheses cannot nest (position 6)"),
        # a superscript is a digit to str.isdigit, not to int()
        ("Et*\u00b2|L", "`*` at position 2 is not followed by a count"),
        ("(t|)*100000000", "unrolls to 200,000,000 or more characters, over the limit of 100,000"),
        ("E(t*100000|)*100000L", "unrolls to 100,001 or more characters"),
    ],
)
def test_bad_layout_strings_say_why(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        pipeline.parse_layout(text)
    assert why in pipeline.problems(pipeline.Split(2, 2, 1, layout=text))[0]


def test_layout_unrolls_like_megatron() -> None:
    assert pipeline.parse_layout("Et*2,t|(t|)*2L") == ("Ettt", "t", "t", "L")
    assert pipeline.parse_layout("E|*2tL") == ("E", "", "tL")  # `|*2` repeats the separator
    assert pipeline.parse_layout("Et*0|L") == ("E", "L")
    # the bound is on the unrolled text: a long layout just under it parses
    assert len(pipeline.parse_layout("E(t|)*49998tL")) == 49999


def test_layout_refusals_name_the_rule() -> None:
    assert pipeline.problems(pipeline.Split(61, 4, 2, layout=DSV3), 1) == [
        f"pipeline layout {DSV3!r} has 16 virtual stages; PP 4 x VPP 2 needs 8"]
    assert pipeline.problems(pipeline.Split(61, 3, 1, layout=DSV3), 1) == [
        f"pipeline layout {DSV3!r} has 16 virtual stages, which do not divide over PP 3"]
    assert pipeline.problems(pipeline.Split(60, 8, 2, layout=DSV3), 1) == [
        f"pipeline layout {DSV3!r} places 61 decoder layers; the model has 60"]
    assert pipeline.problems(pipeline.Split(61, 8, 2, layout=DSV3), 0) == [
        f"pipeline layout {DSV3!r} places 1 MTP layers; the model has 0"]
    for knobs in ({"last": 5}, {"first": 4}, {"embedding": True}, {"loss": True}):
        assert pipeline.problems(pipeline.Split(61, 8, 2, layout=DSV3, **knobs), 1) == [  # type: ignore[arg-type]
            "a pipeline layout excludes first/last stage layers and account_for_embedding/loss"]
    assert "ZBV" in pipeline.problems(pipeline.Split(8, 2, 2, zbv=True, layout="Ett|tt|tt|ttL"))[0]
    with pytest.raises(ValueError, match="PP 4 x VPP 2"):
        pipeline.layout(pipeline.Split(61, 4, 2, layout=DSV3), 1)
