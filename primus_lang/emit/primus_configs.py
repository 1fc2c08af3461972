"""Primus's own conventions, read from its repository and recorded as data (no code of Primus's).

Source: AMD-AGI/Primus at commit fd1eeabbad15135e3702094087e96142b4b4eacb (22 Aug 2026, v26.5.1):
``examples/megatron/configs/<GPU>/*-pretrain.yaml`` (the per-GPU example experiments),
``primus/configs/models/megatron/*.yaml`` (the model cards, resolved through their ``extends``),
``primus/configs/modules/megatron/primus_turbo.yaml`` (the Turbo switches' defaults: all off) and
``primus/backends/megatron/patches/args/rocm_arg_validation.py`` (what the switches require).
"""

from __future__ import annotations

from primus_lang.frameworks import primus

PRIMUS_REPOSITORY = "AMD-AGI/Primus"
PRIMUS_COMMIT = "fd1eeabbad15135e3702094087e96142b4b4eacb"

# primusc stdlib model -> the Primus card of the same model. Each card was resolved through its
# `extends` chain and compared with primusc's settings for the stdlib model: the architecture agrees
# (primusc writes every architecture field anyway), and the card adds what primusc does not say,
# such as norm_epsilon, init_method_std and DeepSeek-V3's group-limited routing.
PRIMUS_CARDS: dict[str, str] = {
    "deepseek_v2": "deepseek_v2.yaml",
    "deepseek_v2_lite": "deepseek_v2_lite.yaml",
    "deepseek_v3": "deepseek_v3.yaml",
    "llama2_7b": "llama2_7B.yaml",
    "llama2_13b": "llama2_13B.yaml",
    "llama2_70b": "llama2_70B.yaml",
    "llama3_8b": "llama3_8B.yaml",
    "llama3_70b": "llama3_70B.yaml",
    "llama3_1_8b": "llama3.1_8B.yaml",
    "llama3_1_70b": "llama3.1_70B.yaml",
    "llama3_1_405b": "llama3.1_405B.yaml",
    "mixtral_8x7b": "mixtral_8x7B_v0.1.yaml",
    "mixtral_8x22b": "mixtral_8x22B_v0.1.yaml",
    "qwen3_30b_a3b": "qwen3_30B_A3B.yaml",
    "qwen3_235b_a22b": "qwen3_235B_A22B.yaml",
}

# stdlib models with a Primus card of the same name that is not used, and why
CARDS_NOT_USED: dict[str, str] = {
    "gpt_oss_20b": "gpt_oss_20B.yaml extends a DeepSeek-V2-Lite-style base: it adds a 2,880-wide shared "
                   "expert, QK layernorm and YaRN's mscale, and drops gpt-oss's biases",
    "gpt_oss_120b": "gpt_oss_120B.yaml has the same base as gpt_oss_20B.yaml",
}

def overlaps_shared_experts(card: str) -> bool:
    """Whether a Primus model card turns on moe_shared_expert_overlap (its preset at the release the
    Primus target launches), which megatron-core (TransformerConfig, core_v0.16.1) allows only with the
    alltoall dispatcher and Primus Turbo's DeepEP refuses (rocm_arg_validation.py)."""
    return bool((primus.preset("models", card, primus.DEFAULT_VERSION) or {}).get("moe_shared_expert_overlap"))

GENERIC_CARD = primus.GENERIC_CARD

# primusc GPU profile family -> the folder of Primus's example experiments for it
PRIMUS_GPUS: dict[str, str] = {"mi300x": "MI300X", "mi325x": "MI325X", "mi355x": "MI355X"}

# Primus Turbo kernel switches: on wherever Primus's own example sets them for that GPU and card
KERNEL_SWITCHES = ("enable_primus_turbo", "use_turbo_attention", "use_turbo_grouped_gemm", "use_turbo_gemm",
                   "use_turbo_rms_norm", "moe_router_dtype")
