"""Megatron-Bridge: where primusc's settings live in Bridge's ConfigContainer, read both ways.

Bridge (NVIDIA-NeMo/Megatron-Bridge, at the release ``bridge_version`` names) launches a recipe function,
``scripts/training/run_recipe.py --recipe NAME``, followed by Hydra-style ``section.field=value``
overrides of the recipe's ConfigContainer (run_recipe.py's ``_collect_overrides``, applied by
``omegaconf_utils.process_config_with_overrides``, which refuses keys the container lacks).

``paths`` gives the Bridge fields that hold each setting primusc writes (the Megatron-LM argparse ``dest``
the other frameworks use, arguments.py): the one recorded field of the setting's name
(``frameworks.bridge.holding``), or ``PATHS`` where the recorded fields cannot say. Emission reads it
forwards; ``import-recipe`` reads it backwards for the settings it models (``READ``, ``dest_of``), so a
fact about a field lives in one place. What Bridge's recipe cannot take is named in ``UNEXPRESSIBLE`` or
has no field, and emission stops on it.

The fields a release's recipes accept, and what each recipe sets, are generated data
(``frameworks/bridge/recipes.json``, read by ``primus_lang.frameworks.bridge``): emission checks every
override against the fields of the launched recipe's model class at the launch's release.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

from primus_lang.emit.arguments import (
    ATTENTION_OF_BACKEND,
    CARD_ARGUMENTS,
    MLA_ARGUMENTS,
    MLA_SWITCH,
    Setting,
    Settings,
)
from primus_lang.frameworks import bridge, megatron, spelling
from primus_lang.ir.candidate import format_value

# the recipe entry point, relative to the checkout (NeMo containers keep it at /opt/Megatron-Bridge)
BRIDGE_SCRIPT = "scripts/training/run_recipe.py"

# stdlib card -> the model stem of Bridge's library recipe ``<stem>_pretrain_config``
# (src/megatron/bridge/recipes/<family>/*.py, exported at v0.6.0 and 067f987)
BRIDGE_MODELS: dict[str, str] = {
    "llama2_7b": "llama2_7b",
    "llama3_8b": "llama3_8b",
    "llama3_70b": "llama3_70b",
    "llama3_1_8b": "llama31_8b",
    "llama3_1_70b": "llama31_70b",
    "llama3_1_405b": "llama31_405b",
    "qwen3_30b_a3b": "qwen3_30b_a3b",
    "qwen3_235b_a22b": "qwen3_235b_a22b",
    "gpt_oss_20b": "gpt_oss_20b",
    "gpt_oss_120b": "gpt_oss_120b",
    "deepseek_v3": "deepseek_v3",
    # each recipe below builds its model with AutoBridge.from_hf_pretrained of the checkpoint the stdlib
    # card was read from (recipes/<family>/h100/*.py at 067f987); Kimi K2's loads
    # Kimi-K2-Instruct, whose config.json has the Base model's architecture
    "qwen2_5_7b": "qwen25_7b",
    "qwen2_5_72b": "qwen25_72b",
    "qwen3_8b": "qwen3_8b",
    "qwen3_32b": "qwen3_32b",
    "llama3_2_1b": "llama32_1b",
    "llama3_2_3b": "llama32_3b",
    "gemma2_2b": "gemma2_2b",
    "gemma2_9b": "gemma2_9b",
    "gemma2_27b": "gemma2_27b",
    "deepseek_v2": "deepseek_v2",
    "deepseek_v2_lite": "deepseek_v2_lite",
    "kimi_k2": "kimi_k2",
    "glm4_5_air": "glm45_air_106b",
    # recipes/nemotronh/nemotron_3_nano.py: Nemotron3NanoProvider, the card's source
    "nemotron_3_nano_30b_a3b": "nemotron_3_nano",
    "nemotron_3_super_120b_a12b": "nemotron_3_super",
    # recipes/gpt/<gpu>/gpt3_175b.py: a GPTModelProvider of the card's shape (96 layers, 12288 wide, 96 heads)
    "gpt3_175b": "gpt3_175b",
}
# Families of the stdlib without a Bridge library recipe at v0.6.0 and 067f987: Mistral 7B and Mixtral
# (recipes/ has ministral3 only), Phi-3/4, OLMo 2 (olmoe only), Gemma 3 27B (gemma3_1b only), Llama 2
# 13B/70B, Llama 4, Nemotron 4; Bridge emission names the cards it knows

# how Megatron spells the knobs, their parts and the card's fields (frameworks.spelling)
K, P, C = spelling.KNOBS, spelling.PARTS, spelling.CARD

# megatron-core's switch of activation offloading, which Megatron-LM sets from --cpu-offloading-num-layers
OFFLOAD_SWITCH = "model.cpu_offloading"

# Megatron dest -> the Bridge fields that hold it, where the recorded fields cannot say (every other setting
# lives in the one field of its own name, frameworks.bridge.holding): Bridge names the field otherwise, or
# several sections have a field of its name (the tokenizer's, the dataset's and dist's copies are set from
# the one here), or it is written to two. A flag of two fields is written to both: Bridge keeps the
# distributed optimizer in ddp and optimizer, the RNG tracker in rng and model.
PATHS: dict[str, tuple[str, ...]] = {
    K["tp"]: ("model.tensor_model_parallel_size",),
    K["vpp"]: ("model.virtual_pipeline_model_parallel_size",),
    K["first_stage_layers"]: ("model.num_layers_in_first_pipeline_stage",),
    K["last_stage_layers"]: ("model.num_layers_in_last_pipeline_stage",),
    K["cp"]: ("model.context_parallel_size",),
    K["mbs"]: ("train.micro_batch_size",),
    K["gbs"]: ("train.global_batch_size",),
    K["seq_len"]: ("dataset.seq_length", "model.seq_length"),
    K["sharding"]: ("ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"),
    P["sharding.fsdp"]: ("ddp.use_megatron_fsdp",),
    K["overlap_param_gather"]: ("ddp.overlap_param_gather",),
    "te_rng_tracker": ("rng.te_rng_tracker", "model.use_te_rng_tracker"),
    "check_for_nan_in_loss_and_grad": ("rerun_state_machine.check_for_nan_in_loss", "ddp.check_for_nan_in_grad"),
    # FP8 primary weights: the precision recipe's switch, which Bridge hands DDP as well
    K["fp8_param_gather"]: ("mixed_precision.fp8_param_gather", "ddp.fp8_param_gather"),
    "eval_iters": ("validation.eval_iters",),
    "eval_interval": ("validation.eval_interval",),
    "mock_data": ("dataset.mock",),
}

# The Megatron settings import-recipe reads from a Bridge recipe or launch (``dest_of``); any other field it
# carries through for the bridge target as a passthrough. What primusc models, and what it says it leaves out.
READ: frozenset[str] = frozenset({
    *PATHS,
    # parallel layout
    K["pp"], K["pipeline_layout"], K["account_for_embedding"], K["account_for_loss"], K["cp_comm"],
    K["sequence_parallel"], K["ep"], K["etp"], K["moe_dispatcher"], P["moe_dispatcher.backend"],
    K["ep_comm_overlap"],
    # recomputation and offloading (the switch read from a recipe only: a launch writes it from the count,
    # as Megatron-LM's arguments do)
    K["recompute"], P["recompute.method"], P["recompute.layers"], P["recompute.modules"], K["offload_layers"],
    P["offload_layers.enable"],
    # what a recipe may set whose cost primusc leaves out (recipes/unmodelled.py): read to be carried and said
    "fine_grained_activation_offloading", "moe_paged_stash", "num_distributed_optimizer_instances",
    "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity", "optimizer", "optimizer_cpu_offload",
    "distributed_timeout_minutes",
    # sharding and data-parallel overlap
    P["sharding.fsdp_strategy"], "gradient_accumulation_fusion", K["overlap_grad_reduce"], K["tp_comm_overlap"],
    # kernels and graphs
    K["attention"], K["cuda_graph"], P["cuda_graph.scope"],
    # megatron-core asks for it beside the full-iteration graph with EP (validate_args, core_v0.16.1)
    "moe_pad_experts_for_cuda_graph_inference",
    # HybridEP's static per-rank token budget, which a MoE's full-iteration graph needs (megatron.RANK_BUDGET)
    megatron.RANK_BUDGET_DEST, megatron.RANK_BUDGET_NEEDS,
    # optimizer precision
    P["optimizer_dtype.precision_aware"], K["main_grad_dtype"], K["optimizer_dtype"], P["optimizer_dtype.second_moment"],
    # the run: schedule, optimizer, logging, data, tokenizer, checkpoints
    "train_iters", "lr", "min_lr", "lr_decay_style", "lr_warmup_iters", "lr_decay_iters", "lr_warmup_fraction",
    "weight_decay", "adam_beta1", "adam_beta2", "adam_eps", "clip_grad", "init_method_std", "log_interval",
    "log_throughput", "tensorboard_dir", "wandb_project", "wandb_exp_name",
    # GPTDatasetConfig.data_path: Bridge's command-line form of the blend, split on whitespace
    "data_path", "split", "tokenizer_type", "tokenizer_model", "save", "load", "save_interval", "finetune",
    "ckpt_format", "manual_gc", "manual_gc_interval", "seed", "exit_interval", "exit_duration_in_mins",
    "moe_router_dtype", "moe_permute_fusion", "moe_router_fusion",
    # a benchmark's even split of tokens over experts: import-recipe reads it as `assume moe_imbalance = 1`
    "moe_router_force_load_balancing", "cross_entropy_loss_fusion", "cross_entropy_fusion_impl", "transformer_impl",
})


def _unheld(dest: str, version: str) -> str:
    """Why no field of the release's ConfigContainer is known to hold a Megatron setting."""
    several = bridge.named(dest, version)
    if several:
        return (f"Megatron-Bridge {version}'s ConfigContainer has several fields of its name "
                f"({', '.join(f'`{p}`' for p in several)}), and primusc does not know which holds it")
    return f"no field of Megatron-Bridge {version}'s ConfigContainer holds it"


