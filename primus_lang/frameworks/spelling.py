"""How Megatron-LM spells what primusc models: the one table every writer and reader of a Megatron setting
asks (emission, import-recipe, a training log's arguments block, the LLM gate, the published runs).

A setting is named as primusc's settings name it everywhere: the flag without ``--``, dashes as
underscores (``--tensor-model-parallel-size`` is ``tensor_model_parallel_size``); which flags exist at a
version, and what each takes, is ``frameworks.megatron``'s. Keys are primusc's names: a knob
(``ir.KNOBS``), a model card field, or a knob's part (``recompute.layers``).
"""

from __future__ import annotations

from typing import Any

# knob -> the Megatron setting that states it (the pipeline schedule has none of its own: interleaved is VPP > 1,
# Primus's others its pp_algorithm)
KNOBS: dict[str, str] = {
    "tp": "tensor_model_parallel_size",
    "pp": "pipeline_model_parallel_size",
    "vpp": "num_virtual_stages_per_pipeline_rank",
    "first_stage_layers": "decoder_first_pipeline_num_layers",
    "last_stage_layers": "decoder_last_pipeline_num_layers",
    "account_for_embedding": "account_for_embedding_in_pipeline_split",
    "account_for_loss": "account_for_loss_in_pipeline_split",
    "pipeline_layout": "pipeline_model_parallel_layout",
    "cp": "context_parallel_size",
    "cp_comm": "cp_comm_type",
    "cross_entropy": "cross_entropy_fusion_impl",  # with cross_entropy.fusion, the switch it needs
    "ep": "expert_model_parallel_size",
    "etp": "expert_tensor_parallel_size",
    "mbs": "micro_batch_size",
    "gbs": "global_batch_size",
    "seq_len": "seq_length",
    "precision": "fp8",  # with `fp4`: --fp8-format / --fp4-format, whose dests these are
    "fp8_recipe": "fp8_recipe",
    "fp8_param_gather": "fp8_param_gather",
    "recompute": "recompute_granularity",
    "offload_layers": "cpu_offloading_num_layers",
    "sharding": "use_distributed_optimizer",
    "sequence_parallel": "sequence_parallel",
    "attention": "attention_backend",
    "moe_dispatcher": "moe_token_dispatcher_type",
    "tp_comm_overlap": "tp_comm_overlap",
    "overlap_grad_reduce": "overlap_grad_reduce",
    "overlap_param_gather": "overlap_param_gather",
    "ep_comm_overlap": "overlap_moe_expert_parallel_comm",
    "cuda_graph": "cuda_graph_impl",
    "main_grad_dtype": "main_grads_dtype",
    "optimizer_dtype": "exp_avg_dtype",
}

def knob_of_setting(name: str) -> str | None:
    """The knob a Megatron setting states (`fp8` is `precision`, `use_distributed_optimizer` is `sharding`),
    from its flag (`--micro-batch-size`) or its dest; None where no knob states it."""
    dest = name.lstrip("-").replace("-", "_")
    return next((knob for knob, setting in KNOBS.items() if setting == dest), None)


def stated_by(name: str) -> str | None:
    """What of primusc's a Megatron setting (its flag or dest) states: a knob (``tp``), a knob's part
    (``recompute.layers``, ``precision.bf16``) or a model card field (``hidden``); None where primusc models
    none of it (a recipe's own setting, carried through). The card's features beyond ``CARD`` are the
    emitters' (``emit.CARD_ARGUMENTS``)."""
    dest = name.lstrip("-").replace("-", "_")
    parts = {part: setting for part, setting in PARTS.items() if part not in CARRIED_PARTS}
    return next((ours for table in (KNOBS, parts, CARD) for ours, setting in table.items() if setting == dest), None)


# The candidate's `attention` as megatron-core's --attention-backend (its AttnBackend names)
ATTENTION_BACKENDS = {"flash": "auto", "fa2": "flash", "unfused": "unfused"}
# and back, with megatron-core's other names: `fused` is cuDNN's fused kernel, `local` its own unfused one
ATTENTION_OF_BACKEND = {backend: knob for knob, backend in ATTENTION_BACKENDS.items()} | {
    "fused": "flash", "local": "unfused"}

