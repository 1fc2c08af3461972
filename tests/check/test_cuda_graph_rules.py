"""CUDA-graph legality (P4029-P4034): megatron-core 0.16.1's TransformerConfig checks on
``cuda_graph_impl``/``cuda_graph_scope``, as primusc's ``cuda_graph`` knob spells them. Each rule
refuses its point and lets the nearest legal one through; counting agrees with brute force."""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs
import pytest

from primus_lang.check import legal_mask, legal_points, legality, raw_points, summarize
from primus_lang.ir import Candidate, Recompute, Space
from primus_lang.ir.candidate import CUDA_GRAPHS
from primus_lang.lower import loads_program

from .test_enumeration import brute, space_of

CODES = {"P4029", "P4030", "P4031", "P4032", "P4033", "P4034"}
DENSE = """
model d { num_layers = 24; hidden = 2048; ffn_hidden = 8192; heads = 16; kv_heads = 4; vocab = 32000; seq_len = 4096
  dropout = 0.1; attention_dropout = 0.1 }
gpu g { vendor = amd; peak_bf16 = 1000 TFLOP/s; hbm_capacity = 192 GiB; hbm_bandwidth = 5 TB/s
  scale_up_bandwidth = 400 GB/s }
cluster c { gpu = g; nodes = 4; gpus_per_node = 8 }
"""
AXES = (
    "gbs = 64\ncuda_graph : none | attn | moe_router | attn_moe_router | layer | full\n"
    "recompute : none | selective | selective(moe) | selective(mlp, moe_act) | full(layers: 1 .. 2)\n"
)


def dense_space(body: str) -> Space:
    return loads_program(DENSE + "space s on c { model = d\n" + body + "\n}", "t.prx").spaces[0]


def codes_of(space: Space, cand: Candidate) -> set[str]:
    return {v.code for v in legality(space, cand)}


MOE_SPACE = space_of("gbs = 64")
SEL_MOE = Recompute("selective", modules=("moe",))


@pytest.mark.parametrize(
    ("code", "bad", "good"),
    [
        ("P4030", {"cuda_graph": "layer"}, {"cuda_graph": "attn_moe_router"}),
        ("P4031", {"cuda_graph": "attn", "recompute": Recompute("full", 1)},
         {"cuda_graph": "full", "recompute": Recompute("full", 1)}),
        ("P4031", {"cuda_graph": "attn_moe_router", "recompute": Recompute("full", 1)},
         {"cuda_graph": "attn_moe_router", "recompute": Recompute("selective")}),
        ("P4032", {"cuda_graph": "moe_router", "recompute": SEL_MOE},
         {"cuda_graph": "moe_router", "recompute": Recompute("selective", modules=("moe_act",))}),
        ("P4032", {"cuda_graph": "attn_moe_router", "recompute": SEL_MOE},
         {"cuda_graph": "attn", "recompute": SEL_MOE}),
        ("P4034", {"cuda_graph": "full", "ep": 2, "ep_comm_overlap": True},
         {"cuda_graph": "attn_moe_router", "ep": 2, "ep_comm_overlap": True}),
    ],
)
def test_moe_rules(code: str, bad: dict[str, Any], good: dict[str, Any]) -> None:
    refused = {v.code: v for v in legality(MOE_SPACE, Candidate(gbs=64, **bad))}
    assert code in refused, sorted(refused)
    assert f"({refused[code].rule})" in refused[code].message and refused[code].help
    assert not codes_of(MOE_SPACE, Candidate(gbs=64, **good)) & CODES


