"""What Megatron-Bridge's recipe functions set, for the recipes ``import-recipe`` reads by name and the
recipe a bridge launch names: from the generated table of every pretraining recipe (frameworks.bridge,
evaluated by Bridge's own code), the settings that map to a primusc knob or run setting.

A recipe's ``comm_overlap`` config is applied at run time (``CommOverlapConfig.setup``,
training/comm_overlap.py): it writes its TP overlap over the model's (on at TP >= 2 with sequence
parallelism only), and with the distributed optimizer turns data-parallel overlap on whenever DP > 1
unless it says otherwise (without it, ddp's values stay); EP overlap is its own value, off unless set. The settings below are what that
leaves on the GPU count the recipe's name says (a library recipe: the count of the full-form recipe it
aliases).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from attrs import field, frozen

from primus_lang.frameworks import bridge
from primus_lang.ir.pipeline import layout_text

Value = bool | int | float | str | tuple[str, ...] | None


@frozen
class BridgeRecipe:
    name: str
    card: str  # the stdlib model card
    gpu: str  # the stdlib GPU the recipe is written for
    # the GPU count in its name (a library recipe: the count of the recipe it aliases, else the fewest its
    # parallel layout starts on)
    gpus: int
    source: str  # the module that exports it, at which Bridge release
    settings: dict[str, Value]
    # where the function sets a CommOverlapConfig ("" where it sets none): Bridge's setup writes its
    # overlap values over the model's and ddp's (emit/bridge.py, COMM_OVERLAP_PATHS)
    comm_overlap: str = ""
    model_class: str = ""  # the model config class its model is (which paths a launch may override)
    gpus_from: str = ""  # where ``gpus`` comes from, as import-recipe says it
    # its precision is a MixedPrecisionConfig (a launch may override ``mixed_precision.X``), not a
    # registered recipe's name; and the precision's fields, which its setup writes over model, optimizer
    # and ddp (``after_precision``)
    precision_is_config: bool = False
    precision: dict[str, Value] = field(factory=dict)
    # the ddp overlap fields its CommOverlapConfig sets from the launch's data-parallel size (on at DP > 1),
    # where it says nothing of them itself: ``settings`` holds them at ``gpus``, a launch on another count
    # may run the other value
    dp_overlap: tuple[str, ...] = ()


def _precision_name(settings: dict[str, Any], fields: dict[str, Any], version: str) -> str:
    """The registered mixed-precision recipe a recipe's precision is, as a launch names one: a registered
    name in Bridge's canonical spelling, a precision config the registered recipe of its GEMM precision and
    scaling (import reads the GEMM precision from either; emission names it only for another precision)."""
    from primus_lang.emit.bridge import (
        PRECISION_KNOBS,
        registered_precision,
        unmodelled_precision,
    )

    named = settings.get("mixed_precision")
    if isinstance(named, str):
        return bridge.precision_named(named, version) or named
    gemm = bridge.gemm_precision(fields)
    kept = {f: bool(fields.get(f)) for f in PRECISION_KNOBS}
    found = registered_precision(gemm, version, kept) if unmodelled_precision(fields) is None else None
    # no registered name: a marker import refuses (an FP16 config must not be read as BF16's)
    return found or f"{'fp16' if fields.get('fp16') else gemm[0]}:{gemm[1]}"


def precision_fields(settings: dict[str, Any], version: str) -> tuple[bool, dict[str, Any]]:
    """Whether a recipe's precision is a config (its fields overridable as ``mixed_precision.X``) rather than
    a registered recipe's name, and its fields: the name's as Bridge registers it."""
    name = settings.get("mixed_precision")
    if isinstance(name, str):
        return False, dict(bridge.precisions(version).get(bridge.precision_named(name, version) or name, {}))
    return True, {p.removeprefix("mixed_precision."): v for p, v in settings.items()
                  if p.startswith("mixed_precision.")}


def after_precision(settings: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """The settings as ``MixedPrecisionConfig.setup`` leaves them (training/mixed_precision.py): every field
    of the precision that the model, optimizer or ddp config has is written over theirs."""
    out = dict(settings)
    for section in PRECISION_SECTIONS:
        for name, value in fields.items():
            if f"{section}.{name}" in out:
                out[f"{section}.{name}"] = value
    return out


PRECISION_SECTIONS = ("model", "optimizer", "ddp")


_DP_OVERLAP = ("overlap_grad_reduce", "overlap_param_gather")


def _follows_dp(s: dict[str, Any]) -> tuple[str, ...]:
    """The ddp overlap fields ``CommOverlapConfig.setup`` decides from the data-parallel size (``_after_setup``)."""
    if not s.get("ddp.use_distributed_optimizer"):
        return ()
    return tuple(f"ddp.{f}" for f in _DP_OVERLAP if s.get(f"comm_overlap.{f}") is None)


def _after_setup(s: dict[str, Any], gpus: int) -> dict[str, Any]:
    """The overlap settings as ``CommOverlapConfig.setup`` leaves them on ``gpus`` GPUs."""
    out = dict(s)
    tp = int(s.get("model.tensor_model_parallel_size") or 1)
    pp = int(s.get("model.pipeline_model_parallel_size") or 1)
    cp = int(s.get("model.context_parallel_size") or 1)
    dp = max(1, gpus // (tp * pp * cp)) if gpus else 1
    tp_overlap = s.get("comm_overlap.tp_comm_overlap")
    out["model.tp_comm_overlap"] = bool(tp_overlap) and tp >= 2 and bool(s.get("model.sequence_parallel"))
    ep_overlap = s.get("comm_overlap.overlap_moe_expert_parallel_comm")
    out["model.overlap_moe_expert_parallel_comm"] = bool(ep_overlap)
    if s.get("ddp.use_distributed_optimizer"):  # without it, setup leaves ddp's values as the recipe set them
        for field in _DP_OVERLAP:
            said = s.get(f"comm_overlap.{field}")
            out[f"ddp.{field}"] = bool(said) if said is not None else dp > 1
    return out


@functools.cache
def recipes(version: str = bridge.DEFAULT_VERSION) -> dict[str, BridgeRecipe]:
    """Every recipe of the release whose model is a stdlib card (emit/bridge.py, BRIDGE_MODELS)."""
    from primus_lang.emit.bridge import BRIDGE_MODELS, read_paths

    cards = {stem: card for card, stem in BRIDGE_MODELS.items()}
    read = read_paths()
    names = bridge.recipe_names(version)
    out: dict[str, BridgeRecipe] = {}
    for name in names:
        # the longest stem: deepseek_v2_lite's recipes start with deepseek_v2's stem too
        stem = max((s for s in cards if name.startswith(s + "_pretrain")), key=len, default=None)
        found = bridge.recipe(name, version)
        if found is None:
            continue
        alias = "" if found.gpus or (stem is None and not _qualified(name, cards)) else _aliased(found, names, version)
        if stem is None and alias:
            # a library alias with a qualifier before `_pretrain` (`llama3_8b_128k_pretrain_config`, Bridge's name for
            # `llama3_8b_pretrain_64gpu_h100_bf16_128k_config`): the model of the recipe it is
            stem = max((s for s in cards if alias.startswith(s + "_pretrain")), key=len, default=None)
        if stem is None:
            continue
        if found.gpus:
            gpus, gpus_from = found.gpus, f"the recipe name's {found.gpus}gpu"
        elif alias:
            gpus, gpus_from = recipes_gpus(alias), f"the {recipes_gpus(alias)}gpu of `{alias}`, which it aliases"
        else:
            gpus = _smallest_world(found.settings)
            gpus_from = f"{gpus} GPUs, the fewest its parallel layout starts on (its name gives no count)"
        flat = {bridge.canonical(p): v for p, v in found.settings.items()}
        layout = flat.get(_LAYOUT)
        if isinstance(layout, list) and all(isinstance(stage, list) for stage in layout):
            # a recipe may give its layout as megatron-core's list of stages: read as the string form
            flat[_LAYOUT] = layout_text(layout)
        if flat.get(bridge.GRAPH_SCOPE) is None and bridge.GRAPH_MODULES in flat:
            flat[bridge.GRAPH_SCOPE] = _graph_modules(flat.pop(bridge.GRAPH_MODULES))
        is_config, fields = precision_fields(flat, version)
        settings = after_precision(_after_setup(flat, gpus) if found.comm_overlap else flat, fields)
        kept: dict[str, Value] = {p: _value(v) for p, v in settings.items() if p in read}
        kept["mixed_precision"] = _precision_name(flat, fields, version)
        out[name] = BridgeRecipe(name, cards[stem], found.gpu, gpus, f"{found.where} (Megatron-Bridge {version})",
                                 kept, f"{found.where} CommOverlapConfig" if found.comm_overlap else "",
                                 found.model_class, gpus_from, is_config,
                                 {f: _value(v) for f, v in fields.items()},
                                 _follows_dp(flat) if found.comm_overlap else ())
    return out


_LAYOUT = "model.pipeline_model_parallel_layout"
_ENUM_REPR = re.compile(r"<\w+\.(\w+): \d+>")


def _graph_modules(value: Any) -> Any:
    """cuda_graph_modules as the scope list: ``full`` is the whole layer (), enum members by name."""
    if value == "full":
        return []
    if isinstance(value, list):
        return [m.group(1) if (m := _ENUM_REPR.fullmatch(str(v))) else v for v in value]
    return value


def _qualified(name: str, cards: dict[str, str]) -> bool:
    """Whether a recipe name starts with a card's stem and names a pretraining recipe further on
    (`llama3_70b_64k_pretrain_config`, `nemotron_3_nano_gb200_pretrain_config`): one that may alias a
    full-form recipe of that model."""
    return "_pretrain" in name and any(name.startswith(s + "_") for s in cards)


def _aliased(found: bridge.Recipe, names: tuple[str, ...], version: str) -> str:
    """The full-form recipe a library alias is (same settings, a GPU count in its name), "" if none."""
    for other in names:
        full = bridge.recipe(other, version) if other != found.name and "gpu_" in other else None
        if full is not None and full.settings == found.settings and full.gpus:
            return other
    return ""


def recipes_gpus(name: str) -> int:
    m = re.search(r"_(\d+)gpu_", name)
    return int(m.group(1)) if m else 0


def _smallest_world(s: dict[str, Any]) -> int:
    """The fewest GPUs a recipe's layout starts on (a library recipe that names no count and aliases
    none): a multiple of TP·PP·CP and of ETP·EP·PP, as megatron-core's process groups need."""
    def size(name: str) -> int:
        v = s.get(f"model.{name}") or s.get(f"model.transformer.{name}")
        return int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1

    tp, pp = size("tensor_model_parallel_size"), size("pipeline_model_parallel_size")
    etp = size("expert_tensor_parallel_size") if s.get("model.expert_tensor_parallel_size") is not None else tp
    return math.lcm(tp * pp * size("context_parallel_size"), etp * size("expert_model_parallel_size") * pp)


