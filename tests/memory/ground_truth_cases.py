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
# one key/value head under TP 2: megatron-core (core_v0.16 on) gathers the QKV output and keeps one
# group's heads on each rank (attention.py, "QKV activation sub-sharding")
LLAMA_MQA = LLAMA.replace(name="llama_tiny_mqa", kv_heads=1)
# and with as many query heads as TP: one query head over one key/value head a rank, which the local
# core attention does not expand (no repeat_interleave), so v stays a view of the gathered output
LLAMA_H2 = LLAMA.replace(name="llama_tiny_h2", heads=2, kv_heads=1, head_dim=32)
MOE = LLAMA.replace(
    name="moe_tiny", moe=Moe(num_experts=4, top_k=2, ffn_hidden=48, shared_experts=1, shared_ffn_hidden=32)
)

# Llama 4 Maverick's interleaving (a dense MLP, then the experts, repeated) and DeepSeek's dense prefix:
# megatron-core builds each layer from --moe-layer-freq's per-layer list
MOE_INTERLEAVED = MOE.replace(name="moe_tiny_interleaved", num_layers=4,
                              moe=Moe(num_experts=4, top_k=2, ffn_hidden=48, shared_experts=1, shared_ffn_hidden=32,
                                      layer_cycle="-E"))
MOE_DENSE_FIRST = MOE.replace(name="moe_tiny_dense_first", num_layers=3,
                              moe=Moe(num_experts=4, top_k=2, ffn_hidden=48, dense_layers=1))


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
# "peak": the most saved bytes alive at once over that micro-batch's forward and backward;
# "ddp": grad- and param-buffer bytes of megatron-core's DistributedDataParallel (distributed optimizer).
Case = tuple[str, Model, Candidate, str]

SINGLE: list[Case] = [
    ("params-gpt2-untied", GPT2, cand(), "params"),
    ("params-gpt2-tied", GPT2_TIED, cand(), "params"),
    ("params-llama-gqa", LLAMA, cand(), "params"),
    ("params-llama-mha-tied", LLAMA_MHA, cand(), "params"),
    ("params-moe-ep1", MOE, cand(), "params"),
    ("params-moe-interleaved", MOE_INTERLEAVED, cand(), "params"),
    ("params-moe-dense-first", MOE_DENSE_FIRST, cand(), "params"),
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
    ("act-moe-interleaved", MOE_INTERLEAVED, cand(), "activations"),
    ("act-moe-dense-first", MOE_DENSE_FIRST, cand(), "activations"),
    ("act-llama-selective-mlp", LLAMA, cand(recompute=Recompute("selective", modules=("mlp",))), "activations"),
    # layernorm and moe_act recomputation need TransformerEngine / grouped GEMM: analytic only.
    ("act-moe-selective-moe", MOE, cand(recompute=Recompute("selective", modules=("moe",))), "activations"),
    ("act-moe-selective-shared", MOE,
     cand(recompute=Recompute("selective", modules=("shared_experts",))), "activations"),
    # Unfused attention's softmax (issue 18, item 3). At 32 tokens the fused kernel runs and keeps
    # its 16-bit output; at 34 (not a multiple of 4 or 8) both megatron-core's and Transformer
    # Engine's rules fall back to the FP32 torch softmax, which keeps that and its 16-bit cast.
    ("act-llama-softmax-fallback-fp32", LLAMA, cand(seq_len=34), "activations"),
    ("act-gpt2-softmax-fallback-fp32", GPT2, cand(seq_len=34), "activations"),
    # Megatron-LM's own defaults for the local path (--attention-softmax-in-fp32 off): the torch
    # fallback in 16 bits keeps what the kernel keeps, with the fusion switched off here.
    ("act-llama-softmax-local-bf16", LLAMA, cand(), "activations"),
    # Peak bytes alive over forward and backward under full recompute (issue 18, item 4): block
    # 0, 1, 2 and all 4 layers, uniform groups of 2 and 4; the account's act terms plus what its
    # backward transient says a checkpoint's recomputation adds.
    ("peak-llama-full-block-0", LLAMA_4L, cand(), "peak"),
    ("peak-llama-full-block-1", LLAMA_4L, cand(recompute=Recompute("full", 1, "block")), "peak"),
    ("peak-llama-full-block-2", LLAMA_4L, cand(recompute=Recompute("full", 2, "block")), "peak"),
    ("peak-llama-full-block-4", LLAMA_4L, cand(recompute=Recompute("full", 4, "block")), "peak"),
    ("peak-llama-full-uniform-2", LLAMA_4L, cand(recompute=Recompute("full", 2, "uniform")), "peak"),
    ("peak-llama-full-uniform-4", LLAMA_4L, cand(recompute=Recompute("full", 4, "uniform")), "peak"),
    ("peak-gpt2-full-block-1", GPT2.replace(name="gpt2_tiny_4l", num_layers=4),
     cand(recompute=Recompute("full", 1, "block")), "peak"),
    ("ddp-llama-distopt", LLAMA, cand(sharding="dist_opt"), "ddp"),
    ("ddp-moe-distopt", MOE, cand(sharding="dist_opt"), "ddp"),
]

