"""Hugging Face config fields → the IR ``Model``, one small function per architecture family.

Each family reads exactly the fields whose meaning it knows; whatever changes the model's shape but
has no IR field is refused (P3104/P3105), whatever does not change parameters, FLOPs or memory is
recorded in ``Imported.notes`` so the card can say what it leaves out.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    BAD_VALUE,
    HYBRID_ARCHITECTURE,
    MISSING_FIELD,
    UNKNOWN_MODEL_TYPE,
    UNSUPPORTED_FEATURE,
)
from primus_lang.hfimport.config import HfConfig, Reader
from primus_lang.hfimport.defaults import with_class_defaults
from primus_lang.ir.derived import model_default
from primus_lang.ir.families import HYBRID_FAMILIES, hybrid_evidence
from primus_lang.ir.model import Mamba, Mla, Model, Moe

# Without a training length in the config, a card defaults to the context the model was pre-trained
# at (RoPE scaling's original length) or, failing that, this many tokens capped by the longest position.
DEFAULT_SEQ_LEN = 4096


@frozen
class Imported:
    """The mapped card and the human-readable list of what it approximates or leaves out."""

    model: Model
    model_type: str
    notes: tuple[str, ...] = ()


Fields = dict[str, Any]


# --- refusals -----------------------------------------------------------------------------------
def _refuse_hybrid(config: HfConfig) -> None:
    """Refuse the hybrid families the IR cannot hold (those with a mapping below are imported)."""
    if config.model_type in HYBRID_FAMILIES:
        return
    evidence, key = hybrid_evidence(config.data)
    if evidence:
        raise CompileError(
            Diagnostic(
                HYBRID_ARCHITECTURE,
                f"cannot import a hybrid model: {evidence}",
                span=config.span_of(key),
                help=f"the importer reads the layer layout of {', '.join(f'`{t}`' for t in sorted(HYBRID_FAMILIES))} "
                f"configs only, and has no reading of `{config.model_type}`'s (its layer kinds, their order and "
                "its scalings); a Mamba-2 hybrid can be written by hand as a card with a `pattern` and a "
                "`mamba { }` block (docs/language.md), as the stdlib's Nemotron 3 cards are",
            )
        )


def _unsupported(config: HfConfig, key: str, message: str, help: str) -> CompileError:
    return CompileError(Diagnostic(UNSUPPORTED_FEATURE, message, span=config.span_of(key), help=help))


# --- shared pieces ------------------------------------------------------------------------------
def _attention(r: Reader) -> Fields:
    heads = r.count("num_attention_heads", "the attention head count")
    hidden = r.count("hidden_size", "the model width")
    known = {"heads": heads, "hidden": hidden}
    kv_heads = r.count("num_key_value_heads", "the KV head count", default=model_default("kv_heads", known))
    head_dim = r.count("head_dim", "the per-head width", default=0)
    if head_dim == 0 and heads and hidden:
        if hidden % heads:
            why = f"the per-head width (hidden_size {hidden} is not a multiple of {heads} heads)"
            r.problems.append(r.config.missing("head_dim", why))
        head_dim = model_default("head_dim", known)
    if heads and kv_heads and heads % kv_heads:
        r.problems.append(
            r.config.bad("num_key_value_heads", kv_heads, f"a divisor of num_attention_heads ({heads})")
        )
    return {
        "num_layers": r.count("num_hidden_layers", "the layer count"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab": r.count("vocab_size", "the vocabulary size"),
        "max_position_embeddings": r.count("max_position_embeddings", "the longest position"),
        # Every family mapped here defaults to untied embeddings in transformers.
        "tied_embeddings": r.flag("tie_word_embeddings", False),
    }


_GELUS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python")


def _gated_activation(r: Reader, key: str = "hidden_act", default: str = "silu") -> str:
    act = r.text(key, default)
    if act in ("silu", "swish"):
        return "swiglu"
    if act in _GELUS:
        return "geglu"  # a gated GELU, whichever approximation of GELU it uses
    raise _unsupported(
        r.config,
        key,
        f"gated MLP with `{key}` `{act}` has no IR activation (the gated ones are SwiGLU and GeGLU)",
        "write the card by hand with the closest activation and say in a comment what it approximates",
    )


_PLAIN_ACTIVATIONS = {
    "relu2": "squared_relu",
    "squared_relu": "squared_relu",
    "relu": "relu",
    "gelu": "gelu",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "gelu_fast": "gelu",
}


def _plain_activation(r: Reader) -> str:
    act = r.text("hidden_act", "relu2")
    if act in _PLAIN_ACTIVATIONS:
        return _PLAIN_ACTIVATIONS[act]
    raise _unsupported(
        r.config, "hidden_act", f"`hidden_act` `{act}` has no IR activation", "write the card by hand"
    )


def _rope_notes(r: Reader, fields: dict[str, Any], notes: list[str]) -> int:
    """Take the RoPE base into the card, note the scaling the IR leaves out, and return the
    pre-training length the scaling implies (0: none)."""
    theta = r.config.data.get("rope_theta")
    scaling = r.mapping("rope_scaling")
    original = scaling.get("original_max_position_embeddings")
    kind = scaling.get("rope_type", scaling.get("type"))
    if theta is not None:
        if isinstance(theta, bool) or not isinstance(theta, int | float) or not 0 < theta < math.inf:
            r.problems.append(r.config.bad("rope_theta", theta, "a finite number > 0"))
        else:
            fields["rope_theta"] = float(theta)
    if kind:
        factor = scaling.get("factor")
        if kind == "llama3" and _megatron_llama3(scaling) and isinstance(factor, int | float) and factor > 0:
            fields["rope_scaling"] = float(factor)
        else:
            notes.append(f"{kind} RoPE scaling" + (f" (factor {factor})" if factor is not None else "")
                         + " not represented (no effect on parameters, FLOPs or memory"
                         + ("; Megatron's --use-rope-scaling fixes the frequency factors at 1 and 4 over 8192 "
                            "tokens" if kind == "llama3" else "") + ")")
    elif scaling:
        notes.append(f"rope_scaling {dict(scaling)} names no `rope_type`: not represented (no effect on parameters, "
                     "FLOPs or memory)")
    initial = r.config.data.get("initial_context_length")
    for value in (original, initial):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


_PER_LAYER_TYPE = ("full_attention", "sliding_attention")


def _lift_rope_parameters(config: HfConfig, notes: list[str]) -> HfConfig:
    """A transformers v5 config's ``rope_parameters`` (its RoPE base, scaling and rotary share in one
    object, or one such object per layer type: Gemma 3's full and sliding layers) as the v4 fields the
    families read: ``rope_theta``, ``rope_scaling``, ``partial_rotary_factor`` (and Gemma 3's
    ``rope_local_base_freq``). Where the config also states one at the top, the newer object wins, said."""
    params = config.data.get("rope_parameters")
    if not isinstance(params, dict) or not params:
        return config
    lifted: dict[str, Any] = {}
    full: dict[str, Any] = params
    if set(params) <= set(_PER_LAYER_TYPE):
        inner = params.get("full_attention")
        full = inner if isinstance(inner, dict) else {}
        local = params.get("sliding_attention")
        if isinstance(local, dict) and "rope_theta" in local:
            lifted["rope_local_base_freq"] = local["rope_theta"]
    for key in ("rope_theta", "partial_rotary_factor"):
        if key in full:
            lifted[key] = full[key]
    kind = full.get("rope_type", full.get("type", "default"))
    if kind not in (None, "default"):
        lifted["rope_scaling"] = {k: v for k, v in full.items() if k not in ("rope_theta", "partial_rotary_factor")}
    for key, value in lifted.items():
        if key in config.data and config.data[key] != value:
            notes.append(f"{key} {value} read from rope_parameters, over the top-level {key} {config.data[key]}")
    return attrs.evolve(config, data={**config.data, **lifted})


# Llama 3.1's scaling as megatron-core applies it (RotaryEmbedding._apply_scaling, 0.16.1): only the factor
# is an argument; the other three are fixed at Llama 3.1's
_LLAMA3_FIXED = {"low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}


def _megatron_llama3(scaling: Any) -> bool:
    return all(scaling.get(k, v) == v for k, v in _LLAMA3_FIXED.items())


def _seq_len(r: Reader, fields: Fields, pretrain_len: int, override: int | None, notes: list[str]) -> None:
    max_pos = int(fields["max_position_embeddings"])
    if override is not None:
        fields["seq_len"] = override
        if max_pos and override > max_pos:
            # Megatron-LM asserts --max-position-embeddings >= --seq-length: the launch writes the longer one
            notes.append(f"seq_len {override:,} is beyond max_position_embeddings {max_pos:,}, the longest context "
                         "the checkpoint was trained for: a long-context extension (RoPE scaling the card does "
                         "not carry); the launch raises --max-position-embeddings to the sequence")
    elif pretrain_len:
        fields["seq_len"] = min(pretrain_len, max_pos) if max_pos else pretrain_len
        notes.append(f"seq_len {fields['seq_len']}: the pre-training context before RoPE scaling")
    else:
        fields["seq_len"] = min(DEFAULT_SEQ_LEN, max_pos) if max_pos else DEFAULT_SEQ_LEN
        notes.append(
            f"seq_len {fields['seq_len']}: a default (the config names no training length); spaces may override it"
        )


def _full_sliding_window(r: Reader, fields: Fields, key: str, notes: list[str]) -> None:
    """A window on every layer (Mistral 7B v0.1, Phi-3): kept whenever a sequence the model takes can
    exceed it, even where the card's seq_len does not (a space may train longer), as windows on some
    layers are; left out when it is no shorter than the longest context, where it never binds."""
    window = r.count(key, "the sliding-window width", default=0, minimum=0)
    if window <= 0:
        return
    longest = int(fields["max_position_embeddings"] or 0)
    if not longest or window < longest:
        fields["sliding_window"] = window
        fields["full_attention_every"] = 0
        return
    notes.append(f"{key} {window} left out: no shorter than max_position_embeddings {longest}, so the window "
                 "never binds")


def _layer_types(r: Reader) -> list[Any] | None:
    """``layer_types`` where the config gives a list (None where it gives none; a value of another type is
    a problem, not a default pattern)."""
    value = r.config.data.get("layer_types")
    if value is None or isinstance(value, list):
        return value
    r.problems.append(r.config.bad("layer_types", value, "a list of layer types, one per layer"))
    return None


def _window_pattern(r: Reader, fields: Fields, notes: list[str], period_key: str = "") -> None:
    """Windowed and full layers from ``layer_types`` (or a period field, Gemma 3's
    ``sliding_window_pattern``): the IR holds "every n-th layer full, the rest windowed", megatron-core's
    --window-attn-skip-freq."""
    window = r.count("sliding_window", "the sliding-window width", default=0, minimum=0)
    if not window:
        return
    n = int(fields["num_layers"])
    layer_types = _layer_types(r)
    every = 0
    if layer_types:
        if len(layer_types) != n:
            raise _unsupported(
                r.config, "layer_types", f"layer_types lists {len(layer_types)} layers; num_hidden_layers is {n}",
                "give one entry per layer")
        full = [i + 1 for i, t in enumerate(layer_types) if t != "sliding_attention"]
        every = full[0] if full else 0
        expected = [i for i in range(1, len(layer_types) + 1) if every and i % every == 0]
        if full != expected:
            raise _unsupported(
                r.config,
                "layer_types",
                f"full-attention layers {full[:8]}{'...' if len(full) > 8 else ''} are not every n-th layer",
                "the IR (and megatron-core's --window-attn-skip-freq) holds a full-attention layer every n "
                "layers; write the card by hand",
            )
    elif period_key and r.config.has(period_key):
        every = r.count(period_key, "the windowed/full layer period")
    else:
        every = 2
    # kept even where seq_len does not reach it: the card describes the model, and a space may train longer
    fields["sliding_window"] = window
    fields["full_attention_every"] = every


def _norm_epsilon(r: Reader, fields: Fields) -> None:
    for key in ("rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps", "norm_eps", "norm_epsilon"):
        value = r.config.data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            r.problems.append(r.config.bad(key, value, "a number in (0, 1)"))
        else:
            fields["norm_epsilon"] = float(value)
        return


def _softcaps(r: Reader, fields: Fields) -> None:
    for key, field in (("attn_logit_softcapping", "attention_softcap"), ("final_logit_softcapping", "logit_softcap")):
        fields[field] = r.real(key, 0.0)


def _biases(r: Reader, fields: Fields, notes: list[str]) -> None:
    attention = r.flag("attention_bias", False)
    mlp = r.flag("mlp_bias", False)
    fields["bias"] = attention or mlp
    if attention != mlp:
        which = "attention" if attention else "MLP"
        notes.append(
            f"only the {which} linears carry biases; `bias = true` also counts the others' (a few vectors)"
        )


def _mlp(r: Reader, fields: Fields, notes: list[str], width: int, activation: str | None = None,
         norm: str = "rmsnorm") -> None:
    """The fields most families set alike: the MLP width, its activation (gated, from `hidden_act`, unless
    given), the norm and the biases."""
    fields["ffn_hidden"] = width
    fields["activation"] = _gated_activation(r) if activation is None else activation
    fields["norm"] = norm
    _biases(r, fields, notes)


# --- families -----------------------------------------------------------------------------------
def _llama(r: Reader, fields: Fields, notes: list[str]) -> None:
    _mlp(r, fields, notes, r.count("intermediate_size", "the MLP width"))


def _mistral(r: Reader, fields: Fields, notes: list[str]) -> None:
    _llama(r, fields, notes)
    _full_sliding_window(r, fields, "sliding_window", notes)


# transformers' Qwen2Config and Qwen3Config default (configuration_qwen2.py, configuration_qwen3.py)
QWEN_MAX_WINDOW_LAYERS = 28


def _qwen_window(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Qwen2's and Qwen3's window: with use_sliding_window, layer i (from 0) is windowed where
    i >= max_window_layers (transformers' Qwen2Config/Qwen3Config ``layer_types``, which a newer config
    states itself). On no layer it is left out, on every layer kept; on the last layers only it is
    refused, as the IR's windowed layers follow a period."""
    if not r.flag("use_sliding_window", False) or r.config.data.get("sliding_window") is None:
        return
    n = int(fields["num_layers"])
    layer_types = _layer_types(r)
    if isinstance(layer_types, list) and len(layer_types) != n:
        raise _unsupported(r.config, "layer_types", f"layer_types lists {len(layer_types)} layers; "
                           f"num_hidden_layers is {n}", "give one entry per layer")
    if isinstance(layer_types, list):
        windowed = [i for i, t in enumerate(layer_types) if t == "sliding_attention"]
        key = "layer_types"
    else:
        first = r.count("max_window_layers", "the layers without a window", default=QWEN_MAX_WINDOW_LAYERS,
                        minimum=0)
        windowed = list(range(first, n))
        key = "max_window_layers"
    if not windowed:
        notes.append(f"use_sliding_window left out: no layer is windowed ({key} leaves all {n} in full attention)")
    elif len(windowed) == n:
        _full_sliding_window(r, fields, "sliding_window", notes)
    else:
        raise _unsupported(
            r.config, key,
            f"a sliding window on layers {windowed[0]}..{windowed[-1]} of {n} only: the IR's windowed layers follow "
            "a period (a full-attention layer every n)",
            "import with use_sliding_window false (the released Qwen2.5 and Qwen3 models train without it)")


