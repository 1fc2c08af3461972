"""Which Megatron-LM settings the importer models (turns into the model card, a knob or the cluster), and
torchrun's own options. Whether a flag exists and what it takes is the version's own parser's answer
(``frameworks.megatron``); every setting a version has that is not modelled here is carried through.

Every name is the flag without ``--``, dashes as underscores (``setting_name``).
"""

from __future__ import annotations

from primus_lang.emit import CARD_ARGUMENTS, MLA_ARGUMENTS, MLA_SWITCH

# What the importer turns into the model card, a knob or the cluster.
MODELLED: frozenset[str] = frozenset({
    *(
        "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups",
        "kv_channels", "seq_length", "max_position_embeddings", "position_embedding_type", "rotary_base",
        "normalization", "vocab_size", "hidden_dropout", "attention_dropout", "num_experts",
        "moe_router_topk", "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size", "moe_layer_freq",
        "moe_router_score_function", "moe_router_load_balancing_type", "moe_aux_loss_coeff",
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "num_virtual_stages_per_pipeline_rank",
        "num_layers_per_virtual_pipeline_stage", "decoder_first_pipeline_num_layers",
        "decoder_last_pipeline_num_layers", "pipeline_model_parallel_layout", "context_parallel_size",
        "cp_comm_type", "expert_model_parallel_size", "expert_tensor_parallel_size", "micro_batch_size",
        "global_batch_size", "fp8_format", "fp8", "fp8_recipe", "fp4_format", "fp4", "fp4_recipe",
        "recompute_granularity", "recompute_method", "recompute_num_layers", "moe_token_dispatcher_type",
        "cuda_graph_impl", "attention_backend", "main_grads_dtype",
        "exp_avg_dtype", "exp_avg_sq_dtype", "pp_algorithm", "recompute_layer_ids",
    ),
    # the card features emission writes from one table (emit/arguments.py), read back from it
    *(a.dest for a in (*CARD_ARGUMENTS.values(), *MLA_ARGUMENTS.values())),
    MLA_SWITCH, "recompute_modules", "cuda_graph_scope",
    *(
        "group_query_attention", "swiglu", "squared_relu", "untie_embeddings_and_output_weights",
        "disable_bias_linear", "add_bias_linear", "qk_layernorm", "moe_grouped_gemm",
        "moe_router_enable_expert_bias", "account_for_embedding_in_pipeline_split",
        "account_for_loss_in_pipeline_split", "sequence_parallel", "use_distributed_optimizer",
        "use_megatron_fsdp", "use_custom_fsdp", "use_torch_fsdp2", "overlap_grad_reduce",
        "overlap_param_gather", "overlap_moe_expert_parallel_comm", "tp_comm_overlap", "bf16", "fp16",
        "use_precision_aware_optimizer", "patch_primus_pipeline", "grad_reduce_in_bf16",
        "fp8_param_gather",
    ),
})

def setting_name(option: str) -> str:
    """A flag's name in primusc's settings (a recipe's entries, a space's passthrough): the option without
    its dashes, with underscores (``--fp8-format`` is ``fp8_format``)."""
    return option.lstrip("-").replace("-", "_")


# torchrun's own options, read for the cluster's shape or ignored (they do not reach Megatron)
LAUNCHER_VALUES = frozenset({
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend", "rdzv_endpoint",
    "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "log_dir", "redirects", "tee",
    "local_addr", "start_method", "role", "local_ranks_filter", "logs_specs",
})
LAUNCHER_SWITCHES = frozenset({"standalone", "no_python", "run_path", "module", "m"})
LAUNCHERS = frozenset({"torchrun", "python", "python3", "torch.distributed.run", "torch.distributed.launch",
                       "-m", "env", "exec", "srun"})
