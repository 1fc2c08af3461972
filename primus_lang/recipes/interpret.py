"""Settings keyed by Megatron's argument names → a model, the baseline candidate, the cluster and the
settings carried through. What a recipe leaves out takes Megatron's default (not primusc's): a run
launched without ``--use-distributed-optimizer`` has none, without ``--swiglu`` a GELU MLP."""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable
from typing import Any

from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    RECIPE_BAD_VALUE,
    RECIPE_CONTRADICTION,
    RECIPE_MISSING,
    RECIPE_UNSUPPORTED,
)
from primus_lang.emit import CARD_ARGUMENTS, CUDA_GRAPH_SETTINGS, MLA_ARGUMENTS, MLA_SWITCH, PATHS
from primus_lang.ir.candidate import Candidate, Recompute
from primus_lang.ir.model import Mla, Moe
from primus_lang.ir.quantity import Kind
from primus_lang.ir.ranges import CEILINGS, KIND_CEILINGS
from primus_lang.ir.span import Span
from primus_lang.recipes.flags import MODELLED
from primus_lang.recipes.settings import Entry, Recipe

Passthrough = tuple[tuple[str, bool | int | float | str], ...]


@frozen
class Imported:
    recipe: Recipe
    model: dict[str, Any]  # Model fields the recipe states or Megatron's defaults imply (no name)
    stated: frozenset[str]  # the model fields the recipe itself writes
    candidate: Candidate
    knob_spans: dict[str, Span]
    passthrough: Passthrough
    assumed: tuple[str, ...]  # knobs the recipe leaves to Megatron's default, said in the output
    notes: tuple[str, ...] = ()  # how settings were read (a recipe's spelling primusc maps to a knob)


