"""The Megatron-LM arguments of a candidate, as snake_case settings (argparse ``dest`` names).

One table feeds both frameworks: ``profiles`` spells the settings as ``pretrain_gpt.py`` flags for a
Megatron version, the Primus emitter writes them as experiment-YAML overrides (Primus passes its
overrides to Megatron's argument parser under the same names). Every value is explicit, because
Primus's base model config has defaults (SwiGLU on, LayerNorm, allgather dispatcher) that differ
from Megatron's.

Flag facts: Megatron-LM ``megatron/training/arguments.py`` at core_v0.12.0 and core_v0.16.1, and the
Megatron-FSDP user guide (docs/discussions/megatron-fsdp-user-guide) for the FSDP flag set.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from attrs import frozen

from primus_lang.emit.context import Variables
from primus_lang.emit.sites import data_paths, under
from primus_lang.frameworks import megatron, reading, spelling
from primus_lang.ir import Candidate, Cluster, Model
from primus_lang.ir.model import Mla
from primus_lang.ir.ranges import CEILINGS
from primus_lang.ir.run import DECAY_STYLES, Run
from primus_lang.ir.site import Site

Setting = bool | int | float | str | tuple[bool | int | float | str, ...]  # a tuple is a multi-value flag (nargs)
Settings = dict[str, Setting]
# how Megatron spells the knobs, their parts and the card's fields (frameworks.spelling)
K, P, C = spelling.KNOBS, spelling.PARTS, spelling.CARD
ATTENTION_BACKENDS, ATTENTION_OF_BACKEND = spelling.ATTENTION_BACKENDS, spelling.ATTENTION_OF_BACKEND

# a card's position and norm as Megatron's --position-embedding-type and --normalization (import reads them back)
POSITIONS = {"rope": "rope", "learned": "learned_absolute", "none": "none"}
NORMS = {"rmsnorm": "RMSNorm", "layernorm": "LayerNorm"}
# cuda_graph -> (--cuda-graph-impl, --cuda-graph-scope), the table the readers read back (frameworks.reading)
CUDA_GRAPH_SETTINGS = reading.CUDA_GRAPH_SETTINGS


def moe_layer_pattern(model: Model) -> str | int:
    """Megatron's ``--moe-layer-freq``: an integer k where layers 0, k, 2k, ... are MoE (as megatron-core
    reads one), else a list expression, dense layers first and an interleaving cycle repeated."""
    if model.moe is None:
        return 1
    dense, cycle = model.moe.dense_layers, model.moe.layer_cycle
    period = len(cycle)
    if dense == 0 and cycle == reading.moe_freq_cycle(period):
        return period
    whole, rest = divmod(model.num_layers - dense, period)
    parts = ([f"[0]*{dense}"] if dense else []) + ([f"[{reading.moe_flags(cycle)}]*{whole}"] if whole else []) + \
        ([f"[{reading.moe_flags(cycle[:rest])}]"] if rest else [])
    return f"({'+'.join(parts)})"


# The factor megatron-core's RotaryEmbedding scales by under --use-rope-scaling: GPTModel's default, which
# Megatron-LM's gpt_builders.py never overrides (it passes the switch alone, core_v0.12 to core_v0.19)
MEGATRON_ROPE_SCALING = 8.0

# Megatron's --norm-epsilon default (megatron/training/arguments.py, core_v0.16.1); written only when a
# card's differs, so cards that use it emit what they always did
MEGATRON_NORM_EPSILON = 1e-5


@frozen
class CardArgument:
    """A model-card field that one Megatron argument sets: emission writes it with ``write``,
    ``import-recipe`` reads it back with ``read``, so the argument's name and spelling live here only."""

    field: str  # the Model field
    dest: str  # Megatron's argparse dest
    switch: bool  # a flag without a value
    absent: Any  # the card value Megatron builds when the argument is not given
    write: Callable[[Model], Setting | None]  # None: not written for this card
    read: Callable[[Any], Any]  # the recipe's value -> the card's; ValueError(what was expected)