def paths(dest: str, version: str = bridge.DEFAULT_VERSION) -> tuple[str, ...]:
    """The Bridge fields that hold a Megatron setting at ``version`` (``PATHS``, else the one field of its
    name); empty where none does."""
    if dest in PATHS:
        return PATHS[dest]
    held = bridge.holding(dest, version)
    return (held,) if held is not None else ()

# Megatron switches a Bridge field holds negated: --grad-reduce-in-bf16 is ddp.grad_reduce_in_fp32=False
NEGATED_PATHS: dict[str, str] = {P["main_grad_dtype.bf16_reduce"]: "ddp.grad_reduce_in_fp32"}

# The overlap settings a recipe's CommOverlapConfig writes over (training/comm_overlap.py, setup at
# v0.6.0 and 067f987): after the overrides, ConfigContainer validation runs ``comm_overlap.setup``, whose
# ``_apply_cfgs`` copies ``tp_comm_overlap`` and ``overlap_moe_expert_parallel_comm`` onto the model
# (False unless the config says otherwise) and, with the distributed optimizer, ``overlap_grad_reduce``
# and ``overlap_param_gather`` onto ddp and optimizer (True whenever DP > 1 unless it says otherwise).
# Where the recipe has one, the candidate's values go into it, else the recipe's win.
COMM_OVERLAP_PATHS: dict[str, str] = {
    K["tp_comm_overlap"]: "comm_overlap.tp_comm_overlap",
    K["ep_comm_overlap"]: "comm_overlap.overlap_moe_expert_parallel_comm",
    K["overlap_grad_reduce"]: "comm_overlap.overlap_grad_reduce",
    K["overlap_param_gather"]: "comm_overlap.overlap_param_gather",
}
# the model fields setup replaces outright; the ddp ones still hold without the distributed optimizer
_REPLACED_BY_COMM_OVERLAP = frozenset({"tp_comm_overlap", "overlap_moe_expert_parallel_comm"})