# Activations at TP 2 run 4 sequences a micro-batch: with 2 heads a rank, megatron-core's local
# softmax kernel wants b·heads to be a multiple of its 8 rows a block (causal), where Transformer
# Engine's, which the account follows, wants only 4; at 4·2 both take the kernel.
TP2: list[Case] = [
    ("params-gpt2-tp2", GPT2, cand(tp=2, sequence_parallel=False), "params"),
    ("params-llama-gqa-tp2", LLAMA, cand(tp=2, sequence_parallel=False), "params"),
    ("act-llama-tp2", LLAMA, cand(tp=2, sequence_parallel=False, mbs=4, gbs=4), "activations"),
    ("act-llama-tp2-sp", LLAMA, cand(tp=2, sequence_parallel=True, mbs=4, gbs=4), "activations"),
    ("act-gpt2-tp2-sp", GPT2, cand(tp=2, sequence_parallel=True, mbs=4, gbs=4), "activations"),
    ("act-llama-tp2-sp-selective", LLAMA, cand(tp=2, recompute=Recompute("selective"), mbs=4, gbs=4),
     "activations"),
    # issue 18, item 2: what SP splits under selective recompute, with dropout masks
    ("act-gpt2-tp2-sp-selective", GPT2, cand(tp=2, recompute=Recompute("selective"), mbs=4, gbs=4),
     "activations"),
    ("params-moe-tp2-etp2", MOE, cand(tp=2), "params"),
    ("act-moe-tp2-sp", MOE, cand(tp=2, mbs=4, gbs=4), "activations"),
    ("params-llama-mqa-tp2", LLAMA_MQA, cand(tp=2, sequence_parallel=False), "params"),
    ("act-llama-mqa-tp2", LLAMA_MQA, cand(tp=2, sequence_parallel=False, mbs=4, gbs=4), "activations"),
    ("act-llama-mqa-tp2-sp", LLAMA_MQA, cand(tp=2, sequence_parallel=True, mbs=4, gbs=4), "activations"),
    ("act-llama-mqa-tp2-sp-selective", LLAMA_MQA, cand(tp=2, recompute=Recompute("selective"), mbs=4, gbs=4),
     "activations"),
    # 8 sequences: one head a rank, and megatron-core's local softmax kernel wants b·heads a multiple of 8
    ("act-llama-h2-tp2", LLAMA_H2, cand(tp=2, sequence_parallel=False, mbs=8, gbs=8), "activations"),
    ("act-llama-h2-tp2-sp", LLAMA_H2, cand(tp=2, sequence_parallel=True, mbs=8, gbs=8), "activations"),
]

# ETP 1 under TP 2: each rank routes its own sequence-parallel half and no ETP all-gather follows, so
# the experts see a TP-th of the tokens they see at ETP = TP, and hold whole (unsplit) expert weights.
TP2ETP1: list[Case] = [
    ("params-moe-tp2-etp1", MOE, cand(tp=2, etp=1), "params"),
    ("act-moe-tp2-etp1-sp", MOE, cand(tp=2, etp=1, mbs=4, gbs=4), "activations"),
]

EP2: list[Case] = [
    ("params-moe-ep2", MOE, cand(ep=2), "params"),
    ("params-moe-interleaved-ep2", MOE_INTERLEAVED, cand(ep=2), "params"),
    ("ddp-moe-ep2-distopt", MOE, cand(ep=2, sharding="dist_opt"), "ddp"),
]

# TransformerConfig fields a case sets beyond megatron_harness.transformer_config's.
CONFIG: dict[str, dict[str, object]] = {
    "act-llama-softmax-local-bf16": {"masked_softmax_fusion": False, "attention_softmax_in_fp32": False},
}
