"""The emitted Megatron arguments build megatron-core 0.16.1's own config classes on CPU.

``pretrain_gpt.py`` turns its arguments into ``TransformerConfig`` (``MLATransformerConfig`` for
MLA), ``DistributedDataParallelConfig`` and ``OptimizerConfig``; their ``__post_init__`` checks are
Megatron's own legality rules. The map below is the argument-to-field correspondence of
``megatron/training/arguments.py`` (core_v0.16.1, ``core_transformer_config_from_args``). Every
emitted flag must land in a config field or in the short list of run arguments, so a misspelt
flag fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.frameworks import megatron
from tests.emit.harness import all_cases, context, emission, emissions, write

torch = pytest.importorskip("torch")
pytest.importorskip("megatron.core")

# Arguments Megatron reads outside the three config classes (model construction, data, training loop).
RUN_ARGS = {
    "seq_length", "max_position_embeddings", "position_embedding_type", "untie_embeddings_and_output_weights",
    "group_query_attention", "micro_batch_size", "global_batch_size", "train_iters", "mock_data",
    "data_path", "tokenizer_type", "tokenizer_model", "vocab_size", "save", "load", "ckpt_format",
    "gradient_accumulation_fusion",
    # the training loop's schedule, logging, validation and checkpoint cadence (arguments.py's
    # _add_training_args, _add_logging_args, _add_validation_args, _add_checkpointing_args)
    "lr_warmup_iters", "log_interval", "eval_iters", "eval_interval", "save_interval", "finetune",
    # CUDA-graph companions validate_args requires (arguments.py, core_v0.16.1), outside the configs
    "te_rng_tracker", "check_for_nan_in_loss_and_grad", "moe_pad_experts_for_cuda_graph_inference",
    # pretrain_mamba.py's model construction (mamba_builders.py): the layer spec and the hybrid pattern
    "spec", "hybrid_override_pattern",
    # GPTModel's own arguments (gpt_builders.py, core_v0.16.1): RoPE on a share of each head, Llama 3.1's scaling
    "rotary_percent", "use_rope_scaling",
    # a run block's schedule, logging and data (arguments.py's _add_learning_rate_args, _add_logging_args,
    # _add_data_args): the scheduler and the loggers read them from the arguments, not from a config
    "lr_decay_style", "lr_decay_iters", "log_throughput", "tensorboard_dir", "wandb_project", "wandb_exp_name",
    "split", "train_data_path", "valid_data_path", "test_data_path",
}
# A run block's optimizer settings: OptimizerConfig fields of the same names (megatron/core/optimizer/
# optimizer_config.py, 0.16.1), checked there rather than listed as run arguments.
OPTIMIZER_NUMBERS = ("lr", "min_lr", "weight_decay", "adam_beta1", "adam_beta2", "adam_eps", "clip_grad")
# megatron-core 0.16's config has the flex dispatcher's backend where core_v0.12 had a DeepEP switch
RENAMED = {"moe_enable_deepep": "moe_flex_dispatcher_backend", "use_custom_fsdp": "use_megatron_fsdp"}


LIST_ARGS = {"recompute_modules", "cuda_graph_scope", "spec"}  # nargs flags
# Config fields whose values are names, not numbers (their annotations are Literals or enums).
TEXT_FIELDS = {"normalization", "recompute_granularity", "recompute_method", "fp8_recipe", "fp4_recipe", "softmax_type",
               "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "pipeline_model_parallel_layout",
               "moe_router_score_function", "moe_router_load_balancing_type",
               "cuda_graph_impl"}


def parse_argv(argv: list[str], version: str = "core_v0.16") -> dict[str, Any]:
    """Flags to their argparse dests as the version's own parser reads them (frameworks/megatron): a
    store_false switch sets its dest False (`--disable-bias-linear` is add_bias_linear), a store_true one
    True, a value flag its words."""
    known = megatron.flags(version)
    out: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        flag = argv[i]
        assert flag.startswith("--") and flag in known, f"{flag} is not a flag of Megatron-LM {version}"
        spec = known[flag]
        dest = RENAMED.get(spec.dest, spec.dest)
        values = []
        i += 1
        while i < len(argv) and not argv[i].startswith("--"):
            values.append(argv[i])
            i += 1
        if spec.arity == megatron.SWITCH:
            assert not values, flag
            out[dest] = "deepep" if dest == "moe_flex_dispatcher_backend" else spec.action != "store_false"
        else:
            out[dest] = values if dest in LIST_ARGS else values[0]
    return out


def _list_expression(text: str) -> list[int]:
    """Evaluate Megatron's ``([0]*3+[1]*58)`` pattern without eval."""

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
            left, right = walk(node.left), walk(node.right)
            return left + right if isinstance(node.op, ast.Add) else left * right
        if isinstance(node, ast.List):
            return [walk(e) for e in node.elts]
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        raise ValueError(ast.dump(node))

    return list(walk(ast.parse(text, mode="eval")))