# Settings the recipe's model provider owns: Bridge builds the model from the card's Hugging Face
# config (AutoBridge.from_hf_pretrained), so a space writes the card as it stands, never these.
ARCHITECTURE = frozenset({
    # the card's fields and the card features emission writes from its own tables; an epsilon or a QKV bias
    # the card changes has no Bridge field, and is refused (P7001) rather than launched as the recipe's model.
    # The vocabulary too: the model keeps its Hugging Face config's unless the tokenizer's is larger
    # (training/setup.py, _validate_and_set_vocab_size), so tokenizer.vocab_size, which a mock-data recipe
    # sets below it, is carried as the recipe's and not read as the card's
    *spelling.CARD.values(),
    *(a.dest for a in (*CARD_ARGUMENTS.values(), *MLA_ARGUMENTS.values()) if a.field not in ("norm_epsilon", "qkv_bias")),
    MLA_SWITCH, "moe_latent_size", "spec", "is_hybrid_model", "hybrid_override_pattern", "mamba_num_heads",
    "mamba_head_dim", "mamba_state_dim", "mamba_num_groups", "mtp_hybrid_override_pattern",
})

PRECISION_DESTS = frozenset({"bf16", "fp8", "fp8_recipe", "fp4", "fp4_recipe"})

# Megatron settings with no Bridge field: why the recipe cannot take them
UNEXPRESSIBLE: dict[str, str] = {
    "train_data_path": "Bridge takes per-split corpora as `dataset.blend_per_split`, a list of (paths, weights) "
                       "pairs that primusc does not write; give one blend (`--var data_path`) instead",
    "valid_data_path": "see train_data_path",
    "test_data_path": "see train_data_path",
}

