"""What Megatron-Bridge's recipe functions set, for the recipes ``import-recipe`` reads by name.

Bridge's recipes are Python (``src/megatron/bridge/recipes`` and ``perf_recipes`` at
NVIDIA-NeMo/Megatron-Bridge 067f987); primusc never runs them, so the settings a space needs from
a recipe are written here by hand from the function's source, as ConfigContainer paths and the
values the function leaves there. A flat performance recipe is its library base
(``llama3_8b_pretrain_config`` is ``llama3_8b_pretrain_2gpu_h100_bf16_config``) with its own
assignments and ``_benchmark_common``'s (perf_recipes/_common.py) on top, which is how the entries
below were read. Only what maps to a primusc knob or run setting is listed.

``overlap`` values: with a ``comm_overlap`` config and the distributed optimizer, Bridge's
CommOverlapConfig.setup turns data-parallel overlap on whenever DP > 1 (comm_overlap.py,
``_get_optimizer_overlap_cfgs``); these recipes all run DP 8.
"""

from __future__ import annotations

from attrs import frozen

Value = bool | int | float | str | tuple[str, ...] | None


@frozen
class BridgeRecipe:
    name: str
    card: str  # the stdlib model card
    gpu: str  # the stdlib GPU the recipe is written for
    gpus: int  # the GPU count in its name
    source: str  # the file and function it was read from
    settings: dict[str, Value]
    # where the function sets a CommOverlapConfig ("" where it sets none): Bridge's setup writes its
    # overlap values over the model's and ddp's (emit/bridge.py, COMM_OVERLAP_PATHS)
    comm_overlap: str = ""


# _benchmark_common: 50 iterations, 10 warm-up, decay over the run, a log line each step, manual GC
_BENCHMARK_RUN: dict[str, Value] = {
    "train.train_iters": 50, "scheduler.lr_warmup_iters": 10, "scheduler.lr_decay_iters": 50,
    "logger.log_interval": 1, "train.manual_gc": True, "train.manual_gc_interval": 100,
}
# llama3_8b_pretrain_2gpu_h100_bf16_config (recipes/llama/h100/llama3.py), the base of the Llama 3 8B
# performance recipes, as the performance recipes leave it
_LLAMA3_8B_BASE: dict[str, Value] = {
    "dataset.seq_length": 8192, "model.seq_length": 8192, "model.pipeline_model_parallel_layout": None,
    "model.recompute_granularity": None, "ddp.use_distributed_optimizer": True, "ddp.use_megatron_fsdp": False,
    "ddp.overlap_grad_reduce": True, "ddp.overlap_param_gather": True, "model.tp_comm_overlap": False,
    "model.cuda_graph_impl": "none",
}

