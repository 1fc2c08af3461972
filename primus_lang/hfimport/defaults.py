"""What a Hugging Face config leaves to its configuration class: ``config.json`` omits a field whose
value is the class's default (``PretrainedConfig.to_diff_dict``), so a published config of such a model
lacks its vocabulary, context and RoPE base. The defaults are facts of transformers' classes, each
table named by its source; a value the config states always wins."""

from __future__ import annotations

import json
from typing import Any

import attrs

from primus_lang.hfimport.config import HfConfig

# model_type -> (the class, its defaults for the fields the mapping reads)
CLASS_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    # transformers models/gemma3/configuration_gemma3.py, Gemma3TextConfig.__init__
    "gemma3_text": ("Gemma3TextConfig", {
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1_000_000.0,
        "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh",
        "tie_word_embeddings": True,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
    }),
    # models/deepseek_v3/configuration_deepseek_v3.py, DeepseekV3Config.__init__; the router's sigmoid scores
    # with a correction bias are modeling_deepseek_v3.py's DeepseekV3TopkRouter, whatever a config says
    "deepseek_v3": ("DeepseekV3Config", {
        "vocab_size": 129_280, "hidden_size": 7168, "intermediate_size": 18_432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
        "n_routed_experts": 256, "routed_scaling_factor": 2.5, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "n_group": 8, "topk_group": 4,
        "num_experts_per_tok": 8, "first_k_dense_replace": 3, "norm_topk_prob": True, "hidden_act": "silu",
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
        "attention_bias": False, "scoring_func": "sigmoid", "topk_method": "noaux_tc",
    }),
    # models/gpt_oss/configuration_gpt_oss.py, GptOssConfig (its fields and default_theta)
    "gpt_oss": ("GptOssConfig", {
        "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201_088, "hidden_size": 2880,
        "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
        "sliding_window": 128, "tie_word_embeddings": False, "hidden_act": "silu",
        "max_position_embeddings": 131_072, "rms_norm_eps": 1e-5, "num_experts_per_tok": 4, "swiglu_limit": 7.0,
        "attention_bias": True, "rope_theta": 150_000.0,
    }),
    # models/glm4_moe (modular_glm4_moe.py), Glm4MoeConfig: its fields, and partial_rotary_factor 0.5 from
    # __post_init__
    "glm4_moe": ("Glm4MoeConfig", {
        "vocab_size": 151_552, "hidden_size": 4096, "intermediate_size": 10_944, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 131_072,
        "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "attention_bias": False, "moe_intermediate_size": 1408,
        "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "routed_scaling_factor": 1.0,
        "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "norm_topk_prob": True,
        "use_qk_norm": False, "partial_rotary_factor": 0.5,
    }),
    # models/gemma2/configuration_gemma2.py, Gemma2Config
    "gemma2": ("Gemma2Config", {
        "vocab_size": 256_000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
        "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "attention_bias": False,
        "query_pre_attn_scalar": 256, "sliding_window": 4096, "final_logit_softcapping": 30.0,
        "attn_logit_softcapping": 50.0,
    }),
    # models/llama4/configuration_llama4.py, Llama4TextConfig (its fields and default_theta)
    "llama4_text": ("Llama4TextConfig", {
        "vocab_size": 202_048, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16_384,
        "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "hidden_act": "silu", "max_position_embeddings": 131_072, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
        "num_experts_per_tok": 1, "num_local_experts": 16, "interleave_moe_layer_step": 1, "use_qk_norm": True,
        "no_rope_layer_interval": 4, "attention_chunk_size": 8192, "attention_bias": False, "rope_theta": 500_000.0,
    }),
}


def with_class_defaults(config: HfConfig, notes: list[str]) -> HfConfig:
    """``config`` with its class's defaults for the fields it leaves out, each one said in ``notes``."""
    found = CLASS_DEFAULTS.get(config.model_type)
    if found is None:
        return config
    cls, defaults = found
    absent = {k: v for k, v in defaults.items() if k not in config.data}
    if not absent:
        return config
    # written as config.json writes them (`true`, not Python's `True`)
    notes.append(f"{', '.join(f'{k} {json.dumps(v)}' for k, v in absent.items())}: transformers' {cls} defaults, "
                 "which config.json leaves out")
    return attrs.evolve(config, data={**absent, **config.data})