# What primusc leaves unwritten when off, written here as off: the recipe sets its own otherwise
# (Llama 3 70B's recipe interleaves, its FP8 ones recompute, the GB200 ones graph).
RESETS: dict[str, str] = {
    K["vpp"]: "null",
    K["pipeline_layout"]: "null",
    K["first_stage_layers"]: "null",
    K["last_stage_layers"]: "null",
    K["recompute"]: "null",
    K["offload_layers"]: "0",
    P["sharding.fsdp"]: "false",
    K["cuda_graph"]: "none",
    P["optimizer_dtype.precision_aware"]: "false",
}

# RESETS' precision-aware optimizer stays as the launched recipe has it where the recipe runs it on FP32
# state, which is the candidate's (Qwen3's performance recipes: TE's fused Adam, master weights stored as
# remainders; emit/frameworks.py, Bridge.overrides); a recipe's state below FP32 needs it off
_FP32 = "torch.float32"
_OPTIMIZER_STATE = ("optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype", "optimizer.main_params_dtype")


def keeps_precision_aware(recipe_settings: Mapping[str, object]) -> bool:
    """Whether a recipe's own precision-aware optimizer runs what an FP32-state candidate asks for."""
    return (recipe_settings.get("optimizer.use_precision_aware_optimizer") is True
            and all(recipe_settings.get(path, _FP32) == _FP32 for path in _OPTIMIZER_STATE))

# A recipe's setting that Bridge asserts needs a knob on, turned off beside it where the candidate turns
# the knob off: (knob, (the setting's path, its value off)). CommOverlapConfig asserts that
# delay_wgrad_compute needs overlap_moe_expert_parallel_comm (comm_overlap.py, v0.6.0), which
# DeepSeek-V3's performance recipes set together.
NEEDS: dict[str, tuple[str, str]] = {
    K["ep_comm_overlap"]: ("comm_overlap.delay_wgrad_compute", "false"),
}

