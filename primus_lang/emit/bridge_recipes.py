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
    ),
    BridgeRecipe(
        "llama3_8b_pretrain_8gpu_h100_bf16_config", "llama3_8b", "h100", 8,
        "src/megatron/bridge/perf_recipes/llama/h100/llama3.py",
        {**_LLAMA3_8B_BASE, **_BENCHMARK_RUN,
         "mixed_precision": "bf16_mixed",
         "model.tensor_model_parallel_size": 1, "model.pipeline_model_parallel_size": 1,
         "model.context_parallel_size": 2, "model.virtual_pipeline_model_parallel_size": None,
         "model.sequence_parallel": False, "train.global_batch_size": 128, "train.micro_batch_size": 1},
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
    ),
)}

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
