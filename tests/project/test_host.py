"""Host launch overhead and CUDA graphs: a pass takes the longer of its GPU work and the host's
launches, and every graph scope only ever removes launches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.ir import Candidate, Model, Moe, Recompute
from primus_lang.ir.candidate import CUDA_GRAPHS
from primus_lang.project import project, stage_ops
from primus_lang.project.ops import GroupedGemm, MemoryOp, Task
from primus_lang.project.projection import GRAPHED, with_efficiency
from primus_lang.validate.runs import cuda_graph_of

from .fixtures import H100, LLAMA3_1_8B, cluster

# a small MoE (Qwen3-30B-A3B's shape): little GPU work per kernel, many kernels per layer
SMALL_MOE = Model(
    name="small_moe", num_layers=48, hidden=2048, ffn_hidden=6144, heads=32, kv_heads=4, head_dim=128,
    vocab=151936, seq_len=4096, max_position_embeddings=40960,
    moe=Moe(num_experts=128, top_k=8, ffn_hidden=768),
)


def _step(model: Model, cand: Candidate, launch: float) -> tuple[float, float]:
    p = project(model, with_efficiency(cluster(H100, nodes=1), host_launch=launch), cand)
    return p.step_time, dict(p.breakdown)["host"]


def test_launches_count_one_gemm_per_local_expert() -> None:
    assert Task(GroupedGemm(16, 256, 1536, 2048), "F").launches == 16
    assert Task(MemoryOp("x", 10, 4), "B", times=0.5).launches == 2


def test_small_micro_batches_of_a_small_moe_are_host_bound() -> None:
    small = Candidate(ep=8, etp=1, mbs=1, gbs=64, seq_len=4096)
    big = small.replace(mbs=4)
    fast_host, _ = _step(SMALL_MOE, small, 0.0)
    slow_host, exposed = _step(SMALL_MOE, small, 60e-6)
    assert exposed > 0
    assert slow_host == pytest.approx(fast_host + exposed, rel=1e-9)  # the breakdown still adds up
    # four times the work per launch hides more of the host: its share of the step shrinks
    big_step, big_exposed = _step(SMALL_MOE, big, 60e-6)
    assert big_exposed / big_step < exposed / slow_host


def test_a_host_faster_than_the_gpu_costs_nothing() -> None:
    cand = Candidate(tp=1, mbs=2, gbs=64, seq_len=8192)
    assert _step(LLAMA3_1_8B, cand, 1e-6) == (_step(LLAMA3_1_8B, cand, 0.0)[0], 0.0)


def test_each_graph_scope_only_removes_launches() -> None:
    cand = Candidate(ep=8, etp=1, mbs=1, gbs=64, seq_len=4096)
    steps = {g: _step(SMALL_MOE, cand.replace(cuda_graph=g), 60e-6)[0] for g in CUDA_GRAPHS}
    assert steps["none"] > steps["attn"] > steps["attn_moe_router"]
    assert steps["none"] > steps["moe_router"] > steps["attn_moe_router"]
    assert steps["attn_moe_router"] >= steps["layer"] > steps["full"]
    assert steps["full"] == pytest.approx(_step(SMALL_MOE, cand, 0.0)[0], rel=1e-12)


def test_every_task_of_a_layer_is_in_a_scope() -> None:
    """The parts the graph scopes name are the parts build.py tags; nothing of a layer is left out
    of ``layer``."""
    parts = set().union(*GRAPHED.values())
    for model, cand in ((SMALL_MOE, Candidate(ep=8, etp=1)), (LLAMA3_1_8B, Candidate(tp=2))):
        stage = stage_ops(model, cluster(H100, nodes=1), cand)[0]
        layer = next(b for chunk in stage.chunks for b in chunk if "layer" in b.name)
        tagged = {t.part for t in layer.tasks}
        assert tagged <= parts
        assert ({"attn", "router", "moe"} if model.moe else {"attn", "mlp"}) <= tagged


@settings(max_examples=40, deadline=None)
@given(
    graph=st.sampled_from(CUDA_GRAPHS),
    mbs=st.sampled_from([1, 2, 4]),
    ep=st.sampled_from([1, 2, 8]),
    recompute=st.sampled_from([Recompute(), Recompute("selective"), Recompute("full", 1, "uniform")]),
    launch=st.floats(1e-6, 2e-4),
)
def test_the_host_never_speeds_a_step_and_graphs_never_slow_one(graph: str, mbs: int, ep: int,
                                                               recompute: Recompute, launch: float) -> None:
    cand = Candidate(ep=ep, etp=1, mbs=mbs, gbs=64, seq_len=4096, recompute=recompute, cuda_graph=graph)
    gpu_only, _ = _step(SMALL_MOE, cand, 0.0)
    step, exposed = _step(SMALL_MOE, cand, launch)
    eager, _ = _step(SMALL_MOE, cand.replace(cuda_graph="none"), launch)
    assert gpu_only <= step * (1 + 1e-12) <= eager * (1 + 1e-12)
    assert step <= _step(SMALL_MOE, cand, launch * 2)[0] * (1 + 1e-12)
    assert exposed >= 0


@pytest.mark.parametrize(("info", "knob"), [
    ({}, "none"),
    ({"cuda_graph_impl": None, "cuda_graph_scope": None}, "none"),
    ({"cuda_graph_impl": "full_iteration", "cuda_graph_scope": []}, "full"),
    ({"cuda_graph_impl": "local", "cuda_graph_scope": "full_iteration"}, "full"),
    ({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": ["attn", "moe_router", "moe_preprocess"]},
     "attn_moe_router"),
    ({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": ["moe_router", "moe_preprocess"]}, "moe_router"),
    ({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": ["attn"]}, "attn"),
    ({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": []}, "layer"),
])
def test_corpus_cuda_graph_fields_map_to_the_knob(info: dict[str, object], knob: str) -> None:
    assert cuda_graph_of(info) == knob


def test_a_vendor_without_host_bound_rows_borrows_the_host_time() -> None:
    # The host's time per op is the host's software, not the vendor's kernels: the AMD rows (large
    # dense layers) cannot move it, so the AMD pool takes what the NVIDIA rows fit; NVIDIA, with more
    # rows, borrows nothing. A few rows a side keep the fits short.
    from primus_lang.validate.calibrate import fit_pooled, vendor_pool
    from primus_lang.validate.corpus import runs_file
    from primus_lang.validate.runs import load_runs

    rows = [r for r in load_runs(str(runs_file()), False) if not r.skip and r.cluster and r.model]
    # Qwen3-30B-A3B at small micro-batches, host-bound already at the 10 us default
    nvidia = [r for r in rows if r.id in ("mbridge_191", "mbridge_227", "mbridge_228")]
    amd = [r for r in rows if r.cluster and r.cluster.gpu.vendor == "amd"][:2]
    assert len(nvidia) == 3 and len(amd) == 2
    by_vendor = {"nvidia": nvidia, "amd": amd}
    donor = fit_pooled(nvidia)
    assert donor["host_launch"] > 20e-6  # those rows are host-bound: the fit moved it off the 10 us default
    assert vendor_pool(by_vendor, "nvidia") == donor
    assert vendor_pool(by_vendor, "amd")["host_launch"] == pytest.approx(donor["host_launch"], rel=1e-3)
    assert fit_pooled(amd)["host_launch"] == pytest.approx(10e-6, rel=1e-6)  # alone, the default stays
    # a kernel class no AMD row runs (grouped GEMMs: those rows are dense) takes what the NVIDIA MoE rows say
    assert "grouped_gemm" not in fit_pooled(amd) and "grouped_gemm" in donor
    assert vendor_pool(by_vendor, "amd")["grouped_gemm"] == donor["grouped_gemm"]