# what Hydra's override grammar reads as a bare word; anything else is double-quoted
_PLAIN = re.compile(r"[A-Za-z0-9_./-]+")

# Megatron's defaults for knobs primusc leaves unwritten at them, written where the launched recipe holds
# another value (emit/frameworks.py, Bridge.resets): the recipe's own stand otherwise
BRIDGE_DEFAULTS: dict[str, str] = {
    K["main_grad_dtype"]: "fp32",
    K["optimizer_dtype"]: "fp32",
    P["optimizer_dtype.second_moment"]: "fp32",
    K["cp_comm"]: "p2p",
    # a recipe's Transformer Engine cross-entropy (Llama 3's performance recipes), for an unfused candidate
    P["cross_entropy.fusion"]: "false",
    K["cross_entropy"]: "native",
}

# A space's passthrough names a Bridge field that no Megatron argument holds as ``bridge__`` and the
# field's path with ``__`` for each dot (``bridge__comm_overlap__tp_comm_bootstrap_backend``): a
# passthrough name is one word of the language. ``bridge__recipe`` is the recipe function itself.
PASSTHROUGH_PREFIX = "bridge__"
RECIPE_KEY = PASSTHROUGH_PREFIX + "recipe"


def bridge_passthrough(key: str) -> str | None:
    """The Bridge field a passthrough name stands for ("" for the recipe), or None for a Megatron one."""
    if not key.startswith(PASSTHROUGH_PREFIX):
        return None
    if key == RECIPE_KEY:
        return ""
    return key.removeprefix(PASSTHROUGH_PREFIX).replace("__", ".")


def passthrough_key(path: str) -> str:
    return PASSTHROUGH_PREFIX + path.replace(".", "__")


def hydra_text(value: bool | int | float | str) -> str:
    """A carried value as the override writes it: text is the recipe's Hydra text, kept as written."""
    if isinstance(value, str):
        return value
    return hydra_value(value)


def recorded_fields(version: str = bridge.DEFAULT_VERSION) -> frozenset[str]:
    """Every ``section.field`` a recipe of the release may be given (frameworks.bridge, any model class),
    and ``mixed_precision=NAME`` for each precision recipe it registers."""
    return bridge.fields(version) | {f"mixed_precision={name}" for name in bridge.precisions(version)}


def dest_of(path: str) -> str | None:
    """The Megatron setting import reads a Bridge field as (``READ``; the first field of a pair names it),
    else None; a negated one (``NEGATED_PATHS``) is not: ``negated_dest_of`` names it."""
    return _dests().get(path)


def negated_dest_of(path: str) -> str | None:
    return next((dest for dest, p in NEGATED_PATHS.items() if p == path), None)


def read_paths() -> frozenset[str]:
    """Every Bridge field import reads as a Megatron setting, at any release, negated or not."""
    return frozenset(_dests()) | set(NEGATED_PATHS.values())


@functools.cache
def _dests() -> dict[str, str]:
    out: dict[str, str] = {}
    for dest in sorted(READ):
        for version in bridge.version_names():
            out.update((path, dest) for path in paths(dest, version))
    out.update((path, dest) for dest, path in COMM_OVERLAP_PATHS.items())
    return out


# The MixedPrecisionConfig fields primusc's knobs set, and each knob's value for them: the precision's setup
# writes its fields over ddp's and the optimizer's at run time (training/mixed_precision.py,
# update_config_with_precision_overrides), so a ddp override of them alone is lost
# (the field's value the settings mean, the knob setting that means a value of the field)
PRECISION_KNOBS: dict[str, tuple[Callable[[Settings], bool], Callable[[bool], tuple[str, object]]]] = {
    "grad_reduce_in_fp32": (
        lambda s: not (s.get(P["main_grad_dtype.bf16_reduce"], False) or s.get(K["main_grad_dtype"]) == "bf16"),
        lambda v: ("main_grad_dtype", "fp32" if v else "bf16")),
    "fp8_param_gather": (lambda s: bool(s.get(K["fp8_param_gather"], False)), lambda v: ("fp8_param_gather", v)),
}


