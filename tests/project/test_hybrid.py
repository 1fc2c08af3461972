"""Hybrid Mamba/attention models: op lists by layer kind, the FLOP convention, and monotonicity."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.ir import Candidate, Mamba, Model, Moe, Recompute
from primus_lang.project import project, stage_ops
from primus_lang.project.ops import Gemm, SsmScan
from primus_lang.project.projection import model_flops

from .fixtures import B200, cluster, faster_variants

DENSE_HYBRID = Model(
    name="hybrid", num_layers=8, hidden=2048, ffn_hidden=8192, heads=16, kv_heads=4, head_dim=128, vocab=32768,
    seq_len=4096, max_position_embeddings=4096, activation="squared_relu", position="none",
    pattern="M*M-M-M-", mamba=Mamba(heads=64, head_dim=64, state_dim=128, groups=8),
)
MOE_HYBRID = DENSE_HYBRID.replace(pattern="MEM*MEME", moe=Moe(num_experts=16, top_k=4, ffn_hidden=1024,
                                                              shared_experts=1, latent=512))
CANDS = [
    Candidate(tp=1, pp=1, mbs=2, gbs=128, seq_len=4096),
    Candidate(tp=2, pp=2, mbs=1, gbs=128, seq_len=4096, precision="fp8"),
    Candidate(tp=1, pp=2, ep=8, mbs=1, gbs=128, seq_len=4096, recompute=Recompute("full", 1)),
]


def scan_flops(m: Model, tokens: int) -> float:
    """The chunked SSD scan's model FLOPs: per head and chunk of Q tokens a causal masked attention
    with queries and keys of the state width N and values of the head width P (2 (N + P) Q²/2,
    backward twice that), then each chunk's state Bᵀ·X and the output C·state (2 N P Q each,
    backward two gradients each)."""
    assert m.mamba is not None
    b, q = m.mamba, m.mamba.chunk
    chunks = tokens // q
    intra = 2 * (b.state_dim + b.head_dim) * q * q / 2
    inter = 2 * (2 * b.state_dim * b.head_dim * q)
    return 3 * chunks * b.heads * (intra + inter)


def test_model_flops_count_the_scan_beside_6n() -> None:
    m = DENSE_HYBRID
    b = m.mamba
    assert b is not None
    cand = Candidate(mbs=1, gbs=64, seq_len=4096)
    world = cluster(B200).world
    flops = model_flops(stage_ops(m, cluster(B200), cand), cand.microbatches(world))
    tokens = cand.gbs * cand.seq_len / world
    in_proj = m.hidden * (2 * b.inner + 2 * b.groups * b.state_dim + b.heads)
    mamba = in_proj + b.inner * m.hidden
    attention = m.hidden * (m.heads + 2 * m.kv_heads) * m.head_dim + m.heads * m.head_dim * m.hidden
    mlp = 2 * m.hidden * m.ffn_hidden
    gemm_params = 4 * mamba + attention + 3 * mlp + m.vocab * m.hidden
    core = 3 * 2 * cand.seq_len * m.heads * m.head_dim  # one attention layer (test_projection.py)
    per_token = 6 * gemm_params + core + 4 * scan_flops(m, cand.seq_len) / cand.seq_len
    assert flops == pytest.approx(tokens * per_token, rel=1e-6)


def test_layers_follow_the_pattern() -> None:
    cand = Candidate(tp=1, pp=2, ep=8, mbs=1, gbs=128, seq_len=4096)
    stages = stage_ops(MOE_HYBRID, cluster(B200), cand)
    names = [[(blk.name, blk.count) for blk in stage.chunks[0]] for stage in stages]
    assert names[0] == [("embedding", 1), ("mamba_layer", 2), ("moe_mlp_layer", 1), ("attention_layer", 1)]
    assert names[1] == [("mamba_layer", 2), ("moe_mlp_layer", 2), ("output", 1)]
    mamba = next(blk for blk in stages[0].chunks[0] if blk.name == "mamba_layer")
    assert sum(isinstance(t.op, SsmScan) for t in mamba.tasks) == 2  # forward and backward
    moe = next(blk for blk in stages[0].chunks[0] if blk.name == "moe_mlp_layer")
    # LatentMoE: the two latent projections are plain GEMMs over the rank's tokens
    latent = [t.op for t in moe.tasks if isinstance(t.op, Gemm) and t.phase == "F" and 512 in (t.op.n, t.op.k)
              and DENSE_HYBRID.hidden in (t.op.n, t.op.k)]
    assert len(latent) == 2


def test_latent_moe_sends_latent_tokens() -> None:
    cand = Candidate(tp=1, pp=1, ep=8, mbs=1, gbs=128, seq_len=4096)
    wide = MOE_HYBRID.replace(moe=attrs.evolve(MOE_HYBRID.moe, latent=0))

    def ep_bytes(m: Model) -> int:
        blocks = stage_ops(m, cluster(B200), cand)[0].chunks[0]
        moe = next(blk for blk in blocks if blk.name == "moe_mlp_layer")
        # the tokens' all-to-alls; the all-to-all dispatcher's token counts and FP32 probabilities have no width
        assert m.moe is not None
        probs = cand.seq_len * cand.mbs * m.moe.top_k * 4
        return sum(t.op.bytes for t in moe.tasks if t.kind == "ep_comm" and t.op.kind == "all_to_all"
                   and t.op.bytes != probs)

    assert ep_bytes(MOE_HYBRID) * DENSE_HYBRID.hidden == ep_bytes(wide) * 512


@pytest.mark.parametrize("cand", CANDS, ids=lambda c: c.label())
def test_breakdown_adds_up_and_more_hardware_never_slows(cand: Candidate) -> None:
    base = project(MOE_HYBRID, cluster(B200), cand)
    assert sum(t for _, t in base.breakdown) == pytest.approx(base.step_time, rel=1e-9)
    for faster in faster_variants(B200):
        assert project(MOE_HYBRID, cluster(faster), cand).step_time <= base.step_time * (1 + 1e-12)


def test_wider_mixers_cost_more() -> None:
    cand = CANDS[0]
    assert DENSE_HYBRID.mamba is not None
    wider = DENSE_HYBRID.replace(mamba=attrs.evolve(DENSE_HYBRID.mamba, heads=128))
    assert project(wider, cluster(B200), cand).step_time > project(DENSE_HYBRID, cluster(B200), cand).step_time


def test_the_scan_runs_at_its_own_efficiency() -> None:
    """``ssm_scan`` scales the Mamba scan kernels only: a transformer's step does not move."""
    from primus_lang.ir import Efficiency
    from primus_lang.validate.calibrate import identifiable

    from .fixtures import LLAMA3_1_8B

    cand = CANDS[0]

    def step(model: Model, ssm: float) -> float:
        gpu = attrs.evolve(B200, efficiency=Efficiency(ssm_scan=ssm))
        return project(model, cluster(gpu), cand).step_time

    assert step(DENSE_HYBRID, 0.25) > step(DENSE_HYBRID, 0.5) > step(DENSE_HYBRID, 1.0)
    assert step(LLAMA3_1_8B, 0.25) == step(LLAMA3_1_8B, 1.0)
    from primus_lang.validate.runs import Run

    def run(model: Model) -> Run:
        return Run("r", ("m", "g", "p"), 1.0, model=model, cluster=cluster(B200), cand=cand)

    assert "ssm_scan" in identifiable([run(DENSE_HYBRID)])
    assert "ssm_scan" not in identifiable([run(LLAMA3_1_8B)])


