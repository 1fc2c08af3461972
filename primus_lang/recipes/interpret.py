"""Settings keyed by Megatron's argument names → a model, the baseline candidate, the cluster and the
settings carried through. What a recipe leaves out takes Megatron's default (not primusc's): a run
launched without ``--use-distributed-optimizer`` has none, without ``--swiglu`` a GELU MLP."""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    RECIPE_BAD_VALUE,
    RECIPE_CONTRADICTION,
    RECIPE_MISSING,
    RECIPE_UNSUPPORTED,
)
from primus_lang.emit import (
    ATTENTION_OF_BACKEND,
    CARD_ARGUMENTS,
    MEGATRON_ROPE_SCALING,
    MLA_ARGUMENTS,
    MLA_SWITCH,
    NORMS,
    POSITIONS,
    paths,
)
from primus_lang.frameworks import megatron, megatron_of, reading, spelling
from primus_lang.ir import derived
from primus_lang.ir.candidate import FP8_FORMATS, Candidate, Recompute
from primus_lang.ir.derived import expert_knobs, model_default
from primus_lang.ir.model import HYBRID_LAYERS, Mamba, Mla, Moe
from primus_lang.ir.pipeline import chunk_sizes, parse_layout, split_of
from primus_lang.ir.quantity import Kind
from primus_lang.ir.ranges import CEILINGS, KIND_CEILINGS
from primus_lang.ir.span import Span
from primus_lang.recipes.flags import HYBRID_PATTERNS, HYBRID_SWITCH, MAMBA_SETTINGS, MODELLED
from primus_lang.recipes.settings import Entry, Recipe
from primus_lang.recipes.unmodelled import OFFLOAD_ACTIVATIONS, OFFLOAD_OPTIMIZER, unmodelled_notes

Passthrough = tuple[tuple[str, bool | int | float | str], ...]
# how Megatron spells the knobs, their parts and the card's fields (frameworks.spelling)
K, P, C = spelling.KNOBS, spelling.PARTS, spelling.CARD
BALANCED = "moe_router_force_load_balancing"  # Megatron's dest, whichever framework's spelling set it


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
    # the router is forced to spread tokens evenly over the experts (a benchmark's setting): no expert
    # rank is busier than the mean, so the space assumes `moe_imbalance = 1`
    balanced: bool = False


def _runs_null(entries: Mapping[str, Entry]) -> bool:
    e = entries.get("tokenizer_type")
    return e is not None and e.value == "NullTokenizer"


def null_tokenizer_extra(recipe: Recipe) -> int:
    """The tokens past its `--vocab-size` the recipe's model has: the end-of-document token the null
    tokenizer of its Megatron-LM adds (``megatron.null_tokenizer_extra``); 0 under another tokenizer."""
    return megatron.null_tokenizer_extra(megatron_table(recipe)) if _runs_null(recipe.entries) else 0


class _Reader:
    def __init__(self, recipe: Recipe) -> None:
        self.s = recipe.entries
        self.kind = recipe.kind
        self.version = recipe.version if recipe.kind == "megatron" else ""  # a Megatron-LM release, where known
        self.megatron = megatron_table(recipe)  # the Megatron-LM flag table the recipe's run parses with
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
            name = f"`{(paths(dest) or (f'model.{dest}',))[0]}`"
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

    def released(self, dest: str) -> Any:
        """Megatron's default for ``dest`` at the run's release (a list flag's default of one value as that
        value), None where the release has none or no such flag: what an omitted setting runs."""
        flags = megatron.by_dest(self.megatron).get(dest, ())
        given = flags[0].default if flags else None
        if isinstance(given, list | tuple) and len(given) == 1:
            given = given[0]  # `--cp-comm-type`'s ['p2p'], `--moe-aux-loss-coeff`'s [0.0]
        return given

    def int(self, dest: str, default: int = 0, *, floor: int = 1) -> int:
        """A whole-number setting; unset, Megatron's default at the run's release where it has one, else
        ``default`` (what the caller derives: 4 x hidden for the FFN, 0 for none)."""
        e = self.entry(dest)
        if e is None:
            given = self.released(dest)
            return given if isinstance(given, int) and not isinstance(given, bool) else default
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
        """A number; unset, Megatron's default at the run's release where it has one, else ``default``."""
        e = self.entry(dest)
        if e is None:
            given = self.released(dest)
            return float(given) if isinstance(given, int | float) and not isinstance(given, bool) else default
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
        truth = _truth(e.value)
        if truth is None:
            self.bad(e, "true or false")
            return default
        return truth

    def choice(self, dest: str, modelled: tuple[str, ...], default: str) -> str:
        """A setting that takes one of Megatron's choices: its value where primusc models it. Unset, it is
        Megatron's default at the run's release (``default`` where that has none primusc models). A value
        the release takes that primusc does not model is unsupported (P3125); any other one is bad
        (P3123), naming the release's choices."""
        e = self.entry(dest)
        if e is None:
            given = self.released(dest)
            return given if isinstance(given, str) and given in modelled else default
        if isinstance(e.value, str) and e.value in modelled:
            return e.value
        flags = megatron.by_dest(self.megatron).get(dest, ())
        taken = tuple(str(c) for c in flags[0].choices) if flags and flags[0].choices else modelled
        if isinstance(e.value, str) and e.value in taken:
            self.unsupported(dest, f"`{e.value}` is a choice Megatron-LM {self.megatron} takes that primusc does "
                             f"not model (it models {', '.join(modelled)})")
        else:
            self.bad(e, "one of " + ", ".join(taken))
        return default

    def unsupported(self, dest: str, why: str, help: str = "change it in the recipe, or write the space by hand") -> None:
        e = self.s[dest]
        self.problems.append(Diagnostic(RECIPE_UNSUPPORTED, f"`{e.written}`: {why}", span=e.span, help=help))

    def clash(self, a: str, b: str, why: str) -> None:
        ea, eb = self.s[a], self.s[b]
        self.problems.append(Diagnostic(RECIPE_CONTRADICTION, f"`{eb.written}` contradicts `{ea.written}`: {why}",
                                        span=eb.span, notes=(f"`{ea.written}` at {ea.span}",),
                                        help="keep the one the run means"))