def _window_size(model: Model) -> Setting | None:
    # Megatron's window counts the tokens before the current one: a 128-token window is (127, 0)
    # (Megatron-Bridge gpt_oss_bridge.py)
    return f"({model.sliding_window - 1},0)" if model.sliding_window else None


def _read_window(value: Any) -> int:
    # megatron/training/arguments.py (core_v0.16.1) parses --window-size as two integers, `(left,right)`;
    # a Primus YAML writes the pair as a list (`[128, 0]`), as the Primus emitter does
    if isinstance(value, list | tuple):
        value = ",".join(str(x) for x in value)
    m = re.fullmatch(r"[(\[]?\s*(\d+)\s*,\s*0\s*[)\]]?", str(value))
    if m is None:
        raise ValueError("a causal window `(W,0)`: W tokens before the current one, none after")
    return int(m.group(1)) + 1


_SKIP_LIST = re.compile(r"\(?\[([01](?:,[01])*)\]\)?(?:\*(\d{1,6}))?")  # [1,0] or ([1,1,0])*8
_SKIP_RUN = re.compile(r"\(\[1\]\*(\d{1,6})\+\[0\]\)(?:\*(\d{1,6}))?")  # ([1]*5+[0])*6: five windowed, one full


def _read_skip(value: Any) -> int:
    # --window-attn-skip-freq also takes a per-layer list, 1 where the layer is windowed (megatron-core's
    # is_layer_window_attention reads entry i-1 for layer i); the card says one period, so a list is
    # read where it is one: layer i attends in full exactly where i is a multiple of n
    if isinstance(value, bool):
        raise ValueError("a whole number (every n-th layer attends in full)")
    if re.fullmatch(r"[0-9]{1,6}", str(value)):
        return int(value)
    flags = _skip_flags(value)
    if flags:
        # all windowed is the card's 0; else the first full layer is the period, which the rest must repeat
        period = next((i for i, windowed in enumerate(flags, 1) if not windowed), 0)
        if all(bool(w) == (period == 0 or i % period != 0) for i, w in enumerate(flags, 1)):
            return period
    raise ValueError("a whole number (every n-th layer attends in full), or a per-layer list of 1 (windowed) and 0 "
                     "(full) that repeats one such period; another pattern is not modelled")


def _skip_flags(value: Any) -> list[int]:
    """A per-layer 0/1 list as a YAML list, a list literal or Megatron's `(...)*n` expression; [] if none."""
    if isinstance(value, list | tuple):
        return [int(x) for x in value] if all(x in (0, 1) and not isinstance(x, float) for x in value) else []
    text = str(value).replace(" ", "")
    # two copies of a repeated list have a period exactly where any number of copies has: never built whole
    if (m := _SKIP_LIST.fullmatch(text)) is not None:
        return [int(x) for x in m.group(1).split(",")] * min(2, int(m.group(2) or 1))
    if (m := _SKIP_RUN.fullmatch(text)) is not None:
        return ([1] * int(m.group(1)) + [0]) * min(2, int(m.group(2) or 1))
    return []


def _read_softmax(value: Any) -> bool:
    if value not in ("vanilla", "learnable"):
        raise ValueError("`vanilla` or `learnable` (an off-by-one softmax is not modelled)")
    return bool(value == "learnable")