# torch.dtype values as Megatron-LM's arguments spell them (a recipe holds torch.float32; a launch may
# write float32, torch.float32 or fp32, which Bridge's str_to_dtype all take)
DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8", "uint8": "fp8"}


def _value(v: Any) -> Value:
    if isinstance(v, str) and v.startswith("torch."):
        return DTYPES.get(v.removeprefix("torch."), v)
    if isinstance(v, list):
        return tuple(str(x) for x in v)
    return v if isinstance(v, bool | int | float | str) or v is None else str(v)


def comm_overlap_of(recipe: str, version: str = bridge.DEFAULT_VERSION) -> str:
    """Where the recipe sets a CommOverlapConfig, "" where it sets none (or is unknown)."""
    found = recipes(version).get(recipe)
    return found.comm_overlap if found is not None else ""


# The options both of Bridge's launchers spell alike, the expert TP size aside (-etp in run_recipe.py, -et in
# the performance launcher)
_SHAPE_OPTIONS: dict[str, str] = {
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
    "--expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
}
# run_recipe.py's convenience options (scripts/training/run_recipe.py, COMMON_OVERRIDE_FIELDS)
_CONVENIENCE: dict[str, str] = {
    **_SHAPE_OPTIONS, "-etp": "model.expert_tensor_parallel_size",
    "--lr": "optimizer.lr", "--min_lr": "optimizer.min_lr", "--warmup_iters": "scheduler.lr_warmup_iters",
    "--save_dir": "checkpoint.save", "--load_dir": "checkpoint.load", "--save_interval": "checkpoint.save_interval",
}
# run_recipe.py's runtime switches: they change how it runs, not the recipe
_SWITCHES = frozenset({"--dry-run", "--dry_run", "--deterministic", "--dump-env", "--dump_env"})