# set only for a candidate that runs Primus Turbo's DeepEP (the flex dispatcher on AMD), as the
# examples set them only beside use_turbo_deepep; sync-free MoE stage 2 turns DeepEP on by itself
DEEPEP_SWITCHES = ("use_turbo_deepep", "turbo_deepep_num_cu", "turbo_deepep_use_comm_stream",
                   "turbo_sync_free_moe_stage", "moe_use_fused_router_with_aux_score")

# (GPU family, Primus card, precision) -> (the example experiment under examples/megatron/configs/,
# the Turbo switches it sets). Examples that set none (llama3.1_405B everywhere, llama3.1_8B and
# llama3.1_70B on MI355X) are absent: Primus's defaults are all off.
TURBO_SWITCHES: dict[tuple[str, str, str], tuple[str, dict[str, bool | int | str]]] = {
    ("mi300x", "deepseek_v3.yaml", "bf16"): ("MI300X/deepseek_v3-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "moe_router_dtype": "fp32"}),
    ("mi300x", "deepseek_v3.yaml", "fp8"): ("MI300X/deepseek_v3-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "moe_router_dtype": "fp32"}),
    ("mi300x", "llama2_13B.yaml", "bf16"): ("MI300X/llama2_13B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama2_13B.yaml", "fp8"): ("MI300X/llama2_13B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama2_70B.yaml", "bf16"): ("MI300X/llama2_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama2_70B.yaml", "fp8"): ("MI300X/llama2_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama2_7B.yaml", "bf16"): ("MI300X/llama2_7B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama2_7B.yaml", "fp8"): ("MI300X/llama2_7B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama3.1_70B.yaml", "bf16"): ("MI300X/llama3.1_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True}),
    ("mi300x", "llama3.1_70B.yaml", "fp8"): ("MI300X/llama3.1_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True}),
    ("mi300x", "llama3.1_8B.yaml", "bf16"): ("MI300X/llama3.1_8B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi300x", "llama3.1_8B.yaml", "fp8"): ("MI300X/llama3.1_8B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi300x", "llama3_70B.yaml", "bf16"): ("MI300X/llama3_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama3_70B.yaml", "fp8"): ("MI300X/llama3_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama3_8B.yaml", "bf16"): ("MI300X/llama3_8B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "llama3_8B.yaml", "fp8"): ("MI300X/llama3_8B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi300x", "mixtral_8x7B_v0.1.yaml", "bf16"): ("MI300X/mixtral_8x7B_v0.1-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "moe_use_fused_router_with_aux_score": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi300x", "qwen3_235B_A22B.yaml", "bf16"): ("MI300X/qwen3_235B_A22B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi300x", "qwen3_235B_A22B.yaml", "fp8"): ("MI300X/qwen3_235B_A22B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi300x", "qwen3_30B_A3B.yaml", "bf16"): ("MI300X/qwen3_30B_A3B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi300x", "qwen3_30B_A3B.yaml", "fp8"): ("MI300X/qwen3_30B_A3B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi325x", "deepseek_v3.yaml", "bf16"): ("MI325X/deepseek_v3-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "moe_router_dtype": "fp32"}),
    ("mi325x", "deepseek_v3.yaml", "fp8"): ("MI325X/deepseek_v3-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "moe_router_dtype": "fp32"}),
    ("mi325x", "llama2_13B.yaml", "bf16"): ("MI325X/llama2_13B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama2_13B.yaml", "fp8"): ("MI325X/llama2_13B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama2_70B.yaml", "bf16"): ("MI325X/llama2_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama2_70B.yaml", "fp8"): ("MI325X/llama2_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama2_7B.yaml", "bf16"): ("MI325X/llama2_7B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama2_7B.yaml", "fp8"): ("MI325X/llama2_7B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama3.1_70B.yaml", "bf16"): ("MI325X/llama3.1_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False}),
    ("mi325x", "llama3.1_70B.yaml", "fp8"): ("MI325X/llama3.1_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False}),
    ("mi325x", "llama3.1_8B.yaml", "bf16"): ("MI325X/llama3.1_8B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi325x", "llama3.1_8B.yaml", "fp8"): ("MI325X/llama3.1_8B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi325x", "llama3_70B.yaml", "bf16"): ("MI325X/llama3_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama3_70B.yaml", "fp8"): ("MI325X/llama3_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama3_8B.yaml", "bf16"): ("MI325X/llama3_8B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "llama3_8B.yaml", "fp8"): ("MI325X/llama3_8B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi325x", "mixtral_8x7B_v0.1.yaml", "bf16"): ("MI325X/mixtral_8x7B_v0.1-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi325x", "qwen3_235B_A22B.yaml", "bf16"): ("MI325X/qwen3_235B_A22B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi325x", "qwen3_235B_A22B.yaml", "fp8"): ("MI325X/qwen3_235B_A22B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 2, "moe_router_dtype": "fp32"}),
    ("mi325x", "qwen3_30B_A3B.yaml", "bf16"): ("MI325X/qwen3_30B_A3B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi325x", "qwen3_30B_A3B.yaml", "fp8"): ("MI325X/qwen3_30B_A3B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "deepseek_v3.yaml", "bf16"): ("MI355X/deepseek_v3-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": True, "moe_use_fused_router_with_aux_score": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "deepseek_v3.yaml", "fp8"): ("MI355X/deepseek_v3-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "llama2_13B.yaml", "bf16"): ("MI355X/llama2_13B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi355x", "llama2_13B.yaml", "fp8"): ("MI355X/llama2_13B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": True, "use_turbo_grouped_gemm": True}),
    ("mi355x", "llama2_70B.yaml", "bf16"): ("MI355X/llama2_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama2_70B.yaml", "fp8"): ("MI355X/llama2_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama2_7B.yaml", "bf16"): ("MI355X/llama2_7B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama2_7B.yaml", "fp8"): ("MI355X/llama2_7B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama3_70B.yaml", "bf16"): ("MI355X/llama3_70B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama3_70B.yaml", "fp8"): ("MI355X/llama3_70B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama3_8B.yaml", "bf16"): ("MI355X/llama3_8B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "llama3_8B.yaml", "fp8"): ("MI355X/llama3_8B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "mixtral_8x22B_v0.1.yaml", "bf16"): ("MI355X/mixtral_8x22B_v0.1-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "mixtral_8x22B_v0.1.yaml", "fp8"): ("MI355X/mixtral_8x22B_v0.1-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "mixtral_8x7B_v0.1.yaml", "bf16"): ("MI355X/mixtral_8x7B_v0.1-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "moe_use_fused_router_with_aux_score": True, "use_turbo_deepep": True, "turbo_deepep_num_cu": 64, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "mixtral_8x7B_v0.1.yaml", "fp8"): ("MI355X/mixtral_8x7B_v0.1-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False}),
    ("mi355x", "qwen3_235B_A22B.yaml", "bf16"): ("MI355X/qwen3_235B_A22B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "qwen3_235B_A22B.yaml", "fp8"): ("MI355X/qwen3_235B_A22B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "qwen3_30B_A3B.yaml", "bf16"): ("MI355X/qwen3_30B_A3B-BF16-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
    ("mi355x", "qwen3_30B_A3B.yaml", "fp8"): ("MI355X/qwen3_30B_A3B-FP8-pretrain.yaml", {"enable_primus_turbo": True, "use_turbo_attention": False, "use_turbo_grouped_gemm": False, "use_turbo_rms_norm": False, "use_turbo_deepep": True, "turbo_deepep_num_cu": 80, "turbo_deepep_use_comm_stream": False, "turbo_sync_free_moe_stage": 1, "moe_router_dtype": "fp32"}),
}
