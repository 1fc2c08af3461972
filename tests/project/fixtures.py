"""IR built in Python for the projection tests (numbers from the validation corpus, validation/*.yaml)."""

from __future__ import annotations

import attrs

from primus_lang.ir import Cluster, Efficiency, Gpu, Model, Moe

LLAMA3_1_70B = Model(
    name="llama3_1_70b", num_layers=80, hidden=8192, ffn_hidden=28672, heads=64, kv_heads=8,
    head_dim=128, vocab=128256, seq_len=8192, max_position_embeddings=131072,
)
LLAMA3_1_8B = Model(
    name="llama3_1_8b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8,
    head_dim=128, vocab=128256, seq_len=8192, max_position_embeddings=131072,
)
MIXTRAL_8X7B = Model(
    name="mixtral_8x7b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8,
    head_dim=128, vocab=32000, seq_len=4096, max_position_embeddings=32768,
    moe=Moe(num_experts=8, top_k=2, ffn_hidden=14336),
)
MI325X = Gpu(
    name="mi325x", vendor="amd", peak_bf16=1307.4e12, peak_fp8=2614.9e12, hbm_capacity=256 * 10**9,
    hbm_bandwidth=6.0e12, scale_up_bandwidth=448e9, scale_up_domain=8, scale_up_topology="mesh",
    nic_bandwidth=50e9, efficiency=Efficiency(),
)
H100 = Gpu(
    name="h100_sxm", vendor="nvidia", peak_bf16=989.4e12, peak_fp8=1978.9e12, hbm_capacity=80 * 10**9,
    hbm_bandwidth=3.35e12, scale_up_bandwidth=450e9, scale_up_domain=8, scale_up_topology="switch",
    nic_bandwidth=50e9,
)

B200 = Gpu(
    name="b200", vendor="nvidia", peak_bf16=2250e12, peak_fp8=4500e12, peak_fp4=9000e12, hbm_capacity=180 * 10**9,
    hbm_bandwidth=7.7e12, scale_up_bandwidth=900e9, scale_up_domain=8, scale_up_topology="switch",
    nic_bandwidth=50e9,
)


def faster_variants(gpu: Gpu) -> tuple[Gpu, ...]:
    """``gpu`` with more of one resource each: compute, HBM, scale-up and NIC bandwidth."""
    return (
        attrs.evolve(gpu, peak_bf16=gpu.peak_bf16 * 1.5, peak_fp8=gpu.peak_fp8 * 1.5),
        attrs.evolve(gpu, hbm_bandwidth=gpu.hbm_bandwidth * 2),
        attrs.evolve(gpu, scale_up_bandwidth=gpu.scale_up_bandwidth * 2),
        attrs.evolve(gpu, nic_bandwidth=gpu.nic_bandwidth * 4),
    )


def cluster(gpu: Gpu = MI325X, nodes: int = 8, gpus_per_node: int = 8) -> Cluster:
    return Cluster(name=f"{gpu.name}_x{nodes}", gpu=gpu, nodes=nodes, gpus_per_node=gpus_per_node)