# The performance launcher (scripts/performance/setup_experiment.py, run_script.py and argument_parser.py):
# it names a flat recipe by its parts, ``<-mr>_<--task>_<-ng>gpu_<-g>_<precision>[_<variant>]_config``
# (utils/utils.py, _recipe_function_name), applies the trailing Hydra overrides, then these options
# over them (run_script.py, _apply_perf_recipe_overrides; utils/overrides.py, set_user_overrides).
_PERF_SELECTORS: dict[str, str] = {
    "-m": "family", "--model_family_name": "family", "-mr": "recipe", "--model_recipe_name": "recipe",
    "-ng": "gpus", "--num_gpus": "gpus", "-g": "gpu", "--gpu": "gpu", "-c": "precision", "--compute_dtype": "precision",
    "--task": "task", "-cv": "variant", "--config_variant": "variant", "-gn": "gpus_per_node",
    "--gpus_per_node": "gpus_per_node", "--domain": "domain",
}
_PERF_PRECISIONS = {"bf16": "bf16", "fp8_cs": "fp8cs", "fp8_ds": "fp8ds", "fp8_mx": "fp8mx", "fp8_sc": "fp8sc",
                   "nvfp4": "nvfp4"}
# set_user_overrides also turns sequence parallelism on exactly when TP > 1
_PERF_OPTIONS: dict[str, str] = {**_SHAPE_OPTIONS, "-et": "model.expert_tensor_parallel_size"}
# where and how the job runs, not what it trains: the emitted launch files and the site say these
_PERF_SITE_VALUES = frozenset({
    "-a", "--account", "-p", "--partition", "-t", "--time_limit", "-i", "--container_image", "-nh", "--nemo_home",
    "-hf", "--hf_token", "-l", "--log_dir", "--detach", "--max_retries", "-cm", "--custom_mounts",
    "-ce", "--custom_env_vars", "-E", "--env", "-cs", "--custom_srun_args", "--gres", "--additional_slurm_params",
    "--packager", "--enable_pct_binding", "--preempt_time", "-wdk", "--wandb_key", "-wdp", "--wandb_project_name",
    "-wde", "--wandb_entity_name", "-wdj", "--wandb_experiment_name", "-wds", "--wandb_save_dir",
    "--save_config_filepath", "-vb", "--enable_vboost", "-lgc", "--lock_gpu_freq", "-lmc", "--peak_mem_clk",
})
_PERF_SITE_SWITCHES = frozenset({"-d", "--dryrun", "--offline", "--dump_env", "-en", "--enable_nsys"})