RECIPES: dict[str, BridgeRecipe] = {r.name: r for r in (
    BridgeRecipe(
        "llama3_8b_pretrain_8gpu_h100_fp8cs_config", "llama3_8b", "h100", 8,
        "src/megatron/bridge/perf_recipes/llama/h100/llama3.py",
        {**_LLAMA3_8B_BASE, **_BENCHMARK_RUN,
         "mixed_precision": "bf16_with_fp8_current_scaling_mixed",
         "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
         "model.context_parallel_size": 1, "model.virtual_pipeline_model_parallel_size": None,
         "model.sequence_parallel": False, "train.global_batch_size": 128, "train.micro_batch_size": 1,
         "model.recompute_granularity": "full", "model.recompute_method": "block", "model.recompute_num_layers": 5},
        "perf_recipes/llama/h100/llama3.py:91 CommOverlapConfig(tp_comm_overlap=False)",
    ),
    BridgeRecipe(
        "llama3_8b_pretrain_8gpu_h100_bf16_config", "llama3_8b", "h100", 8,
        "src/megatron/bridge/perf_recipes/llama/h100/llama3.py",
        {**_LLAMA3_8B_BASE, **_BENCHMARK_RUN,
         "mixed_precision": "bf16_mixed",
         "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
         "model.context_parallel_size": 2, "model.virtual_pipeline_model_parallel_size": None,
         "model.sequence_parallel": False, "train.global_batch_size": 128, "train.micro_batch_size": 1},
        "perf_recipes/llama/h100/llama3.py:49 CommOverlapConfig(tp_comm_overlap=False)",
    ),
    BridgeRecipe(
        "llama3_8b_pretrain_8gpu_gb200_fp8cs_config", "llama3_8b", "gb200", 8,
        "src/megatron/bridge/perf_recipes/llama/gb200/llama3.py",
        {**_LLAMA3_8B_BASE, **_BENCHMARK_RUN,
         "mixed_precision": "bf16_with_fp8_current_scaling_mixed",
         "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
         "model.context_parallel_size": 1, "model.virtual_pipeline_model_parallel_size": None,
         "model.sequence_parallel": False, "train.global_batch_size": 128, "train.micro_batch_size": 2,
         "model.cuda_graph_impl": "local", "model.cuda_graph_scope": ("full_iteration",),
         "rng.te_rng_tracker": True},
        "perf_recipes/llama/gb200/llama3.py:96 CommOverlapConfig(tp_comm_overlap=False)",
    ),
    BridgeRecipe(
        "llama3_8b_pretrain_8gpu_gb200_bf16_config", "llama3_8b", "gb200", 8,
        "src/megatron/bridge/perf_recipes/llama/gb200/llama3.py",
        {**_LLAMA3_8B_BASE, **_BENCHMARK_RUN,
         "mixed_precision": "bf16_mixed",
         "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
         "model.context_parallel_size": 1, "model.virtual_pipeline_model_parallel_size": None,
         "model.sequence_parallel": False, "train.global_batch_size": 128, "train.micro_batch_size": 2,
         "model.cuda_graph_impl": "local", "model.cuda_graph_scope": ("full_iteration",),
         "rng.te_rng_tracker": True},
        "perf_recipes/llama/gb200/llama3.py:54 CommOverlapConfig(tp_comm_overlap=False)",
    ),
)}



def _library(card: str, target: str, gpus: int, source: str, comm_overlap: str,
             settings: dict[str, Value]) -> BridgeRecipe:
    from primus_lang.emit.bridge import BRIDGE_MODELS

    return BridgeRecipe(f"{BRIDGE_MODELS[card]}_pretrain_config", card, "h100", gpus, f"{source} {target}",
                        settings, comm_overlap)