def megatron_table(recipe: Recipe) -> str:
    """The Megatron-LM flag table a recipe's run parses its settings with: the release a Megatron-LM
    script names, the commit its Primus or Megatron-Bridge release pins, else the default release."""
    given = {"megatron": "megatron_version", "bridge": "bridge_version", "primus": "primus_version"}
    return megatron_of(recipe.kind, **({given[recipe.kind]: recipe.version} if recipe.kind in given else {}))


# what else makes a recipe's model a Mamba one (Megatron-LM's and Primus's names)
_HYBRID_RATIOS = ("hybrid_attention_ratio", "hybrid_mlp_ratio")
_HYBRID_SIGNS = (*_HYBRID_RATIOS, HYBRID_SWITCH, *MAMBA_SETTINGS)


# Settings that make some of a model's layers another kind than attention or Mamba-2: megatron-core's
# gated delta net (Qwen3.5 and Qwen3-Next's linear attention, every `linear_attention_freq`-th layer
# full attention) and Primus's LFM2 short convolutions
_OTHER_LAYERS = {
    "experimental_attention_variant": "an experimental attention variant",
    "linear_attention_freq": "linear-attention layers",
    "lfm_layer_types": "LFM2's short-convolution layers",
}


# Primus's model types primusc reads (primus/configs/models/megatron/*.yaml): its GPT builder and Mamba's
_MODEL_TYPES = ("gpt", "mamba")


def _other_layer_kinds(r: _Reader) -> None:
    kind = str(r.s["model_type"].value).strip().lower() if r.has("model_type") else "gpt"
    if kind not in _MODEL_TYPES:
        # a model Primus builds with a model builder of its own (DeepSeek-V4's compressed attention and
        # hyper-connections, `deepseek_v4`): read as a GPT it would be another model, many settings unread
        r.unsupported("model_type", f"a model of type `{kind}`, which Primus builds with a model builder of its "
                      f"own: primusc reads {' and '.join(_MODEL_TYPES)} models, and read as a GPT it would be another "
                      "model")
        return
    said = [d for d in _OTHER_LAYERS if r.has(d) and r.s[d].value not in (None, False, "", "null", "None", 0, [])]
    if said:
        d = said[0]
        value = reprlib.repr(r.s[d].value)
        r.unsupported(d, f"{_OTHER_LAYERS[d]} (`{d}` = {value}): primusc models attention, MoE and Mamba-2 "
                      "layers, and read as a transformer it would be another model")


def _hybrid(r: _Reader, out: dict[str, Any], stated: set[str]) -> None:
    """A Mamba-2 hybrid's layer pattern and mixer, from the pattern the recipe writes. Without one (a pure
    Mamba model, or layers allotted by ratio) the recipe is refused: read as a transformer it would be
    another model."""
    written = next((d for d in HYBRID_PATTERNS if r.has(d)), None)
    if written is None:
        said = [d for d in _HYBRID_SIGNS if r.has(d) and r.s[d].value not in (False, "", "false", "False", 0, "0")]
        said += [d for d in ("spec", "model_type") if r.has(d) and "mamba" in str(r.s[d].value).lower()]
        if not said:
            return
        # no pattern: megatron-core allots the layers from the ratios (a pure Mamba model where none is given)
        ratios = [r.float(d, 0.0) for d in _HYBRID_RATIOS]
        if any(not 0.0 <= x <= 1.0 for x in ratios) or sum(ratios) > 1.0:
            r.bad(r.s[next(d for d in _HYBRID_RATIOS if r.has(d))], "ratios of the layers between 0 and 1, "
                  "the attention and MLP ones together at most 1")
            return
        n = out["num_layers"]
        pattern = reading.hybrid_layers(n, *ratios) if isinstance(n, int) and 0 < n <= 100_000 else ""
        if not pattern:
            return
        r.notes.append(f"the layers as megatron-core allots them from {' and '.join(f'`{d}` {x:g}' for d, x in zip(_HYBRID_RATIOS, ratios, strict=True))} "
                       f"(no pattern given): {pattern}")
        _pattern_read(r, out, stated, pattern)
        return
    pattern = str(r.s[written].value).strip("'\"")
    if not pattern or set(pattern) - set(HYBRID_LAYERS):
        r.unsupported(written, f"layers {pattern[:60]!r}: primusc reads a pattern of "
                      f"{', '.join(HYBRID_LAYERS)} (one character a layer, no stage or MTP separators)")
        return
    if not r.has(C["num_layers"]):
        out["num_layers"] = len(pattern)  # megatron-core counts the layers from the pattern
    _pattern_read(r, out, stated, pattern)