def _qwen3(r: Reader, fields: Fields, notes: list[str]) -> None:
    _llama(r, fields, notes)
    fields["qk_layernorm"] = True
    _qwen_window(r, fields, notes)


def _qwen2(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Qwen2 and Qwen2.5: Llama's layer with a bias on the q, k and v projections alone (transformers'
    Qwen2Attention builds them with bias=True and o_proj without)."""
    _llama(r, fields, notes)
    fields["bias"] = False
    fields["qkv_bias"] = True
    _qwen_window(r, fields, notes)


def _partial_rotary(r: Reader, fields: Fields) -> None:
    """RoPE on a share of each head's width (Megatron's --rotary-percent)."""
    partial = r.config.data.get("partial_rotary_factor")
    if partial is None:
        return
    if isinstance(partial, bool) or not isinstance(partial, int | float) or not 0 < partial <= 1:
        r.problems.append(r.config.bad("partial_rotary_factor", partial, "a share in (0, 1]"))
        return
    fields["rotary_percent"] = float(partial)


def _routing(r: Reader, router_score: str, bias_balancing: bool, notes: list[str]) -> dict[str, Any]:
    """How DeepSeek's router (GLM-4.5's and Nemotron 3's too) picks and weights experts: the weights'
    scale (routed_scaling_factor), the groups a token's experts come from (n_group, topk_group: one
    group is no limit) and its balancing loss (aux_loss_alpha, over each sequence where seq_aux, the
    transformers default of DeepseekV2/V3Config)."""
    scale = r.real("routed_scaling_factor", 0.0)
    out: dict[str, Any] = {"router_score": router_score, "bias_balancing": bias_balancing,
                           "router_pre_softmax": _pre_softmax(r, router_score, notes),
                           "topk_scaling": 0.0 if scale == 1.0 else scale}  # a scale of 1 is none
    groups = r.count("n_group", "the expert groups", default=0, minimum=0)
    # transformers' DeepSeek routers limit the groups only under group_limited_greedy and noaux_tc
    greedy = r.text("topk_method", "") == "greedy"
    if groups > 1 and not greedy:
        out["router_groups"] = groups
        out["router_group_topk"] = r.count("topk_group", "the groups a token's experts come from")
    elif groups > 1:
        r.count("topk_group", "the groups a token's experts come from")  # read, and left out as the router does
        notes.append(f"n_group {groups} and topk_group left out: topk_method greedy picks from every expert")
    alpha = r.real("aux_loss_alpha", 0.0)
    if alpha > 0:
        out["aux_loss"] = alpha
        out["aux_loss_type"] = "seq_aux_loss" if r.flag("seq_aux", True) else "aux_loss"
    return out


def _phi3(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Phi-3 and Phi-4: Llama's shapes with fused qkv_proj and gate_up_proj (same parameter counts)."""
    _llama(r, fields, notes)
    _full_sliding_window(r, fields, "sliding_window", notes)