@pytest.mark.parametrize("model", [DENSE_HYBRID, MOE_HYBRID], ids=["dense", "moe"])
def test_the_search_bound_stays_below_every_projection(model: Model) -> None:
    """Branch-and-bound's compute floor counts a hybrid model's layers by its pattern (Mamba in_proj
    and out_proj, attention only on `*` layers, LatentMoE at its width): never above a projection,
    and within reach of it on a compute-bound point."""
    from primus_lang.search.bound import step_time_floor

    for cand in CANDS:
        floor = step_time_floor(model, cluster(B200), cand)
        step = project(model, cluster(B200), cand).step_time
        assert 0 < floor <= step
    assert step_time_floor(model, cluster(B200), CANDS[0]) > 0.3 * project(model, cluster(B200), CANDS[0]).step_time


def test_hybrid_rows_move_only_the_scan_parameter() -> None:
    """Calibration fits the shared parameters on the other rows and ``ssm_scan`` on the hybrid rows
    with those fixed: adding hybrid rows to a profile leaves every other parameter as it was, and
    the scan ratio moves toward what the hybrid rows measured."""
    from primus_lang.ir import Efficiency
    from primus_lang.validate.calibrate import fit_efficiency
    from primus_lang.validate.runs import Run

    from .fixtures import LLAMA3_1_8B

    base = Efficiency()
    gpu = attrs.evolve(B200, efficiency=base)

    def run(rid: str, model: Model, cand: Candidate, slower: float) -> Run:
        tokens = project(model, cluster(gpu), cand).tokens_per_gpu
        return Run(rid, ("m", "b200", "bf16"), tokens / slower, model=model, cluster=cluster(gpu), cand=cand)

    plain = [run("a", LLAMA3_1_8B, CANDS[0].replace(seq_len=8192), 1.3),
             run("b", LLAMA3_1_8B, CANDS[1].replace(seq_len=8192), 1.4)]
    hybrid = [run("h", DENSE_HYBRID, CANDS[0], 1.8)]
    alone = fit_efficiency(plain, base, iterations=4)
    both = fit_efficiency(plain + hybrid, base, iterations=4)
    assert attrs.evolve(both, ssm_scan=1.0) == attrs.evolve(alone, ssm_scan=1.0)
    assert alone.ssm_scan == 1.0 and both.ssm_scan < 0.9


def test_context_parallel_adds_the_mamba_all_to_alls() -> None:
    """Under CP, MambaContextParallel trades sequence shards for head shards around the scan: two
    all-to-alls each way per Mamba layer, and the scan's work stays the same."""
    from primus_lang.project.ops import Collective

    def mamba(cp: int) -> tuple[list[Collective], list[SsmScan]]:
        cand = Candidate(tp=1, cp=cp, mbs=1, gbs=128, seq_len=4096)
        block = next(b for b in stage_ops(DENSE_HYBRID, cluster(B200), cand)[0].chunks[0] if b.name == "mamba_layer")
        comms = [t.op for t in block.tasks if t.kind == "cp_comm" and isinstance(t.op, Collective)]
        return comms, [t.op for t in block.tasks if isinstance(t.op, SsmScan)]

    none, scans1 = mamba(1)
    four, scans2 = mamba(2)
    assert none == [] and [c.kind for c in four] == ["all_to_all"] * 4
    assert [s.flops for s in scans1] == pytest.approx([2 * s.flops for s in scans2])  # each CP rank: half
