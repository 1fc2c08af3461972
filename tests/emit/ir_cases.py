"""IR built in Python for the emitter tests (the .prx examples are tested beside these)."""

from __future__ import annotations

from primus_lang.ir import Candidate, Cluster, Gpu, Mla, Model, Moe, Recompute, Space
from primus_lang.ir.run import Run

MI325X = Gpu(
    name="mi325x", vendor="amd", peak_bf16=1307.4e12, peak_fp8=2614.9e12, hbm_capacity=256 * 10**9,
    hbm_bandwidth=6.0e12, scale_up_bandwidth=448e9,
)
H100 = Gpu(
    name="h100_sxm", vendor="nvidia", peak_bf16=989.4e12, peak_fp8=1978.9e12, hbm_capacity=80 * 10**9,
    hbm_bandwidth=3.35e12, scale_up_bandwidth=450e9,
)
B200 = Gpu(
    name="b200", vendor="nvidia", peak_bf16=2250e12, peak_fp8=4500e12, peak_fp4=9000e12, hbm_capacity=180 * 10**9,
    hbm_bandwidth=8.0e12, scale_up_bandwidth=900e9,
)

LLAMA3_70B = Model(
    name="llama3_1_70b", num_layers=80, hidden=8192, ffn_hidden=28672, heads=64, kv_heads=8, head_dim=128,
    vocab=128256, seq_len=8192, max_position_embeddings=131072,
)
LLAMA3_8B = Model(
    name="llama3_1_8b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8, head_dim=128,
    vocab=128256, seq_len=8192, max_position_embeddings=131072,
)
MIXTRAL = Model(
    name="mixtral_8x7b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8, head_dim=128,
    vocab=32000, seq_len=4096, max_position_embeddings=32768,
    moe=Moe(num_experts=8, top_k=2, ffn_hidden=14336),
)
DEEPSEEK_V3 = Model(
    name="deepseek_v3", num_layers=61, hidden=7168, ffn_hidden=18432, heads=128, kv_heads=128, head_dim=192,
    vocab=129280, seq_len=4096, max_position_embeddings=163840, qk_layernorm=False, mtp_layers=1,
    moe=Moe(num_experts=256, top_k=8, ffn_hidden=2048, shared_experts=1, shared_ffn_hidden=2048,
            dense_layers=3),
    mla=Mla(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128),
)
TINY = Model(
    name="tiny", num_layers=4, hidden=256, ffn_hidden=1024, heads=8, kv_heads=4, head_dim=32,
    vocab=1024, seq_len=512, max_position_embeddings=512,
)


def _stdlib_model(name: str) -> Model:
    from primus_lang.validate.runs import stdlib_definitions

    return stdlib_definitions()[0][name]


NEMOTRON_NANO = _stdlib_model("nemotron_3_nano_30b_a3b")
STDLIB_LLAMA3_8B = _stdlib_model("llama3_8b")  # the card itself, which Megatron-Bridge has a recipe for
NEMOTRON_SUPER = _stdlib_model("nemotron_3_super_120b_a12b")


def cluster(gpu: Gpu, nodes: int, gpus_per_node: int = 8) -> Cluster:
    return Cluster(name=f"{gpu.name}_x{nodes}", gpu=gpu, nodes=nodes, gpus_per_node=gpus_per_node)


def space(name: str, model: Model, cl: Cluster) -> Space:
    return Space(name=name, model=model, cluster=cl)