# a knob's parts and companions: the other settings that write one knob's value
PARTS: dict[str, str] = {
    "recompute.method": "recompute_method",
    "recompute.layers": "recompute_num_layers",
    "recompute.modules": "recompute_modules",
    "vpp.layers": "num_layers_per_virtual_pipeline_stage",  # the older way to say VPP: layers per virtual stage
    "precision.fp4": "fp4",
    "precision.fp4_recipe": "fp4_recipe",
    "precision.bf16": "bf16",
    "precision.fp16": "fp16",
    "sharding.fsdp": "use_megatron_fsdp",
    "sharding.fsdp_strategy": "data_parallel_sharding_strategy",
    "moe_dispatcher.backend": "moe_flex_dispatcher_backend",
    "cross_entropy.fusion": "cross_entropy_loss_fusion",
    "cuda_graph.scope": "cuda_graph_scope",
    "cuda_graph.modules": "cuda_graph_modules",  # the scope's name from core_v0.18 (the old one its alias)
    "main_grad_dtype.bf16_reduce": "grad_reduce_in_bf16",
    "main_grad_dtype.megatron_fsdp": "megatron_fsdp_main_grads_dtype",  # Megatron-FSDP's, from core_v0.17
    "optimizer_dtype.precision_aware": "use_precision_aware_optimizer",
    "optimizer_dtype.second_moment": "exp_avg_sq_dtype",
    "precision.fp8_format": "fp8_format",  # the flag's own name, where a recipe writes it as a setting
    "precision.fp4_format": "fp4_format",
    "sharding.custom_fsdp": "use_custom_fsdp",  # core_v0.12's name of Megatron-FSDP
    "sharding.torch_fsdp2": "use_torch_fsdp2",
    "offload_layers.enable": "cpu_offloading",  # the switch beside the layer count
    "recompute.layer_ids": "recompute_layer_ids",  # Primus's: the layers to recompute, by number
    "schedule.algorithm": "pp_algorithm",  # Primus's pipeline schedules
    "schedule.patch": "patch_primus_pipeline",
}
# Primus's pipeline algorithms (`pp_algorithm` under `patch_primus_pipeline`; primus/configs/modules/megatron/
# primus_pipeline.yaml) -> the schedule knob; without the patch Megatron's own schedule runs (interleaved where VPP > 1)
PRIMUS_SCHEDULES: dict[str, str] = {"zero-bubble": "zero_bubble", "zbv-formatted": "zbv", "1f1b": "1f1b",
                                    "1f1b-interleaved": "interleaved"}


def schedule_of(vpp: int, algorithm: str | None = None) -> str | None:
    """The schedule a run with ``vpp`` virtual stages and Primus's patched ``algorithm`` (None: no patch) runs;
    None for an algorithm primusc does not model."""
    if algorithm is None:
        return "interleaved" if vpp > 1 else "1f1b"
    return PRIMUS_SCHEDULES.get(algorithm)


# settings of those above whose recipe value is carried to the launch: what primusc writes but does not
# read back, and Primus's listed recomputation, which the knob reads as a count (a primus launch runs the
# list where the candidate recomputes that count: emit.frameworks.Primus.unrun)
CARRIED_PARTS = frozenset({"sharding.fsdp_strategy", "moe_dispatcher.backend", "recompute.layer_ids"})

