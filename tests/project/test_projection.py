"""project(): conventions, breakdown, monotonicity in the hardware, and the op lists' shapes."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.ir import Candidate, Recompute, Settings
from primus_lang.project import SimulateOracle, project, stage_ops
from primus_lang.project.ops import Attention, Collective, Gemm, GroupedGemm
from primus_lang.project.projection import model_flops, with_efficiency

from .fixtures import H100, LLAMA3_1_8B, LLAMA3_1_70B, MI325X, MIXTRAL_8X7B, cluster, faster_variants

CANDS = [
    Candidate(tp=1, pp=1, mbs=2, gbs=128, seq_len=8192),
    Candidate(tp=8, pp=2, mbs=1, gbs=128, seq_len=8192, recompute=Recompute("selective")),
    Candidate(tp=4, pp=4, vpp=2, schedule="interleaved", mbs=1, gbs=256, seq_len=8192),
    Candidate(tp=2, pp=4, cp=2, schedule="zero_bubble", mbs=1, gbs=128, seq_len=8192),
    Candidate(tp=2, pp=2, schedule="zbv", mbs=1, gbs=128, seq_len=8192, precision="fp8"),
    Candidate(tp=1, pp=1, mbs=1, gbs=64, seq_len=8192, sharding="fsdp", recompute=Recompute("full", 4, "block")),
]


def params(model: object) -> float:
    m = LLAMA3_1_70B
    attn = m.hidden * (m.heads + 2 * m.kv_heads) * m.head_dim + m.heads * m.head_dim * m.hidden
    mlp = 3 * m.hidden * m.ffn_hidden
    return m.num_layers * (attn + mlp) + m.vocab * m.hidden  # GEMM weights incl. the output layer


def test_model_flops_follow_the_stated_convention() -> None:
    m = LLAMA3_1_70B
    cand = Candidate(tp=1, pp=1, mbs=1, gbs=64, seq_len=8192)
    world = cluster().world
    flops = model_flops(stage_ops(m, cluster(), cand), cand.microbatches(world))
    tokens = cand.gbs * cand.seq_len / world
    # 6 N per token for the GEMMs; attention 4 s h_q per token forward (QK and PV), causal halves it,
    # backward 2x (flash's re-computation of the scores is not model work): 3 * 2 * s * heads * head_dim
    attention = m.num_layers * 3 * 2 * cand.seq_len * m.heads * m.head_dim
    assert flops == pytest.approx(tokens * (6 * params(m) + attention), rel=1e-6)


@pytest.mark.parametrize("cand", CANDS, ids=lambda c: c.label())
def test_breakdown_adds_up_to_the_step(cand: Candidate) -> None:
    p = project(LLAMA3_1_70B, cluster(), cand)
    assert sum(t for _, t in p.breakdown) == pytest.approx(p.step_time, rel=1e-9)
    assert all(t >= -1e-12 for _, t in p.breakdown)
    assert p.tokens_per_gpu == pytest.approx(cand.gbs * cand.seq_len / p.step_time / 64)
    assert 0 < p.mfu < 1
    assert len(p.inflight) == cand.pp


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_mfu_is_over_the_peak_of_the_gemm_dtype(precision: str) -> None:
    cand = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192, precision=precision)
    p = project(LLAMA3_1_70B, cluster(), cand)
    gpu = cluster().gpu
    ratio = gpu.peak_fp8 / gpu.peak_bf16
    assert ratio > 1.9  # the test needs the two peaks to differ
    assert p.mfu == pytest.approx(p.tflops_per_gpu * 1e12 / gpu.peak(precision), rel=1e-12)
    assert p.mfu_bf16 == pytest.approx(p.tflops_per_gpu * 1e12 / gpu.peak_bf16, rel=1e-12)
    assert p.mfu_bf16 == pytest.approx(p.mfu * (ratio if precision == "fp8" else 1), rel=1e-12)
    assert p.mfu < 1


@pytest.mark.parametrize("cand", CANDS, ids=lambda c: c.label())
def test_more_hardware_never_slows_a_step(cand: Candidate) -> None:
    base = project(LLAMA3_1_70B, cluster(), cand).step_time
    for faster in faster_variants(MI325X):
        assert project(LLAMA3_1_70B, cluster(faster), cand).step_time <= base * (1 + 1e-12)


def test_fp8_is_faster_than_bf16_and_recipes_cost_differently() -> None:
    bf16 = Candidate(tp=1, pp=1, mbs=2, gbs=128, seq_len=8192)
    times = {r: project(LLAMA3_1_8B, cluster(), bf16.replace(precision="fp8", fp8_recipe=r)).step_time
             for r in ("delayed", "tensorwise", "blockwise", "mxfp8")}
    assert max(times.values()) < project(LLAMA3_1_8B, cluster(), bf16).step_time
    assert times["delayed"] < times["blockwise"] < times["mxfp8"] < times["tensorwise"]


def test_recompute_costs_time_but_no_model_flops() -> None:
    base = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192)
    plain = project(LLAMA3_1_70B, cluster(), base)
    full = project(LLAMA3_1_70B, cluster(), base.replace(recompute=Recompute("full", 80, "uniform")))
    assert full.step_time > plain.step_time * 1.2
    assert full.tflops_per_gpu * full.step_time == pytest.approx(plain.tflops_per_gpu * plain.step_time)


def test_op_level_checkpointing_costs_between_none_and_full() -> None:
    for base in (Candidate(tp=1, pp=1, mbs=2, gbs=128, seq_len=8192, sharding="fsdp"),
                 Candidate(tp=2, pp=1, mbs=2, gbs=64, seq_len=8192, precision="fp8")):
        times = {str(rc): project(LLAMA3_1_8B, cluster(), base.replace(recompute=rc)).step_time
                 for rc in (Recompute(), Recompute("op"), Recompute("full", 32, "uniform"))}
        assert times["none"] < times["op"] < times["full(32,uniform)"], times
    # the re-run matmuls (wk, wo, w3) and the memory-bound ops run in B, with no model FLOPs
    plain = project(LLAMA3_1_8B, cluster(), base)
    op = project(LLAMA3_1_8B, cluster(), base.replace(recompute=Recompute("op")))
    assert op.tflops_per_gpu * op.step_time == pytest.approx(plain.tflops_per_gpu * plain.step_time)


def test_tp_overlap_hides_tp_communication() -> None:
    cand = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192)
    off = dict(project(LLAMA3_1_70B, cluster(), cand).breakdown)
    on = dict(project(LLAMA3_1_70B, cluster(), cand.replace(tp_comm_overlap=True)).breakdown)
    assert on["tp_comm"] < off["tp_comm"]


def test_moe_busiest_rank_gates_the_step() -> None:
    cand = Candidate(tp=1, ep=8, mbs=1, gbs=128, seq_len=4096)
    even = project(MIXTRAL_8X7B, cluster(), cand, Settings(moe_imbalance=1.0)).step_time
    skew = project(MIXTRAL_8X7B, cluster(), cand, Settings(moe_imbalance=1.3)).step_time
    assert skew > even
    # with every expert on every rank there is no busiest rank
    local = cand.replace(ep=1)
    assert project(MIXTRAL_8X7B, cluster(), local, Settings(moe_imbalance=1.0)).step_time == pytest.approx(
        project(MIXTRAL_8X7B, cluster(), local, Settings(moe_imbalance=1.3)).step_time)


def test_op_lists_carry_per_rank_shapes_and_groups() -> None:
    cand = Candidate(tp=4, pp=2, cp=2, mbs=1, gbs=64, seq_len=8192)
    stages = stage_ops(LLAMA3_1_70B, cluster(), cand)
    assert len(stages) == 2
    layer = next(b for b in stages[0].chunks[0] if b.name == "dense_layer")
    assert layer.count == 40
    gemms = [t.op for t in layer.tasks if isinstance(t.op, Gemm) and t.phase == "F"]
    tokens = 8192 // 2
    assert Gemm(tokens, (64 + 16) * 128 // 4, 8192, "bf16") in gemms  # fused QKV, GQA, split over TP
    assert Gemm(tokens, 2 * 28672 // 4, 8192, "bf16") in gemms  # SwiGLU gate+up
    attn = next(t.op for t in layer.tasks if isinstance(t.op, Attention) and t.phase == "F")
    assert (attn.heads, attn.seq_q, attn.seq_kv) == (16, 4096, 8192)
    groups = {(t.kind, t.op.group.size, t.op.group.per_domain) for t in layer.tasks if isinstance(t.op, Collective)}
    assert ("tp_comm", 4, 4) in groups and ("cp_comm", 2, 2) in groups
    head = stages[1].chunks[0][-1]
    assert head.name == "output"
    # the padded vocabulary per rank, as memory has it: 128,256 rounds up to a multiple of 128 x TP 4
    assert any(isinstance(t.op, Gemm) and t.op.n == 128_512 // 4 for t in head.tasks)
    assert stages[0].p2p is not None and stages[0].p2p.group.per_domain == 1


def test_experts_become_grouped_gemms_over_local_experts() -> None:
    cand = Candidate(tp=1, ep=4, mbs=1, gbs=64, seq_len=4096)
    layer = next(b for b in stage_ops(MIXTRAL_8X7B, cluster(), cand)[0].chunks[0] if b.name == "moe_layer")
    grouped = [t.op for t in layer.tasks if isinstance(t.op, GroupedGemm) and t.phase == "F"]
    # 4096 tokens x top-2 x ep 4 / 8 experts = 4096 tokens per local expert, 2 local experts
    assert GroupedGemm(2, 4096, 2 * 14336, 4096, "bf16") in grouped
    assert any(t.kind == "ep_comm" for t in layer.tasks)


def test_oracle_caches_and_gemm_curve() -> None:
    oracle = SimulateOracle(cluster(H100))
    big, small = Gemm(8192, 8192, 8192), Gemm(64, 64, 64)
    eff_big = big.flops / oracle.compute(big) / H100.peak_bf16
    eff_small = small.flops / oracle.compute(small) / H100.peak_bf16
    assert eff_small < eff_big < H100.efficiency.gemm_max
    tuned = SimulateOracle(with_efficiency(cluster(H100), gemm_max=0.5))
    assert tuned.compute(big) > oracle.compute(big)


def test_timeline_covers_every_pass_and_ends_with_the_step() -> None:
    cand = Candidate(tp=8, pp=2, mbs=1, gbs=32, seq_len=8192, schedule="zero_bubble")
    p = project(LLAMA3_1_70B, cluster(), cand, timeline=True)
    m = cand.microbatches(64)
    kinds = [e[1] for e in p.timeline]
    assert kinds.count("F") == kinds.count("B") == kinds.count("W") == 2 * m
    assert all(start <= end for _, _, _, start, end in p.timeline)
    assert max(end for *_, end in p.timeline) == pytest.approx(p.step_time)
    assert project(LLAMA3_1_70B, cluster(), cand).step_time == pytest.approx(p.step_time)


def test_stage_ops_follow_the_pipeline_split() -> None:
    from primus_lang.project.build import stage_ops

    def layers(cand: Candidate) -> list[int]:
        stages = stage_ops(LLAMA3_1_70B, cluster(), cand)
        return [sum(b.count for ch in st.chunks for b in ch if b.name.endswith("_layer")) for st in stages]

    assert layers(Candidate(tp=8, pp=4, gbs=64)) == [20] * 4  # Megatron's even split
    assert layers(Candidate(tp=8, pp=4, gbs=64, last_stage_layers=14)) == [22, 22, 22, 14]
    assert layers(Candidate(tp=8, pp=4, vpp=2, schedule="interleaved", gbs=64, first_stage_layers=18,
                            last_stage_layers=18)) == [18, 22, 22, 18]
    with pytest.raises(ValueError, match="do not divide"):
        layers(Candidate(tp=8, pp=3, gbs=63))


def test_unfused_attention_is_slower_with_the_same_model_flops() -> None:
    cand = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192)
    flash = project(LLAMA3_1_70B, cluster(), cand)
    unfused = project(LLAMA3_1_70B, cluster(), cand.replace(attention="unfused"))
    assert unfused.step_time > flash.step_time
    assert unfused.tflops_per_gpu * unfused.step_time == pytest.approx(flash.tflops_per_gpu * flash.step_time)


def _selective(*modules: str) -> Recompute:
    return Recompute("selective", modules=modules)


def test_selective_recompute_costs_the_modules_it_reruns() -> None:
    base = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192)
    steps = {str(rc): project(LLAMA3_1_70B, cluster(), base.replace(recompute=rc)).step_time
             for rc in (Recompute(), _selective(), _selective("layernorm"), _selective("mlp"),
                        _selective("core_attn", "mlp"))}
    # the MLP's GEMMs are far more work than the attention core's forward, norms far less
    assert steps["none"] < steps["selective(layernorm)"] < steps["selective"] < steps["selective(mlp)"]
    assert steps["selective(mlp)"] < steps["selective(core_attn,mlp)"]
    plain = project(LLAMA3_1_70B, cluster(), base)
    mlp = project(LLAMA3_1_70B, cluster(), base.replace(recompute=_selective("mlp")))
    assert mlp.tflops_per_gpu * mlp.step_time == pytest.approx(plain.tflops_per_gpu * plain.step_time)


def test_moe_recompute_modules_follow_megatron() -> None:
    base = Candidate(tp=1, ep=8, mbs=1, gbs=128, seq_len=4096)

    def run(rc: Recompute) -> dict[str, float]:
        p = project(MIXTRAL_8X7B, cluster(), base.replace(recompute=rc))
        return {"step": p.step_time, **dict(p.breakdown)}

    none, act, moe = run(Recompute()), run(_selective("moe_act")), run(_selective("moe"))
    # Megatron's ``mlp`` module is the dense MLP: a model whose every layer is MoE reruns nothing
    assert run(_selective("mlp"))["step"] == pytest.approx(none["step"], rel=1e-12)
    assert none["step"] < act["step"] < moe["step"]
    # the whole MoE layer runs again, its dispatch and combine all-to-alls included
    assert moe["ep_comm"] > act["ep_comm"] == pytest.approx(none["ep_comm"])
    both = run(_selective("moe", "moe_act"))
    assert both["step"] == pytest.approx(moe["step"], rel=1e-12)  # moe_act is inside moe's rerun


def test_layers_are_not_shared_across_knobs_that_change_them() -> None:
    # the layer cache once ignored these two knobs: the second candidate got the first one's layers
    flash = Candidate(tp=1, mbs=1, gbs=64, seq_len=8192)
    first = project(LLAMA3_1_8B, cluster(), flash).step_time
    assert project(LLAMA3_1_8B, cluster(), flash.replace(attention="unfused")).step_time > first * 1.05
    spread = Candidate(ep=16, mbs=1, gbs=128, seq_len=4096)
    many = cluster(H100, nodes=4)
    alltoall = dict(project(MIXTRAL_8X7B, many, spread).breakdown)["ep_comm"]
    flex = dict(project(MIXTRAL_8X7B, many, spread.replace(moe_dispatcher="flex")).breakdown)["ep_comm"]
    assert flex < alltoall
    # the all-gather dispatcher moves every rank's tokens to every rank (EP 16 of them), all-to-all the top-2
    # copies: 8 times the bytes, most of them inside the node, where the all-gather is hierarchical (it
    # projected the same as all-to-all until 5 Dec 2026)
    gather = dict(project(MIXTRAL_8X7B, many, spread.replace(moe_dispatcher="allgather")).breakdown)["ep_comm"]
    assert gather > 2 * alltoall


def _moe_tasks(cand: Candidate) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for stage in stage_ops(MIXTRAL_8X7B, cluster(), cand):
        for chunk in stage.chunks:
            for block in chunk:
                for t in block.tasks:
                    name = getattr(t.op, "name", t.op.kind if isinstance(t.op, Collective) else "")
                    out.setdefault(f"{name}/{t.phase}", []).append(t.op)
    return out


def test_the_all_to_all_dispatcher_sorts_by_local_expert_and_exchanges_counts_and_probabilities() -> None:
    """megatron-core's all-to-all dispatcher permutes the received tokens again by local expert (and back
    before the combine), gathers the token counts and sends the FP32 probabilities by all-to-alls of their
    own: DeepEP (flex) fuses all three into its dispatch, so inside one node flex projects faster; with
    one local expert there is nothing to sort."""
    spread = Candidate(tp=1, pp=1, ep=2, mbs=1, gbs=64, seq_len=4096)
    alltoall = _moe_tasks(spread)
    sort, permute = alltoall["moe_sort_chunks/F"], alltoall["moe_permute/F"]
    assert sort and [s.bytes for s in sort] == [p.bytes for p in permute]  # type: ignore[attr-defined]
    assert alltoall["moe_sort_chunks_bwd/B"]
    assert len(alltoall["all_to_all/F"]) == 3 * len(alltoall["all_gather/F"])  # tokens there and back, probs
    for other in ("flex", "allgather"):
        tasks = _moe_tasks(spread.replace(moe_dispatcher=other))
        assert "moe_sort_chunks/F" not in tasks and "moe_sort_chunks_bwd/B" not in tasks
    assert "moe_sort_chunks/F" not in _moe_tasks(spread.replace(ep=8))  # one expert a rank
    assert "all_to_all/F" in _moe_tasks(spread.replace(ep=8))
    flex = project(MIXTRAL_8X7B, cluster(), spread.replace(moe_dispatcher="flex")).step_time
    assert flex < project(MIXTRAL_8X7B, cluster(), spread).step_time


def test_attention_with_learned_sinks_runs_at_its_own_efficiency() -> None:
    """Transformer Engine runs cuDNN's kernel for a learnable softmax offset, not flash attention: its
    attention takes `sink_attention` of the flash efficiency; at 1.0 the step is the sink-free one."""
    from primus_lang.ir import Efficiency
    from primus_lang.validate.calibrate import identifiable
    from primus_lang.validate.runs import Run

    cand = Candidate(tp=1, pp=1, mbs=1, gbs=64, seq_len=8192)
    sinks = LLAMA3_1_8B.replace(attention_sinks=True)
    plain = project(LLAMA3_1_8B, cluster(), cand).step_time
    assert project(sinks, cluster(), cand).step_time == pytest.approx(plain, rel=1e-12)
    slow = attrs.evolve(MI325X, efficiency=Efficiency(sink_attention=0.25))
    attention = [t for st in stage_ops(sinks, cluster(slow), cand) for ch in st.chunks for b in ch for t in b.tasks
                 if isinstance(t.op, Attention)]
    assert attention and all(t.op.sinks for t in attention)
    assert project(sinks, cluster(slow), cand).step_time > plain
    assert project(LLAMA3_1_8B, cluster(slow), cand).step_time == pytest.approx(plain, rel=1e-12)
    run = Run(id="r", group=("m", "g", "p"), measured=1.0, model=sinks, cluster=cluster(), cand=cand)
    assert "sink_attention" in identifiable([run])
    assert "sink_attention" not in identifiable([attrs.evolve(run, model=LLAMA3_1_8B)])


def test_sequence_parallel_regathers_the_column_input_in_the_backward() -> None:
    # per column/row pair: forward all-gather + reduce-scatter; backward their gradients and the
    # column-parallel input gathered again for the weight gradient (the layer kept only its shard)
    m, clu = LLAMA3_1_8B, cluster(H100, nodes=1)
    sp = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192)
    plain = attrs.evolve(sp, sequence_parallel=False)

    def tp_ops(cand: Candidate, phase: str) -> list[str]:
        layer = next(b for b in stage_ops(m, clu, cand)[0].chunks[0] if b.count > 1)
        return [t.op.kind for t in layer.tasks if t.kind == "tp_comm" and t.phase == phase
                and isinstance(t.op, Collective)]

    assert sorted(tp_ops(sp, "F")) == ["all_gather", "all_gather", "reduce_scatter", "reduce_scatter"]
    assert sorted(tp_ops(sp, "B")) == ["all_gather"] * 4 + ["reduce_scatter"] * 2
    assert tp_ops(plain, "F") == tp_ops(plain, "B") == ["all_reduce", "all_reduce"]
    # SP splits the norms and residuals over TP but moves one tensor more per pair in the backward:
    # a gain of a few percent, not the whole time of the norms it splits

    def step(cand: Candidate) -> float:
        return project(m, clu, cand).step_time

    assert 0.9 * step(plain) < step(sp) < step(plain)


@pytest.mark.parametrize(("precision", "recipe", "per_element"), [
    ("bf16", "tensorwise", 2.0), ("fp8", "tensorwise", 1.0), ("fp8", "delayed", 1.0),
    ("fp8", "mxfp8", 1 + 1 / 32), ("fp8", "blockwise", 1 + 4 / 128), ("fp8", "rowwise", 2.0),
    ("fp4", "tensorwise", 0.5 + 1 / 16)])
def test_sequence_parallel_gathers_what_the_linears_read_and_reduces_bf16(precision: str, recipe: str,
                                                                         per_element: float) -> None:
    # Transformer Engine (and torchao's float8 TP for tensorwise) quantize an activation before its
    # sequence-parallel all-gather, the output gradient before its backward gather and the input before
    # its re-gather; the reduce-scatters carry the linears' BF16 outputs and input gradients
    m, clu = LLAMA3_1_8B, cluster(H100, nodes=1)
    cand = Candidate(tp=8, pp=1, mbs=1, gbs=64, seq_len=8192, precision=precision, fp8_recipe=recipe)
    layer = next(b for b in stage_ops(m, clu, cand)[0].chunks[0] if b.count > 1)
    tokens_h = cand.mbs * cand.seq_len * m.hidden
    sizes = {(t.op.kind, t.op.bytes) for t in layer.tasks if t.kind == "tp_comm" and isinstance(t.op, Collective)}
    assert sizes == {("all_gather", int(tokens_h * per_element)), ("reduce_scatter", tokens_h * 2)}


def test_torch_fsdp2_reduces_gradients_in_bf16_in_every_micro_batch() -> None:
    # the primus target launches FSDP as torch FSDP2: gradients in the parameters' dtype, reduce-scattered
    # in each micro-batch's backward (Megatron's no_sync does nothing for it), not once a step
    c = Candidate(tp=1, pp=1, mbs=1, gbs=64, seq_len=8192, sharding="fsdp", overlap_grad_reduce=False)
    primus = Settings(target="primus+slurm")
    assert primus.as_launched(c) == c.replace(main_grad_dtype="bf16")
    assert Settings().as_launched(c) is c and primus.as_launched(c.replace(sharding="dist_opt")).main_grad_dtype == "fp32"

    def reduce_scatters(torch_fsdp2: bool) -> tuple[int, int]:
        (stage,) = stage_ops(LLAMA3_1_70B, cluster(), c.replace(main_grad_dtype="bf16"), torch_fsdp2)
        per_mb = sum(t.op.bytes * b.count for chunk in stage.chunks for b in chunk for t in b.tasks
                     if isinstance(t.op, Collective) and t.op.kind == "reduce_scatter" and t.kind == "dp_comm")
        per_step = sum(t.op.bytes for t in stage.step_tasks
                       if isinstance(t.op, Collective) and t.op.kind == "reduce_scatter")
        return per_mb, per_step

    torch, megatron = reduce_scatters(True), reduce_scatters(False)
    assert torch[1] == 0 and megatron[0] == 0 and torch[0] > 0
    # the same bytes but the embedding's, whose reduce-scatter FSDP2 hides under the first layer (not costed)
    assert megatron[1] - torch[0] == 2 * LLAMA3_1_70B.vocab * LLAMA3_1_70B.hidden
    # and the projection reads the launched ops: what the primus target projects is torch FSDP2's
    launched = project(LLAMA3_1_70B, cluster(), c, primus)
    assert launched != project(LLAMA3_1_70B, cluster(), c.replace(main_grad_dtype="bf16"), Settings())