def _knob_text(setting: tuple[str, object]) -> str:
    knob, value = setting
    return f"{knob} = {format_value(value)}"


def precision_repairs(settings: Settings, fields: Mapping[str, object]) -> dict[str, object]:
    """The knob values a registered precision of ``fields`` runs where the settings ask otherwise, which no
    override can change (``precision_overrides``' refusals, as knob settings): what a plan whose winner a
    named precision cannot express may launch instead (``Bridge.repairs``)."""
    out: dict[str, object] = {}
    for field, (wanted, setting) in PRECISION_KNOBS.items():
        have = bool(fields.get(field))
        if wanted(settings) != have:
            knob, value = setting(have)
            out[knob] = value
    return out


def precision_overrides(settings: Settings, precision: str, is_config: bool,
                        fields: Mapping[str, object]) -> tuple[list[tuple[str, str]], list[str]]:
    """The ``mixed_precision.X`` overrides the knobs need over the precision the launch runs
    (``precision``: its registered name; ``is_config``: the recipe's own MixedPrecisionConfig, whose
    fields a launch may override, with ``fields`` its values); and why a registered one cannot be
    changed (Hydra cannot override a field of a precision given by name)."""
    out: list[tuple[str, str]] = []
    problems: list[str] = []
    for field, (wanted, setting) in PRECISION_KNOBS.items():
        want, have = wanted(settings), bool(fields.get(field))
        if want == have:
            continue
        if is_config:
            out.append((f"mixed_precision.{field}", hydra_value(want)))
        else:
            problems.append(f"`{_knob_text(setting(want))}`: Megatron-Bridge's precision recipe `{precision}` sets "
                            f"{field}={hydra_value(have)}, which its setup writes over ddp's, and a precision given by "
                            f"name takes no field overrides; plan with `{_knob_text(setting(have))}`, or launch a "
                            "recipe whose precision is its own config (a performance recipe)")
    # the FP8 formats (Megatron's --fp8-format), where the GEMMs are FP8 and the recipe's precision is its own
    # config; a registered recipe named brings its own (MXFP8's are E4M3), which no override can change and
    # which change numerics only: refusing them would refuse every MXFP8 plan of the default formats
    want_format, have_format = settings.get(K["precision"]), fields.get("fp8")
    if is_config and isinstance(want_format, str) and want_format != have_format:
        out.append(("mixed_precision.fp8", hydra_value(want_format)))
    return out, problems


def unmodelled_precision(fields: Mapping[str, object]) -> str | None:
    """Why primusc cannot plan a precision with these fields (None: it can): its account is BF16
    parameters and activations with BF16, FP8 or FP4 GEMMs."""
    if fields.get("fp16"):
        return ("FP16 training (FP16 parameters and activations with dynamic loss scaling), which primusc does "
                "not model: it models BF16 training with BF16, FP8 or FP4 GEMMs")
    if not fields.get("bf16"):
        return "FP32 training, which primusc does not model: it models BF16 training with BF16, FP8 or FP4 GEMMs"
    if fields.get("fp4") and fields.get("fp8"):
        return "FP8 and FP4 GEMMs at once, which primusc does not model (a run computes its GEMMs in one)"
    return None


def precision_name(settings: Settings, version: str = bridge.DEFAULT_VERSION,
                   launched: str | None = None) -> str | None:
    """The registered mixed-precision recipe a launch names for the settings' precision
    (``registered_precision``, the settings' ``PRECISION_KNOBS`` fields kept where a name has them);
    None where Bridge registers none."""
    kept = {field: want(settings) for field, (want, _) in PRECISION_KNOBS.items()}
    return registered_precision(bridge.gemm_precision(settings), version, kept, launched)