def _number(text: str) -> int | float:
    return int(text) if text.lstrip("-").isdigit() else float(text)


def build_configs(args: dict[str, Any]) -> tuple[Any, Any, Any]:
    import torch.nn.functional as F
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer.enums import AttnBackend
    from megatron.core.transformer.transformer_config import MLATransformerConfig, TransformerConfig

    args = dict(args)
    for key in RUN_ARGS:
        args.pop(key, None)
    if "rotary_base" in args:
        # the RoPE base goes to GPTModel's constructor, not to TransformerConfig: check GPTModel takes it
        from megatron.core.models.gpt import GPTModel

        assert "rotary_base" in inspect.signature(GPTModel.__init__).parameters
        assert int(args.pop("rotary_base")) > 0
    kw: dict[str, Any] = {}
    ddp_fields = {f.name for f in dataclasses.fields(DistributedDataParallelConfig)}
    opt_fields = {f.name for f in dataclasses.fields(OptimizerConfig)}
    ddp = {k: args.pop(k) for k in list(args) if k in ddp_fields and k not in ("delay_wgrad_compute",)}
    if args.pop("grad_reduce_in_bf16", False):
        # validate_args turns FP32 accumulation off, which pretrain_gpt.py hands DDP as grad_reduce_in_fp32
        ddp["grad_reduce_in_fp32"] = False
    opt: dict[str, Any] = {}
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    for key in ("use_precision_aware_optimizer", "main_grads_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"):
        if key in args:
            value = args.pop(key)
            opt[key] = dtypes[value] if isinstance(value, str) else value
    for key in OPTIMIZER_NUMBERS:
        if key in args:
            opt[key] = float(args.pop(key))
    if opt:  # Megatron hands the distributed-optimizer switch to both configs
        opt["use_distributed_optimizer"] = ddp.get("use_distributed_optimizer", False)
    assert set(opt) <= opt_fields
    if args.pop("bf16", False):
        kw.update(bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16)
    if args.pop("swiglu", False):
        kw.update(gated_linear_unit=True, activation_func=F.silu, bias_activation_fusion=False)
    if args.pop("squared_relu", False):
        from megatron.core.activations import squared_relu

        kw.update(activation_func=squared_relu)
    if args.pop("quick_geglu", False):
        # Megatron-LM's arguments: gated, the bias fused into the activation as --bias-gelu-fusion says
        # (on unless --no-bias-gelu-fusion), which megatron-core's MLP cannot do for quick GELU
        from megatron.core.fusions.fused_bias_geglu import quick_gelu

        kw.update(gated_linear_unit=True, activation_func=quick_gelu,
                  bias_activation_fusion=args.pop("bias_gelu_fusion", True))
        assert not kw["bias_activation_fusion"], "megatron-core 0.16.1's MLP fuses no quick GELU bias"
    if "num_experts" in args:
        kw["num_moe_experts"] = int(args.pop("num_experts"))
    for low in ("fp8", "fp4"):
        if low in args:
            kw[low] = args.pop(low)
    if "num_virtual_stages_per_pipeline_rank" in args:
        kw["virtual_pipeline_model_parallel_size"] = int(args.pop("num_virtual_stages_per_pipeline_rank"))
    # megatron/training/arguments.py core_transformer_config_from_args renames these two
    for flag, name in (("decoder_first_pipeline_num_layers", "num_layers_in_first_pipeline_stage"),
                       ("decoder_last_pipeline_num_layers", "num_layers_in_last_pipeline_stage")):
        if flag in args:
            kw[name] = int(args.pop(flag))
    if "attention_backend" in args:
        kw["attention_backend"] = AttnBackend[args.pop("attention_backend")]
    if "moe_layer_freq" in args:
        value = args.pop("moe_layer_freq")
        kw["moe_layer_freq"] = _list_expression(value) if "[" in value else int(value)
    if "window_size" in args:
        kw["window_size"] = tuple(_list_expression(args.pop("window_size").replace("(", "[").replace(")", "]")))
    if "cp_comm_type" in args:
        kw["cp_comm_type"] = args.pop("cp_comm_type")
    mla = bool(args.pop("multi_latent_attention", False))
    config_cls = MLATransformerConfig if mla else TransformerConfig
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    for key, value in args.items():
        assert key in fields, f"emitted `{key}` is no field of {config_cls.__name__} nor a known run argument"
        textual = key in TEXT_FIELDS or fields[key].type in ("str", "Optional[str]")
        kw[key] = value if isinstance(value, bool | list) or textual else _number(value)
    # The precision-aware optimizer imports Transformer Engine's FusedAdam while validating, which a
    # CPU machine lacks: there the fields were checked above and the config is not built.
    optimizer = None if opt.get("use_precision_aware_optimizer") else OptimizerConfig(**opt)
    return config_cls(**kw), DistributedDataParallelConfig(**ddp), optimizer