@pytest.mark.parametrize(
    ("code", "bad", "good"),
    [
        ("P4029", {"cuda_graph": "moe_router"}, {"cuda_graph": "layer"}),
        ("P4029", {"cuda_graph": "attn_moe_router"}, {"cuda_graph": "attn"}),
        # attention dropout: core_attn (selective's default) may not be recomputed inside a graph
        ("P4033", {"cuda_graph": "attn", "recompute": Recompute("selective")},
         {"cuda_graph": "attn", "recompute": Recompute("selective", modules=("mlp",))}),
        ("P4033", {"cuda_graph": "full", "recompute": Recompute("selective", modules=("core_attn",))},
         {"cuda_graph": "full", "recompute": Recompute("full", 1)}),
        # hidden dropout: mlp may not be recomputed inside a whole-layer graph, outside an attn one it may
        ("P4033", {"cuda_graph": "layer", "recompute": Recompute("selective", modules=("mlp",))},
         {"cuda_graph": "attn", "recompute": Recompute("selective", modules=("mlp",))}),
    ],
)
def test_dense_rules(code: str, bad: dict[str, Any], good: dict[str, Any]) -> None:
    space = dense_space("gbs = 64")
    refused = {v.code: v for v in legality(space, Candidate(gbs=64, **bad))}
    assert code in refused, sorted(refused)
    assert refused[code].help
    assert not codes_of(space, Candidate(gbs=64, **good)) & CODES


def test_dropout_free_models_recompute_inside_graphs() -> None:
    # test_enumeration's model has no dropout: graphed core_attn/mlp recomputation is fine there
    for graph in ("attn", "attn_moe_router", "full"):
        for rec in (Recompute("selective"), Recompute("selective", modules=("mlp", "core_attn"))):
            assert not codes_of(MOE_SPACE, Candidate(gbs=64, cuda_graph=graph, recompute=rec)) & CODES


def test_none_is_always_legal() -> None:
    for space in (MOE_SPACE, dense_space("gbs = 64")):
        for rec in (Recompute("full", 1), SEL_MOE, Recompute("selective")):
            assert not codes_of(space, Candidate(gbs=64, recompute=rec)) & CODES


@pytest.mark.parametrize("which", ["moe", "dense"])
def test_counts_match_brute_force(which: str) -> None:
    body = AXES + ("ep : 1 | 2\nep_comm_overlap : false | true when ep > 1" if which == "moe" else "tp : 1 | 2")
    space = space_of(body) if which == "moe" else dense_space(body)
    n, removed, legal = brute(space)
    s = summarize(space)
    assert (s.raw, s.legal) == (n, legal)
    per_code = Counter({r.code: r.removed for r in s.rules})
    assert +per_code == +Counter({k[:5]: v for k, v in removed.items()})
    expected = {"P4030", "P4031", "P4032", "P4034"} if which == "moe" else {"P4029", "P4031", "P4033"}
    assert expected <= set(+per_code)
    # the vectorised mask and the lazy enumeration agree with the one-point path
    points = list(raw_points(space))
    one = [c for c in points if not legality(space, c)]
    assert [c for c, ok in zip(points, legal_mask(space, points), strict=True) if ok] == one
    assert list(legal_points(space)) == one
    # on the MoE model (AMD GPUs, Megatron-LM core_v0.16) the full-iteration graph is P4047's as well
    assert {c.cuda_graph for c in one} == set(CUDA_GRAPHS) - ({"layer", "full"} if which == "moe" else
                                                                 {"moe_router", "attn_moe_router"})
    if which == "moe":
        assert per_code["P4047"] > 0


def _targeted(target: str, version: str = "") -> Space:
    return attrs.evolve(MOE_SPACE, settings=attrs.evolve(MOE_SPACE.settings, target=target, bridge_version=version))


