"""The Megatron-LM arguments the importer knows: which it models, which it carries through, and
how many values each takes (Megatron-LM ``megatron/training/arguments.py``, core_v0.16.1).

Every name is the argparse ``dest`` (the flag without ``--``, dashes as underscores). A flag not
listed here is refused (P3122) rather than guessed: whether it takes a value decides how the rest
of the command line reads.
"""

from __future__ import annotations

from primus_lang.emit import CARD_ARGUMENTS, MLA_ARGUMENTS, MLA_SWITCH

SWITCH, VALUE, LIST = "switch", "value", "list"

# What the importer turns into the model card, a knob or the cluster.
MODELLED: dict[str, str] = {
    **dict.fromkeys((
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
        "exp_avg_dtype", "exp_avg_sq_dtype", "pp_algorithm",
    ), VALUE),
    # the card features emission writes from one table (emit/arguments.py), read back from it
    **{a.dest: SWITCH if a.switch else VALUE for a in (*CARD_ARGUMENTS.values(), *MLA_ARGUMENTS.values())},
    MLA_SWITCH: SWITCH,
    **dict.fromkeys(("recompute_modules", "cuda_graph_scope"), LIST),
    **dict.fromkeys((
        "group_query_attention", "swiglu", "squared_relu", "untie_embeddings_and_output_weights",
        "disable_bias_linear", "add_bias_linear", "qk_layernorm", "moe_grouped_gemm",
        "moe_router_enable_expert_bias", "account_for_embedding_in_pipeline_split",
        "account_for_loss_in_pipeline_split", "sequence_parallel", "use_distributed_optimizer",
        "use_megatron_fsdp", "use_custom_fsdp", "use_torch_fsdp2", "overlap_grad_reduce",
        "overlap_param_gather", "overlap_moe_expert_parallel_comm", "tp_comm_overlap", "bf16", "fp16",
        "use_precision_aware_optimizer", "patch_primus_pipeline",
    ), SWITCH),
}

# Megatron settings primusc does not model: kept and written to the launch files as they are.
PASSTHROUGH: dict[str, str] = {
    **dict.fromkeys((
        "train_iters", "train_samples", "lr", "min_lr", "lr_decay_style", "lr_decay_iters", "lr_warmup_iters",
        "lr_warmup_fraction", "lr_warmup_samples", "lr_decay_samples", "weight_decay", "adam_beta1",
        "adam_beta2", "adam_eps", "clip_grad", "init_method_std", "log_interval",
        "eval_iters", "eval_interval", "save_interval", "save", "load", "split", "tokenizer_type",
        "tokenizer_model", "vocab_file", "merge_file", "seed", "tensorboard_dir", "wandb_project",
        "wandb_exp_name", "wandb_save_dir", "ckpt_format", "exit_interval", "exit_duration_in_mins",
        "distributed_timeout_minutes", "data_cache_path", "num_workers", "transformer_impl",
        "cross_entropy_fusion_impl", "log_throughput_interval", "manual_gc_interval", "optimizer",
        "moe_router_dtype", "moe_z_loss_coeff", "moe_expert_capacity_factor", "moe_token_drop_policy",
        "moe_router_pre_softmax", "moe_router_num_groups", "moe_router_group_topk", "moe_router_topk_scaling_factor",
        "moe_router_bias_update_rate", "fp8_amax_history_len", "fp8_amax_compute_algo", "fp8_margin",
        "rotary_percent", "rotary_scaling_factor", "rope_scaling_factor", "tp_comm_overlap_cfg",
        "ddp_bucket_size", "timing_log_level", "log_params_norm", "data_path_cache", "eod_mask_loss_value",
        "init_method_xavier_uniform", "micro_batch_size_warmup", "dataloader_type",
        "use_checkpoint_args", "pipeline_model_parallel_split_rank", "moe_per_layer_logging",
        "moe_shared_expert_overlap_value", "hysteresis", "loss_scale", "initial_loss_scale",
        "min_loss_scale", "loss_scale_window", "profile_step_start", "profile_step_end",
        "num_distributed_optimizer_instances", "high_priority_stream_groups", "moe_flex_dispatcher_backend",
        "data_parallel_sharding_strategy",
        # DeepSeek launches: YaRN's settings (the cards do not represent YaRN) and the MTP loss weight
        "rope_type", "mscale", "mscale_all_dim", "mtp_loss_scaling_factor",
    ), VALUE),
    **dict.fromkeys(("data_path", "train_data_path", "valid_data_path", "test_data_path", "profile_ranks",
                     "rampup_batch_size"), LIST),
    **dict.fromkeys((
        "no_masked_softmax_fusion", "no_bias_gelu_fusion", "no_bias_swiglu_fusion", "no_bias_dropout_fusion",
        "no_rope_fusion", "no_async_tensor_model_parallel_allreduce", "no_load_optim", "no_load_rng",
        "no_save_optim", "no_save_rng", "use_rotary_position_embeddings", "apply_layernorm_1p",
        "cross_entropy_loss_fusion", "eod_mask_loss", "reset_position_ids", "reset_attention_mask",
        "log_throughput", "log_timers_to_tensorboard", "log_memory_to_tensorboard",
        "log_validation_ppl_to_tensorboard", "log_num_zeros_in_grad", "use_mcore_models", "no_create_attention_mask_in_dataloader",
        "manual_gc", "no_mmap_bin_files", "moe_shared_expert_overlap", "moe_use_legacy_grouped_gemm",
        "moe_permute_fusion", "moe_router_fusion", "fp8_param_gather", "use_legacy_models", "finetune",
        "distributed_backend_nccl", "profile", "use_pytorch_profiler", "align_grad_reduce",
        "align_param_gather", "ckpt_fully_parallel_save", "ckpt_fully_parallel_load", "async_save",
        "no_persist_layer_norm", "disable_tp_comm_split_ag", "disable_tp_comm_split_rs",
        "use_te_rng_tracker", "enable_experimental", "no_shared_fs", "calculate_per_token_loss",
        "overlap_p2p_comm", "no_overlap_p2p_comm", "defer_embedding_wgrad_compute", "use_tp_pp_dp_mapping",
        "delay_wgrad_compute", "moe_apply_probs_on_input", "use_cpu_initialization", "deterministic_mode",
        "no_gradient_reduce_in_fp32", "accumulate_allreduce_grads_in_fp32", "use_flash_attn", "te_rng_tracker",
        "moe_enable_deepep", "no_gradient_accumulation_fusion", "no_check_for_nan_in_loss_and_grad",
        "moe_pad_experts_for_cuda_graph_inference", "mock_data",
    ), SWITCH),
}

KNOWN: dict[str, str] = {**PASSTHROUGH, **MODELLED}

# torchrun's own options, read for the cluster's shape or ignored (they do not reach Megatron)
LAUNCHER_VALUES = frozenset({
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend", "rdzv_endpoint",
    "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "log_dir", "redirects", "tee",
    "local_addr", "start_method", "role", "local_ranks_filter", "logs_specs",
})
LAUNCHER_SWITCHES = frozenset({"standalone", "no_python", "run_path", "module", "m"})
LAUNCHERS = frozenset({"torchrun", "python", "python3", "torch.distributed.run", "torch.distributed.launch",
                       "-m", "env", "exec", "srun"})