def _olmo2(r: Reader, fields: Fields, notes: list[str]) -> None:
    """OLMo 2: norms after attention and after the MLP (none before), and RMSNorm over all heads'
    queries and keys at once (q_norm over heads·head_dim, k_norm over kv_heads·head_dim)."""
    _llama(r, fields, notes)
    fields["norm_placement"] = "post"
    fields["qk_layernorm"] = True
    fields["qk_norm_whole"] = True


def _gemma(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Gemma: GeGLU (tanh GELU), tied embeddings scaled by sqrt(hidden) (no parameters), RMSNorm with a
    (1 + weight) scale (same shapes)."""
    fields["ffn_hidden"] = r.count("intermediate_size", "the MLP width")
    key = "hidden_activation" if r.config.has("hidden_activation") else "hidden_act"
    fields["activation"] = _gated_activation(r, key, "gelu_pytorch_tanh")
    fields["norm"] = "rmsnorm"
    fields["tied_embeddings"] = r.flag("tie_word_embeddings", True)
    _biases(r, fields, notes)
    if r.config.has("query_pre_attn_scalar"):
        notes.append(f"query_pre_attn_scalar {r.config.data['query_pre_attn_scalar']} (the attention scale) "
                     "not represented (no effect on parameters, FLOPs or memory)")


def _gemma2(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Gemma 2: norms before and after each sublayer, tanh soft-capping of the attention and final
    logits, a sliding window on every other layer."""
    _gemma(r, fields, notes)
    fields["norm_placement"] = "sandwich"
    _softcaps(r, fields)
    _window_pattern(r, fields, notes)


def _gemma3(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Gemma 3 (text): Gemma 2's sandwich norms with per-head RMSNorm on queries and keys instead of
    soft-capping, a window on five layers of six."""
    _gemma(r, fields, notes)
    fields["norm_placement"] = "sandwich"
    fields["qk_layernorm"] = True
    _softcaps(r, fields)
    _window_pattern(r, fields, notes, "sliding_window_pattern")
    local = r.config.data.get("rope_local_base_freq")
    if local is not None:
        notes.append(f"the windowed layers' RoPE base rope_local_base_freq {local} not represented (rope_theta "
                     "is the full layers'; no effect on parameters, FLOPs or memory)")


def _deepseek_moe(r: Reader, router_score: str, bias_balancing: bool, notes: list[str]) -> Moe:
    """DeepSeek's MoE layout, which GLM-4 MoE shares: routed experts of moe_intermediate_size, shared
    experts of the same width, and a dense prefix of first_k_dense_replace layers."""
    moe_width = r.count("moe_intermediate_size", "the expert width")
    shared = r.count("n_shared_experts", "the shared-expert count", default=0, minimum=0)
    return Moe(
        num_experts=r.count("n_routed_experts", "the routed-expert count"),
        top_k=r.count("num_experts_per_tok", "the routing top-k"),
        ffn_hidden=moe_width,
        shared_experts=shared,
        shared_ffn_hidden=moe_width if shared else 0,
        dense_layers=r.count("first_k_dense_replace", "the dense-prefix length", default=0, minimum=0),
        **_routing(r, router_score, bias_balancing, notes),
    )


def _glm4_moe(r: Reader, fields: Fields, notes: list[str]) -> None:
    """GLM-4.5 / GLM-4.6 (transformers' Glm4MoeConfig): DeepSeek-V3's MoE (sigmoid router with a
    correction bias, shared expert, dense first layers, MTP) on grouped-query attention whose q, k and
    v projections carry biases (attention_bias), with optional per-head QK norms."""
    fields["ffn_hidden"] = r.count("intermediate_size", "the dense MLP width of the first layers")
    fields["activation"] = _gated_activation(r)
    fields["norm"] = "rmsnorm"
    fields["qkv_bias"] = r.flag("attention_bias", False)
    fields["qk_layernorm"] = r.flag("use_qk_norm", False)
    # Glm4MoeTopkRouter: sigmoid scores plus e_score_correction_bias
    fields["moe"] = _deepseek_moe(r, router_score="sigmoid", bias_balancing=True, notes=notes)
    fields["mtp_layers"] = r.count("num_nextn_predict_layers", "the MTP layer count", default=0, minimum=0)


def _llama4(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Llama 4 text (Scout): MoE with one shared expert on every layer, chunked local attention on
    three layers of four and no RoPE on the fourth (NoPE), L2-normalized queries and keys."""
    n = int(fields["num_layers"])
    step = r.count("interleave_moe_layer_step", "the MoE layer period", default=1)
    listed = r.config.data.get("moe_layers")
    if listed == []:
        raise _unsupported(r.config, "moe_layers", "moe_layers lists no layer: every layer dense",
                           "write a dense card (a Llama 3 one) rather than a Llama 4 MoE one")
    if listed is not None and listed != list(range(step - 1, n, step)):
        # transformers builds the layers the list names, over the period (Llama4TextConfig.__post_init__)
        raise _unsupported(
            r.config, "moe_layers", "MoE on listed layers that are not every interleave_moe_layer_step-th: the "
            "IR's MoE layers are a cycle repeated (`moe.layer_cycle`)",
            "missing feature: an arbitrary list of MoE layers; write no card rather than a wrong one")
    if step > n:
        raise _unsupported(r.config, "interleave_moe_layer_step", f"a MoE layer every {step} layers, of {n}",
                           "no layer would route to experts: write a dense card")
    # Llama4TextConfig: layer i routes to experts where (i + 1) % step == 0 (Maverick, step 2: layers 1, 3, ...)
    chunk = r.count("attention_chunk_size", "the chunked-attention width", default=0, minimum=0)
    if chunk and chunk < int(fields["seq_len"]):
        raise _unsupported(
            r.config, "attention_chunk_size",
            f"chunked local attention over {chunk}-token chunks is shorter than seq_len {fields['seq_len']}",
            "missing feature: chunked attention (neither the IR nor megatron-core 0.16.1 has it); import "
            f"with `--seq-len {chunk}` or less, where the chunks never bind")
    if chunk:
        # kept so that a space asking for a longer sequence is refused (P4049), not projected as full attention
        fields["attention_chunk"] = chunk
        notes.append(f"attention_chunk_size {chunk} kept as `attention_chunk`: no shorter than seq_len "
                     f"{fields['seq_len']}, so the chunks never bind; a longer `seq_len` is refused (P4049)")
    width = r.count("intermediate_size", "the expert width")
    _mlp(r, fields, notes, r.count("intermediate_size_mlp", "the dense MLP width", default=width))
    fields["moe"] = Moe(
        num_experts=r.count("num_local_experts", "the expert count"),
        top_k=r.count("num_experts_per_tok", "the routing top-k"),
        ffn_hidden=width,
        shared_experts=1,  # Llama4TextMoe always has one shared expert of the experts' width
        shared_ffn_hidden=width,
        layer_cycle="-" * (step - 1) + "E",
        router_score="sigmoid",
        aux_loss=_aux_loss(r, notes),
    )
    # without a list, Llama4TextConfig puts a NoPE layer every no_rope_layer_interval layers (4 by default)
    interval = r.count("no_rope_layer_interval", "the NoPE layer period", default=0, minimum=0)
    if r.config.data.get("no_rope_layers") or interval:
        notes.append("NoPE layers (no_rope_layers, or one every no_rope_layer_interval layers) recorded as rope: no "
                     "effect on parameters, FLOPs or memory; megatron-core's --no-rope-freq 4 would train them")
    if r.flag("use_qk_norm", False):
        notes.append("L2 norm of queries and keys (use_qk_norm) not represented: it has no parameters")
    notes.append("every layer is MoE: ffn_hidden is intermediate_size_mlp and is unused" if step == 1 else
                 f"a MoE layer every {step} layers (interleave_moe_layer_step), the others dense: ffn_hidden is "
                 "their width, intermediate_size_mlp")


def _aux_loss(r: Reader, notes: list[str]) -> float:
    """The load-balancing loss coefficient the config trains with (transformers' router_aux_loss_coef)."""
    if not r.config.has("router_aux_loss_coef"):
        notes.append("no router_aux_loss_coef: the card has no load-balancing loss")
    return r.real("router_aux_loss_coef", 0.0)


def _mixtral(r: Reader, fields: Fields, notes: list[str]) -> None:
    _mistral(r, fields, notes)
    fields["moe"] = Moe(
        num_experts=r.count("num_local_experts", "the expert count"),
        top_k=r.count("num_experts_per_tok", "the routing top-k"),
        ffn_hidden=fields["ffn_hidden"],
        aux_loss=_aux_loss(r, notes),
    )
    notes.append("every layer is MoE: ffn_hidden repeats the expert width and is unused")


def _dense_prefix(r: Reader, key: str, num_layers: int) -> int:
    """A list of dense layer indices the IR can express only as a leading block 0..k-1."""
    layers = r.config.data.get(key) or []
    if not isinstance(layers, list) or not all(isinstance(i, int) for i in layers):
        r.problems.append(r.config.bad(key, layers, "a list of layer indices"))
        return 0
    if sorted(layers) != list(range(len(layers))):
        raise _unsupported(
            r.config,
            key,
            f"dense layers {layers} are not a leading block; the IR puts dense layers first",
            "write the card by hand and say in a comment which layers it moves",
        )
    return min(len(layers), num_layers)


def _qwen3_moe(r: Reader, fields: Fields, notes: list[str]) -> None:
    _qwen3(r, fields, notes)
    if r.count("decoder_sparse_step", "the MoE layer period", default=1) != 1:
        raise _unsupported(
            r.config,
            "decoder_sparse_step",
            "MoE on every n-th layer (decoder_sparse_step > 1) cannot be expressed",
            "the IR supports MoE on all layers after a dense prefix",
        )
    shared = r.count("shared_expert_intermediate_size", "the shared-expert width", default=0, minimum=0)
    fields["moe"] = Moe(
        num_experts=r.count("num_experts", "the expert count"),
        top_k=r.count("num_experts_per_tok", "the routing top-k"),
        ffn_hidden=r.count("moe_intermediate_size", "the expert width"),
        shared_experts=1 if shared else 0,
        shared_ffn_hidden=shared,
        dense_layers=_dense_prefix(r, "mlp_only_layers", int(fields["num_layers"])),
        aux_loss=_aux_loss(r, notes),
        router_pre_softmax=_pre_softmax(r, "softmax", notes),
    )
    notes.append("ffn_hidden is the config's intermediate_size, used only by dense layers")


def _deepseek(r: Reader, fields: Fields, notes: list[str]) -> None:
    _mlp(r, fields, notes, r.count("intermediate_size", "the dense MLP width of the first layers"))
    if r.count("moe_layer_freq", "the MoE layer period", default=1) != 1:
        raise _unsupported(
            r.config,
            "moe_layer_freq",
            "MoE on every n-th layer (moe_layer_freq > 1) cannot be expressed",
            "the IR supports MoE on all layers after a dense prefix",
        )
    # DeepSeek-V3 balances without a loss: sigmoid scores plus a per-expert bias (noaux_tc)
    fields["moe"] = _deepseek_moe(
        r,
        router_score="sigmoid" if r.text("scoring_func", "softmax") == "sigmoid" else "softmax",
        bias_balancing=r.text("topk_method") == "noaux_tc" and r.text("scoring_func") == "sigmoid",
        notes=notes,
    )
    v_head_dim = r.count("v_head_dim", "the MLA value width")
    # transformers' DeepSeek attention normalizes its latents (q_a_layernorm, kv_a_layernorm): megatron-core's
    # MLA builds them under qk_layernorm, as Megatron-Bridge's DeepSeek bridges set it
    fields["qk_layernorm"] = True
    fields["mla"] = Mla(
        kv_lora_rank=r.count("kv_lora_rank", "the MLA KV latent width"),
        qk_nope_head_dim=r.count("qk_nope_head_dim", "the MLA query/key width without RoPE"),
        qk_rope_head_dim=r.count("qk_rope_head_dim", "the MLA query/key width with RoPE"),
        v_head_dim=v_head_dim,
        q_lora_rank=r.count("q_lora_rank", "the MLA query latent width", default=0, minimum=0),
    )
    # MLA ignores kv_channels; the stdlib's deepseek_v3 card records the value width there too.
    fields["head_dim"] = v_head_dim
    fields["mtp_layers"] = r.count("num_nextn_predict_layers", "the MTP layer count", default=0, minimum=0)


def _gpt_oss(r: Reader, fields: Fields, notes: list[str]) -> None:
    width = r.count("intermediate_size", "the expert width")
    fields["ffn_hidden"] = width
    # its config says `silu`, but its MLP gates with x·σ(1.702x) (its alpha): Megatron's --quick-geglu
    fields["activation"] = "quick_geglu"
    fields["norm"] = "rmsnorm"
    fields["bias"] = r.flag("attention_bias", True)
    top_k_key = "num_experts_per_tok" if r.config.has("num_experts_per_tok") else "experts_per_token"
    fields["moe"] = Moe(
        num_experts=r.count("num_local_experts", "the expert count"),
        top_k=r.count(top_k_key, "the routing top-k"),
        ffn_hidden=width,
        router_bias=True,
        expert_bias=True,
        aux_loss=_aux_loss(r, notes),
    )
    _window_pattern(r, fields, notes)
    fields["attention_sinks"] = True  # gpt-oss learns one sink logit per head and layer
    fields["glu_offset"] = 1.0  # modeling_gpt_oss.py: (up + 1) * glu
    limit = r.config.data.get("swiglu_limit")
    if isinstance(limit, int | float) and not isinstance(limit, bool) and limit > 0:
        fields["activation_clamp"] = float(limit)
    notes.append("every layer is MoE: ffn_hidden repeats the expert width and is unused")


def _nemotron(r: Reader, fields: Fields, notes: list[str]) -> None:
    _mlp(r, fields, notes, r.count("intermediate_size", "the MLP width"), _plain_activation(r), "layernorm")
    notes.append("layernorm1p recorded as layernorm (same shapes)")


def _nemotron_h(r: Reader, fields: Fields, notes: list[str]) -> None:
    """Nemotron-H and Nemotron 3 (transformers' NemotronHConfig): a Mamba-2/attention/MLP/MoE layer
    pattern with the same symbols as Megatron's --hybrid-override-pattern; no position embedding
    (Megatron-Bridge's nemotron_h_bridge builds none)."""
    pattern = r.text("hybrid_override_pattern", "")
    if not pattern:
        r.problems.append(r.config.missing("hybrid_override_pattern", "the layer pattern"))
    fields["pattern"] = pattern
    fields["ffn_hidden"] = r.count("intermediate_size", "the dense MLP width", default=0, minimum=0)
    act = r.text("mlp_hidden_act", "relu2")
    if act not in _PLAIN_ACTIVATIONS:
        raise _unsupported(r.config, "mlp_hidden_act", f"`mlp_hidden_act` `{act}` has no IR activation",
                           "write the card by hand")
    fields["activation"] = _PLAIN_ACTIVATIONS[act]
    fields["norm"] = "rmsnorm"
    fields["position"] = "none"
    fields["bias"] = r.flag("use_bias", False)
    fields.pop("rotary_percent", None)
    if fields.pop("rope_theta", None) is not None:
        notes.append("rope_theta not used: Nemotron-H attention has no position embedding")
    if not r.flag("use_conv_bias", True):
        notes.append("use_conv_bias false recorded with Megatron's convolution bias (a few parameters)")
    head_dim = r.count("mamba_head_dim", "the Mamba head width")
    heads = r.count("mamba_num_heads", "the Mamba head count", default=0, minimum=0)
    if not heads:
        expand = r.count("expand", "the Mamba expansion", default=2)
        heads = expand * int(fields["hidden"]) // max(head_dim, 1)
    fields["mamba"] = Mamba(
        heads=heads,
        head_dim=head_dim,
        state_dim=r.count("ssm_state_size", "the SSM state size"),
        groups=r.count("n_groups", "the B/C group count"),
        conv_kernel=r.count("conv_kernel", "the convolution width", default=4),
        chunk=r.count("chunk_size", "the SSD chunk length", default=128),
    )
    if "E" in pattern:
        shared = r.count("n_shared_experts", "the shared-expert count", default=0, minimum=0)
        shared_width = r.count("moe_shared_expert_intermediate_size", "the shared-expert width", default=0,
                               minimum=0)
        fields["moe"] = Moe(
            num_experts=r.count("n_routed_experts", "the routed-expert count"),
            top_k=r.count("num_experts_per_tok", "the routing top-k"),
            ffn_hidden=r.count("moe_intermediate_size", "the expert width"),
            shared_experts=shared,
            shared_ffn_hidden=shared_width // shared if shared else 0,
            latent=r.count("moe_latent_size", "the LatentMoE width", default=0, minimum=0),
            # transformers' NemotronHTopkRouter is DeepSeek-V3's (sigmoid scores plus e_score_correction_bias);
            # the loss and its coefficient, which the config does not carry, are Megatron-Bridge's
            # (nemotron_h_bridge.py: seq_aux_loss, moe_aux_loss_coeff 1e-4)
            **{**_routing(r, "sigmoid", True, notes), "aux_loss": 1e-4, "aux_loss_type": "seq_aux_loss"},
        )
    fields["mtp_layers"] = r.count("num_nextn_predict_layers", "the MTP layer count", default=0, minimum=0)
    if fields["mtp_layers"]:
        mtp = r.text("mtp_hybrid_override_pattern", "*E")
        if mtp != "*E":
            raise _unsupported(r.config, "mtp_hybrid_override_pattern",
                               f"MTP layers of pattern `{mtp}`: the IR's MTP layer is attention then MoE (`*E`)",
                               "write the card by hand")


Family = Callable[[Reader, Fields, list[str]], None]

FAMILIES: dict[str, Family] = {
    "llama": _llama,
    "llama4_text": _llama4,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "qwen3": _qwen3,
    "phi3": _phi3,
    "olmo2": _olmo2,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "gemma3_text": _gemma3,
    "glm4_moe": _glm4_moe,
    "qwen3_moe": _qwen3_moe,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "kimi_k2": _deepseek,  # Kimi K2 ships DeepSeek-V3's architecture under its own model_type
    "gpt_oss": _gpt_oss,
    "nemotron": _nemotron,
    "nemotron_h": _nemotron_h,
}
SUPPORTED_MODEL_TYPES = tuple(sorted(FAMILIES))

# Families primusc knows of and cannot map, by what is missing: said instead of a near name, which
# may be another architecture (qwen2_moe is not qwen3_moe).
MISSING_FEATURES: dict[str, str] = {
    "llama4": "a vision encoder (Llama 4's multimodal wrapper); import its `text_config` as a "
              "config.json of model_type llama4_text",
    "gemma3": "a vision encoder (Gemma 3's multimodal wrapper); import its `text_config` as a config.json "
              "of model_type gemma3_text",
    "qwen2_moe": "the shared expert's sigmoid gate (shared_expert_gate, megatron-core's "
                 "--moe-shared-expert-gate), which the IR's MoE block does not hold",
    "gemma3n": "per-layer embeddings, AltUp and LAuReL blocks",
    "qwen2_vl": "a vision encoder and multimodal RoPE (Qwen2-VL's M-RoPE over time, height and width)",
    "qwen2_5_vl": "a vision encoder and multimodal RoPE (Qwen2.5-VL's M-RoPE over time, height and width)",
}


def _family(config: HfConfig) -> Family:
    mt = config.data.get("model_type")
    other = _other_file(config)
    if mt is None and other:
        raise CompileError(Diagnostic(
            MISSING_FIELD, f"`{config.file}` is {other}, not the model's config.json",
            help="pass the model's config.json (beside it in the model's folder), or the folder itself"))
    if mt is None:
        raise CompileError(
            Diagnostic(
                MISSING_FIELD,
                f"`{config.file}` has no `model_type`, so its architecture is unknown",
                help=f'add `"model_type": ...`; supported: {", ".join(SUPPORTED_MODEL_TYPES)}',
            )
        )
    if not isinstance(mt, str):
        raise CompileError(
            Diagnostic(
                BAD_VALUE, f"`model_type` is {mt!r}, expected a string", span=config.span_of("model_type")
            )
        )
    if mt in MISSING_FEATURES:
        raise CompileError(
            Diagnostic(
                UNKNOWN_MODEL_TYPE,
                f"cannot import `model_type` `{mt}`: the IR cannot express {MISSING_FEATURES[mt]}",
                span=config.span_of("model_type"),
                help="write no card rather than a wrong one, or one by hand that says in a comment what it "
                f"leaves out; importable: {', '.join(SUPPORTED_MODEL_TYPES)}",
            )
        )
    text = config.data.get("text_config")
    if mt not in FAMILIES and isinstance(text, dict):
        # a multimodal wrapper (LLaVA, Idefics, ...): its language model is a config of its own, whose
        # name may be near the wrapper's (`llava` is not a typo of `llama`)
        inner = text.get("model_type")
        known = f"`{inner}`, which primusc imports" if inner in FAMILIES else \
            f"`{inner}`, which primusc does not import either" if isinstance(inner, str) else "not given"
        raise CompileError(
            Diagnostic(
                UNKNOWN_MODEL_TYPE,
                f"cannot import `model_type` `{mt}`: a multimodal wrapper (a vision encoder around a language "
                "model), and the IR has no vision encoder",
                span=config.span_of("model_type"),
                help=f"import its `text_config` as a config.json of its own (its model_type: {known}); the card "
                "then describes the language model alone",
            )
        )
    if mt not in FAMILIES:
        close = [c for c in difflib.get_close_matches(mt, SUPPORTED_MODEL_TYPES, n=3) if _digits(c) == _digits(mt)]
        hint = f"did you mean `{close[0]}`? " if close else ""
        raise CompileError(
            Diagnostic(
                UNKNOWN_MODEL_TYPE,
                f"cannot import `model_type` `{mt}`: no mapping for this architecture",
                span=config.span_of("model_type"),
                help=f"{hint}supported: {', '.join(SUPPORTED_MODEL_TYPES)}; otherwise write the card by hand",
            )
        )
    return FAMILIES[mt]


# What other JSON files of a model's folder hold, by a field only they have
_OTHER_FILES = (("tokenizer_class", "a tokenizer_config.json"), ("added_tokens_decoder", "a tokenizer_config.json"),
                ("weight_map", "a weights index (model.safetensors.index.json)"),
                ("max_new_tokens", "a generation_config.json"), ("do_sample", "a generation_config.json"))


def _other_file(config: HfConfig) -> str:
    """Which other file of a model's folder ``config`` is ("" when none is recognized)."""
    for key, what in _OTHER_FILES:
        if key in config.data:
            return what
    name = Path(config.file).name
    return f"`{name}`" if name.endswith(("tokenizer_config.json", "generation_config.json", ".index.json")) else ""


def _digits(name: str) -> str:
    """The version digits of a model type: a near name with other digits is another generation of the
    family, often another architecture (qwen2 has QKV biases, qwen3 QK norms), never a typo's fix."""
    return "".join(ch for ch in name if ch.isdigit())


def map_config(config: HfConfig, name: str, seq_len: int | None = None) -> Imported:
    """Map ``config`` to a model card named ``name``; ``seq_len`` overrides the default training length."""
    _refuse_hybrid(config)
    family = _family(config)
    notes: list[str] = []
    config = with_class_defaults(_lift_rope_parameters(config, notes), notes)
    r = Reader(config)
    r.mapping("rope_parameters")  # checked for its type; its fields are read as the v4 ones above
    fields = _attention(r)
    fields["attention_dropout"] = _dropout(r)
    pretrain_len = _rope_notes(r, fields, notes)
    _partial_rotary(r, fields)  # transformers' RoPE init reads it for every family
    _seq_len(r, fields, pretrain_len, seq_len, notes)
    _norm_epsilon(r, fields)
    family(r, fields, notes)
    _quantization_note(r, notes)
    r.done()
    origin = config.data.get("_name_or_path")
    where = f"{origin} config.json" if isinstance(origin, str) and origin else config.file
    source = f"{where} (primusc import-hf)".replace('"', "'").replace("\\", "/")
    try:
        model = Model(name=name, source=source, **fields)
    except ValueError as err:
        # the card's own consistency checks (a hybrid pattern's symbols and length against the layer
        # count): each value was read on its own, so what disagrees is said of the pattern
        raise CompileError(Diagnostic(
            BAD_VALUE, f"`{config.file}` does not describe one model: {err}",
            span=config.span_of("hybrid_override_pattern") or config.span_of("num_hidden_layers"),
            help="make `hybrid_override_pattern` one symbol (M * - E) a layer, `num_hidden_layers` long")) from None
    return Imported(model, config.model_type, tuple(notes))


def _quantization_note(r: Reader, notes: list[str]) -> None:
    """A checkpoint quantized for serving (DeepSeek-V3's FP8 blocks, gpt-oss's MXFP4 experts, a GPTQ file)
    is trained in the space's `precision`, not in its file's format: said, since it changes no field."""
    quant = r.config.data.get("quantization_config")
    if isinstance(quant, dict) and quant:
        method = quant.get("quant_method") or quant.get("fmt") or "its"
        notes.append(f"the checkpoint's quantization_config ({method}) not represented: the card trains in the "
                     "space's `precision`, and its parameters are counted unquantized")


def _pre_softmax(r: Reader, router_score: str, notes: list[str]) -> bool:
    """Megatron's --moe-router-pre-softmax from transformers' norm_topk_prob (false by default in
    DeepseekV2Config and Qwen3MoeConfig): a softmax over every expert whose top-k weights are not
    renormalized is the pre-softmax router; renormalized, they equal Megatron's softmax over the top-k
    logits. Megatron's sigmoid router renormalizes above top-1, whatever the config says."""
    norm = r.config.data.get("norm_topk_prob", False)
    if not isinstance(norm, bool):
        r.problems.append(r.config.bad("norm_topk_prob", norm, "true or false"))
        return False
    if router_score != "softmax":
        if not norm:
            notes.append("norm_topk_prob false not represented: Megatron's sigmoid router renormalizes the weights")
        return False
    return not norm


def _dropout(r: Reader) -> float:
    value = r.config.data.get("attention_dropout", 0.0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        r.problems.append(r.config.bad("attention_dropout", value, "a probability in [0, 1)"))
        return 0.0
    return float(value)
