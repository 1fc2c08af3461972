"""The ground-truth cases: tiny models, each measured in real megatron-core and accounted by primusc."""

from __future__ import annotations

from primus_lang.ir import Candidate, Cluster, Gpu, Model, Moe, Recompute

SEQ, MBS = 32, 2

GPT2 = Model(
    name="gpt2_tiny", num_layers=2, hidden=64, ffn_hidden=256, heads=4, kv_heads=4, head_dim=16, vocab=200,
    seq_len=SEQ, max_position_embeddings=64, activation="gelu", norm="layernorm", position="learned",
    bias=True, dropout=0.1, attention_dropout=0.1,
)
GPT2_TIED = GPT2.replace(name="gpt2_tiny_tied", tied_embeddings=True)
LLAMA = Model(
    name="llama_tiny", num_layers=2, hidden=64, ffn_hidden=160, heads=4, kv_heads=2, head_dim=16, vocab=300,
    seq_len=SEQ, max_position_embeddings=64, activation="swiglu", norm="rmsnorm", position="rope",
)
LLAMA_MHA = LLAMA.replace(name="llama_tiny_mha", kv_heads=4, tied_embeddings=True)
LLAMA_4L = LLAMA.replace(name="llama_tiny_4l", num_layers=4)
MOE = LLAMA.replace(
    name="moe_tiny", moe=Moe(num_experts=4, top_k=2, ffn_hidden=48, shared_experts=1, shared_ffn_hidden=32)
)


def gpu() -> Gpu:
    return Gpu(name="cpu", vendor="other", peak_bf16=1e12, hbm_capacity=2**40, hbm_bandwidth=1e11,
               scale_up_bandwidth=1e10, reserved_memory=0)


def cluster(world: int) -> Cluster:
    return Cluster(name=f"cpu{world}", gpu=gpu(), nodes=1, gpus_per_node=world)


def cand(**kw: object) -> Candidate:
    base: dict[str, object] = dict(seq_len=SEQ, mbs=MBS, gbs=MBS, sharding="none", attention="unfused",
                                   overlap_grad_reduce=False, overlap_param_gather=False)
    base.update(kw)
    return Candidate(**base)  # type: ignore[arg-type]


# (case id, model, candidate, what to measure). "params": parameter bytes of the rank;
# "activations": saved-for-backward bytes of one micro-batch through the whole model and the loss;
# "ddp": grad- and param-buffer bytes of megatron-core's DistributedDataParallel (distributed optimizer).
Case = tuple[str, Model, Candidate, str]

SINGLE: list[Case] = [
    ("params-gpt2-untied", GPT2, cand(), "params"),
    ("params-gpt2-tied", GPT2_TIED, cand(), "params"),
    ("params-llama-gqa", LLAMA, cand(), "params"),
    ("params-llama-mha-tied", LLAMA_MHA, cand(), "params"),
    ("params-moe-ep1", MOE, cand(), "params"),
    ("act-gpt2-unfused-dropout", GPT2, cand(), "activations"),
    ("act-llama-gqa", LLAMA, cand(), "activations"),
    ("act-llama-mha", LLAMA_MHA, cand(), "activations"),
    ("act-llama-selective", LLAMA, cand(recompute=Recompute("selective")), "activations"),
    ("act-gpt2-selective", GPT2, cand(recompute=Recompute("selective")), "activations"),
    ("act-llama-full-block-1of4", LLAMA_4L, cand(recompute=Recompute("full", 1, "block")), "activations"),
    ("act-llama-full-uniform-2", LLAMA_4L, cand(recompute=Recompute("full", 2, "uniform")), "activations"),
    # At EP 1 every expert is local, so the routed token copies total T·k whatever the router picks.
    ("act-moe-ep1", MOE, cand(), "activations"),
    ("act-moe-ep1-selective", MOE, cand(recompute=Recompute("selective")), "activations"),
    ("act-llama-selective-mlp", LLAMA, cand(recompute=Recompute("selective", modules=("mlp",))), "activations"),
    # layernorm and moe_act recomputation need TransformerEngine / grouped GEMM: analytic only.
    ("act-moe-selective-moe", MOE, cand(recompute=Recompute("selective", modules=("moe",))), "activations"),
    ("act-moe-selective-shared", MOE,
     cand(recompute=Recompute("selective", modules=("shared_experts",))), "activations"),
    ("ddp-llama-distopt", LLAMA, cand(sharding="dist_opt"), "ddp"),
    ("ddp-moe-distopt", MOE, cand(sharding="dist_opt"), "ddp"),
]

TP2: list[Case] = [
    ("params-gpt2-tp2", GPT2, cand(tp=2, sequence_parallel=False), "params"),
    ("params-llama-gqa-tp2", LLAMA, cand(tp=2, sequence_parallel=False), "params"),
    ("act-llama-tp2", LLAMA, cand(tp=2, sequence_parallel=False), "activations"),
    ("act-llama-tp2-sp", LLAMA, cand(tp=2, sequence_parallel=True), "activations"),
    ("act-gpt2-tp2-sp", GPT2, cand(tp=2, sequence_parallel=True), "activations"),
    ("act-llama-tp2-sp-selective", LLAMA, cand(tp=2, recompute=Recompute("selective")), "activations"),
    ("params-moe-tp2-etp2", MOE, cand(tp=2), "params"),
    ("act-moe-tp2-sp", MOE, cand(tp=2), "activations"),
]

EP2: list[Case] = [
    ("params-moe-ep2", MOE, cand(ep=2), "params"),
    ("ddp-moe-ep2-distopt", MOE, cand(ep=2, sharding="dist_opt"), "ddp"),
]