# (case name, space, candidate): each is emitted for every framework x launcher it supports.
CASES: dict[str, tuple[Space, Candidate]] = {
    "llama70b_mi325x": (
        space("llama70b", LLAMA3_70B, cluster(MI325X, 8)),
        Candidate(tp=8, pp=4, vpp=5, mbs=1, gbs=256, seq_len=8192, schedule="interleaved",
                  recompute=Recompute("full", 4, "block"), precision="fp8", tp_comm_overlap=True),
    ),
    "llama8b_h100_fsdp": (
        space("llama8b-fsdp", LLAMA3_8B, cluster(H100, 2)),
        Candidate(tp=1, pp=1, mbs=2, gbs=128, seq_len=8192, sharding="fsdp", recompute=Recompute("selective")),
    ),
    "mixtral_h100": (
        space("mixtral", MIXTRAL, cluster(H100, 4)),
        Candidate(tp=2, pp=2, vpp=2, ep=8, etp=1, cp=2, mbs=1, gbs=512, seq_len=4096, moe_dispatcher="flex",
                  cp_comm="a2a", schedule="interleaved", ep_comm_overlap=True),
    ),
    "deepseek_v3_b200": (
        space("deepseek_v3", DEEPSEEK_V3, cluster(B200, 32)),
        Candidate(tp=1, pp=1, ep=32, mbs=1, gbs=1024, seq_len=4096,
                  main_grad_dtype="bf16", optimizer_dtype="bf16", fp8_recipe="blockwise", precision="fp8"),
    ),
    "deepseek_v3_layout": (  # Megatron-Bridge's DeepSeek-V3 layout at PP 4 x VPP 4
        space("deepseek_v3_layout", DEEPSEEK_V3, cluster(B200, 32)),
        Candidate(tp=2, pp=4, vpp=4, ep=32, etp=1, mbs=1, gbs=1024, seq_len=4096, schedule="interleaved",
                  pipeline_layout="Et*4|(t*4|)*14tmL", recompute=Recompute("full", 1)),
    ),
    "llama70b_b200_nvfp4": (  # Megatron-Bridge's Llama 3 70B NVFP4 layout (TP 2, PP 4, VPP 5)
        space("llama70b_nvfp4", LLAMA3_70B, cluster(B200, 8)),
        Candidate(tp=2, pp=4, vpp=5, mbs=1, gbs=256, seq_len=8192, schedule="interleaved", precision="fp4"),
    ),
    "nemotron_nano_b200": (  # Megatron-Bridge's Nemotron 3 Nano recipe: EP 8, HybridEP, graphed mixers
        space("nemotron_nano", NEMOTRON_NANO, cluster(B200, 1)),
        Candidate(tp=1, pp=1, ep=8, etp=1, mbs=2, gbs=512, seq_len=8192, precision="fp8", fp8_recipe="mxfp8", fp8_format="e4m3",
                  moe_dispatcher="flex", cuda_graph="attn_moe_router", main_grad_dtype="bf16"),
    ),
    "nemotron_super_b200": (  # LatentMoE; without its MTP layer, which core_v0.16's MambaModel lacks
        space("nemotron_super", NEMOTRON_SUPER.replace(mtp_layers=0), cluster(B200, 8)),
        Candidate(tp=2, pp=2, ep=16, etp=1, mbs=1, gbs=512, seq_len=8192, precision="fp4"),
    ),
    # Megatron-Bridge's llama3_8b_pretrain_8gpu_h100_fp8cs_config layout, FP8 weights gathered as its
    # registered precision recipe (bf16_with_fp8_current_scaling_mixed) does
    "llama3_8b_h100_fp8cs": (
        space("llama3_8b_fp8cs", STDLIB_LLAMA3_8B, cluster(H100, 1)),
        Candidate(tp=1, pp=1, mbs=1, gbs=128, seq_len=8192, precision="fp8", fp8_recipe="tensorwise",
                  recompute=Recompute("full", 5, "block"), fp8_param_gather=True),
    ),
    # a run block: every run setting reaches each framework, the init std over the model card's
    "llama3_8b_run": (
        Space(name="llama3_8b_run", model=STDLIB_LLAMA3_8B, cluster=cluster(H100, 1),
              run=Run(lr=3.0e-4, min_lr=3.0e-5, warmup_iters=100, decay="cosine", init_std=0.008, adam_beta2=0.999,
                      adam_eps=1e-8, clip_grad=1.0, weight_decay=0.1, log_throughput=True,
                      tensorboard_dir="/runs/tb", wandb_project="primusc-runs")),
        Candidate(tp=2, pp=1, mbs=1, gbs=64, seq_len=8192),
    ),
    "llama8b_zbv": (
        space("llama8b_zbv", LLAMA3_8B, cluster(MI325X, 1)),
        Candidate(tp=1, pp=4, vpp=2, mbs=1, gbs=64, seq_len=4096, schedule="zbv", overlap_grad_reduce=False,
                  overlap_param_gather=False),
    ),
}