def registered_precision(gemm: tuple[str, str], version: str = bridge.DEFAULT_VERSION,
                         kept: Mapping[str, bool] | None = None, launched: str | None = None) -> str | None:
    """The registered mixed-precision recipe, in Bridge's canonical spelling, that computes the GEMMs in
    ``gemm`` (``gemm_precision``); None where Bridge registers none. Of several: ``launched`` (the
    precision the recipe already runs, whose copy naming another would replace), then the one whose
    fields hold ``kept``'s values (a registered name takes no field override, so another value is refused
    at emission), then a plain ``bf16_...`` one over a model family's (``nemotron_h_...``, ``nanov2_...``,
    which keep more of the first and last layers in BF16)."""
    registered = bridge.precisions(version)

    def rank(name: str) -> tuple[bool, int, bool, str]:
        missed = sum(bool(registered[name].get(f)) != v for f, v in (kept or {}).items())
        return name != launched, missed, not name.startswith("bf16_"), name

    names = [name for name, fields in registered.items() if bridge.precision_named(name, version) == name
             and unmodelled_precision(fields) is None and bridge.gemm_precision(fields) == gemm]
    return min(names, key=rank, default=None)


def precision_settings(name: str, version: str = bridge.DEFAULT_VERSION) -> Settings | None:
    """The settings a mixed-precision recipe name (any spelling Bridge accepts) stands for at a Bridge
    release, as primusc writes them: its GEMM precision, scaling recipe and formats as the registered
    recipe's fields give them (nanov2's "current scaling" recipe scales blockwise). None where Bridge
    registers no such name or primusc does not model the precision (``unmodelled_precision``)."""
    registered = bridge.precision_named(name, version)
    if registered is None:
        return None
    fields = bridge.precisions(version)[registered]
    if unmodelled_precision(fields) is not None:
        return None
    precision, recipe = bridge.gemm_precision(fields)
    if precision == "fp8":
        return {"fp8": str(fields["fp8"]), "fp8_recipe": recipe}
    if precision == "fp4":
        return {"fp4": str(fields["fp4"]), "fp4_recipe": recipe}
    return {}


def hydra_problem(value: Setting) -> str | None:
    """Why a value has no Hydra override spelling primusc trusts (None: it has one). A quoted
    string holds one kind of quote, not both, and no backslash, whose escaping Hydra's grammar
    treats differently before a quote and elsewhere; `${` is an OmegaConf interpolation."""
    for text in (value if isinstance(value, tuple) else (value,)):
        if not isinstance(text, str):
            continue
        if "${" in text:
            return "Bridge's overrides read `${...}` as an OmegaConf interpolation, not as text"
        if "\\" in text or ("'" in text and '"' in text):
            return "a backslash, or both kinds of quote, have no Hydra override spelling primusc trusts"
    return None