def _pattern_read(r: _Reader, out: dict[str, Any], stated: set[str], pattern: str) -> None:
    """A hybrid's pattern and its Mamba-2 mixer, written or allotted."""
    out["pattern"] = pattern
    stated.add("pattern")
    if "M" in pattern:
        heads, head_dim, state_dim, groups = MAMBA_SETTINGS
        width = r.int(head_dim, 64)  # megatron-core's defaults; its heads fill twice the hidden width
        out["mamba"] = Mamba(heads=r.int(heads, 2 * out["hidden"] // width if width else 0), head_dim=width,
                             state_dim=r.int(state_dim, 128), groups=r.int(groups, 8))
        stated.add("mamba")


_POSITIONS = {megatron_name: card for card, megatron_name in POSITIONS.items()}
_NORMS = {megatron_name: card for card, megatron_name in NORMS.items()}


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

    put("num_layers", C["num_layers"], r.int(C["num_layers"]))
    put("hidden", C["hidden"], r.int(C["hidden"]))
    heads = r.int(C["heads"])
    put("heads", "num_attention_heads", heads)
    hidden = out["hidden"]
    # Megatron's argument checks set gated_linear_unit for --quick-geglu as for --swiglu
    switches = (C["activation.swiglu"], C["activation.quick_geglu"], C["activation.squared_relu"])
    activation = next((name for name, d in zip(("swiglu", "quick_geglu", "squared_relu"), switches, strict=True)
                       if r.flag(d)), "gelu")
    if "activation" not in base or any(r.has(d) for d in switches):
        out["activation"] = activation
        stated.add("activation")
    else:
        out["activation"] = base["activation"]
    put("ffn_hidden", C["ffn_hidden"], r.int(C["ffn_hidden"], 4 * hidden))
    gqa = r.flag(C["kv_heads.grouped"]) or ("kv_heads" in base and not r.has(C["kv_heads.grouped"]))
    groups = r.int(C["kv_heads"]) if r.has(C["kv_heads"]) else 0
    if r.has(C["kv_heads"]) and not r.flag(C["kv_heads.grouped"]) and "kv_heads" not in base:
        r.unsupported(C["kv_heads"], "Megatron ignores `--num-query-groups` without `--group-query-attention`")
    # what the recipe leaves out follows Megatron's rules, which ir.derived holds for every reader
    kv_default = model_default("kv_heads", {"heads": out.get("heads") or heads})
    put("kv_heads", "num_query_groups", groups if (gqa and groups) else kv_default)
    put("head_dim", C["head_dim"], r.int(C["head_dim"], model_default("head_dim", {"hidden": hidden, "heads": heads}) or 0))
    put("vocab", C["vocab"], r.int(C["vocab"]))
    extra = megatron.null_tokenizer_extra(r.megatron) if _runs_null(r.s) else 0
    if "vocab" in stated and extra:
        given, out["vocab"] = out["vocab"], out["vocab"] + extra
        e = r.s[C["vocab"]]
        r.notes.append(f"`{e.written or C['vocab']}` {given} with the null tokenizer builds a model of {out['vocab']} "
                       f"tokens (its end-of-document token is one more, before core_v0.18): the card's `vocab`")
    seq = r.int(K["seq_len"])
    put("seq_len", "seq_length", seq)
    put("max_position_embeddings", C["max_position_embeddings"],
        r.int(C["max_position_embeddings"], model_default("max_position_embeddings", {"seq_len": seq})))
    position = r.choice(C["position"], ("rope", "learned_absolute", "none"), "learned_absolute")
    put("position", "position_embedding_type", _POSITIONS.get(position, "rope"))
    put("rope_theta", C["rope_theta"], float(r.int(C["rope_theta"], 10000)))
    put("rotary_percent", C["rotary_percent"], _rotary_percent(r))
    put("rope_scaling", C["rope_scaling.enable"], _rope_scaling(r))
    put("norm", C["norm"], _NORMS.get(r.choice(C["norm"], ("RMSNorm", "LayerNorm"), "LayerNorm"), "layernorm"))
    put("tied_embeddings", C["tied_embeddings"], not r.flag(C["tied_embeddings"]))
    bias = r.flag(C["bias"], True) and not r.flag(C["bias.disabled"])
    if r.has(C["bias.disabled"]) and r.has(C["bias"]) and r.flag(C["bias"]):
        r.clash("add_bias_linear", "disable_bias_linear", "both on and off")
    put("bias", C["bias.disabled"] if r.has(C["bias.disabled"]) else C["bias"], bias)
    put("qk_layernorm", C["qk_layernorm"], r.flag(C["qk_layernorm"]))
    _card_arguments(r, out, put)
    out["mla"] = _mla(r, base.get("mla"))
    if r.has(MLA_SWITCH) or any(r.has(a.dest) for a in MLA_ARGUMENTS.values()):
        stated.add("mla")
    put("dropout", C["dropout"], r.float(C["dropout"], 0.1))
    put("attention_dropout", C["attention_dropout"], r.float(C["attention_dropout"], 0.1))
    _hybrid(r, out, stated)
    _other_layer_kinds(r)
    if r.has(C["moe.num_experts"]):
        out["moe"] = _moe(r, out, card.get("moe") if card else None)
        stated.add("moe")
    elif "moe" in base:
        out["moe"] = base["moe"]
    for name in ("num_layers", "hidden", "heads", "vocab", "seq_len"):
        if not out.get(name) and (require_vocab or name != "vocab"):
            dest = {"hidden": "hidden_size", "heads": "num_attention_heads", "vocab": "vocab_size",
                    "seq_len": "seq_length"}.get(name, name)
            r.missing(dest, _vocab_help(r) if name == "vocab" else "add it to the recipe")
    return out, frozenset(stated)


def _vocab_help(r: _Reader) -> str:
    """What to give for a vocabulary the recipe leaves to its tokenizer, naming the tokenizer."""
    files = r.entry("tokenizer_model")
    if files is None or not isinstance(files.value, str) or not files.value:
        return "give it with `--vocab-size N` (a tokenizer's vocabulary is not read)"
    # Megatron's Hugging Face tokenizer sizes the table by len(tokenizer), padded to a multiple of
    # `make_vocab_size_divisible_by` x TP: not the model config's vocab_size, which may be padded further
    return (f"give it with `--vocab-size N`: the length of the tokenizer the recipe names, `{files.value}` "
            f"(`len(AutoTokenizer.from_pretrained(\"{files.value}\"))`), which primusc does not download")


def _rope_scaling(r: _Reader) -> float:
    """Llama 3.1's RoPE scaling as Megatron-LM's GPT builder runs it: on under the switch, at megatron-core's
    factor (gpt_builders.py hands GPTModel the switch alone, so a recipe's --rope-scaling-factor is never read)."""
    if not r.flag(C["rope_scaling.enable"]):
        return 0.0
    given = r.float(C["rope_scaling"], MEGATRON_ROPE_SCALING)
    if given != MEGATRON_ROPE_SCALING:
        r.notes.append(f"`--rope-scaling-factor {given:g}` is read as {MEGATRON_ROPE_SCALING:g}: Megatron-LM's GPT builder "
                       "never hands the factor to GPTModel (gpt_builders.py), which scales by its default")
    return MEGATRON_ROPE_SCALING


def _rotary_percent(r: _Reader) -> float:
    share = r.float(C["rotary_percent"], 1.0)
    if not 0 < share <= 1:
        e = r.entry(C["rotary_percent"])
        if e is not None:
            r.bad(e, "a share of each head's width in (0, 1]")
        return 1.0
    return share


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
    if r.flag(C["kv_heads.grouped"]):
        r.clash(MLA_SWITCH, C["kv_heads.grouped"], "Megatron refuses grouped-query attention with multi-latent "
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


# one term of --moe-layer-freq's list expression: a 0/1 list, repeated (`[0,1]*24`) or not
_LIST_TERM = re.compile(r"\[([01](?:,[01])*)\](?:\*(\d+))?")


def _shown(value: Any) -> str:
    """A recipe's value in a message, cut short: a file may hold a list of a million entries."""
    shown = reprlib.Repr()  # its keyword arguments are Python 3.12's
    shown.maxlevel, shown.maxlist, shown.maxdict, shown.maxstring, shown.maxother = 2, 4, 4, 60, 60
    return shown.repr(value)


def _dense_layers(r: _Reader, num_layers: int) -> tuple[int, str]:
    """The leading dense layers and the interleaving cycle after them (``Moe.layer_cycle``) that
    ``--moe-layer-freq`` states: an integer k (layers 0, k, 2k, ... MoE, as megatron-core reads it) or a list
    of 0/1 per layer, written out or as sums of repeated lists (``([0]*3+[1]*58)``, ``([0,1]*24)``)."""
    freq = r.entry(C["moe.dense_layers"])
    if freq is None or freq.value in (1, "1", None):
        return 0, "E"
    text = str(freq.value).replace(" ", "")
    if not isinstance(num_layers, int) or num_layers <= 0:
        return 0, "E"  # the layer count is the recipe's other problem, said where it is read
    if text.isdigit() and len(text) <= 6:
        k = int(text)
        if k < 1 or k > num_layers:
            r.bad(freq, f"a period of 1 to {num_layers} layers, or a list of 0/1 per layer")
            return 0, "E"
        return 0, reading.moe_freq_cycle(k)
    flags = _layer_flags(text, num_layers)
    if isinstance(flags, str):
        r.bad(freq, flags)
        return 0, "E"
    if 1 not in flags:
        r.bad(freq, "at least one MoE layer (1)")
        return 0, "E"
    # the whole list one short cycle (Llama 4 Maverick's [0,1]*24) before a dense prefix and a cycle, as a
    # card writes it
    whole = _period(flags)
    if whole is not None:
        return 0, reading.moe_kinds(flags[:whole])
    dense = flags.index(1)
    rest = flags[dense:]
    period = 1 if all(rest) else _period(rest)
    if period is None:
        r.unsupported(C["moe.dense_layers"], "MoE layers placed without a short repeating cycle are not modelled: the "
                      "card holds a dense prefix and a cycle repeated at least twice over the layers after it "
                      "(`moe.layer_cycle`)")
        return 0, "E"
    return dense, reading.moe_kinds(rest[:period])


def _period(flags: list[int]) -> int | None:
    """The shortest cycle that repeats over ``flags`` at least twice (at most 64 long: a list of a million
    layers is checked in linear time per period), None where none does."""
    return next((p for p in range(1, min(len(flags) // 2, 64) + 1)
                 if all(flags[i] == flags[i - p] for i in range(p, len(flags)))), None)


def _layer_flags(text: str, num_layers: int) -> list[int] | str:
    """A list expression of 0/1 per layer (``[0,1,1]``, ``([0]*3+[1]*58)``, ``([0,1]*24)``) as its flags; or
    what is wrong with it. Its length is counted before any list is built (`[1]*10**12` is a short string)."""
    body = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    terms = []
    total = 0
    for term in body.split("+"):
        m = _LIST_TERM.fullmatch(term)
        if m is None:
            return f"one entry per layer as 0/1 lists, repeated and added (`([0]*3+[1]*58)`), not `{_shown(text)}`"
        flags, times = [int(f) for f in m.group(1).split(",")], _repeat(m.group(2) or "1")
        total += len(flags) * times
        if total > num_layers:
            break
        terms.append(flags * times)
    if total != num_layers:
        return f"one entry per layer ({num_layers}), not {total:,}"
    return [f for t in terms for f in t]


def _repeat(digits: str) -> int:
    """A list repetition's count; past any model's layer count it only has to compare unequal."""
    return int(digits) if len(digits) <= 9 else 10**9


def _moe(r: _Reader, model: dict[str, Any], card: Moe | None) -> Moe:
    """``card``: the matched card's block, whose spelling of the shared experts stands when it sums to
    the recipe's width."""
    experts = r.int(C["moe.num_experts"])
    dense, cycle = (0, "E") if model.get("pattern") else _dense_layers(r, model["num_layers"])  # a hybrid's pattern says
    shared = r.int(C["moe.shared_ffn_hidden"], 0, floor=0)
    count, width = (1, shared) if shared else (0, 0)
    # Megatron builds the shared experts as one MLP of their summed width (emission writes the sum):
    # the same weights as the card's n experts of a share each
    if card is not None and shared and card.shared_experts * (card.shared_ffn_hidden or card.ffn_hidden) == shared:
        count, width = card.shared_experts, card.shared_ffn_hidden
    ffn = r.int(C["moe.ffn_hidden"], model["ffn_hidden"])
    balancing = r.choice(C["moe.aux_loss_type"], ("aux_loss", "seq_aux_loss", "global_aux_loss", "none"),
                         "aux_loss")
    aux = r.float("moe_aux_loss_coeff", 0.0) if balancing != "none" else 0.0
    score = r.choice(C["moe.router_score"], ("softmax", "sigmoid"), "softmax")
    pre_softmax = r.flag(C["moe.router_pre_softmax"])
    if pre_softmax and score != "softmax":
        # megatron-core reads it on the softmax path alone (NVIDIA's DeepSeek-V3 FSDP example sets it beside
        # sigmoid scores): a no-op the card cannot state, so it is left out rather than refused
        r.notes.append(f"`--{C['moe.router_pre_softmax'].replace('_', '-')}` is not carried: with "
                       f"`--{C['moe.router_score'].replace('_', '-')} {score}` megatron-core never reads it")
        pre_softmax = False
    return Moe(num_experts=experts, top_k=r.int(C["moe.top_k"], 2), ffn_hidden=ffn,
               shared_experts=count, shared_ffn_hidden=width,
               dense_layers=dense, layer_cycle=cycle, router_bias=model["bias"], expert_bias=model["bias"],
               router_score=score, router_pre_softmax=pre_softmax,
               aux_loss=aux, aux_loss_type=balancing if balancing != "none" else "aux_loss",
               bias_balancing=r.flag(C["moe.bias_balancing"]), topk_scaling=r.float(C["moe.topk_scaling"], 0.0),
               router_groups=r.int(C["moe.router_groups"], 0, floor=0),
               router_group_topk=r.int(C["moe.router_group_topk"], 0, floor=0))


# Megatron's argument -> the IR field whose ceiling (ir/ranges.py) bounds it
_FIELDS = {name: knob for knob, name in K.items()} | {
    name: field.rpartition(".")[2] for field, name in C.items()} | {
    "num_layers_per_virtual_pipeline_stage": "num_layers", P["recompute.layers"]: "num_layers"}


def _ceiling(dest: str) -> int | float:
    """The largest value the IR takes for the field ``dest`` sets; a count's ceiling when it sets none."""
    field = _FIELDS.get(dest, dest)
    return CEILINGS.get(field, KIND_CEILINGS[Kind.COUNT])


def _candidate(r: _Reader, model: dict[str, Any]) -> tuple[Candidate, list[str]]:
    # each setting is read once and in this order: the problems and notes come out in it
    v = _layout_knobs(r, model)
    v["precision"], v["fp8_recipe"], v["fp8_format"] = _precision(r)
    v["recompute"] = _recompute(r, v["pp"] * max(1, v["vpp"] or 1),
                                int(model.get("num_layers") or 0) + int(model.get("mtp_layers") or 0))
    v["offload_layers"] = _offload(r)
    v["fp8_param_gather"] = r.flag(K["fp8_param_gather"])
    v["sharding"], torch_fsdp2 = _sharding(r)
    if torch_fsdp2 and v["fp8_param_gather"]:
        # validate_args turns it off in its use_torch_fsdp2 block on Transformer Engine >= 2.0 (every
        # release primusc reads): the recipe gathers BF16 weights, and emit refuses it as written (P7001)
        v["fp8_param_gather"] = False
        r.notes.append("`fp8_param_gather` under torch FSDP2: Megatron-LM turns it off on Transformer Engine 2.0 "
                       "and later and gathers BF16 weights: read as `fp8_param_gather = false`")
    v["schedule"], v["vpp"] = _schedule(r, v["vpp"])
    v["sequence_parallel"] = r.flag(K["sequence_parallel"])
    v["attention"] = _attention(r)
    v["cross_entropy"] = _cross_entropy(r)
    if model.get("moe") is not None:
        v["moe_dispatcher"] = _moe_dispatcher(r, v["tp"])
    v.update(_overlaps(r, torch_fsdp2))
    v["ep_comm_overlap"] = r.flag(K["ep_comm_overlap"])
    v["cuda_graph"] = _cuda_graph(r)
    v["main_grad_dtype"], v["optimizer_dtype"] = _dtypes(r)
    assumed = [k for k, dest in K.items() if not r.has(dest)
               and k in ("sharding", "sequence_parallel", "overlap_grad_reduce", "overlap_param_gather", "attention")]
    return Candidate(**v), assumed


def _cross_entropy(r: _Reader) -> str:
    """The loss's kernel (``spelling.cross_entropy_kernel``), each setting read and checked in order."""
    fused = r.flag(P["cross_entropy.fusion"])
    return spelling.cross_entropy_kernel(fused, r.choice(K["cross_entropy"], ("native", "te"), "native"))


def _layout_knobs(r: _Reader, model: dict[str, Any]) -> dict[str, Any]:
    """The parallel layout, its pipeline split and the batch."""
    v: dict[str, Any] = {}
    v["tp"] = r.int(K["tp"], 1)
    v["pp"] = r.int(K["pp"], 1)
    v["pipeline_layout"], v["vpp"] = _virtual_stages(r, model, v["pp"])
    v["first_stage_layers"] = r.int(K["first_stage_layers"], 0, floor=0)
    v["last_stage_layers"] = r.int(K["last_stage_layers"], 0, floor=0)
    v["account_for_embedding"] = r.flag(K["account_for_embedding"])
    v["account_for_loss"] = r.flag(K["account_for_loss"])
    v["cp"] = r.int(K["cp"], 1)
    v["cp_comm"] = r.choice(K["cp_comm"], ("p2p", "a2a", "allgather"), "p2p")
    if v["cp"] == 1:
        v["cp_comm"] = "p2p"  # no context-parallel group to talk over: the candidate says the default
    v["ep"], v["etp"] = expert_knobs(r.int(K["ep"], 1), r.int(K["etp"], 0, floor=0), v["tp"], bool(model.get("moe")))
    v["mbs"] = r.int(K["mbs"], 1)
    v["gbs"] = r.int(K["gbs"], 0)
    if not v["gbs"]:
        r.missing(K["gbs"], "add it: the space fixes the global batch")
        v["gbs"] = 1
    v["seq_len"] = model.get("seq_len") or 1
    return v


def _virtual_stages(r: _Reader, model: dict[str, Any], pp: int) -> tuple[str, int]:
    """The pipeline layout (empty: none) and the virtual stages per rank that it, the virtual stage
    count or the layers per virtual stage give; two of them set together clash."""
    vpp = r.int(K["vpp"], 1)
    if r.has(P["vpp.layers"]):
        per = r.int(P["vpp.layers"], 1)
        if r.has(K["vpp"]):
            r.clash(K["vpp"], P["vpp.layers"],
                    "Megatron takes one of the two")
        vpp = max(1, model["num_layers"] // (pp * per)) if per else 1
    layout = str(r.s[K["pipeline_layout"]].value) if r.has(K["pipeline_layout"]) else ""
    if not layout:
        return layout, vpp
    try:
        stages = len(parse_layout(layout))
    except ValueError:
        stages = layout.count("|") + 1  # the checker reports the layout itself
    from_layout = max(1, stages // pp)
    # Megatron-LM's arguments take one of the two; megatron-core's config (what Bridge builds) takes
    # both when they agree (TransformerConfig.__post_init__)
    if r.has(K["vpp"]) and (r.kind != "bridge" or vpp != from_layout):
        r.clash(K["pipeline_layout"], K["vpp"], "Megatron takes one of the two" if r.kind != "bridge" else
                f"the layout has {from_layout} virtual stages per rank, which megatron-core asserts they agree on")
    return layout, from_layout


def _offload(r: _Reader) -> int:
    """The layers whose activations go to host memory. Megatron-LM turns offloading on from the count
    (arguments.py); a Bridge config holds the switch beside it, and which tensors go."""
    if r.kind == "bridge" and not r.flag(P["offload_layers.enable"]):
        return 0
    n = r.int(K["offload_layers"], 0, floor=0)
    if n and r.has(OFFLOAD_ACTIVATIONS) and not r.flag(OFFLOAD_ACTIVATIONS):
        r.unsupported(OFFLOAD_ACTIVATIONS, "offloading that leaves the activations on the GPU (the weights "
                      "alone, or nothing) is not modelled: `offload_layers` offloads the layers' activations")
    if r.flag(OFFLOAD_OPTIMIZER):
        r.unsupported(OFFLOAD_OPTIMIZER, "the optimizer state and step in host memory are not modelled: the account "
                      "would hold them on the GPU, and megatron-core asks for the precision-aware optimizer beside it")
    return n


def _precision(r: _Reader) -> tuple[str, str, str]:
    """The GEMM precision, the FP8 scaling recipe and the FP8 formats."""
    s = r.s
    fp8 = s.get(K["precision"]) or s.get(P["precision.fp8_format"])
    fp4 = s.get(P["precision.fp4"]) or s.get(P["precision.fp4_format"])
    if r.flag(P["precision.fp16"]):
        r.unsupported(P["precision.fp16"], "FP16 training with loss scaling is not modelled; primusc's recipes are BF16 based",
                      help="FP16's tensor cores run at BF16's rate and its tensors take BF16's bytes: import the recipe "
                      "with BF16 in its place (`--bf16` for `--fp16`, `bf16: true` for `fp16: true`) for its projection, "
                      "and keep FP16 in the launch you run")
    precision, fp8_format = "bf16", "hybrid"
    if fp8 is not None and fp8.value not in (None, False):
        precision = "fp8"
        # Megatron-LM's --fp8-format choices; pure E5M2 Transformer Engine refuses for training
        if str(fp8.value) in FP8_FORMATS:
            fp8_format = str(fp8.value)
        else:
            r.bad(fp8, " or ".join(f"`{f}`" for f in FP8_FORMATS))
    if fp4 is not None and fp4.value not in (None, False):
        if precision == "fp8":
            r.clash(fp8.dest if fp8 else K["precision"], fp4.dest, "a run computes its GEMMs in one of FP8 and FP4")
        precision = "fp4"
        r.choice(fp4.dest, ("e2m1",), "e2m1")  # NVFP4's element format, the one primusc models
        fp4_recipe = r.s.get(P["precision.fp4_recipe"])
        if fp4_recipe is not None and fp4_recipe.value not in (None, "nvfp4"):
            # an MXFP4 recipe (E8M0 scales per 32 values, AMD's MI355X experiments) is not the NVFP4 primusc
            # models, whose GEMMs run on NVIDIA's FP4 tensor cores at their own rate
            r.unsupported(fp4_recipe.dest, f"FP4 recipe `{fp4_recipe.value}`: primusc's `precision = fp4` is "
                          "NVFP4 (E4M3 scales per 16 values and one per tensor), and models no other",
                          help="import the recipe with FP8 or BF16 in its place to plan it, and keep the FP4 recipe "
                               "in the launch you run")
    # Megatron's --fp8-recipe defaults to delayed scaling
    recipe = r.choice(K["fp8_recipe"], ("tensorwise", "delayed", "blockwise", "mxfp8"), "delayed") \
        if precision == "fp8" else "tensorwise"
    return precision, recipe, fp8_format


def _sharding(r: _Reader) -> tuple[str, bool]:
    """The ``sharding`` knob, and whether it is torch FSDP2's."""
    on = {d: r.flag(d) for d in reading.SHARDING_SETTINGS}
    if on[K["sharding"]] and on[P["sharding.torch_fsdp2"]]:
        r.clash(K["sharding"], P["sharding.torch_fsdp2"], "torch FSDP2 runs without the distributed optimizer")
    return reading.sharding_of(on)


def _schedule(r: _Reader, vpp: int) -> tuple[str, int]:
    """The pipeline schedule, and the virtual stages it runs (ZBV: two)."""
    algorithm = r.s.get(P["schedule.algorithm"])
    patched = algorithm is not None and algorithm.value is not None and r.flag(P["schedule.patch"])
    schedule = spelling.schedule_of(vpp, str(algorithm.value) if patched and algorithm is not None else None)
    if schedule is None:
        assert algorithm is not None
        r.unsupported("pp_algorithm", f"the Primus schedule `{algorithm.value}` is not modelled")
        schedule = "1f1b"
    return schedule, 2 if schedule == "zbv" else vpp


def _attention(r: _Reader) -> str:
    backend = r.choice(K["attention"], ("auto", "flash", "fused", "unfused", "local"), "auto")
    if backend == "fused":
        # a Bridge launch leaves the backend to its recipe (emit/bridge.py); the others write the knob's `auto`
        launched = ("a Bridge launch keeps the recipe's own `fused`" if r.kind == "bridge" else
                    "the megatron and primus launch files write `auto` (Transformer Engine picks among them)")
        r.notes.append(f"`--attention-backend fused` is read as `attention = flash`, the fused memory-efficient kernel: "
                       f"{launched}")
    if backend == "flash":
        r.notes.append("`--attention-backend flash` is read as `attention = fa2`: Transformer Engine's FlashAttention "
                       "backend runs the flash-attn package (v2, or v3 on Hopper where it is installed)")
    return ATTENTION_OF_BACKEND[backend]


def _moe_dispatcher(r: _Reader, tp: int) -> str:
    dispatcher = r.choice(K["moe_dispatcher"], ("allgather", "alltoall", "flex"), "allgather")
    if _turbo_deepep(r) and tp == 1:
        # Primus swaps in Primus Turbo's DeepEP and sets the flex dispatcher itself, at TP 1 only
        # (primus/backends/megatron/patches/turbo/moe_dispatcher_patches.py, v26.5.1)
        r.notes.append("`use_turbo_deepep` with Primus Turbo at TP 1: Primus runs the flex dispatcher "
                       "(Primus Turbo's DeepEP), whatever `moe_token_dispatcher_type` says")
        return "flex"
    return dispatcher


def _overlaps(r: _Reader, torch_fsdp2: bool) -> dict[str, bool]:
    """The TP communication, gradient reduction and parameter gather overlaps."""
    v = {"tp_comm_overlap": r.flag(K["tp_comm_overlap"]), "overlap_grad_reduce": r.flag(K["overlap_grad_reduce"]),
         "overlap_param_gather": r.flag(K["overlap_param_gather"])}
    if torch_fsdp2 and not v["overlap_param_gather"] and v["overlap_grad_reduce"]:
        # torch FSDP2 gathers the next unit's parameters on its own stream while this one computes;
        # Megatron's switch, which it asserts off beside FSDP2, is not what overlaps them
        v["overlap_param_gather"] = True
        r.notes.append("torch FSDP2 overlaps its parameter all-gathers itself: read as `overlap_param_gather = true`")
    return v


def _dtypes(r: _Reader) -> tuple[str, str]:
    """The main gradients' dtype and the optimizer states'."""
    # --grad-reduce-in-bf16 keeps the gradient buffer in BF16 as the precision-aware optimizer's
    # --main-grads-dtype bf16 does (validate_args turns off FP32 accumulation either way)
    main_grad = "bf16" if r.flag(P["main_grad_dtype.bf16_reduce"]) else \
        r.choice(K["main_grad_dtype"], ("fp32", "bf16"), "fp32")
    fsdp = r.s.get(P["main_grad_dtype.megatron_fsdp"])
    given = str(fsdp.value).lower() if fsdp is not None else "auto"
    as_given = bool(r.version) and megatron.at_least(r.version, megatron.FSDP_MAIN_GRADS_AS_GIVEN)
    if as_given and r.flag(P["sharding.fsdp"]) and given in ("auto", "fp32", "bf16"):
        # From this release Megatron-FSDP keeps its gradients in the dtype its own flag names, whatever FP32
        # accumulation or --grad-reduce-in-bf16 say, and its default (`auto`) is the parameters' dtype, BF16
        # (MixedPrecisionPolicy, _resolve_group_grad_dtype)
        if given == "auto" and main_grad != "bf16":
            r.notes.append(f"Megatron-FSDP at {r.version} keeps its main gradients in the parameters' dtype, BF16, "
                           "where `--megatron-fsdp-main-grads-dtype` is not given (its default `auto`): read as "
                           "`main_grad_dtype = bf16`")
        main_grad = "fp32" if given == "fp32" else "bf16"
    elif given == "bf16" and main_grad != "bf16" and fsdp is not None and not as_given:
        # before that release BF16 training's FP32 accumulation won over Megatron-FSDP's own BF16
        r.notes.append(f"`{fsdp.written or fsdp.dest}` bf16 is read as FP32 main gradients: at {r.version}, "
                       "BF16 training accumulates gradients in FP32 over it (Megatron-FSDP's adapter; "
                       f"Megatron-LM {megatron.FSDP_MAIN_GRADS_RELEASE} on takes it as given), unless "
                       "--grad-reduce-in-bf16")
    optimizer = r.choice(K["optimizer_dtype"], ("fp32", "bf16"), "fp32")
    if r.has(P["optimizer_dtype.second_moment"]) and r.s[P["optimizer_dtype.second_moment"]].value != optimizer:
        r.clash(K["optimizer_dtype"], P["optimizer_dtype.second_moment"], "primusc keeps both Adam moments in one dtype")
    return main_grad, optimizer


def _turbo_deepep(r: _Reader) -> bool:
    """Primus Turbo's DeepEP: asked for, or turned on by sync-free MoE stage 2 or 3 (Primus's
    rocm_arg_validation.py), with Primus Turbo enabled."""
    stage = r.int("turbo_sync_free_moe_stage", 0, floor=0) if r.has("turbo_sync_free_moe_stage") else 0
    return r.flag("enable_primus_turbo") and (r.flag("use_turbo_deepep") or stage >= 2)


def _recompute(r: _Reader, chunks: int, model_layers: int) -> Recompute:
    granularity = r.choice(K["recompute"], ("full", "selective"), "")
    ids = r.entry(P["recompute.layer_ids"])
    if ids is not None and granularity == "full" and model_layers:
        try:
            listed = reading.listed_layers(ids.value)
        except reading.Unread:
            listed = ()  # read, and refused, below
        if any(not 0 <= i < model_layers for i in listed):
            # Primus numbers the decoder layers and then the MTP depths, and refuses any other at start
            # (recompute_layer_patches.validate_specified_recompute_layers)
            r.bad(ids, f"layer numbers from 0 to {model_layers - 1} (Primus refuses any other at start)")
            return Recompute()
    method = r.choice(P["recompute.method"], ("uniform", "block"), "") or None
    layers = r.int(P["recompute.layers"], 0, floor=0) if r.has(P["recompute.layers"]) else None
    e = r.s.get(P["recompute.modules"])
    modules: tuple[str, ...] | None = None
    if granularity == "selective" and e is not None and e.value is not None:
        if not isinstance(e.value, str | list | tuple):
            r.bad(e, "a list of modules")
            return Recompute()
        modules = tuple(e.value.split()) if isinstance(e.value, str) else tuple(str(m) for m in e.value)
    try:
        rc, note = reading.recompute_of(granularity or None, method, layers, modules,
                                        None if ids is None else ids.value, chunks)
    except reading.Unread as err:
        r.unsupported(P["recompute.modules"] if granularity == "selective" else
                      P["recompute.layer_ids"] if ids is not None and granularity == "full" else K["recompute"], str(err))
        return Recompute()
    if note:
        r.notes.append(note)
    return rc


def _block_within_chunks(r: _Reader, cand: Candidate, model: dict[str, Any]) -> Candidate:
    """A block recomputation of more layers than any model chunk holds recomputes every layer of each
    (megatron-core's ``_checkpointed_forward``): read as the largest chunk's count, the value a space's
    points take (P4013), which runs the same."""
    rc = cand.recompute
    if rc.kind != "full" or rc.method != "block" or not model.get("num_layers"):
        return cand
    split = split_of(int(model["num_layers"]), cand, derived.virtual_stages(cand.schedule, cand.vpp))
    try:
        largest = max(chunk_sizes(split))
    except (ValueError, ZeroDivisionError):  # a split Megatron refuses: the layout's rules say why
        return cand
    if not 0 < largest < rc.layers:
        return cand
    r.notes.append(f"full recomputation of {rc.layers} layers by the block method over model chunks of at most "
                   f"{largest} recomputes all of them: read as {largest}")
    return cand.replace(recompute=attrs.evolve(rc, layers=largest))


def _cuda_graph(r: _Reader) -> str:
    if not r.has(K["cuda_graph"]):
        return "none"
    impl = str(r.s[K["cuda_graph"]].value)
    # core_v0.18 renamed the scope to the modules (the scope's flag its deprecated alias): either names it
    scope_entry = r.s.get(P["cuda_graph.modules"]) or r.s.get(P["cuda_graph.scope"])
    scope: tuple[str, ...] = ()
    if scope_entry is not None and scope_entry.value is not None:
        v = scope_entry.value
        if not isinstance(v, str | list | tuple):
            r.bad(scope_entry, "a list of graphed modules")
            return "none"
        scope = reading.words(v)
    try:
        knob, note = reading.cuda_graph_of(impl, scope)
    except reading.Unread as err:
        r.unsupported(K["cuda_graph"], str(err))
        return "none"
    if note:
        r.notes.append(note)
    return knob


def _passthrough(recipe: Recipe) -> Passthrough:
    out: list[tuple[str, bool | int | float | str]] = []
    for dest, e in recipe.entries.items():
        if dest in MODELLED or e.value is None or (e.preset and not e.carry):
            continue
        value = e.value
        if isinstance(value, (list, tuple)):
            # a list flag's values are its words (a command line's form, which the Primus target types back);
            # any other list keeps its brackets, which a Primus launch reads back as YAML
            value = " ".join(str(x) for x in value) if dest in megatron.list_dests() \
                else json.dumps(list(value), default=str)
        if not isinstance(value, (bool, int, float, str)):
            value = str(value)
        out.append((dest, value))
    return tuple(out)


def _truth(v: Any) -> bool | None:
    """A switch's value as a recipe writes it: a bool, 0 or 1 (Primus experiments write
    `sequence_parallel: 1`), or the text true or false; None for anything else."""
    if isinstance(v, bool):
        return v
    if v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None


def _implied(recipe: Recipe) -> Recipe:
    """The recipe with each switch Megatron-LM's validate_args reads as another setting (``megatron.IMPLIED``)
    turned into that setting, where the switch is on: what the run ran, and nothing carried through to
    set it again over the layout a plan chooses."""
    entries = dict(recipe.entries)
    notes = list(recipe.notes)
    for switch, dest, value in megatron.IMPLIED:
        e = entries.get(switch)
        if e is None:
            continue
        del entries[switch]
        if _truth(e.value) is not True:
            continue
        before = entries.get(dest)
        if before is not None and before.value != value:
            notes.append(f"`{e.written or switch}` sets {dest} to {value} over `{before.written or dest}` "
                         f"{before.value} (Megatron-LM's validate_args)")
        entries[dest] = Entry(dest, value, e.span, e.written or switch, e.preset)
    return attrs.evolve(recipe, entries=entries, notes=tuple(notes)) if entries != recipe.entries else recipe


def interpret(recipe: Recipe, card: dict[str, Any] | None = None, *, fill_all: bool = False,
              require_vocab: bool = True) -> Imported:
    """The recipe as a model, a candidate and its carried-through settings; every problem at once."""
    recipe = _implied(recipe)
    r = _Reader(recipe)
    model, stated = _model(r, card, fill_all, require_vocab)
    cand, assumed = _candidate(r, model)
    cand = _block_within_chunks(r, cand, model)
    if r.problems:
        raise CompileError(r.problems)
    spans: dict[str, Span] = {}
    for knob, dest in {**K, "schedule": K["vpp"]}.items():
        e = recipe.entries.get(dest)
        if e is not None and e.span is not None:
            spans[knob] = e.span
    carried = _passthrough(recipe)
    kept = dict(carried)
    tokenizer = kept.get("tokenizer_type")
    if isinstance(tokenizer, str) and not tokenizer.startswith("Null") and not {"tokenizer_model", "vocab_file"} & set(kept):
        # a tokenizer reads its files (Megatron asserts them at start): without the ones the recipe's command
        # left unknown, the launch runs mock data's NullTokenizer, as it does where no tokenizer is given
        carried = tuple((k, v) for k, v in carried if k != "tokenizer_type")
        r.notes.append(f"`tokenizer_type` {tokenizer} is not carried: its files (`--tokenizer-model`) are not in the "
                       "recipe as read; give `--var tokenizer_type=... --var tokenizer_model=...` to launch with it")
    preset = recipe.entries.get("tokenizer_type")
    if (preset is not None and preset.preset and "tokenizer_type" not in kept and isinstance(preset.value, str)
            and not preset.value.startswith("Null")):
        # a Primus model preset's tokenizer (qwen2.5_72B.yaml's Hugging Face one) is the preset's, not the
        # experiment's: the launch runs mock data with the null tokenizer, as for a recipe that names none
        files = recipe.entries.get("tokenizer_model")
        named = f" (`tokenizer_model` {files.value})" if files is not None and files.value else ""
        r.notes.append(f"the model preset's `tokenizer_type` {preset.value}{named} is not carried: the launch runs the "
                       "null tokenizer of the card's vocabulary (what mock data needs); give `--var tokenizer_type=... "
                       "--var tokenizer_model=...` to launch with it")
    r.notes.extend(unmodelled_notes(carried))
    balanced = model.get("moe") is not None and r.flag(BALANCED)
    if balanced:
        r.notes.append(f"`{BALANCED}` forces an even split of tokens over the experts: the space assumes "
                       "`moe_imbalance = 1` (no expert rank busier than the mean) where primusc's default is 1.1")
    return Imported(recipe, model, stated, cand, spans, carried, tuple(assumed), tuple(r.notes), balanced)