@pytest.fixture(autouse=True)
def _transformer_engine_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """Transformer Engine is absent on this CPU machine but present on the GPU nodes the emitted
    scripts target; answer the config's TE version checks as satisfied so the rest still runs."""
    from megatron.core.optimizer import optimizer_config
    from megatron.core.transformer import transformer_config

    for module in (transformer_config, optimizer_config):
        monkeypatch.setattr(module, "is_te_min_version", lambda *_a, **_k: True)


def megatron_argv(files: dict[str, str], tmp_path: Path) -> list[str]:
    folder = write(files, tmp_path)
    out = subprocess.run(["bash", str(folder / "node.sh"), "--dry-run"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True, timeout=600).stdout
    rank0 = next(line for line in out.splitlines() if line.startswith("rank 0:"))
    argv = shlex.split(rank0.split(":", 1)[1])
    script = next(a for a in argv if a in ("pretrain_gpt.py", "pretrain_mamba.py"))
    return argv[argv.index(script) + 1:]


CASES = [pytest.param(c, f, id=c) for c, t, f in emissions() if t == "megatron+local"]


@pytest.mark.parametrize(("case", "files"), CASES)
def test_configs_accept_the_arguments(case: str, files: dict[str, str], tmp_path: Path) -> None:
    space, cand = all_cases()[case]
    args = parse_argv(megatron_argv(files, tmp_path))
    config, ddp, _ = build_configs(args)
    assert config.num_layers == space.model.num_layers
    assert config.tensor_model_parallel_size == cand.tp
    assert config.pipeline_model_parallel_size == cand.pp
    assert config.context_parallel_size == cand.cp
    assert config.sequence_parallel == cand.sp
    assert ddp.use_distributed_optimizer == (cand.sharding != "none")
    if space.model.moe is not None:
        assert config.num_moe_experts == space.model.moe.num_experts
        assert config.expert_model_parallel_size == cand.ep
    assert config.softmax_type == ("learnable" if space.model.attention_sinks else "vanilla")


def test_core_v0_12_profile_is_accepted_too(tmp_path: Path) -> None:
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(ep_comm_overlap=False)  # core_v0.12 has no EP overlap (test_unsupported.py)
    files = emit(space, cand, "megatron+local", context(megatron_version="core_v0.12"))
    argv = megatron_argv(files, tmp_path)
    assert "--moe-enable-deepep" in argv and "--moe-flex-dispatcher-backend" not in argv
    build_configs(parse_argv(argv, "core_v0.12"))


def test_an_explicit_layout_builds_the_stages_primusc_places(tmp_path: Path) -> None:
    """The emitted --pipeline-model-parallel-layout (shell-quoted: it holds `|`, `(` and `*`) reaches
    the config, which derives VPP from it and builds per (stage, chunk) what ir.pipeline says."""
    from megatron.core import parallel_state as ps
    from megatron.core.transformer.transformer_block import get_num_layers_to_build

    from primus_lang.ir import pipeline

    space, cand = all_cases()["deepseek_v3_layout"]
    files = emission("deepseek_v3_layout", "megatron+local")
    assert files is not None
    argv = megatron_argv(files, tmp_path)
    assert argv[argv.index("--pipeline-model-parallel-layout") + 1] == cand.pipeline_layout
    assert "--num-virtual-stages-per-pipeline-rank" not in argv  # Megatron takes one of the two
    config, _, _ = build_configs(parse_argv(argv))
    assert config.virtual_pipeline_model_parallel_size == cand.vpp
    ours = pipeline.layout(pipeline.split_of(space.model.num_layers, cand, cand.vpp), space.model.mtp_layers)
    ps.set_virtual_pipeline_model_parallel_world_size(cand.vpp)
    try:
        for st in range(cand.pp):
            ps.set_pipeline_model_parallel_rank(st)
            assert [get_num_layers_to_build(config, c, st) for c in range(cand.vpp)] == [
                c.layers for c in ours.on_stage(st)]
    finally:
        ps.set_pipeline_model_parallel_rank(None)
        ps.set_virtual_pipeline_model_parallel_world_size(None)


def test_config_rejects_what_megatron_rejects() -> None:
    """The harness is not vacuous: heads not divisible by TP fails in TransformerConfig itself."""
    with pytest.raises((AssertionError, ValueError)):
        build_configs({"num_layers": "4", "hidden_size": "256", "num_attention_heads": "6",
                       "tensor_model_parallel_size": "4"})


def _argv_of(space: Any, cand: Any) -> list[str]:
    """The flags the template renders, taken from the framework directly (no bash round trip)."""
    from primus_lang.emit.context import resolve_variables
    from primus_lang.emit.frameworks import Megatron

    framework = Megatron(space.model, space.cluster, cand, resolve_variables({}, space.name))
    out: list[str] = []
    for flag, values in framework.profile.argv(framework.settings):
        out += [flag, *values]
    return out


SAMPLES_PER_EXAMPLE = 40


def _build_every_stage(config: Any) -> None:
    """Megatron checks the layer split only while building each stage: ask it for every stage."""
    from megatron.core.transformer.transformer_block import get_num_layers_to_build
    from megatron.core.transformer.transformer_layer import get_transformer_layer_offset

    vpp = config.virtual_pipeline_model_parallel_size
    for rank in range(config.pipeline_model_parallel_size):
        for chunk in range(vpp) if vpp else [None]:
            assert get_num_layers_to_build(config, chunk, rank) >= 0
            get_transformer_layer_offset(config, chunk, rank)


def _check_points(example: str, limit: int | None) -> int:
    import random

    from primus_lang.check import legal_points

    space, _ = all_cases()[example]
    points = list(legal_points(space))
    if limit is not None:
        points = random.Random(0).sample(points, min(limit, len(points)))
    checked = 0
    for cand in points:
        if cand.schedule in ("zero_bubble", "zbv"):
            continue  # plain Megatron refuses these (P7001); Primus runs its own pipeline
        try:
            config, _, _ = build_configs(parse_argv(_argv_of(space, cand)))
            _build_every_stage(config)
        except (AssertionError, ValueError, ZeroDivisionError) as err:
            raise AssertionError(f"{example} {cand.label()}: {err}") from err
        checked += 1
    return checked


EXAMPLES = sorted(c for c in all_cases() if c.startswith("example_"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_legal_points_build_megatron_configs(example: str) -> None:
    """A random spread of each example's legal points: what primusc calls legal, Megatron accepts.

    A failure here is a legality rule primus_lang.check is missing (or an emitter bug)."""
    assert _check_points(example, SAMPLES_PER_EXAMPLE) > 0


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_legal_point_builds_megatron_configs(example: str) -> None:
    assert _check_points(example, None) > 0


def test_selective_recompute_modules() -> None:
    from primus_lang.ir import Recompute

    if "modules" not in {a.name for a in Recompute.__attrs_attrs__}:
        pytest.skip("this IR has no Recompute.modules")
    space, cand = all_cases()["deepseek_v3_b200"]
    selective: dict[str, Any] = {"kind": "selective", "modules": ("mla_up_proj", "moe_act", "shared_experts")}
    cand = cand.replace(recompute=Recompute(**selective))
    argv = _argv_of(space, cand)
    i = argv.index("--recompute-modules")
    assert argv[i + 1:i + 4] == ["mla_up_proj", "moe_act", "shared_experts"]
    config, _, _ = build_configs(parse_argv(argv))
    assert config.recompute_modules == ["mla_up_proj", "moe_act", "shared_experts"]


def test_nvfp4_reaches_megatron_as_its_fp4_recipe(tmp_path: Path) -> None:
    space, cand = all_cases()["llama70b_b200_nvfp4"]
    argv = megatron_argv(emit(space, cand, "megatron+local", context()), tmp_path)
    assert argv[argv.index("--fp4-format") + 1] == "e2m1" and argv[argv.index("--fp4-recipe") + 1] == "nvfp4"
    assert "--fp8-format" not in argv
    config, _, _ = build_configs(parse_argv(argv))
    assert config.fp4 == "e2m1" and config.fp4_recipe == "nvfp4" and config.fp8 is None
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+local", context(megatron_version="core_v0.12"))
    assert [d.code.id for d in err.value.diagnostics] == ["P7001"] and "fp4" in err.value.diagnostics[0].message


def test_a_hybrid_model_runs_pretrain_mamba_with_its_pattern(tmp_path: Path) -> None:
    """Nemotron 3 Nano goes to pretrain_mamba.py with megatron-core's Mamba stack spec; megatron-core's
    own layer allocation reads the emitted pattern as the card's layers, and the Mamba fields reach
    the TransformerConfig."""
    from megatron.core.ssm.mamba_hybrid_layer_allocation import Symbols, allocate_layers

    space, _ = all_cases()["nemotron_nano_b200"]
    files = emission("nemotron_nano_b200", "megatron+local")
    assert files is not None
    folder = write(files, tmp_path)
    dry = subprocess.run(["bash", str(folder / "node.sh"), "--dry-run"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True, timeout=600).stdout
    assert "pretrain_mamba.py" in dry and "pretrain_gpt.py" not in dry
    args = parse_argv(megatron_argv(files, tmp_path))
    assert args["spec"] == ["megatron.core.models.mamba.mamba_layer_specs", "mamba_stack_spec"]
    layers = allocate_layers(space.model.num_layers, 0.0, 0.0, args["hybrid_override_pattern"])
    model = space.model
    assert layers.count(Symbols.MAMBA) == model.mamba_layers
    assert layers.count(Symbols.ATTENTION) == model.attention_layers
    assert layers.count(Symbols.MOE) == model.moe_layers
    config, _, _ = build_configs(args)
    assert model.mamba is not None
    assert (config.mamba_num_heads, config.mamba_head_dim, config.mamba_state_dim, config.mamba_num_groups) == (
        model.mamba.heads, model.mamba.head_dim, model.mamba.state_dim, model.mamba.groups)
    assert config.is_hybrid_model and "moe_layer_freq" not in args


def test_an_interleaved_moe_reaches_megatron_as_its_layer_list(tmp_path: Path) -> None:
    """Llama 4 Maverick's dense and MoE layers alternate (`layer_cycle = "-E"`): the launch's --moe-layer-freq
    is the per-layer list megatron-core builds from, and the command line reads back as the same card."""
    from primus_lang.check import parse_point
    from primus_lang.lower import loads_program
    from primus_lang.recipes import interpret
    from primus_lang.recipes.megatron import read_command_text

    space = loads_program("import models.llama4 (llama4_maverick)\nimport clusters.amd (mi355x_x4)\n"
                          "space m on mi355x_x4 { model = llama4_maverick; gbs = 256 }\n", "m.prx").spaces[0]
    cand = parse_point(space, "tp=2,pp=2,ep=8")
    files = emit(space, cand, "megatron+local", context())
    argv = megatron_argv(files, tmp_path)
    config, _, _ = build_configs(parse_argv(argv))
    assert config.moe_layer_freq == [0, 1] * 24
    again = interpret(read_command_text(shlex.join(["torchrun", "pretrain_gpt.py", *argv]), "node.sh"),
                      require_vocab=False)
    assert again.model["moe"] == space.model.moe and again.candidate == cand