def test_the_megatron_a_launch_runs_decides_the_rules_it_meets() -> None:
    """A rule megatron-core relaxed at a release applies where the launch runs an older one, and what
    only Megatron-LM's validate_args or torch FSDP2 asserts applies where they run (frameworks.target)."""
    overlap = Candidate(gbs=64, cuda_graph="full", ep=2, ep_comm_overlap=True)
    # Megatron-LM core_v0.16 and Primus's pin assert it; Bridge v0.6 pins a megatron-core past core_v0.18
    assert "P4034" in codes_of(_targeted("megatron+slurm"), overlap)
    assert "P4034" in codes_of(_targeted("primus+slurm"), overlap)
    assert "P4034" not in codes_of(_targeted("bridge+slurm"), overlap)
    assert "P4034" not in codes_of(_targeted("bridge+slurm", "067f987"), overlap)
    # torch FSDP2 (Primus) runs no expert parallelism; Megatron-FSDP (Megatron-LM, Bridge) shards experts
    fsdp = Candidate(gbs=64, ep=2, sharding="fsdp")
    assert "P4015" in {v.code for v in legality(_targeted("primus+slurm"), fsdp)}
    for target in ("megatron+slurm", "bridge+slurm"):
        assert "P4015" not in {v.code for v in legality(_targeted(target), fsdp)}
    # BF16 Adam moments are the precision-aware optimizer's, which needs the distributed optimizer:
    # Megatron-FSDP switches it on, torch FSDP2 (Primus) and no sharding run without it
    moments = Candidate(gbs=64, optimizer_dtype="bf16")
    for sharding, refused in (("dist_opt", ()), ("none", ("megatron+slurm", "primus+slurm")),
                              ("fsdp", ("primus+slurm",))):
        for target in ("megatron+slurm", "primus+slurm", "bridge+slurm"):
            codes = codes_of(_targeted(target), moments.replace(sharding=sharding))
            assert ("P4045" in codes) == (target in refused or sharding == "none"), (sharding, target)
    # overlapped parameter gather without overlapped reduction: validate_args refuses it, Bridge never runs it
    gather = Candidate(gbs=64, overlap_grad_reduce=False, overlap_param_gather=True)
    assert "P4014" in {v.code for v in legality(_targeted("megatron+slurm"), gather)}
    assert "P4014" not in {v.code for v in legality(_targeted("bridge+slurm"), gather)}


def _on_nvidia(space: Space, **settings: str) -> Space:
    gpu = attrs.evolve(space.cluster.gpu, vendor="nvidia")
    return attrs.evolve(space, cluster=attrs.evolve(space.cluster, gpu=gpu),
                        settings=attrs.evolve(space.settings, **settings))


def test_a_moe_full_iteration_graph_needs_hybridep_budget() -> None:
    """P4047: a dropless MoE's token counts reach the host mid-layer, so the whole iteration is graphed
    only with HybridEP's static per-rank budget: the flex dispatcher, NVIDIA GPUs, and a Megatron-LM that
    has --moe-expert-rank-capacity-factor (core_v0.18 on, and the commits Bridge pins)."""
    full = Candidate(gbs=64, ep=2, cuda_graph="full")
    flex = full.replace(moe_dispatcher="flex")
    bridge = _on_nvidia(MOE_SPACE, target="bridge+slurm")
    assert "P4047" in codes_of(bridge, full)  # the alltoall dispatcher syncs whatever the release
    assert "P4047" not in codes_of(bridge, flex)
    assert "P4047" not in codes_of(_on_nvidia(MOE_SPACE, megatron_version="core_v0.19"), flex)
    for space in (_on_nvidia(MOE_SPACE), _on_nvidia(MOE_SPACE, megatron_version="core_v0.17"),
                  _on_nvidia(MOE_SPACE, target="primus+slurm"), _targeted("bridge+slurm")):
        refused = {v.code: v for v in legality(space, flex)}
        assert "P4047" in refused, space.settings
        assert "cuda-graph-full-moe" in refused["P4047"].message and "attn_moe_router" in refused["P4047"].help
    # AMD GPUs have no HybridEP; a dense model has no dispatch to size
    assert "under Megatron-LM core_v0.16" in {v.code: v for v in legality(_on_nvidia(MOE_SPACE), flex)}["P4047"].message
    assert "on amd GPUs" in {v.code: v for v in legality(_targeted("bridge+slurm"), flex)}["P4047"].message
    assert "P4047" not in codes_of(dense_space("gbs = 64"), Candidate(gbs=64, cuda_graph="full"))
