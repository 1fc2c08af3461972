"""Small IR fixtures for the memory tests (written in Python: the parser is another stage)."""

from primus_lang.ir import Cluster, Gpu, Mamba, Mla, Model, Moe

LLAMA70B = Model(name="llama3_1_70b", num_layers=80, hidden=8192, ffn_hidden=28672, heads=64, kv_heads=8,
                 head_dim=128, vocab=128256, seq_len=8192, max_position_embeddings=131072)
MIXTRAL = Model(name="mixtral_8x7b", num_layers=32, hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8,
                head_dim=128, vocab=32000, seq_len=4096, max_position_embeddings=32768,
                moe=Moe(num_experts=8, top_k=2, ffn_hidden=14336))
DSV3_SMALL = Model(name="dsv3_small", num_layers=7, hidden=1024, ffn_hidden=4096, heads=16, kv_heads=16,
                   head_dim=64, vocab=32000, seq_len=4096, max_position_embeddings=4096, mtp_layers=1,
                   moe=Moe(num_experts=16, top_k=4, ffn_hidden=512, shared_experts=1, dense_layers=1),
                   mla=Mla(kv_lora_rank=128, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
                           q_lora_rank=256))
MI325X = Gpu(name="mi325x", vendor="amd", peak_bf16=1.3074e15, hbm_capacity=256 * 10**9, hbm_bandwidth=6e12,
             scale_up_bandwidth=448e9, reserved_memory=4 * 2**30)
X64 = Cluster(name="mi325x_x8", gpu=MI325X, nodes=8, gpus_per_node=8)
# A small hybrid Mamba/attention MoE model (Nemotron 3's shape of layers, 16 of them, LatentMoE).
HYBRID_SMALL = Model(name="hybrid_small", num_layers=16, hidden=1024, ffn_hidden=2048, heads=16, kv_heads=2,
                     head_dim=64, vocab=32000, seq_len=4096, max_position_embeddings=4096,
                     activation="squared_relu", position="none", pattern="MEM*EMEM-MEM*EME",
                     mamba=Mamba(heads=32, head_dim=64, state_dim=64, groups=8),
                     moe=Moe(num_experts=16, top_k=4, ffn_hidden=512, shared_experts=1, latent=256))