class _Reader:
    def __init__(self, recipe: Recipe) -> None:
        self.s = recipe.entries
        self.kind = recipe.kind
        self.problems: list[Diagnostic] = []
        self.refused: set[str] = set()  # settings already reported: not reported missing again
        self.notes: list[str] = []  # how a setting was read, said in the import's summary

    def has(self, dest: str) -> bool:
        e = self.s.get(dest)
        return e is not None and e.value is not None

    def bad(self, e: Entry, expected: str) -> None:
        self.refused.add(e.dest)
        self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{e.written}` is {_shown(e.value)}, expected {expected}",
                                        span=e.span, help="fix the value in the recipe"))

    def missing(self, dest: str, help: str) -> None:
        """``dest`` unset, said in the recipe's own terms, unless its value was refused already."""
        if dest in self.refused:
            return
        if self.kind == "bridge":
            # a Bridge user writes the ConfigContainer's field, not the Megatron argument it holds
            name = f"`{PATHS.get(dest, (f'model.{dest}',))[0]}`"
        elif self.kind == "primus":
            name = f"`{dest}` in `modules.pre_trainer.overrides`"
        else:
            name = f"`--{dest.replace('_', '-')}`"
        self.problems.append(Diagnostic(RECIPE_MISSING, f"the recipe does not set {name}", help=help))

    def entry(self, dest: str) -> Entry | None:
        """A setting, a one-element list read as its element: Megatron takes several flags per layer
        group as lists (`--moe-aux-loss-coeff 1e-3`, nargs='+'), and a recipe gives most of them one."""
        e = self.s.get(dest)
        if e is None or e.value is None:
            return None
        if isinstance(e.value, tuple | list) and len(e.value) == 1:
            return Entry(e.dest, e.value[0], e.span, e.written, e.preset)
        return e

    def int(self, dest: str, default: int = 0, *, floor: int = 1) -> int:
        e = self.entry(dest)
        if e is None:
            return default
        v = e.value
        if isinstance(v, float) and v == float("inf"):
            self.too_large(e)
            return default
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, str) and v.isascii() and v.isdigit())):
            self.bad(e, "a whole number")
            return default
        # Python refuses to convert integers of more than 4,300 digits; any such is past every ceiling
        if isinstance(v, str) and len(v) > 20:
            self.too_large(e)
            return default
        n = int(v)
        if n < floor:
            self.bad(e, f"at least {floor}")
            return default
        if n > _ceiling(dest):
            self.too_large(e)
            return default
        return n

    def too_large(self, e: Entry) -> None:
        self.refused.add(e.dest)
        self.problems.append(Diagnostic(
            RECIPE_BAD_VALUE, f"`{e.written}` is {_shown(e.value)}, too large: at most {_ceiling(e.dest):,}",
            span=e.span, help="fix the value in the recipe (the ceiling is far above any published run's)"))

    def float(self, dest: str, default: float) -> float:
        e = self.entry(dest)
        if e is None:
            return default
        try:
            if isinstance(e.value, bool):
                raise ValueError
            return float(e.value)
        except (TypeError, ValueError):
            self.bad(e, "a number")
            return default

    def flag(self, dest: str, default: bool = False) -> bool:
        e = self.entry(dest)
        if e is None:
            return default
        v = e.value
        if isinstance(v, bool):
            return v
        if v in (0, 1):  # Primus experiments write `sequence_parallel: 1`
            return bool(v)
        if isinstance(v, str) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        self.bad(e, "true or false")
        return default

    def choice(self, dest: str, choices: tuple[str, ...], default: str) -> str:
        e = self.entry(dest)
        if e is None:
            return default
        if isinstance(e.value, str) and e.value in choices:
            return e.value
        self.bad(e, "one of " + ", ".join(choices))
        return default

    def unsupported(self, dest: str, why: str) -> None:
        e = self.s[dest]
        self.problems.append(Diagnostic(RECIPE_UNSUPPORTED, f"`{e.written}`: {why}", span=e.span,
                                        help="change it in the recipe, or write the space by hand"))

    def clash(self, a: str, b: str, why: str) -> None:
        ea, eb = self.s[a], self.s[b]
        self.problems.append(Diagnostic(RECIPE_CONTRADICTION, f"`{eb.written}` contradicts `{ea.written}`: {why}",
                                        span=eb.span, notes=(f"`{ea.written}` at {ea.span}",),
                                        help="keep the one the run means"))


_POSITIONS = {"rope": "rope", "learned_absolute": "learned", "none": "none"}
_NORMS = {"RMSNorm": "rmsnorm", "LayerNorm": "layernorm"}


def _model(r: _Reader, card: dict[str, Any] | None, fill_all: bool,
           require_vocab: bool) -> tuple[dict[str, Any], frozenset[str]]:
    """Model fields: what the recipe states, else the card's (a Primus experiment overrides its card;
    a command line is whole, so only the vocabulary its tokenizer hides comes from a matched card),
    else Megatron's defaults."""
    base = dict(card or {}) if fill_all else ({"vocab": card["vocab"]} if card else {})
    out: dict[str, Any] = {}
    stated: set[str] = set()

    def put(field: str, dest: str, value: Any) -> None:
        if r.has(dest) or field not in base:
            out[field] = value
            if r.has(dest):
                stated.add(field)
        else:
            out[field] = base[field]

    put("num_layers", "num_layers", r.int("num_layers"))
    put("hidden", "hidden_size", r.int("hidden_size"))
    heads = r.int("num_attention_heads")
    put("heads", "num_attention_heads", heads)
    hidden = out["hidden"]
    swiglu = r.flag("swiglu")
    activation = "swiglu" if swiglu else "squared_relu" if r.flag("squared_relu") else "gelu"
    if "activation" not in base or any(r.has(d) for d in ("swiglu", "squared_relu")):
        out["activation"] = activation
        stated.add("activation")
    else:
        out["activation"] = base["activation"]
    put("ffn_hidden", "ffn_hidden_size", r.int("ffn_hidden_size", 4 * hidden))
    gqa = r.flag("group_query_attention") or ("kv_heads" in base and not r.has("group_query_attention"))
    groups = r.int("num_query_groups") if r.has("num_query_groups") else 0
    if r.has("num_query_groups") and not r.flag("group_query_attention") and "kv_heads" not in base:
        r.unsupported("num_query_groups", "Megatron ignores `--num-query-groups` without `--group-query-attention`")
    put("kv_heads", "num_query_groups", groups if (gqa and groups) else (out.get("heads") or heads))
    put("head_dim", "kv_channels", r.int("kv_channels", (hidden // heads) if heads else 0))
    put("vocab", "vocab_size", r.int("vocab_size"))
    seq = r.int("seq_length")
    put("seq_len", "seq_length", seq)
    put("max_position_embeddings", "max_position_embeddings", r.int("max_position_embeddings", seq))
    position = r.choice("position_embedding_type", ("rope", "learned_absolute", "none", "mrope"), "learned_absolute")
    if position == "mrope":
        r.unsupported("position_embedding_type", "multimodal RoPE is not modelled")
    put("position", "position_embedding_type", _POSITIONS.get(position, "rope"))
    put("rope_theta", "rotary_base", float(r.int("rotary_base", 10000)))
    put("norm", "normalization", _NORMS.get(r.choice("normalization", ("RMSNorm", "LayerNorm"), "LayerNorm"), "layernorm"))
    put("tied_embeddings", "untie_embeddings_and_output_weights", not r.flag("untie_embeddings_and_output_weights"))
    bias = r.flag("add_bias_linear", True) and not r.flag("disable_bias_linear")
    if r.has("disable_bias_linear") and r.has("add_bias_linear") and r.flag("add_bias_linear"):
        r.clash("add_bias_linear", "disable_bias_linear", "both on and off")
    put("bias", "disable_bias_linear" if r.has("disable_bias_linear") else "add_bias_linear", bias)
    put("qk_layernorm", "qk_layernorm", r.flag("qk_layernorm"))
    _card_arguments(r, out, put)
    out["mla"] = _mla(r, base.get("mla"))
    if r.has(MLA_SWITCH) or any(r.has(a.dest) for a in MLA_ARGUMENTS.values()):
        stated.add("mla")
    put("dropout", "hidden_dropout", r.float("hidden_dropout", 0.1))
    put("attention_dropout", "attention_dropout", r.float("attention_dropout", 0.1))
    if r.has("num_experts"):
        out["moe"] = _moe(r, out, card.get("moe") if card else None)
        stated.add("moe")
    elif "moe" in base:
        out["moe"] = base["moe"]
    for name in ("num_layers", "hidden", "heads", "vocab", "seq_len"):
        if not out.get(name) and (require_vocab or name != "vocab"):
            dest = {"hidden": "hidden_size", "heads": "num_attention_heads", "vocab": "vocab_size",
                    "seq_len": "seq_length"}.get(name, name)
            r.missing(dest, "add it to the recipe" + (" (a tokenizer's vocabulary is not read)" if name == "vocab"
                                                      else ""))
    return out, frozenset(stated)


def _card_arguments(r: _Reader, out: dict[str, Any], put: Callable[[str, str, Any], None]) -> None:
    """The card features of emission's table, read back as it writes them (what the recipe leaves out
    is Megatron's default)."""
    for field, a in CARD_ARGUMENTS.items():
        if field == "qkv_bias" and out["bias"] and not r.has(a.dest):
            continue  # every linear's bias includes the QKV one: the card's own value stands
        if field == "full_attention_every" and not out.get("sliding_window"):
            continue  # no window: the period means nothing, the card's stands
        value = a.absent
        e = r.entry(a.dest)
        if e is not None:
            if a.switch:
                value = r.flag(a.dest)
            else:
                try:
                    value = a.read(e.value)
                except ValueError as why:
                    r.bad(e, str(why))
        put(field, a.dest, value)


def _mla(r: _Reader, card: Mla | None) -> Mla | None:
    """Multi-latent attention as emission's table writes it: the switch, then each width (Megatron's
    default where the recipe leaves one out; a Primus experiment's card where it has MLA already)."""
    on = r.flag(MLA_SWITCH) if r.has(MLA_SWITCH) else card is not None
    given = [a for a in MLA_ARGUMENTS.values() if r.has(a.dest)]
    if not on and card is not None:
        # a derived card keeps its base's blocks: the space could not say "no MLA"
        r.unsupported(MLA_SWITCH, "the card has multi-latent attention; a card without it is another model "
                      "(write the space from a card without MLA)")
        return card
    if not on:
        for a in given:
            if not r.s[a.dest].preset:  # a preset's widths wait for a model that turns MLA on
                r.unsupported(a.dest, f"Megatron ignores `{a.dest}` without `{MLA_SWITCH}` (multi-latent attention "
                              "off)")
        return None
    if r.flag("group_query_attention"):
        r.clash(MLA_SWITCH, "group_query_attention", "Megatron refuses grouped-query attention with multi-latent "
                "attention (megatron/training/arguments.py)")
    widths = {f: getattr(card, f) if card is not None else a.absent for f, a in MLA_ARGUMENTS.items()}
    for field, a in MLA_ARGUMENTS.items():
        e = r.s[a.dest] if r.has(a.dest) else None
        if e is not None:
            try:
                widths[field] = a.read(e.value)
            except ValueError as why:
                r.bad(e, str(why))
    return Mla(**widths)


# --moe-layer-freq as a dense prefix: `([0]*k+[1]*n)`, `[0]+[1]*n` (k = 1), or a literal list of 0s then 1s
_DENSE_PREFIX = re.compile(r"\(?\[0\](?:\*(\d+))?\+\[1\]\*(\d+)\)?")
_LAYER_LIST = re.compile(r"\[([01](?:,[01])*)\]")


def _shown(value: Any) -> str:
    """A recipe's value in a message, cut short: a file may hold a list of a million entries."""
    shown = reprlib.Repr()  # its keyword arguments are Python 3.12's
    shown.maxlevel, shown.maxlist, shown.maxdict, shown.maxstring, shown.maxother = 2, 4, 4, 60, 60
    return shown.repr(value)


def _dense_layers(r: _Reader, num_layers: int) -> int:
    """The leading dense layers ``--moe-layer-freq`` states; anything else names what is not modelled."""
    freq = r.entry("moe_layer_freq")
    if freq is None or freq.value in (1, "1", None):
        return 0
    text = str(freq.value).replace(" ", "")
    # counted, never built: `[1]*10**12` is a short string
    dense: int | None = None
    moe = 0
    ordered = True
    if (m := _DENSE_PREFIX.fullmatch(text)) is not None:
        dense, moe = _repeat(m.group(1) or "1"), _repeat(m.group(2))
    elif (m := _LAYER_LIST.fullmatch(text)) is not None:
        flags = m.group(1).split(",")
        dense, moe = flags.count("0"), flags.count("1")
        ordered = flags == sorted(flags)
    if dense is not None and dense + moe != num_layers:
        r.bad(freq, f"one entry per layer ({num_layers}), not {dense + moe:,}")
        return 0
    if dense is not None and moe == 0:
        r.bad(freq, "at least one MoE layer (1)")
        return 0
    if dense is None or not ordered:
        r.unsupported("moe_layer_freq", "dense and MoE layers interleaved are not modelled: the card's "
                      "`moe.dense_layers` is a dense prefix only (write 1, every layer MoE, or `([0]*k+[1]*n)`)")
        return 0
    return dense


def _repeat(digits: str) -> int:
    """A list repetition's count; past any model's layer count it only has to compare unequal."""
    return int(digits) if len(digits) <= 9 else 10**9


def _moe(r: _Reader, model: dict[str, Any], card: Moe | None) -> Moe:
    """``card``: the matched card's block, whose spelling of the shared experts stands when it sums to
    the recipe's width."""
    experts = r.int("num_experts")
    dense = _dense_layers(r, model["num_layers"])
    shared = r.int("moe_shared_expert_intermediate_size", 0, floor=0)
    count, width = (1, shared) if shared else (0, 0)
    # Megatron builds the shared experts as one MLP of their summed width (emission writes the sum):
    # the same weights as the card's n experts of a share each
    if card is not None and shared and card.shared_experts * (card.shared_ffn_hidden or card.ffn_hidden) == shared:
        count, width = card.shared_experts, card.shared_ffn_hidden
    ffn = r.int("moe_ffn_hidden_size", model["ffn_hidden"])
    balancing = r.choice("moe_router_load_balancing_type", ("aux_loss", "seq_aux_loss", "global_aux_loss", "none"),
                         "aux_loss")
    aux = r.float("moe_aux_loss_coeff", 0.0) if balancing != "none" else 0.0
    return Moe(num_experts=experts, top_k=r.int("moe_router_topk", 2), ffn_hidden=ffn,
               shared_experts=count, shared_ffn_hidden=width,
               dense_layers=dense, router_bias=model["bias"], expert_bias=model["bias"],
               router_score=r.choice("moe_router_score_function", ("softmax", "sigmoid"), "softmax"),
               aux_loss=aux, aux_loss_type=balancing if balancing != "none" else "aux_loss",
               bias_balancing=r.flag("moe_router_enable_expert_bias"))


_KNOB_DESTS = {
    "tp": "tensor_model_parallel_size", "pp": "pipeline_model_parallel_size",
    "vpp": "num_virtual_stages_per_pipeline_rank", "first_stage_layers": "decoder_first_pipeline_num_layers",
    "last_stage_layers": "decoder_last_pipeline_num_layers",
    "account_for_embedding": "account_for_embedding_in_pipeline_split",
    "account_for_loss": "account_for_loss_in_pipeline_split", "pipeline_layout": "pipeline_model_parallel_layout",
    "cp": "context_parallel_size", "ep": "expert_model_parallel_size", "etp": "expert_tensor_parallel_size",
    "mbs": "micro_batch_size", "gbs": "global_batch_size", "seq_len": "seq_length", "precision": "fp8",
    "fp8_recipe": "fp8_recipe", "recompute": "recompute_granularity", "sharding": "use_distributed_optimizer",
    "schedule": "num_virtual_stages_per_pipeline_rank", "sequence_parallel": "sequence_parallel",
    "attention": "attention_backend", "cp_comm": "cp_comm_type", "moe_dispatcher": "moe_token_dispatcher_type",
    "tp_comm_overlap": "tp_comm_overlap", "overlap_grad_reduce": "overlap_grad_reduce",
    "overlap_param_gather": "overlap_param_gather", "ep_comm_overlap": "overlap_moe_expert_parallel_comm",
    "cuda_graph": "cuda_graph_impl", "main_grad_dtype": "main_grads_dtype", "optimizer_dtype": "exp_avg_dtype",
}


# Megatron's argument -> the IR field whose ceiling (ir/ranges.py) bounds it
_FIELDS = {dest: knob for knob, dest in reversed(_KNOB_DESTS.items())} | {
    "hidden_size": "hidden", "num_attention_heads": "heads", "ffn_hidden_size": "ffn_hidden",
    "num_query_groups": "kv_heads", "kv_channels": "head_dim", "vocab_size": "vocab", "seq_length": "seq_len",
    "num_experts": "num_experts", "moe_router_topk": "top_k", "moe_ffn_hidden_size": "ffn_hidden",
    "moe_shared_expert_intermediate_size": "shared_ffn_hidden", "recompute_num_layers": "num_layers",
    "num_layers_per_virtual_pipeline_stage": "num_layers",
}


def _ceiling(dest: str) -> int | float:
    """The largest value the IR takes for the field ``dest`` sets; a count's ceiling when it sets none."""
    field = _FIELDS.get(dest, dest)
    return CEILINGS.get(field, KIND_CEILINGS[Kind.COUNT])


def _candidate(r: _Reader, model: dict[str, Any]) -> tuple[Candidate, list[str]]:
    s = r.s
    v: dict[str, Any] = {}
    v["tp"] = r.int("tensor_model_parallel_size", 1)
    v["pp"] = r.int("pipeline_model_parallel_size", 1)
    vpp = r.int("num_virtual_stages_per_pipeline_rank", 1)
    if r.has("num_layers_per_virtual_pipeline_stage"):
        per = r.int("num_layers_per_virtual_pipeline_stage", 1)
        if r.has("num_virtual_stages_per_pipeline_rank"):
            r.clash("num_virtual_stages_per_pipeline_rank", "num_layers_per_virtual_pipeline_stage",
                    "Megatron takes one of the two")
        vpp = max(1, model["num_layers"] // (v["pp"] * per)) if per else 1
    v["pipeline_layout"] = str(s["pipeline_model_parallel_layout"].value) if r.has("pipeline_model_parallel_layout") else ""
    if v["pipeline_layout"] and r.has("num_virtual_stages_per_pipeline_rank"):
        r.clash("pipeline_model_parallel_layout", "num_virtual_stages_per_pipeline_rank", "Megatron takes one of the two")
    if v["pipeline_layout"]:
        stages = v["pipeline_layout"].count("|") + 1
        vpp = max(1, stages // v["pp"])
    v["vpp"] = vpp
    v["first_stage_layers"] = r.int("decoder_first_pipeline_num_layers", 0, floor=0)
    v["last_stage_layers"] = r.int("decoder_last_pipeline_num_layers", 0, floor=0)
    v["account_for_embedding"] = r.flag("account_for_embedding_in_pipeline_split")
    v["account_for_loss"] = r.flag("account_for_loss_in_pipeline_split")
    v["cp"] = r.int("context_parallel_size", 1)
    v["cp_comm"] = r.choice("cp_comm_type", ("p2p", "a2a", "allgather"), "p2p")
    v["ep"] = r.int("expert_model_parallel_size", 1)
    etp = r.int("expert_tensor_parallel_size", 0, floor=0)
    v["etp"] = 0 if etp == v["tp"] else etp
    v["mbs"] = r.int("micro_batch_size", 1)
    v["gbs"] = r.int("global_batch_size", 0)
    if not v["gbs"]:
        r.missing("global_batch_size", "add it: the space fixes the global batch")
        v["gbs"] = 1
    v["seq_len"] = model.get("seq_len") or 1
    fp8 = s.get("fp8") or s.get("fp8_format")
    fp4 = s.get("fp4") or s.get("fp4_format")
    if r.flag("fp16"):
        r.unsupported("fp16", "FP16 training with loss scaling is not modelled; primusc's recipes are BF16 based")
    precision = "bf16"
    if fp8 is not None and fp8.value not in (None, False):
        precision = "fp8"
        if str(fp8.value) != "hybrid":
            r.unsupported(fp8.dest, f"FP8 format `{fp8.value}`: primusc emits `hybrid` (E4M3 forward, E5M2 gradients)")
    if fp4 is not None and fp4.value not in (None, False):
        if precision == "fp8":
            r.clash(fp8.dest if fp8 else "fp8", fp4.dest, "a run computes its GEMMs in one of FP8 and FP4")
        precision = "fp4"
        if str(fp4.value) != "e2m1":
            r.bad(fp4, "e2m1")
    v["precision"] = precision
    # Megatron's --fp8-recipe defaults to delayed scaling
    v["fp8_recipe"] = r.choice("fp8_recipe", ("tensorwise", "delayed", "blockwise", "mxfp8"), "delayed") \
        if precision == "fp8" else "tensorwise"
    v["recompute"] = _recompute(r, v["pp"])
    v["fp8_param_gather"] = r.flag("fp8_param_gather")
    fsdp = [d for d in ("use_megatron_fsdp", "use_custom_fsdp", "use_torch_fsdp2") if r.flag(d)]
    if fsdp:
        v["sharding"] = "fsdp"
        if r.flag("use_distributed_optimizer") and "use_torch_fsdp2" in fsdp:
            r.clash("use_distributed_optimizer", "use_torch_fsdp2", "torch FSDP2 runs without the distributed optimizer")
    else:
        v["sharding"] = "dist_opt" if r.flag("use_distributed_optimizer") else "none"
    algorithm = s.get("pp_algorithm")
    if algorithm is not None and algorithm.value is not None and r.flag("patch_primus_pipeline"):
        schedules = {"zero-bubble": "zero_bubble", "zbv-formatted": "zbv", "1f1b": "1f1b",
                     "1f1b-interleaved": "interleaved"}
        if algorithm.value not in schedules:
            r.unsupported("pp_algorithm", f"the Primus schedule `{algorithm.value}` is not modelled")
        v["schedule"] = schedules.get(str(algorithm.value), "1f1b")
        if v["schedule"] == "zbv":
            v["vpp"] = 2
    else:
        v["schedule"] = "interleaved" if v["vpp"] > 1 else "1f1b"
    v["sequence_parallel"] = r.flag("sequence_parallel")
    backend = r.choice("attention_backend", ("auto", "flash", "fused", "unfused", "local"), "auto")
    v["attention"] = "unfused" if backend in ("unfused", "local") else "flash"
    if model.get("moe") is not None:
        v["moe_dispatcher"] = r.choice("moe_token_dispatcher_type", ("allgather", "alltoall", "flex"), "allgather")
        if _turbo_deepep(r) and v["tp"] == 1:
            # Primus swaps in Primus Turbo's DeepEP and sets the flex dispatcher itself, at TP 1 only
            # (primus/backends/megatron/patches/turbo/moe_dispatcher_patches.py, v26.5.1)
            v["moe_dispatcher"] = "flex"
            r.notes.append("`use_turbo_deepep` with Primus Turbo at TP 1: Primus runs the flex dispatcher "
                           "(Primus Turbo's DeepEP), whatever `moe_token_dispatcher_type` says")
    v["tp_comm_overlap"] = r.flag("tp_comm_overlap")
    v["overlap_grad_reduce"] = r.flag("overlap_grad_reduce")
    v["overlap_param_gather"] = r.flag("overlap_param_gather")
    v["ep_comm_overlap"] = r.flag("overlap_moe_expert_parallel_comm")
    v["cuda_graph"] = _cuda_graph(r)
    # --grad-reduce-in-bf16 keeps the gradient buffer in BF16 as the precision-aware optimizer's
    # --main-grads-dtype bf16 does (validate_args turns off FP32 accumulation either way)
    v["main_grad_dtype"] = "bf16" if r.flag("grad_reduce_in_bf16") else \
        r.choice("main_grads_dtype", ("fp32", "bf16"), "fp32")
    v["optimizer_dtype"] = r.choice("exp_avg_dtype", ("fp32", "bf16"), "fp32")
    if r.has("exp_avg_sq_dtype") and r.s["exp_avg_sq_dtype"].value != v["optimizer_dtype"]:
        r.clash("exp_avg_dtype", "exp_avg_sq_dtype", "primusc keeps both Adam moments in one dtype")
    assumed = [k for k, dest in _KNOB_DESTS.items() if not r.has(dest)
               and k in ("sharding", "sequence_parallel", "overlap_grad_reduce", "overlap_param_gather", "attention")]
    return Candidate(**v), assumed


def _turbo_deepep(r: _Reader) -> bool:
    """Primus Turbo's DeepEP: asked for, or turned on by sync-free MoE stage 2 or 3 (Primus's
    rocm_arg_validation.py), with Primus Turbo enabled."""
    stage = r.int("turbo_sync_free_moe_stage", 0, floor=0) if r.has("turbo_sync_free_moe_stage") else 0
    return r.flag("enable_primus_turbo") and (r.flag("use_turbo_deepep") or stage >= 2)


def _recompute(r: _Reader, pp: int) -> Recompute:
    granularity = r.choice("recompute_granularity", ("full", "selective"), "")
    if granularity == "full":
        method = r.choice("recompute_method", ("uniform", "block"), "uniform")
        ids = r.entry("recompute_layer_ids")
        if ids is not None and str(ids.value).strip():
            # Primus recomputes the listed layers (by their number in the model); the space says a
            # count per stage, the listed layers spread over the stages
            listed = [x for x in re.split(r"[,\s]+", str(ids.value).strip("[]() ")) if x]
            per_stage = -(-len(listed) // max(1, pp))
            r.notes.append(f"`recompute_layer_ids` lists {len(listed)} layers: read as full recomputation of "
                           f"{per_stage} per stage (block), the listed layers spread over {pp} stage(s)")
            return Recompute("full", per_stage, "block")
        layers = r.int("recompute_num_layers", 1, floor=0)
        if layers == 0:
            # Megatron recomputes no layer then; Primus's sweeps write it to turn recomputation off
            r.notes.append("full recomputation of 0 layers recomputes nothing: read as `recompute = none`")
            return Recompute()
        return Recompute("full", layers, method)
    if granularity == "selective":
        e = r.s.get("recompute_modules")
        modules: tuple[str, ...] = ()
        if e is not None and e.value is not None:
            value = e.value
            modules = tuple(value.split()) if isinstance(value, str) else tuple(str(m) for m in value)
        if modules == ("core_attn",):
            modules = ()  # Megatron's default, written as plain `selective`
        return Recompute("selective", modules=modules)
    return Recompute()


def _cuda_graph(r: _Reader) -> str:
    if not r.has("cuda_graph_impl"):
        return "none"
    impl = r.s["cuda_graph_impl"].value
    if impl == "none":
        return "none"
    scope_entry = r.s.get("cuda_graph_scope")
    scope: tuple[str, ...] = ()
    if scope_entry is not None and scope_entry.value is not None:
        v = scope_entry.value
        scope = tuple(v.split()) if isinstance(v, str) else tuple(str(x) for x in v)
    scope = tuple(x for x in scope if x != "mamba")
    for name, (i, sc) in CUDA_GRAPH_SETTINGS.items():
        if i == impl and sc == scope:
            return name
    r.unsupported("cuda_graph_impl", f"CUDA graphs `{impl}` over {list(scope)} are not a setting primusc models")
    return "none"


def _passthrough(recipe: Recipe) -> Passthrough:
    out: list[tuple[str, bool | int | float | str]] = []
    for dest, e in recipe.entries.items():
        if dest in MODELLED or e.value is None or e.preset:
            continue
        value = e.value
        if isinstance(value, (list, tuple)):
            value = " ".join(str(x) for x in value)
        if not isinstance(value, (bool, int, float, str)):
            value = str(value)
        out.append((dest, value))
    return tuple(out)


def interpret(recipe: Recipe, card: dict[str, Any] | None = None, *, fill_all: bool = False,
              require_vocab: bool = True) -> Imported:
    """The recipe as a model, a candidate and its carried-through settings; every problem at once."""
    r = _Reader(recipe)
    model, stated = _model(r, card, fill_all, require_vocab)
    cand, assumed = _candidate(r, model)
    if r.problems:
        raise CompileError(r.problems)
    spans: dict[str, Span] = {}
    for knob, dest in _KNOB_DESTS.items():
        e = recipe.entries.get(dest)
        if e is not None and e.span is not None:
            spans[knob] = e.span
    return Imported(recipe, model, stated, cand, spans, _passthrough(recipe), tuple(assumed), tuple(r.notes))