# model card field -> the Megatron setting that states it (the card's features beyond these are
# emit.CARD_ARGUMENTS and emit.MLA_ARGUMENTS)
CARD: dict[str, str] = {
    "num_layers": "num_layers",
    "hidden": "hidden_size",
    "ffn_hidden": "ffn_hidden_size",
    "heads": "num_attention_heads",
    "kv_heads": "num_query_groups",
    "head_dim": "kv_channels",
    "vocab": "vocab_size",
    "max_position_embeddings": "max_position_embeddings",
    "position": "position_embedding_type",
    "rope_theta": "rotary_base",
    "rotary_percent": "rotary_percent",
    "rope_scaling": "rope_scaling_factor",
    "rope_scaling.enable": "use_rope_scaling",
    "norm": "normalization",
    "tied_embeddings": "untie_embeddings_and_output_weights",
    "bias": "add_bias_linear",
    "qk_layernorm": "qk_layernorm",
    "dropout": "hidden_dropout",
    "attention_dropout": "attention_dropout",
    "moe.num_experts": "num_experts",
    "moe.top_k": "moe_router_topk",
    "moe.ffn_hidden": "moe_ffn_hidden_size",
    "moe.shared_ffn_hidden": "moe_shared_expert_intermediate_size",
    "moe.dense_layers": "moe_layer_freq",
    "moe.router_score": "moe_router_score_function",
    "moe.router_pre_softmax": "moe_router_pre_softmax",
    "moe.aux_loss_type": "moe_router_load_balancing_type",
    "moe.aux_loss": "moe_aux_loss_coeff",
    "moe.bias_balancing": "moe_router_enable_expert_bias",
    "moe.topk_scaling": "moe_router_topk_scaling_factor",
    "moe.router_groups": "moe_router_num_groups",
    "moe.router_group_topk": "moe_router_group_topk",
    "moe.grouped_gemm": "moe_grouped_gemm",
    "kv_heads.grouped": "group_query_attention",
    "activation.swiglu": "swiglu",
    "activation.squared_relu": "squared_relu",
    "activation.quick_geglu": "quick_geglu",
    "bias.disabled": "disable_bias_linear",
    "mtp_layers": "mtp_num_layers",
}

# other names Megatron and the frameworks around it give the same knobs: a log's arguments block prints the
# parsed namespace (VPP as virtual_pipeline_model_parallel_size), Bridge's fields and others' configs
ALIASES: dict[str, str] = {
    "virtual_pipeline_model_parallel_size": "vpp",
    "sequence_length": "seq_len",
}


def knob_of(setting: str) -> str | None:
    """The knob a Megatron setting (or one of its other names) states, None for any other setting."""
    for knob, name in KNOBS.items():
        if name == setting:
            return knob
    return ALIASES.get(setting)


def knob_behind(setting: str) -> str | None:
    """The knob a Megatron setting states or is a part of (``use_megatron_fsdp``: ``sharding``), None for
    a setting no knob writes."""
    part = next((key for key, name in PARTS.items() if name == setting), None)
    return knob_of(setting) or (part.split(".")[0] if part else None)


def knob_settings(knob: str, value: object) -> dict[str, Any]:
    """The Megatron settings a knob's value writes, for the knobs whose setting is the value itself and for
    ``cross_entropy``."""
    if knob == "cross_entropy":
        return cross_entropy_settings(str(value))
    return {KNOBS[knob]: value}


def card_settings(model: Any) -> dict[str, Any]:
    """The model card's settings a release's start-up rules read beside the knobs (``check``'s
    release rule): its MTP depth, None without MTP (Megatron's default)."""
    return {CARD["mtp_layers"]: model.mtp_layers or None}


def cross_entropy_settings(kernel: str) -> dict[str, Any]:
    """The Megatron settings the ``cross_entropy`` knob's ``kernel`` writes (none for ``unfused``, its default):
    the switch and the implementation it reads (``cross_entropy_kernel`` reads them back)."""
    if kernel == "unfused":
        return {}
    return {PARTS["cross_entropy.fusion"]: True, KNOBS["cross_entropy"]: kernel}


def cross_entropy_kernel(fused: bool, impl: str | None) -> str:
    """The ``cross_entropy`` knob Megatron's two settings give: its language module reads
    --cross-entropy-fusion-impl (native unless te) only under --cross-entropy-loss-fusion."""
    if not fused:
        return "unfused"
    return impl if impl in ("native", "te") else "native"