# The library names ``<stem>_pretrain_config`` (emit/bridge.py BRIDGE_MODELS), what a bridge launch of
# a stdlib card runs: each is an alias of an H100 BF16 recipe with a fixed GPU count
# (``recipes/<family>/<family>.py`` imports ``<stem>_pretrain_<N>gpu_h100_bf16_config as
# <stem>_pretrain_config``). Read from the function at BRIDGE_COMMIT (a function that starts from
# another recipe, as Qwen3 8B's and 30B-A3B's do, over that one's), and from _pretrain_common
# (recipes/common.py) for what it leaves: global batch 32, micro-batch 2, sequence 4096, the
# distributed optimizer with both overlaps, bf16_mixed. Where the function sets a CommOverlapConfig
# the overlap values are what its setup leaves: TP overlap only at TP >= 2 with sequence
# parallelism, data-parallel overlap exactly when the recipe's GPU count leaves DP > 1, EP overlap off.
LIBRARY: dict[str, BridgeRecipe] = {r.name: r for r in (
    _library("llama2_7b", "llama2_7b_pretrain_2gpu_h100_bf16_config", 2,
             "src/megatron/bridge/recipes/llama/h100/llama2.py",
             "recipes/llama/h100/llama2.py:119 CommOverlapConfig(tp_comm_overlap=False)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("llama3_8b", "llama3_8b_pretrain_2gpu_h100_bf16_config", 2,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 8192,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 2,
              "model.sequence_parallel": False, "model.seq_length": 8192, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("llama3_70b", "llama3_70b_pretrain_32gpu_h100_bf16_config", 32,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "recipes/llama/h100/llama3.py:796 CommOverlapConfig(tp_comm_overlap=True, userbuffers h8192 tp4)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 8192,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 4, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": 5, "model.context_parallel_size": 2,
              "model.sequence_parallel": True, "model.seq_length": 8192, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": True}),
    _library("llama3_1_8b", "llama31_8b_pretrain_2gpu_h100_bf16_config", 2,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 8192,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 2,
              "model.sequence_parallel": False, "model.seq_length": 8192, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("llama3_1_70b", "llama31_70b_pretrain_32gpu_h100_bf16_config", 32,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "recipes/llama/h100/llama3.py:1186 CommOverlapConfig(tp_comm_overlap=True, userbuffers h8192 tp4)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 131072,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 4, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": 5, "model.context_parallel_size": 2,
              "model.sequence_parallel": True, "model.seq_length": 131072, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": True}),
    _library("llama3_1_405b", "llama31_405b_pretrain_256gpu_h100_bf16_config", 256,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "recipes/llama/h100/llama3.py:1283 CommOverlapConfig(tp_comm_overlap=True, userbuffers h16384 tp8 cp2)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 131072,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 8, "model.pipeline_model_parallel_size": 8,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": 2, "model.context_parallel_size": 4,
              "model.sequence_parallel": True, "model.seq_length": 131072,
              "model.account_for_embedding_in_pipeline_split": True,
              "model.account_for_loss_in_pipeline_split": True, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": True}),
    _library("qwen3_30b_a3b", "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config", 16,
             "src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py",
             "recipes/qwen/h100/qwen3_moe.py:218 CommOverlapConfig(tp_comm_overlap=True)",
             {"train.global_batch_size": 1024, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 16, "model.expert_tensor_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096,
              "model.moe_token_dispatcher_type": "flex", "model.moe_flex_dispatcher_backend": "hybridep",
              "model.cuda_graph_impl": "transformer_engine",
              "model.cuda_graph_scope": ("moe_router", "moe_preprocess"),
              "model.recompute_granularity": None, "model.recompute_method": None,
              "model.recompute_num_layers": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False,
              "model.overlap_moe_expert_parallel_comm": False,
              "optimizer.use_precision_aware_optimizer": True, "rng.te_rng_tracker": True}),
    _library("gpt_oss_20b", "gpt_oss_20b_pretrain_16gpu_h100_bf16_config", 16,
             "src/megatron/bridge/recipes/gpt_oss/h100/gpt_oss.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 4, "model.expert_tensor_parallel_size": 1,
              "model.sequence_parallel": True, "model.seq_length": 4096,
              "model.account_for_embedding_in_pipeline_split": False,
              "model.account_for_loss_in_pipeline_split": False,
              "model.moe_token_dispatcher_type": "alltoall", "model.moe_flex_dispatcher_backend": "deepep",
              "model.cuda_graph_impl": "none", "model.recompute_granularity": None,
              "model.recompute_modules": None, "ddp.use_megatron_fsdp": False,
              "model.tp_comm_overlap": False}),
    _library("gpt_oss_120b", "gpt_oss_120b_pretrain_64gpu_h100_bf16_config", 64,
             "src/megatron/bridge/recipes/gpt_oss/h100/gpt_oss.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 16, "model.expert_tensor_parallel_size": 1,
              "model.sequence_parallel": True, "model.seq_length": 4096,
              "model.account_for_embedding_in_pipeline_split": False,
              "model.account_for_loss_in_pipeline_split": False,
              "model.moe_token_dispatcher_type": "alltoall", "model.moe_flex_dispatcher_backend": "deepep",
              "model.cuda_graph_impl": "none", "model.recompute_granularity": None,
              "model.recompute_modules": None, "ddp.use_megatron_fsdp": False,
              "model.tp_comm_overlap": False}),
    _library("qwen2_5_7b", "qwen25_7b_pretrain_2gpu_h100_bf16_config", 2,
             "src/megatron/bridge/recipes/qwen/h100/qwen2.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("qwen2_5_72b", "qwen25_72b_pretrain_32gpu_h100_bf16_config", 32,
             "src/megatron/bridge/recipes/qwen/h100/qwen2.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 8, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("qwen3_8b", "qwen3_8b_pretrain_16gpu_h100_bf16_config", 16,
             "src/megatron/bridge/recipes/qwen/h100/qwen3.py",
             "",
             {"train.global_batch_size": 1024, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("qwen3_32b", "qwen3_32b_pretrain_16gpu_h100_bf16_config", 16,
             "src/megatron/bridge/recipes/qwen/h100/qwen3.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 8, "model.pipeline_model_parallel_size": 2,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": "full", "model.recompute_method": "uniform",
              "model.recompute_num_layers": 1, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("llama3_2_1b", "llama32_1b_pretrain_1gpu_h100_bf16_config", 1,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 8192,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 8192, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("llama3_2_3b", "llama32_3b_pretrain_1gpu_h100_bf16_config", 1,
             "src/megatron/bridge/recipes/llama/h100/llama3.py",
             "",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 8192,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 8192, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("gemma2_2b", "gemma2_2b_pretrain_2gpu_h100_bf16_config", 2,
             "src/megatron/bridge/recipes/gemma/h100/gemma2.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 2, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("gemma2_9b", "gemma2_9b_pretrain_8gpu_h100_bf16_config", 8,
             "src/megatron/bridge/recipes/gemma/h100/gemma2.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 8, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("gemma2_27b", "gemma2_27b_pretrain_16gpu_h100_bf16_config", 16,
             "src/megatron/bridge/recipes/gemma/h100/gemma2.py",
             "",
             {"train.global_batch_size": 32, "train.micro_batch_size": 2, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": False,
              "ddp.overlap_param_gather": False, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 8, "model.pipeline_model_parallel_size": 2,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.sequence_parallel": False, "model.seq_length": 4096, "model.cuda_graph_impl": "none",
              "model.recompute_granularity": None, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False}),
    _library("deepseek_v2", "deepseek_v2_pretrain_128gpu_h100_bf16_config", 128,
             "src/megatron/bridge/recipes/deepseek/h100/deepseek_v2.py",
             "recipes/deepseek/h100/deepseek_v2.py:237 CommOverlapConfig(tp_comm_overlap=False)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 32, "model.sequence_parallel": False,
              "model.seq_length": 4096, "model.moe_token_dispatcher_type": "alltoall",
              "model.moe_flex_dispatcher_backend": "deepep", "model.cuda_graph_impl": "none",
              "model.recompute_granularity": "full", "model.recompute_method": "uniform",
              "model.recompute_num_layers": 1, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False,
              "model.overlap_moe_expert_parallel_comm": False}),
    _library("deepseek_v2_lite", "deepseek_v2_lite_pretrain_8gpu_h100_bf16_config", 8,
             "src/megatron/bridge/recipes/deepseek/h100/deepseek_v2.py",
             "recipes/deepseek/h100/deepseek_v2.py:115 CommOverlapConfig(tp_comm_overlap=False)",
             {"train.global_batch_size": 512, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
              "model.pipeline_model_parallel_layout": None,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 8, "model.sequence_parallel": False,
              "model.seq_length": 4096, "model.moe_token_dispatcher_type": "alltoall",
              "model.moe_flex_dispatcher_backend": "deepep", "model.cuda_graph_impl": "none",
              "model.recompute_granularity": "full", "model.recompute_method": "uniform",
              "model.recompute_num_layers": 1, "model.recompute_modules": None,
              "ddp.use_megatron_fsdp": False, "model.tp_comm_overlap": False,
              "model.overlap_moe_expert_parallel_comm": False}),
    _library("glm4_5_air", "glm45_air_106b_pretrain_32gpu_h100_bf16_config", 32,
             "src/megatron/bridge/recipes/glm/h100/glm45.py",
             "",
             {"train.global_batch_size": 2048, "train.micro_batch_size": 1, "dataset.seq_length": 4096,
              "ddp.use_distributed_optimizer": True, "ddp.overlap_grad_reduce": True,
              "ddp.overlap_param_gather": True, "mixed_precision": "bf16_mixed",
              "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 4,
              "model.pipeline_model_parallel_layout": None, "model.num_layers_in_first_pipeline_stage": 11,
              "model.num_layers_in_last_pipeline_stage": 11,
              "model.virtual_pipeline_model_parallel_size": None, "model.context_parallel_size": 1,
              "model.expert_model_parallel_size": 8, "model.expert_tensor_parallel_size": 1,
              "model.sequence_parallel": True, "model.seq_length": 4096,
              "model.account_for_embedding_in_pipeline_split": False,
              "model.account_for_loss_in_pipeline_split": False,
              "model.moe_token_dispatcher_type": "alltoall", "model.moe_flex_dispatcher_backend": "deepep",
              "model.cuda_graph_impl": "none", "model.recompute_granularity": "selective",
              "model.recompute_modules": None, "model.recompute_method": None,
              "model.recompute_num_layers": None, "ddp.use_megatron_fsdp": False,
              "model.tp_comm_overlap": False}),
)}
# the library recipes not recorded above, and why; where they set a CommOverlapConfig
UNRECORDED: dict[str, tuple[str, str]] = {
    'qwen3_235b_a22b': ('apply_flex_dispatcher_backend picks its dispatcher on the GPU it runs on', ''),
    'deepseek_v3': ('its MixedPrecisionConfig and pipeline layout come from helpers', 'recipes/deepseek/h100/deepseek_v3.py:228 CommOverlapConfig(tp_comm_overlap=False)'),
    'kimi_k2': ('its MixedPrecisionConfig, layout and optimizer come from helpers', 'recipes/kimi/h100/kimi_k2.py:189 CommOverlapConfig(tp_comm_overlap=False)'),
}
RECIPES.update(LIBRARY)


def comm_overlap_of(recipe: str) -> str:
    """Where the recipe sets a CommOverlapConfig, "" where it sets none (or is unknown)."""
    found = RECIPES.get(recipe)
    if found is not None:
        return found.comm_overlap
    from primus_lang.emit.bridge import BRIDGE_MODELS

    card = next((c for c, stem in BRIDGE_MODELS.items() if recipe == f"{stem}_pretrain_config"), None)
    return UNRECORDED[card][1] if card in UNRECORDED else ""


# run_recipe.py's convenience options (scripts/training/run_recipe.py, COMMON_OVERRIDE_FIELDS)
CONVENIENCE: dict[str, str] = {
    "-ms": "train.train_iters", "--max_steps": "train.train_iters",
    "-gb": "train.global_batch_size", "--global_batch_size": "train.global_batch_size",
    "-mb": "train.micro_batch_size", "--micro_batch_size": "train.micro_batch_size",
    "-sl": "dataset.seq_length", "--seq_length": "dataset.seq_length",
    "-tp": "model.tensor_model_parallel_size", "--tensor_model_parallel_size": "model.tensor_model_parallel_size",
    "-pp": "model.pipeline_model_parallel_size", "--pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
    "-cp": "model.context_parallel_size", "--context_parallel_size": "model.context_parallel_size",
    "-vp": "model.virtual_pipeline_model_parallel_size",
    "--virtual_pipeline_model_parallel_size": "model.virtual_pipeline_model_parallel_size",
    "-ep": "model.expert_model_parallel_size", "--expert_model_parallel_size": "model.expert_model_parallel_size",
    "-etp": "model.expert_tensor_parallel_size", "--expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
    "--lr": "optimizer.lr", "--min_lr": "optimizer.min_lr", "--warmup_iters": "scheduler.lr_warmup_iters",
    "--save_dir": "checkpoint.save", "--load_dir": "checkpoint.load", "--save_interval": "checkpoint.save_interval",
}
# run_recipe.py's runtime switches: they change how it runs, not the recipe
SWITCHES = frozenset({"--dry-run", "--dry_run", "--deterministic", "--dump-env", "--dump_env"})

# The performance launcher (scripts/performance/setup_experiment.py, run_script.py and argument_parser.py):
# it names a flat recipe by its parts, ``<-mr>_<--task>_<-ng>gpu_<-g>_<precision>[_<variant>]_config``
# (utils/utils.py, _recipe_function_name), applies the trailing Hydra overrides, then these options
# over them (run_script.py, _apply_perf_recipe_overrides; utils/overrides.py, set_user_overrides).
PERF_SELECTORS: dict[str, str] = {
    "-m": "family", "--model_family_name": "family", "-mr": "recipe", "--model_recipe_name": "recipe",
    "-ng": "gpus", "--num_gpus": "gpus", "-g": "gpu", "--gpu": "gpu", "-c": "precision", "--compute_dtype": "precision",
    "--task": "task", "-cv": "variant", "--config_variant": "variant", "-gn": "gpus_per_node",
    "--gpus_per_node": "gpus_per_node", "--domain": "domain",
}
PERF_PRECISIONS = {"bf16": "bf16", "fp8_cs": "fp8cs", "fp8_ds": "fp8ds", "fp8_mx": "fp8mx", "fp8_sc": "fp8sc",
                   "nvfp4": "nvfp4"}
PERF_OPTIONS: dict[str, str] = {
    "-ms": "train.train_iters", "--max_steps": "train.train_iters",
    "-gb": "train.global_batch_size", "--global_batch_size": "train.global_batch_size",
    "-mb": "train.micro_batch_size", "--micro_batch_size": "train.micro_batch_size",
    "-sl": "dataset.seq_length", "--seq_length": "dataset.seq_length",
    # set_user_overrides also turns sequence parallelism on exactly when TP > 1
    "-tp": "model.tensor_model_parallel_size", "--tensor_model_parallel_size": "model.tensor_model_parallel_size",
    "-pp": "model.pipeline_model_parallel_size", "--pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
    "-cp": "model.context_parallel_size", "--context_parallel_size": "model.context_parallel_size",
    "-vp": "model.virtual_pipeline_model_parallel_size",
    "--virtual_pipeline_model_parallel_size": "model.virtual_pipeline_model_parallel_size",
    "-ep": "model.expert_model_parallel_size", "--expert_model_parallel_size": "model.expert_model_parallel_size",
    "-et": "model.expert_tensor_parallel_size", "--expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
}
# where and how the job runs, not what it trains: the emitted launch files and the site say these
PERF_SITE_VALUES = frozenset({
    "-a", "--account", "-p", "--partition", "-t", "--time_limit", "-i", "--container_image", "-nh", "--nemo_home",
    "-hf", "--hf_token", "-l", "--log_dir", "--detach", "--max_retries", "-cm", "--custom_mounts",
    "-ce", "--custom_env_vars", "-E", "--env", "-cs", "--custom_srun_args", "--gres", "--additional_slurm_params",
    "--packager", "--enable_pct_binding", "--preempt_time", "-wdk", "--wandb_key", "-wdp", "--wandb_project_name",
    "-wde", "--wandb_entity_name", "-wdj", "--wandb_experiment_name", "-wds", "--wandb_save_dir",
    "--save_config_filepath", "-vb", "--enable_vboost", "-lgc", "--lock_gpu_freq", "-lmc", "--peak_mem_clk",
})
PERF_SITE_SWITCHES = frozenset({"-d", "--dryrun", "--offline", "--dump_env", "-en", "--enable_nsys"})