# What the performance launcher's options beyond the recipe's shape do to it (scripts/performance/utils/
# overrides.py, set_user_overrides, v0.6.0), by dest, as the Hydra overrides they amount to; applied after the
# line's own overrides, as run_script.py applies them. A value its parser refuses is said.
_TRUE, _FALSE = ("true", "1", "t", "yes", "y"), ("false", "0", "f", "no", "n")  # argument_parser.py, bool_arg
_GRAPH_SCOPES = frozenset({"attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba", "full_iteration"})


def _switch(on: list[tuple[str, str]]) -> Callable[[str], list[tuple[str, str]] | str]:
    def effect(value: str) -> list[tuple[str, str]] | str:
        if value.lower() in _TRUE:
            return on
        return [] if value.lower() in _FALSE else f"`{value}` is no true/false"
    return effect


def _count(on: Callable[[int], list[tuple[str, str]]]) -> Callable[[str], list[tuple[str, str]] | str]:
    def effect(value: str) -> list[tuple[str, str]] | str:
        return on(int(value)) if value.isascii() and value.isdigit() else f"`{value}` is no whole number"
    return effect


def _graph_impl(value: str) -> list[tuple[str, str]] | str:
    if value not in ("none", "local", "transformer_engine", "full_iteration"):
        return f"`{value}` is no CUDA graph implementation (none, local, transformer_engine, full_iteration)"
    tracker = "false" if value == "none" else "true"
    return [("model.cuda_graph_impl", value), ("rng.te_rng_tracker", tracker), ("model.use_te_rng_tracker", tracker)]


def _graph_scope(value: str) -> list[tuple[str, str]] | str:
    scopes = value.split(",")
    if not set(scopes) <= _GRAPH_SCOPES:
        return f"`{value}` names no CUDA graph scope ({', '.join(sorted(_GRAPH_SCOPES))})"
    if "full_iteration" in scopes:  # set_full_iteration_cuda_graph, on the megatron-core Bridge v0.6 pins
        return [("model.cuda_graph_impl", "full_iteration"), (bridge.GRAPH_MODULES, "[]"),
                (bridge.GRAPH_SCOPE, "null"), ("rerun_state_machine.check_for_nan_in_loss", "false")]
    return [(bridge.GRAPH_MODULES, f"[{','.join(scopes)}]"), (bridge.GRAPH_SCOPE, "null")]


