"""The account's invariants, the schedule rule, the pre-filter's exact agreement, diagnostics, rendering."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_models import DSV3_SMALL, HYBRID_SMALL, LLAMA70B, MIXTRAL, X64
from rich.console import Console

from primus_lang.diagnostics import render
from primus_lang.ir import Candidate, Recompute, Settings
from primus_lang.ir.candidate import RECOMPUTE_MODULES
from primus_lang.memory import (
    account,
    account_to_json,
    explain_overflow,
    inflight_microbatches,
    prefilter,
    render_account,
)
from primus_lang.memory.explain import _sharding_help
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.layout import stage_layers

S = Settings()


def test_terms_sum_to_total_and_peak_is_max() -> None:
    acc = account(LLAMA70B, X64, Candidate(tp=8, pp=4, gbs=256, seq_len=8192), S)
    assert len(acc.ranks) == 4
    for r in acc.ranks:
        assert r.total == sum(t.bytes for t in r.terms)
        assert all(isinstance(t.bytes, int) for t in r.terms)
    assert acc.peak.total == max(r.total for r in acc.ranks)
    assert acc.peak.stage == 0  # the first stage holds pp micro-batches in flight


def test_one_f_one_b_and_interleaved_rule() -> None:
    c = Candidate(pp=4, gbs=64, mbs=1)  # world 64 / pp 4 -> dp 16, m = 4
    assert [inflight_microbatches(c, i, 64) for i in range(4)] == [4, 3, 2, 1]
    v = c.replace(vpp=2, schedule="interleaved", gbs=128)
    # stage 0: 2(p-1) + (v-1)p + 1 = 11 chunk-micro-batches = p·v·(1 + (p-1)/(p·v))
    assert inflight_microbatches(v, 0, 64) == 11 == 4 * 2 + 3
    few = c.replace(gbs=32)  # m = 2 < pp
    assert [inflight_microbatches(few, i, 64) for i in range(4)] == [2, 2, 2, 1]
    assert inflight_microbatches(c.replace(schedule="zbv", vpp=2), 3, 64) == 8
    assert inflight_microbatches(c.replace(pp=1, gbs=16), 0, 64) == 1


def test_layer_split_covers_every_layer() -> None:
    for layers, pp, first, last in [(61, 16, 0, 1), (80, 8, 0, 0), (32, 3, 0, 10), (7, 4, 1, 0), (61, 8, 5, 0)]:
        k = from_candidate(Candidate(pp=pp, first_stage_layers=first, last_stage_layers=last), 64)
        model = LLAMA70B.replace(num_layers=layers)
        assert sum(stage_layers(model, k, i) for i in range(pp)) == layers


def test_recompute_and_tp_reduce_the_peak() -> None:
    base = Candidate(tp=2, pp=4, gbs=256, seq_len=8192, mbs=2)
    none = account(LLAMA70B, X64, base, S).peak.total
    sel = account(LLAMA70B, X64, base.replace(attention="unfused", recompute=Recompute("selective")), S).peak.total
    unf = account(LLAMA70B, X64, base.replace(attention="unfused"), S).peak.total
    full = account(LLAMA70B, X64, base.replace(recompute=Recompute("full", 20, "block")), S).peak.total
    assert full < none and sel < unf
    assert account(LLAMA70B, X64, base.replace(tp=8), S).peak.total < none


def test_distributed_optimizer_and_fsdp_shard_states() -> None:
    c = Candidate(tp=8, pp=1, gbs=64, seq_len=8192)
    plain = account(LLAMA70B, X64, c.replace(sharding="none"), S).peak
    dist = account(LLAMA70B, X64, c, S).peak
    fsdp = account(LLAMA70B, X64, c.replace(sharding="fsdp"), S).peak
    assert dist.term("adam moments").bytes * 8 == pytest.approx(plain.term("adam moments").bytes, rel=1e-3)
    assert fsdp.term("parameters bf16").bytes < dist.term("parameters bf16").bytes


def test_overflow_diagnostic_names_rank_bytes_terms_and_knobs() -> None:
    acc = account(LLAMA70B, X64, Candidate(tp=1, pp=1, gbs=64, seq_len=8192, sharding="none"), S)
    assert not acc.fits(0.05)
    d = explain_overflow(acc, 0.05)
    text = render([d])
    assert d.code.id == "P5001"
    assert f"{-acc.spare(0.05):,}" in d.message and acc.peak.name in d.message
    assert all(t.name in text for t in acc.peak.largest(3))
    assert "recomput" in text and "FSDP" in text


def test_overflow_help_offers_only_the_sharding_a_point_does_not_have() -> None:
    # a 70B on one GPU per replica overflows on its states whatever the sharding; the hint names only
    # what would shard more (a trial's point had the distributed optimizer and was told to try it)
    base = Candidate(tp=1, pp=1, gbs=64, seq_len=1024, mbs=1)
    helps = {}
    for sharding in ("none", "dist_opt"):
        acc = account(LLAMA70B, X64, base.replace(sharding=sharding), S)
        assert not acc.fits(0.05)
        helps[sharding] = render([explain_overflow(acc, 0.05)])
    assert "FSDP or the distributed optimizer" in helps["none"]
    assert "`sharding = fsdp`" in helps["dist_opt"] and "distributed optimizer (`sharding`)" not in helps["dist_opt"]
    # FSDP over 64 ranks fits this point; its account leaves nothing for `sharding` to offer
    assert _sharding_help(account(LLAMA70B, X64, base.replace(sharding="fsdp"), S).peak) == ""


def test_a_flash_kernel_keeps_a_copy_of_v_and_a_core_attn_checkpoint_the_fused_buffer() -> None:
    # Transformer Engine makes megatron-core's strided v contiguous before its kernel, which saves the
    # copy; a core_attn checkpoint saves the views, which keep the fused q|k|v buffer alive
    base = Candidate(tp=2, pp=4, gbs=256, seq_len=8192, mbs=1)
    none = account(LLAMA70B, X64, base, S).peak
    sel = account(LLAMA70B, X64, base.replace(recompute=Recompute("selective")), S).peak
    layers = none.term("act: q after rope").bytes // (2 * 8192 * 32 * 128)  # a = 64 / tp heads of 128
    a, g, dh, t = 32, 4, 128, 8192
    assert "act: qkv output (fused q|k|v)" not in {term.name for term in none.terms}
    assert none.term("act: v copied contiguous for the flash kernel").bytes == layers * 2 * t * g * dh
    assert sel.term("act: qkv output (fused q|k|v)").bytes == layers * 2 * t * (a + 2 * g) * dh
    assert sel.total > none.total  # no score square for the checkpoint to free under flash
    # so the overflow hint offers the modules that free bytes, not plain `selective`
    over = Candidate(tp=1, pp=1, gbs=64, seq_len=8192, mbs=4, sharding="fsdp")
    hint = render([explain_overflow(account(LLAMA70B, X64, over, S), 0.05)])
    assert "selective(mlp, layernorm)" in hint and "adds memory under a flash kernel" in hint
    unfused = account(LLAMA70B, X64, over.replace(attention="unfused"), S)
    assert "`recompute : selective | full" in render([explain_overflow(unfused, 0.05)])


def test_render_and_json() -> None:
    acc = account(MIXTRAL, X64, Candidate(tp=2, pp=2, ep=4, gbs=128, seq_len=4096), S)
    console = Console(record=True, width=200)
    console.print(render_account(acc, 0.05))
    out = console.export_text()
    assert "fits" in out and "adam moments" in out and "parameters bf16 (experts)" in out
    data = account_to_json(acc, 0.05)
    json.dumps(data)
    assert data["peak"]["total"] == acc.peak.total
    assert sum(t["bytes"] for t in data["ranks"][0]["terms"]) == data["ranks"][0]["total"]


def _candidates() -> st.SearchStrategy[Candidate]:
    return st.builds(
        Candidate,
        tp=st.sampled_from([1, 2, 4, 8]),
        pp=st.sampled_from([1, 2, 4, 8]),
        vpp=st.sampled_from([1, 2]),
        cp=st.sampled_from([1, 2]),
        ep=st.sampled_from([1, 2, 4, 8]),
        etp=st.sampled_from([0, 1]),
        mbs=st.sampled_from([1, 2, 4]),
        gbs=st.sampled_from([64, 256]),
        seq_len=st.sampled_from([2048, 4096]),
        precision=st.sampled_from(["bf16", "fp8", "fp4"]),
        fp8_recipe=st.sampled_from(["tensorwise", "mxfp8", "blockwise"]),
        recompute=st.one_of(
            st.just(Recompute()),
            st.just(Recompute("selective")),
            st.just(Recompute("op")),
            st.builds(
                Recompute,
                st.just("selective"),
                modules=st.lists(st.sampled_from(RECOMPUTE_MODULES), min_size=1, max_size=3, unique=True).map(tuple),
            ),
            st.builds(Recompute, st.just("full"), st.integers(0, 9), st.sampled_from(["uniform", "block"])),
        ),
        sharding=st.sampled_from(["none", "dist_opt", "fsdp"]),
        schedule=st.sampled_from(["1f1b", "interleaved", "zero_bubble", "zbv"]),
        sequence_parallel=st.booleans(),
        attention=st.sampled_from(["flash", "unfused"]),
        overlap_grad_reduce=st.booleans(),
        main_grad_dtype=st.sampled_from(["fp32", "bf16"]),
        optimizer_dtype=st.sampled_from(["fp32", "bf16"]),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(_candidates(), min_size=1, max_size=8), st.sampled_from([LLAMA70B, MIXTRAL, DSV3_SMALL, HYBRID_SMALL]),
       st.sampled_from(["megatron+slurm", "primus+slurm"]))
def test_prefilter_equals_account(cands: list[Candidate], model: object, target: str) -> None:
    s = Settings(target=target)  # the primus target launches FSDP as torch FSDP2
    peaks = prefilter(model, X64, cands, s)  # type: ignore[arg-type]
    assert peaks.dtype.kind == "i"
    assert [int(p) for p in peaks] == [account(model, X64, c, s).peak.total for c in cands]  # type: ignore[arg-type]


def test_torch_fsdp2_keeps_bf16_gradients_and_gathers_the_embedding_and_output_layer_apart() -> None:
    # Megatron wraps torch FSDP2 without a mixed-precision policy around BF16 parameters: gradients are
    # reduced and accumulated in BF16 whatever main_grad_dtype says; its units are the decoder layers,
    # the embedding and the output layer, where Megatron-FSDP gathers the last two as one group
    c = Candidate(tp=1, pp=1, gbs=64, seq_len=8192, sharding="fsdp", main_grad_dtype="fp32")
    megatron = account(LLAMA70B, X64, c, S).peak
    torch = account(LLAMA70B, X64, c, Settings(target="primus+slurm")).peak
    assert megatron.term("gradients").bytes == 2 * torch.term("gradients").bytes
    assert torch.term("gradients").bytes == torch.term("parameters bf16").bytes
    vocab, hidden = LLAMA70B.vocab, LLAMA70B.hidden  # untied: the head is the largest unit either way
    assert megatron.term("fsdp gather buffers").bytes == (4 + 4) * 2 * vocab * hidden
    assert torch.term("fsdp gather buffers").bytes == (4 + 2) * vocab * hidden
    # what the distributed optimizer keeps does not depend on the target
    dist = c.replace(sharding="dist_opt")
    assert account(LLAMA70B, X64, dist, S).peak.total == account(LLAMA70B, X64, dist, Settings(target="primus+slurm")).peak.total


@pytest.mark.slow
def test_prefilter_equals_account_on_a_whole_small_space() -> None:
    cands = [
        Candidate(tp=tp, pp=pp, vpp=v, mbs=mbs, gbs=128, seq_len=4096, recompute=rc, precision=precision,
                  schedule="interleaved" if v > 1 else "1f1b")
        for tp in (1, 2, 4, 8) for pp in (1, 2, 4) for v in (1, 2) if not (v > 1 and pp == 1)
        for mbs in (1, 2)
        for rc in (Recompute(), Recompute("selective"), Recompute("op"), Recompute("full", 2, "uniform"),
                   Recompute("full", 3))
        for precision in ("bf16", "fp8", "fp4")
    ]
    peaks = prefilter(MIXTRAL.replace(moe=None), X64, cands, S)
    assert [int(p) for p in peaks] == [account(MIXTRAL.replace(moe=None), X64, c, S).peak.total for c in cands]


def test_least_memory_over_unpublished_knobs() -> None:
    from primus_lang.memory.unpublished import least_memory

    cand = Candidate(tp=8, pp=1, gbs=64, seq_len=8192)
    acc, chosen = least_memory(LLAMA70B, X64, cand, S)
    assert chosen.recompute.kind == "full" and chosen.main_grad_dtype == "bf16" and chosen.optimizer_dtype == "bf16"
    assert acc.peak.total == account(LLAMA70B, X64, chosen, S).peak.total
    assert acc.peak.total < account(LLAMA70B, X64, cand, S).peak.total
    _, kept = least_memory(LLAMA70B, X64, cand, S, ())
    assert kept == cand


def test_zbv_keeps_the_output_layer_and_loss_on_stage_zero_like_the_projection() -> None:
    # ZBV runs its second chunk back up the stages, so the model's last chunk (output layer, loss)
    # sits on rank 0; memory and projection must place it on the same rank.
    cand = Candidate(tp=8, pp=4, vpp=2, schedule="zbv", gbs=64, seq_len=8192, recompute=Recompute("full", 1))
    acc = account(LLAMA70B, X64, cand, Settings())
    split = attrs.evolve(from_candidate(cand, X64.world).split, num_layers=LLAMA70B.num_layers)
    assert split.last_stage == 0
    names = [r.name for r in acc.ranks]
    assert names[0] == "stage 0 (first, embedding and output layer)"
    assert not any("output layer" in n for n in names[1:])
    head_terms = {t.name for t in acc.ranks[0].terms if "logits" in t.name or "output layer" in t.name}
    assert head_terms, "stage 0 holds the output layer's terms under ZBV"
    assert not {t.name for t in acc.ranks[-1].terms} & head_terms
    assert int(prefilter(LLAMA70B, X64, [cand], Settings())[0]) == acc.peak.total


def test_block_recompute_of_some_layers_adds_no_transient() -> None:
    # Issue 18, item 4: block recompute of N < layers-per-chunk leaves whole layers after the
    # recomputed ones; their backward frees more than the recomputed layer brings back, so the peak
    # is the end of the forward pass and full(1) saves (in-flight chunks) x (layer - its input).
    base = Candidate(tp=8, pp=4, gbs=256, seq_len=8192)

    def lines(rc: Recompute) -> dict[str, int]:
        return {t.name: t.bytes for t in account(LLAMA70B, X64, base.replace(recompute=rc), S).ranks[0].terms}

    none, one = lines(Recompute()), lines(Recompute("full", 1, "block"))
    assert one["backward transient"] == none["backward transient"]
    stage0 = account(LLAMA70B, X64, base, S).ranks[0]
    layer = sum(t.bytes // v for t in stage0.terms for name, v in t.inputs if name.endswith("layer-microbatches"))
    inflight = 4  # stage 0 of PP 4 under 1F1B
    inp = one["act: recomputed layer input"] // inflight

    def acts(d: dict[str, int]) -> int:
        return sum(b for name, b in d.items() if name.startswith("act: "))

    rope = one["act: rope frequencies fp32 (recompute argument)"]
    assert acts(none) - acts(one) == inflight * (layer - inp) - rope
    pf = prefilter(LLAMA70B, X64, [base.replace(recompute=Recompute("full", k, "block")) for k in (0, 1, 19, 20)], S)
    assert [int(x) for x in pf] == [account(LLAMA70B, X64, base.replace(
        recompute=Recompute("full", k, "block") if k else Recompute()), S).peak.total for k in (0, 1, 19, 20)]
    assert pf[0] > pf[1] > pf[2] and pf[3] < pf[2]


def test_uniform_recompute_brings_back_a_whole_group_in_backward() -> None:
    # Megatron re-runs a uniform group of N layers as one checkpointed function: all N layers'
    # activations are alive together, where block recompute brings back one layer at a time.
    base = Candidate(tp=8, pp=4, gbs=256, seq_len=8192)

    def transient(rc: Recompute) -> int:
        terms = {t.name: t.bytes for t in account(LLAMA70B, X64, base.replace(recompute=rc), S).peak.terms}
        return terms["backward transient"]

    one = transient(Recompute("full", 1, "uniform"))
    # block recomputing all 20 layers of the stage brings back one layer at a time, as uniform 1 does
    assert transient(Recompute("full", 20, "block")) == one
    layer = transient(Recompute("full", 2, "uniform")) - one
    assert layer > 0
    assert transient(Recompute("full", 5, "uniform")) == one + 4 * layer
    # a group is never larger than the stage's 20 layers
    assert transient(Recompute("full", 80, "uniform")) == transient(Recompute("full", 20, "uniform")) == one + 19 * layer


LLAMA8B = LLAMA70B.replace(name="llama3_1_8b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8,
                           head_dim=128)


def _lines(acc: object) -> dict[str, int]:
    return {t.name: t.bytes for t in acc.peak.terms}  # type: ignore[attr-defined]


def test_op_level_checkpointing_keeps_torchtitans_save_list_on_llama_8b() -> None:
    """torchtitan_2412_001's layout: per layer the block input, wq, wv, w1 and w2 outputs (mm 1, 3, 5, 7)
    and the SDPA output with its FP32 log-sum-exp, times 32 layers, one micro-batch in flight."""
    cand = Candidate(tp=1, pp=1, mbs=2, gbs=16, seq_len=8192, sharding="fsdp", recompute=Recompute("op"))
    lines = _lines(account(LLAMA8B, attrs.evolve(X64, nodes=1), cand, S))
    tokens = 2 * 8192
    per_layer = {
        "act: op SAC: layer input (checkpoint input)": 2 * tokens * 4096,
        "act: op SAC: wq output (mm 1)": 2 * tokens * 32 * 128,
        "act: op SAC: wv output (mm 3)": 2 * tokens * 8 * 128,
        "act: op SAC: w1 output (mm 5)": 2 * tokens * 14336,
        "act: op SAC: w2 output (mm 7)": 2 * tokens * 4096,
        "act: op SAC: sdpa output": 2 * tokens * 32 * 128,
        "act: op SAC: sdpa logsumexp fp32": 4 * 32 * 8192 * 2,
        "act: op SAC: reduce-scatter output (wo, w2)": 0,  # no TP
    }
    for name, nbytes in per_layer.items():
        assert lines.get(name, 0) == 32 * nbytes, name  # the account drops zero lines
    assert sum(per_layer.values()) == 1_042_284_544  # 0.97 GiB a layer
    # wk, wo and w3 (mm 2, 4, 6) are recomputed, and nothing of the plain layer stays
    assert not any("wk output" in n or "wo output" in n or "w3 output" in n for n in lines)
    assert not {"act: qkv input", "act: mlp input", "act: norm1 input", "act: fc1 output"} & set(lines)
    # the backward re-runs one layer: the plain layer less the kept tensors it saves too (all but w2)
    plain = _lines(account(LLAMA8B, attrs.evolve(X64, nodes=1), cand.replace(recompute=Recompute()), S))
    plain_layer = sum(v for n, v in plain.items() if n.startswith("act: ") and "layer-microbatches" not in n
                      and not n.startswith(("act: final norm", "act: output layer", "act: logits", "act: cross")))
    plain_layer //= 32
    biggest = 2 * 2 * tokens * 14336  # the SwiGLU fc1 output
    shared = sum(per_layer.values()) - per_layer["act: op SAC: w2 output (mm 7)"]
    assert lines["backward transient"] == plain_layer - shared + 2 * biggest


def test_op_level_checkpointing_sits_between_selective_and_full() -> None:
    base = Candidate(tp=1, pp=1, mbs=2, gbs=16, seq_len=8192, sharding="fsdp")
    cluster = attrs.evolve(X64, nodes=1)

    def peak(rc: Recompute, **kw: object) -> int:
        return account(LLAMA8B, cluster, base.replace(recompute=rc, **kw), S).peak.total

    assert peak(Recompute("full", 1, "uniform")) < peak(Recompute("op")) < peak(Recompute("selective"))
    # FP8 (torchao) keeps the same BF16 matmul outputs: the policy sees aten.mm on the float8 subclass
    fp8 = account(LLAMA8B, cluster, base.replace(recompute=Recompute("op"), precision="fp8"), S)
    assert _lines(fp8)["act: op SAC: w1 output (mm 5)"] == 32 * 2 * 2 * 8192 * 14336
    # with TP and SP the matmul outputs are per rank and the two reduce-scatter outputs stay
    tp = _lines(account(LLAMA8B, cluster, base.replace(tp=2, gbs=8, recompute=Recompute("op")), S))
    assert tp["act: op SAC: wq output (mm 1)"] == 32 * 2 * 16384 * 16 * 128
    assert tp["act: op SAC: w2 output (mm 7)"] == 32 * 2 * 16384 * 4096
    assert tp["act: op SAC: reduce-scatter output (wo, w2)"] == 32 * 2 * 2 * 8192 * 4096
    assert tp["act: op SAC: layer input (checkpoint input)"] == 32 * 2 * 8192 * 4096


def test_op_level_checkpointing_without_a_gated_mlp_or_with_biases() -> None:
    cand = Candidate(tp=1, pp=1, mbs=1, gbs=8, seq_len=4096, recompute=Recompute("op"))
    cluster = attrs.evolve(X64, nodes=1)
    gelu = _lines(account(LLAMA8B.replace(activation="gelu"), cluster, cand, S))
    # wq wk wv wo w1 w2: mm 1, 3, 5 stay, w2 (mm 6) is recomputed
    assert gelu["act: op SAC: w1 output (mm 5)"] == 32 * 2 * 4096 * 14336
    assert "act: op SAC: w2 output (mm 6)" not in gelu and "act: op SAC: w2 output (mm 7)" not in gelu
    # linears with a bias run aten.addmm, which the policy does not save
    bias = _lines(account(LLAMA8B.replace(bias=True), cluster, cand, S))
    assert not any(" output (mm " in n for n in bias)


def test_a_chunk_running_mtp_keeps_its_own_embedding_copy() -> None:
    # megatron-core builds an embedding in every model chunk with MTP that is not the first virtual
    # stage, tied to the first stage's; a one-chunk pp=1 model has just the one embedding
    from primus_lang.ir.pipeline import problems, split_of
    from primus_lang.memory.params import embedding_tensors, stage_tensors

    emb = sum(t.numel for t in embedding_tensors(DSV3_SMALL, 1))

    def copy_numel(cand: Candidate, stage: int) -> int:
        k = from_candidate(cand, 64)
        return sum(t.numel for t in stage_tensors(DSV3_SMALL, k, stage) if t.name.startswith("mtp_embedding_copy."))

    assert copy_numel(Candidate(pp=1), 0) == 0
    pp = Candidate(pp=7, gbs=64)
    assert [copy_numel(pp, s) for s in range(7)] == [0] * 6 + [emb]
    # ZBV's last chunk, with MTP, sits on rank 0 behind its first chunk: a copy there too
    eight = DSV3_SMALL.replace(num_layers=8)
    k = from_candidate(Candidate(pp=4, vpp=2, gbs=64, schedule="zbv"), 64)
    assert not problems(split_of(8, Candidate(pp=4, schedule="zbv"), 2))
    assert [sum(t.numel for t in stage_tensors(eight, k, s) if t.name.startswith("mtp_embedding_copy."))
            for s in range(4)] == [emb, 0, 0, 0]


def test_nvfp4_keeps_nine_sixteenths_of_a_byte_per_value() -> None:
    """NVFP4: half a byte per value and an E4M3 scale per 16, for the saved GEMM inputs and for the
    row- and column-wise weight copies; the BF16 tensors around them do not change."""
    base = Candidate(tp=8, pp=1, gbs=64, seq_len=8192)
    fp8 = _lines(account(LLAMA70B, X64, base.replace(precision="fp8"), S))
    fp4 = _lines(account(LLAMA70B, X64, base.replace(precision="fp4"), S))
    for name in ("act: qkv input", "act: mlp input", "act: proj input quantized copy", "act: activation output"):
        assert fp4[name] == fp8[name] * 9 // 16, name
    assert fp4["act: norm1 input"] == fp8["act: norm1 input"]
    bf16 = _lines(account(LLAMA70B, X64, base, S))
    assert fp4["act: output layer input"] == fp8["act: output layer input"] == bf16["act: output layer input"]
    gemm = fp8["fp8 weight copies"] // 2
    assert fp4["nvfp4 weight copies"] == 2 * (gemm // 2) + 2 * -(-gemm // 16)
    assert "fp8 weight copies" not in fp4


@pytest.mark.parametrize("recipe", ["tensorwise", "delayed", "mxfp8", "blockwise"])
def test_a_part_that_reads_fp8_transposed_in_place_keeps_no_transposed_weights(recipe: str) -> None:
    """Transformer Engine writes no transposed per-tensor FP8 copy where the tensor cores take any
    layout (Blackwell): one FP8 weight copy, and none beside FP8 primary weights; block-scaled
    recipes quantize the column-wise copy on their own on every part."""
    tn = X64
    in_place = attrs.evolve(X64, gpu=attrs.evolve(X64.gpu, fp8_layouts="any"))
    cand = Candidate(tp=8, pp=1, gbs=64, seq_len=8192, precision="fp8", fp8_recipe=recipe)
    copies = {name: _lines(account(LLAMA70B, c, cand, S))["fp8 weight copies"] for name, c in (("tn", tn),
                                                                                                ("any", in_place))}
    per_tensor = recipe in ("tensorwise", "delayed")
    assert copies["any"] == (copies["tn"] // 2 if per_tensor else copies["tn"])
    gathered = cand.replace(fp8_param_gather=True)
    # a term of no bytes is left out of the account
    transposes = _lines(account(LLAMA70B, in_place, gathered, S)).get("fp8 weight transposes", 0)
    assert (transposes == 0) == per_tensor
    # the vectorized pre-filter reads the same part
    assert prefilter(LLAMA70B, in_place, [cand, gathered], S).tolist() == [
        account(LLAMA70B, in_place, c, S).peak.total for c in (cand, gathered)]