def _read_epsilon(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("a number") from None


def _read_count(field: str, lowest: int = 1) -> Callable[[Any], int]:
    """A whole number from ``lowest`` to the IR's ceiling for ``field`` (ir/ranges.py), as argparse's int
    reads it."""
    ceiling = CEILINGS[field]

    def read(value: Any) -> int:
        text = str(value).strip()
        if isinstance(value, bool) or not re.fullmatch(r"[0-9]{1,12}", text) or not lowest <= int(text) <= ceiling:
            raise ValueError(f"a whole number from {lowest} to {ceiling:,}")
        return int(text)
    return read


# The card features the GPT layer's arguments carry one to one (megatron/training/arguments.py,
# core_v0.16.1). model_settings writes them in this place of the command line; import-recipe reads them.
CARD_ARGUMENTS: dict[str, CardArgument] = {a.field: a for a in (
    CardArgument("norm_epsilon", "norm_epsilon", False, MEGATRON_NORM_EPSILON,
                 lambda m: m.norm_epsilon if m.norm_epsilon != MEGATRON_NORM_EPSILON else None, _read_epsilon),
    # with --add-bias-linear the QKV projection has its bias already; the flag would say it twice
    CardArgument("qkv_bias", "add_qkv_bias", True, False,
                 lambda m: True if m.qkv_bias and not m.bias else None, bool),
    CardArgument("sliding_window", "window_size", False, 0, _window_size, _read_window),
    # megatron-core windows layer i (from 1) unless i is a multiple of the frequency; without one
    # every layer is windowed (transformer/utils.py, is_layer_window_attention)
    CardArgument("full_attention_every", "window_attn_skip_freq", False, 0,
                 lambda m: m.full_attention_every if m.sliding_window and m.full_attention_every else None,
                 _read_skip),
    # gpt-oss's MLP: --quick-geglu with these two (Megatron-Bridge's GPTOSSProvider; megatron-core from 0.15)
    CardArgument("glu_offset", "glu_linear_offset", False, 0.0, lambda m: m.glu_offset or None, _read_epsilon),
    CardArgument("activation_clamp", "activation_func_clamp_value", False, 0.0,
                 lambda m: m.activation_clamp or None, _read_epsilon),
    CardArgument("attention_sinks", "softmax_type", False, False,
                 lambda m: "learnable" if m.attention_sinks else None, _read_softmax),
    # Megatron's default is None: no MTP block (transformer_config.py, core_v0.16.1)
    # Megatron builds MTP only `if args.mtp_num_layers:`, so 0 is none (Primus's kimi_k2 and glm5 presets say 0)
    CardArgument("mtp_layers", C["mtp_layers"], False, 0, lambda m: m.mtp_layers or None,
                 _read_count("mtp_layers", lowest=0)),
)}

# --multi-latent-attention turns MLA on; MLA_ARGUMENTS give its widths, keyed by the card's `mla`
# fields. `absent` is Megatron's default when the flag is left out (_add_mla_args in
# megatron/training/arguments.py, core_v0.16.1: no query compression, kv 32, qk 128, rope 64, v 128).
MLA_SWITCH = "multi_latent_attention"


def _mla(model: Model) -> Mla:
    assert model.mla is not None, "MLA widths are written for an MLA card only"
    return model.mla


MLA_ARGUMENTS: dict[str, CardArgument] = {a.field: a for a in (
    CardArgument("q_lora_rank", "q_lora_rank", False, 0, lambda m: _mla(m).q_lora_rank or None,
                 _read_count("q_lora_rank")),
    CardArgument("kv_lora_rank", "kv_lora_rank", False, 32, lambda m: _mla(m).kv_lora_rank,
                 _read_count("kv_lora_rank")),
    CardArgument("qk_nope_head_dim", "qk_head_dim", False, 128, lambda m: _mla(m).qk_nope_head_dim,
                 _read_count("qk_nope_head_dim")),
    CardArgument("qk_rope_head_dim", "qk_pos_emb_head_dim", False, 64, lambda m: _mla(m).qk_rope_head_dim,
                 _read_count("qk_rope_head_dim")),
    CardArgument("v_head_dim", "v_head_dim", False, 128, lambda m: _mla(m).v_head_dim, _read_count("v_head_dim")),
)}


def _card_argument(s: Settings, model: Model, field: str) -> None:
    a = CARD_ARGUMENTS[field]
    value = a.write(model)
    if value is not None:
        s[a.dest] = value


def model_settings(model: Model, seq_len: int) -> Settings:
    """The architecture: what makes Megatron build exactly this model card."""
    s: Settings = {
        C["num_layers"]: model.num_layers,
        C["hidden"]: model.hidden,
        C["ffn_hidden"]: model.ffn_hidden,
        C["heads"]: model.heads,
        C["head_dim"]: model.head_dim,
        C["kv_heads.grouped"]: model.kv_heads != model.heads,
    }
    if model.kv_heads != model.heads:
        s[C["kv_heads"]] = model.kv_heads
    s[K["seq_len"]] = seq_len
    s[C["max_position_embeddings"]] = max(model.max_position_embeddings, seq_len)
    s[C["position"]] = POSITIONS[model.position]
    if model.position == "rope":
        # Megatron's --rotary-base is an integer; every published base is a whole number.
        s[C["rope_theta"]] = int(model.rope_theta)
        if model.rotary_percent != 1.0:
            s[C["rotary_percent"]] = model.rotary_percent
        if model.rope_scaling:
            # the switch alone: Megatron-LM's GPT builder never hands --rope-scaling-factor to GPTModel,
            # whose factor stays 8 (model_feature_problems refuses another)
            s[C["rope_scaling.enable"]] = True
    s[C["norm"]] = NORMS[model.norm]
    _card_argument(s, model, "norm_epsilon")
    s[C["activation.swiglu"]] = model.activation == "swiglu"
    s[C["activation.squared_relu"]] = model.activation == "squared_relu"
    if model.activation == "quick_geglu":  # a flag from core_v0.15: written only where the card asks for it
        s[C["activation.quick_geglu"]] = True
        # Megatron-LM fuses the bias into the activation by --bias-gelu-fusion's default for any activation
        # but SwiGLU, and megatron-core 0.16.1's dense, shared-expert and sequential MLPs fuse only GELU and
        # SiLU (mlp.py: "Only support fusion of gelu and swiglu"); its gpt-oss example turns it off too
        s["bias_gelu_fusion"] = False
    _card_argument(s, model, "glu_offset")
    _card_argument(s, model, "activation_clamp")
    s[C["tied_embeddings"]] = not model.tied_embeddings
    s[C["bias"]] = model.bias
    _card_argument(s, model, "qkv_bias")
    s[C["qk_layernorm"]] = model.qk_layernorm
    # Always written: Megatron's default dropout is 0.1, the model card's default is 0.
    s[C["dropout"]] = model.dropout
    s[C["attention_dropout"]] = model.attention_dropout
    for field in ("sliding_window", "full_attention_every", "attention_sinks"):
        _card_argument(s, model, field)
    if model.mla is not None:
        s[MLA_SWITCH] = True
        for a in MLA_ARGUMENTS.values():
            value = a.write(model)
            if value is not None:
                s[a.dest] = value
    if model.moe is not None:
        moe = model.moe
        s[C["moe.num_experts"]] = moe.num_experts
        s[C["moe.top_k"]] = moe.top_k
        s[C["moe.ffn_hidden"]] = moe.ffn_hidden
        if moe.shared_experts:
            s[C["moe.shared_ffn_hidden"]] = moe.shared_experts * (moe.shared_ffn_hidden or moe.ffn_hidden)
        if not model.hybrid:  # a hybrid model's pattern says which layers are MoE
            s[C["moe.dense_layers"]] = moe_layer_pattern(model)
        if moe.latent:
            s["moe_latent_size"] = moe.latent
        s[C["moe.grouped_gemm"]] = True
    if model.hybrid:
        s.update(hybrid_settings(model))
    _card_argument(s, model, "mtp_layers")
    if model.mtp_layers and model.hybrid:
        # Nemotron 3's MTP layer is attention then MoE; megatron-core 0.16.1's MambaModel has no MTP
        s["mtp_hybrid_override_pattern"] = "*E"
    return s


def model_feature_problems(model: Model) -> list[str]:
    """Card features megatron-core 0.16.1's GPT layer cannot build, each as why: emission refuses
    them rather than write a launch that trains another model."""
    out: list[str] = []
    if model.attention_softcap or model.logit_softcap:
        # TransformerConfig has no soft-cap field; only the inference flash path passes `softcap`, fixed at 0
        which = " and ".join(f"`{n}` = {v:g}" for n, v in (("attention_softcap", model.attention_softcap),
                                                             ("logit_softcap", model.logit_softcap)) if v)
        out.append(f"{which}: megatron-core 0.16.1 has no logit soft-capping (TransformerConfig has no such field)")
    if model.rope_scaling and model.rope_scaling != MEGATRON_ROPE_SCALING:
        out.append(f"`rope_scaling` = {model.rope_scaling:g}: Megatron-LM's GPT builder hands GPTModel the switch "
                   "(--use-rope-scaling) but not --rope-scaling-factor (gpt_builders.py, core_v0.12 to core_v0.19), "
                   f"so it scales RoPE by {MEGATRON_ROPE_SCALING:g} whatever the card says; derive a card with "
                   "`rope_scaling = 0` to train without the scaling")
    if model.norm_placement != "pre":
        out.append(f"`norm_placement` = {model.norm_placement}: megatron-core 0.16.1's TransformerLayer has "
                   "pre-norms only (input_layernorm, pre_mlp_layernorm), no norm on a sublayer's output")
    if model.qk_layernorm and model.qk_norm_whole:
        out.append("`qk_norm_whole` = true: megatron-core's --qk-layernorm normalizes each head's query and key "
                   "(kv_channels wide), not all heads at once")
    return out


# megatron-core's own layer spec for hybrid models (pretrain_mamba.py requires --spec)
MAMBA_SPEC = ("megatron.core.models.mamba.mamba_layer_specs", "mamba_stack_spec")


def hybrid_settings(model: Model) -> Settings:
    """A hybrid Mamba model (pretrain_mamba.py): the layer pattern and the Mamba-2 mixer's shape."""
    assert model.mamba is not None or "M" not in model.pattern
    s: Settings = {
        "spec": MAMBA_SPEC,
        "is_hybrid_model": True,
        "hybrid_override_pattern": model.pattern,
    }
    if model.mamba is not None:
        m = model.mamba
        s["mamba_num_heads"] = m.heads
        s["mamba_head_dim"] = m.head_dim
        s["mamba_state_dim"] = m.state_dim
        s["mamba_num_groups"] = m.groups
    return s


def entry_script(model: Model) -> str:
    """The Megatron-LM training script that builds this model."""
    return "pretrain_mamba.py" if model.hybrid else "pretrain_gpt.py"


# The flex dispatcher's backend by GPU: DeepEP on a scale-up domain of 8, HybridEP on an NVL72 rack (GB200,
# GB300), where Megatron-Bridge refuses DeepEP ("DeepEP is supported for Ampere, Hopper, and Blackwell
# (B200/B300) GPUs", training/flex_dispatcher_backend.py at v0.6.0 and 067f987) and NVIDIA's own GB200 and
# GB300 recipes run HybridEP (every such row of validation/published_runs.yaml)
HYBRIDEP_DOMAIN = 8


def flex_backend(cluster: Cluster, cand: Candidate) -> str:
    # the full-iteration graph needs HybridEP's budgeted dispatch on any NVLink domain (megatron.RANK_BUDGET)
    if cand.cuda_graph == "full" or cluster.gpu.scale_up_domain > HYBRIDEP_DOMAIN:
        return "hybridep"
    return "deepep"


def parallel_settings(model: Model, cluster: Cluster, cand: Candidate) -> Settings:
    """Parallel layout, batch, recomputation, sharding, precision and overlap knobs."""
    s: Settings = {
        K["tp"]: cand.tp,
        K["pp"]: cand.pp,
    }
    if cand.pipeline_layout:
        # Megatron (training/arguments.py) takes at most one of the layout and the VPP flags; it reads
        # VPP from the layout's stage count
        s[K["pipeline_layout"]] = cand.pipeline_layout
    elif cand.vpp > 1:
        s[K["vpp"]] = cand.vpp
    # Megatron's uneven split: unset (even) unless the knob is; the middle stages share the rest
    if cand.first_stage_layers:
        s[K["first_stage_layers"]] = cand.first_stage_layers
    if cand.last_stage_layers:
        s[K["last_stage_layers"]] = cand.last_stage_layers
    s[K["account_for_embedding"]] = cand.account_for_embedding
    s[K["account_for_loss"]] = cand.account_for_loss
    s[K["cp"]] = cand.cp
    if cand.cp > 1:
        s[K["cp_comm"]] = cand.cp_comm
    s.update(spelling.cross_entropy_settings(cand.cross_entropy))
    s[K["sequence_parallel"]] = cand.sp
    if model.moe is not None:
        s[K["ep"]] = cand.ep
        s[K["etp"]] = cand.expert_tp
        s[K["moe_dispatcher"]] = cand.moe_dispatcher
        if cand.moe_dispatcher == "flex":
            s[P["moe_dispatcher.backend"]] = flex_backend(cluster, cand)
        s[K["ep_comm_overlap"]] = cand.ep_comm_overlap
        s.update(balancing_settings(model))
    s[K["mbs"]] = cand.mbs
    s[K["gbs"]] = cand.gbs
    if cand.recompute.kind == "selective":
        s[K["recompute"]] = "selective"
        modules = tuple(getattr(cand.recompute, "modules", ()))
        if modules:
            s[P["recompute.modules"]] = modules
    elif cand.recompute.kind == "full":
        s[K["recompute"]] = "full"
        s[P["recompute.method"]] = cand.recompute.method
        s[P["recompute.layers"]] = cand.recompute.layers
    if cand.offload_layers:
        s[K["offload_layers"]] = cand.offload_layers  # arguments.py switches cpu_offloading on from the count
    s[K["sharding"]] = cand.sharding in ("dist_opt", "fsdp")
    if cand.sharding == "fsdp":
        s[P["sharding.fsdp"]] = True
        s[P["sharding.fsdp_strategy"]] = "optim_grads_params"
        s["gradient_accumulation_fusion"] = False
    s[K["overlap_grad_reduce"]] = cand.overlap_grad_reduce
    # The knob defaults to on; without a sharded optimizer there is no parameter all-gather to overlap.
    s[K["overlap_param_gather"]] = cand.overlap_param_gather and cand.sharding != "none"
    s[P["precision.bf16"]] = True
    if cand.precision == "fp8":
        s[K["precision"]] = cand.fp8_format  # argparse dest of --fp8-format
        s[K["fp8_recipe"]] = cand.fp8_recipe
        if cand.fp8_param_gather:
            s[K["fp8_param_gather"]] = True
    elif cand.precision == "fp4":
        # Parameters stay BF16 (no --fp4-param-gather), as the memory account assumes
        s[P["precision.fp4"]], s[P["precision.fp4_recipe"]] = nvfp4_values()
    # "flash" is the fused memory-efficient kernel (cuDNN or ROCm CK fused attention, none of which
    # keeps the s x s scores): Transformer Engine picks the one the node has. "fa2" asks for its
    # FlashAttention backend (the flash-attn package); "unfused" keeps the scores.
    s[K["attention"]] = ATTENTION_BACKENDS[cand.attention]
    s[K["tp_comm_overlap"]] = cand.tp_comm_overlap
    s.update(cuda_graph_settings(model, cand))
    if cand.optimizer_dtype != "fp32":
        s[P["optimizer_dtype.precision_aware"]] = True
        s[K["main_grad_dtype"]] = cand.main_grad_dtype
        s[K["optimizer_dtype"]] = cand.optimizer_dtype
        s[P["optimizer_dtype.second_moment"]] = cand.optimizer_dtype
    elif cand.main_grad_dtype != "fp32":
        # BF16 gradients with FP32 Adam moments: the plain DDP switch published recipes use (validate_args
        # then keeps the gradient buffer in BF16, as --main-grads-dtype bf16 would under the precision-aware
        # optimizer, which the moments do not need)
        s[P["main_grad_dtype.bf16_reduce"]] = True
    return s


@functools.cache
def nvfp4_values(version: str = megatron.DEFAULT_VERSION) -> tuple[str, str]:
    """``precision = fp4`` as Megatron's --fp4-format and --fp4-recipe take it at the release (its flag
    table): the format's one choice, E2M1, and the recipe's default, NVFP4 (the other choice, ``custom``,
    loads a user's quantizer factory, which primusc's account is not)."""
    dests = megatron.by_dest(version)
    fmt, recipe = dests[P["precision.fp4"]][0], dests[P["precision.fp4_recipe"]][0]
    if fmt.choices is None or len(fmt.choices) != 1 or not isinstance(recipe.default, str):
        raise ValueError(f"Megatron {version}'s {fmt.option} or {recipe.option} is no longer one format and "
                         "a default recipe: say which of them `precision = fp4` means")
    return fmt.choices[0], recipe.default


def cuda_graph_settings(model: Model, cand: Candidate) -> Settings:
    """``--cuda-graph-impl``/``--cuda-graph-scope`` and what megatron/training/arguments.py (core_v0.16.1)
    requires beside them; nothing for ``none``."""
    if cand.cuda_graph == "none":
        return {}
    impl, scope = CUDA_GRAPH_SETTINGS[cand.cuda_graph]
    if model.hybrid and "attn" in scope:
        # the knob's `attn` is the sequence mixer: a hybrid model's Mamba layers are graphed with it
        scope = (*scope[:1], "mamba", *scope[1:])
    s: Settings = {K["cuda_graph"]: impl}
    if scope:
        s[P["cuda_graph.scope"]] = scope
    # Graph replay needs Transformer Engine's RNG tracker; Megatron turns it on with a warning, the
    # launch files say so themselves.
    s["te_rng_tracker"] = True
    if cand.cuda_graph == "full":
        # validate_args refuses the full-iteration graph while the NaN check (a host sync) is on
        s["check_for_nan_in_loss_and_grad"] = False
        if model.moe is not None:
            # the graph holds no host copy of the experts' token counts: HybridEP dispatches against a
            # static budget per rank instead (P4047 refuses the launches that lack one)
            s[megatron.RANK_BUDGET_DEST] = megatron.RANK_BUDGET
            s[megatron.RANK_BUDGET_NEEDS] = True
            if cand.ep > 1:
                # validate_args requires it for the local implementation with EP; it changes only inference
                s["moe_pad_experts_for_cuda_graph_inference"] = True
    return s


def balancing_settings(model: Model) -> Settings:
    """How the router keeps the experts' load even, as the card says; written out in full, since
    Megatron's defaults (a balancing loss of coefficient 0) balance nothing."""
    moe = model.moe
    assert moe is not None
    s: Settings = {C["moe.router_score"]: moe.router_score}
    if moe.aux_loss > 0:
        s[C["moe.aux_loss_type"]] = moe.aux_loss_type
        s["moe_aux_loss_coeff"] = moe.aux_loss
    else:
        s[C["moe.aux_loss_type"]] = "none"
    if moe.router_pre_softmax:
        s[C["moe.router_pre_softmax"]] = True
    if moe.bias_balancing:
        s[C["moe.bias_balancing"]] = True
    if moe.topk_scaling:
        s[C["moe.topk_scaling"]] = moe.topk_scaling
    if moe.router_groups:
        s[C["moe.router_groups"]] = moe.router_groups
        s[C["moe.router_group_topk"]] = moe.router_group_topk
    return s


def run_settings(model: Model, cand: Candidate, v: Variables, run: Run | None = None,
                 site: Site | None = None) -> Settings:
    """Training-run plumbing: iterations, learning rate, data, tokenizer, checkpoints, logging.

    What Megatron and Primus default differently is written out, so both frameworks run the same
    schedule: Primus's trainer config warms up for 40 iterations without weight decay, and restarts a
    checkpointed run as a fine-tune (iteration 0, fresh optimizer) unless told otherwise."""
    if run is not None:
        return training_settings(model, cand, v, run, site)
    s: Settings = {"train_iters": int(v.train_iters), "lr": float(v.lr), "lr_warmup_iters": 0,
                   "weight_decay": 0.01, "log_interval": int(v.log_interval), "eval_iters": int(v.eval_iters),
                   "eval_interval": int(v.eval_interval)}
    data_root = site.data_root if site is not None else ""
    if v.data_path:
        s["data_path"] = _one_or_many(data_paths(v.data_path, data_root))
    else:
        s["mock_data"] = True
    _tokenizer_and_checkpoints(s, model, v, site)
    return s


def _tokenizer_and_checkpoints(s: Settings, model: Model, v: Variables, site: Site | None) -> None:
    """The tokenizer (the model's vocabulary without one) and, with a checkpoint folder, saving and
    loading there: what a throughput run and a ``run`` block's training run write alike."""
    s["tokenizer_type"] = v.tokenizer_type
    if v.tokenizer_model:
        s["tokenizer_model"] = v.tokenizer_model
    else:
        s[C["vocab"]] = model.vocab  # the null tokenizer's own count is the framework's (frameworks.py)
    if v.checkpoint_dir:
        folder = under(site.checkpoint_root if site is not None else "", v.checkpoint_dir)
        s["save"] = folder
        s["load"] = folder
        # Megatron asserts an interval whenever it saves
        s["save_interval"] = int(v.save_interval or v.train_iters)
        s["finetune"] = False


def _one_or_many(paths: tuple[str, ...]) -> Setting:
    # one prefix stays a plain value, so a run without a blend emits what it always did
    return paths[0] if len(paths) == 1 else paths


def _tenth(lr: float) -> float:
    """A tenth of the peak learning rate as a person writes it: 1.5e-4 / 10 is 1.4999999999999999e-05
    in binary, and the launch file would say so."""
    return float(f"{lr / 10:.12g}")


def training_settings(model: Model, cand: Candidate, v: Variables, run: Run, site: Site | None) -> Settings:
    """A ``run`` block's training run: schedule, optimizer, data splits, logging, checkpoints. What
    the block leaves out is the published recipe's value (ir/run.py names the source)."""
    iters = int(v.train_iters)
    lr = float(v.lr)
    s: Settings = {
        "train_iters": iters, "lr": lr, "min_lr": run.min_lr or _tenth(lr),
        "lr_decay_style": DECAY_STYLES[run.decay], "lr_warmup_iters": run.warmup_iters,
        "lr_decay_iters": run.decay_iters or iters,
        "weight_decay": run.weight_decay, "adam_beta1": run.adam_beta1, "adam_beta2": run.adam_beta2,
        "adam_eps": run.adam_eps, "clip_grad": run.clip_grad, "init_method_std": run.init_std,
        "log_interval": int(v.log_interval), "log_throughput": run.log_throughput,
        "eval_iters": int(v.eval_iters), "eval_interval": int(v.eval_interval),
    }
    if run.tensorboard_dir:
        s["tensorboard_dir"] = run.tensorboard_dir
    if run.wandb_project:
        s["wandb_project"] = run.wandb_project
        s["wandb_exp_name"] = v.job_name
    root = site.data_root if site is not None else ""
    if run.train_data and v.data_path == run.train_data:  # the per-split form, unless --var replaced it
        for name in ("train_data", "valid_data", "test_data"):
            if getattr(run, name):
                s[f"{name}_path"] = data_paths(getattr(run, name), root)
    elif v.data_path:
        s["data_path"] = data_paths(v.data_path, root)
        if run.split:
            s["split"] = run.split
    else:
        s["mock_data"] = True
    _tokenizer_and_checkpoints(s, model, v, site)
    # the release's rules decide the format beside Megatron-FSDP (Profile.implied), whatever the run block says
    s["ckpt_format"] = run.ckpt_format
    return s


def megatron_settings(model: Model, cluster: Cluster, cand: Candidate, v: Variables, run: Run | None = None,
                      site: Site | None = None) -> Settings:
    """All settings, in a stable order: architecture, then parallelism, then the run."""
    settings: Settings = {}
    settings.update(model_settings(model, cand.seq_len))
    settings.update(parallel_settings(model, cluster, cand))
    settings.update(run_settings(model, cand, v, run, site))
    return settings