def _modules(value: str) -> list[tuple[str, str]] | str:
    return [("model.recompute_modules", f"[{value}]"), ("model.recompute_granularity", "selective")]


PERF_EFFECTS: dict[str, Callable[[str], list[tuple[str, str]] | str]] = {
    "use_megatron_fsdp": _switch([("ddp.use_megatron_fsdp", "true"),
                                  ("ddp.data_parallel_sharding_strategy", "optim_grads_params"),
                                  ("ddp.keep_fp8_transpose_cache", "false"), ("ddp.average_in_collective", "false"),
                                  ("model.init_model_with_meta_device", "true"),
                                  ("model.gradient_accumulation_fusion", "true")]),
    "nccl_ub": _switch([("ddp.nccl_ub", "true"), ("ddp.average_in_collective", "false")]),
    "moe_a2a_overlap": _switch([("comm_overlap.overlap_moe_expert_parallel_comm", "true"),
                                ("comm_overlap.delay_wgrad_compute", "true"), ("model.moe_shared_expert_overlap", "false")]),
    "cuda_graph_impl": _graph_impl,
    "cuda_graph_scope": _graph_scope,
    "recompute_num_layers": _count(lambda n: [("model.recompute_granularity", "full"), ("model.recompute_method", "block"),
                                              ("model.recompute_num_layers", str(n))]),
    "recompute_modules": _modules,
    "activation_offload_layers": _count(lambda n: [("model.cpu_offloading", "true"),
                                                   ("model.cpu_offloading_weights", "false"),
                                                   ("model.cpu_offloading_num_layers", str(n))] if n > 0 else []),
    "num_layers": _count(lambda n: [("model.num_layers", str(n))]),
    "hidden_size": _count(lambda n: [("model.hidden_size", str(n))]),
    "num_moe_experts": _count(lambda n: [("model.num_moe_experts", str(n))]),
    "save_interval": _count(lambda n: [("checkpoint.save_interval", str(n))]),
    "most_recent_k": _count(lambda n: [("checkpoint.most_recent_k", str(n))]),
    "save_dir": lambda v: [("checkpoint.save", v)],
    "load_dir": lambda v: [("checkpoint.load", v)],
    "pretrained_checkpoint": lambda v: [("checkpoint.pretrained_checkpoint", v)],
}
# the performance launcher's options that change how the job is run, watched or profiled, not what it trains:
# its Slurm, Kubeflow, logging and testing groups, and these of its performance group
PERF_LAUNCH_GROUPS = frozenset({"Slurm arguments", "Kubeflow arguments", "Logging arguments", "Testing arguments"})
PERF_LAUNCH_ONLY = frozenset({
    "enable_nsys", "export_nsys_sqlite", "nsys_trace", "nsys_extra_args", "profiling_gpu_metrics", "profiling_ranks",
    "profiling_start_step", "profiling_stop_step", "pytorch_profiler", "record_memory_history", "enable_vboost",
    "lock_gpu_freq", "peak_mem_clk", "detach", "max_retries", "hf_token", "nemo_home", "offline", "dryrun",
    "list_config_variants"})  # not `use_recipes`: it runs the library recipe in place of the performance one


@frozen
class Launchers:
    """What Megatron-Bridge's two launchers accept besides Hydra overrides, as import-recipe reads them."""

    convenience: dict[str, str]  # run_recipe.py option -> the recipe path it sets
    switches: frozenset[str]  # run_recipe.py switches that change how it runs, not the recipe
    perf_selectors: dict[str, str]  # performance launcher option -> the part of the recipe name it gives
    perf_precisions: dict[str, str]  # its -c value -> the precision in the recipe's name
    perf_options: dict[str, str]  # its option -> the recipe path it sets
    perf_site_values: frozenset[str]  # its options that say where the job runs (they take a value)
    perf_site_switches: frozenset[str]  # and the same without a value


LAUNCHERS = Launchers(_CONVENIENCE, _SWITCHES, _PERF_SELECTORS, _PERF_PRECISIONS, _PERF_OPTIONS, _PERF_SITE_VALUES,
                      _PERF_SITE_SWITCHES)