def hydra_value(value: Setting) -> str:
    """A value as Hydra's override grammar reads it: bare where it can be, a list in brackets,
    else quoted with the quote it does not hold (what ``hydra_problem`` refuses never gets here)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if _PLAIN.fullmatch(value) and value not in ("true", "false", "null") and not _numeric(value):
        return value
    quote = "'" if '"' in value else '"'
    return quote + value + quote


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def overrides(settings: Settings, recipe_precision: str | None = None,
              architecture: frozenset[str] = ARCHITECTURE,
              comm_overlap: bool = False,
              version: str = bridge.DEFAULT_VERSION,
              kept: frozenset[str] = frozenset()) -> tuple[list[tuple[str, str]], list[str]]:
    """``(path, Hydra value)`` for every setting in order, the precision recipe first; and why any
    setting cannot be written (empty: all can). ``recipe_precision`` is the precision recipe the
    launched recipe already runs, where primusc recorded it: naming it again would replace the
    recipe's tuned copy (a performance recipe computes its first and last layers in FP8 too) with
    the registered one. ``architecture`` names the settings the recipe's model provider owns.
    ``comm_overlap``: the launched recipe sets a CommOverlapConfig, so the overlap settings go into it
    (``COMM_OVERLAP_PATHS``). ``version``: the Bridge release, whose registered precisions a launch names.
    ``kept``: the ``RESETS`` the launched recipe already holds as the candidate asks (``keeps_precision_aware``)."""
    out: list[tuple[str, str]] = []
    problems: list[str] = []
    name = precision_name(settings, version, recipe_precision)
    if name is None:
        problems.append("the precision recipe "
                        f"`{settings.get('fp8_recipe', settings.get('fp4_recipe'))}`: Bridge registers no "
                        "mixed-precision recipe for it")
    elif name != recipe_precision:
        out.append(("mixed_precision", name))
    for dest, value in settings.items():
        if dest in architecture or dest in PRECISION_DESTS:
            continue
        if dest == "attention_backend":
            # model.attention_backend is megatron-core's AttnBackend enum, and the library recipes
            # leave it None, where an override stays a string no backend check matches: the
            # memory-efficient kernel is the recipe's own choice, the unfused one cannot be asked for
            if value != "auto":
                problems.append(f"`attention = {ATTENTION_OF_BACKEND[str(value)]}` (backend `{value}`): Bridge's override of model.attention_backend "
                                "reaches megatron-core as text, not its AttnBackend enum, so no backend would be forced")
            continue
        if dest in UNEXPRESSIBLE:
            problems.append(f"`{dest}`: {UNEXPRESSIBLE[dest]}")
            continue
        if dest == P["cuda_graph.scope"] and isinstance(value, tuple) and "full_iteration" not in value:
            # Per-layer graphs are megatron-core's cuda_graph_modules in the Bridge releases primusc reads
            # (both have the field); a recipe that sets them (nemotron_3_nano) keeps its list, and
            # TransformerConfig asserts that cuda_graph_scope and cuda_graph_modules are not both set. So
            # the modules are written and the scope cleared, as Bridge's own set_cuda_graph_modules does
            # (src/megatron/bridge/utils/cuda_graph.py); the full-iteration scope megatron-core migrates.
            out += [(bridge.GRAPH_MODULES, hydra_value(value)), (bridge.GRAPH_SCOPE, "null")]
            continue
        if dest in NEGATED_PATHS and isinstance(value, bool):
            out.append((NEGATED_PATHS[dest], hydra_value(not value)))
            continue
        held = paths(dest, version)
        if not held:
            problems.append(f"`{dest}`: {_unheld(dest, version)}")
            continue
        if dest == "data_path" and isinstance(value, str) and len(value.split()) > 1:
            # GPTDatasetConfig.data_path is split on whitespace into a blend's words, so one prefix
            # holding a space would reach Bridge as several prefixes (or a weight and a prefix)
            problems.append(f"`data_path` = {value!r}: Megatron-Bridge splits dataset.data_path on whitespace, "
                            "so a path with a space becomes a broken blend; link or move the corpus to a path "
                            "without spaces (the megatron target takes it as one argument)")
            continue
        if dest == "data_path" and isinstance(value, tuple):
            value = " ".join(map(str, value))  # GPTDatasetConfig.data_path splits a string on whitespace
        why = hydra_problem(value)
        if why is not None:
            problems.append(f"`{dest}` = {value!r}: {why}")
            continue
        if comm_overlap and dest in COMM_OVERLAP_PATHS:
            held = (COMM_OVERLAP_PATHS[dest],) if dest in _REPLACED_BY_COMM_OVERLAP \
                else (*held, COMM_OVERLAP_PATHS[dest])
        for path in held:
            out.append((path, hydra_value(value)))
        if dest == "recompute_granularity" and value == "selective" and "recompute_modules" not in settings:
            out.append(("model.recompute_modules", "[core_attn]"))  # Megatron's default, the recipe may set others
    for dest, off in RESETS.items():
        if dest not in settings and dest not in kept:
            out += [(path, off) for path in paths(dest, version)]
    # TransformerConfig takes the switch beside the count (megatron-core refuses it with recomputation, and a
    # recipe of its own may have it on)
    out.append((OFFLOAD_SWITCH, "true" if settings.get(K["offload_layers"]) else "false"))
    return out, problems
