"""Megatron-LM's command-line flags per version, as ``tools/framework_knowledge.py`` read them from each
release's own parser (``frameworks/megatron/arguments.json``): every reader of a command line and every
writer of one asks here whether a flag exists at a version, what it takes and what it defaults to."""

from __future__ import annotations

import functools
from typing import Any

from attrs import frozen

from primus_lang.frameworks import table

# Switches Megatron-LM's validate_args turns into the setting they stand for, whatever that setting says
# (megatron/training/arguments.py: `if args.recompute_activations: args.recompute_granularity = 'selective'`,
# and its "Legacy RoPE arguments", `if args.use_rotary_position_embeddings: args.position_embedding_type =
# 'rope'`): (switch, setting, value), as settings (the flag's dest).
IMPLIED: tuple[tuple[str, str, str], ...] = (
    ("recompute_activations", "recompute_granularity", "selective"),
    ("use_rotary_position_embeddings", "position_embedding_type", "rope"),
)

# Megatron-LM's training scripts for models primusc does not plan: each trains another model family than
# the decoder-only GPT (and Mamba hybrid) that pretrain_gpt.py, pretrain_mamba.py and pretrain_hybrid.py
# build, from flags that read the same. (basename or a path's tail, what it trains)
OTHER_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("pretrain_bert.py", "BERT, an encoder with a masked-language-model head"),
    ("pretrain_t5.py", "T5, an encoder-decoder"),
    ("pretrain_retro.py", "RETRO, a retrieval-augmented model"),
    ("pretrain_ict.py", "an ICT retriever (biencoder)"),
    ("pretrain_vlm.py", "a vision-language model"),
    ("pretrain_vision_classify.py", "a vision transformer"),
    ("pretrain_vision_dino.py", "a vision transformer"),
    ("pretrain_vision_inpaint.py", "a vision transformer"),
    ("multimodal/train.py", "a multimodal (vision-language) model"),
    ("mimo/train.py", "a multimodal MIMO model (encoders beside the language model)"),
    ("train_rl.py", "with reinforcement learning (GRPO rollouts between training steps)"),
)
# What each tokenizer type reads, which Megatron-LM asserts (or fails to load without) when it builds it:
# megatron/training/tokenizer/tokenizer.py, build_tokenizer, core_v0.16.1 (a Hugging Face tokenizer loads
# `tokenizer_model` with AutoTokenizer, which a missing name fails)
TOKENIZER_READS: dict[str, tuple[str, ...]] = {
    "BertWordPieceLowerCase": ("vocab_file",),
    "BertWordPieceCase": ("vocab_file",),
    "GPT2BPETokenizer": ("vocab_file", "merge_file"),
    "SentencePieceTokenizer": ("tokenizer_model",),
    "GPTSentencePieceTokenizer": ("tokenizer_model",),
    "HuggingFaceTokenizer": ("tokenizer_model",),
    "Llama2Tokenizer": ("tokenizer_model",),
    "TikTokenizer": ("tokenizer_model", "tiktoken_pattern"),
    "MultimodalTokenizer": ("tokenizer_model",),
    "SFTTokenizer": ("tokenizer_model",),
    "NullTokenizer": ("vocab_size",),
    "NullMultimodalTokenizer": ("vocab_size",),
}


def tokenizer_lacks(settings: dict[str, Any]) -> list[str]:
    """What the settings' tokenizer type reads that they do not give (the parser's default for each is None)."""
    return [d for d in TOKENIZER_READS.get(str(settings.get("tokenizer_type")), ())
            if settings.get(d) in (None, "")]


# the scripts that pretrain what primusc plans, one of which every launch it writes runs
GPT_SCRIPTS = ("pretrain_gpt.py", "pretrain_mamba.py", "pretrain_hybrid.py")

# Training scripts that first ship in a release (Megatron-LM's tags): a launch that runs one was written
# for that release or a later one, whatever its flags allow
SCRIPT_SINCE: dict[str, str] = {"pretrain_hybrid.py": "core_v0.18"}

# the version a launch names when nothing says otherwise: the megatron-core the ground-truth tests install
DEFAULT_VERSION = "core_v0.16"
SWITCH, VALUE, LIST = "switch", "value", "list"


@frozen
class Version:
    name: str  # `core_v0.16`, `primus_v26.5`: what launches and messages say
    ref: str  # the tag or commit it was read at
    commit: str
    date: str
    what: str


@frozen
class Flag:
    """One option string at one version."""

    option: str  # `--tensor-model-parallel-size`
    dest: str
    action: str  # store, store_true, store_false, store_const, append, ...
    nargs: int | str | None = None
    type: str | None = None  # the argparse type's name: int, float, str, or a Megatron converter's
    choices: tuple[Any, ...] | None = None
    default: Any = None
    const: Any = None
    # the package that adds it to the parser where it is installed (``modelopt``: pretrain_gpt.py's extra
    # arguments with nvidia-modelopt, megatron/post_training/arguments.py), None for Megatron-LM's own
    provider: str | None = None

    @property
    def arity(self) -> str:
        """How a command line reads it: a switch takes no word, a value one, a list any number."""
        if self.action in ("store_true", "store_false", "store_const", "count") or self.nargs == 0:
            return SWITCH
        if self.nargs in ("*", "+") or (isinstance(self.nargs, int) and self.nargs > 1):
            return LIST
        return VALUE


def _table() -> dict[str, Any]:
    return table.load("megatron", "arguments.json")


@functools.cache
def versions() -> tuple[Version, ...]:
    """Every version read, oldest first."""
    return tuple(Version(**v) for v in _table()["versions"])


def version_names() -> tuple[str, ...]:
    return tuple(v.name for v in versions())


def named_for_commit(commit: str, who: str) -> str:
    """The version table read at ``commit`` (the Megatron-LM another framework's release pins)."""
    for v in versions():
        if v.commit == commit:
            return v.name
    raise KeyError(f"{who} pins Megatron-LM {commit[:10]}, which tools/framework_knowledge.py did not read")


def version(name: str) -> Version:
    for v in versions():
        if v.name == name:
            return v
    raise KeyError(name)


@functools.cache
def flags(at: str) -> dict[str, Flag]:
    """option string -> its flag, at version ``at``."""
    out: dict[str, Flag] = {}
    for option, forms in _table()["flags"].items():
        for form in forms:
            if at in form["versions"]:
                out[option] = Flag(option=option, dest=form["dest"], action=form["action"],
                                   nargs=form.get("nargs"), type=form.get("type"),
                                   choices=tuple(form["choices"]) if form.get("choices") is not None else None,
                                   default=form.get("default"), const=form.get("const"),
                                   provider=form.get("provider"))
                break
    return out


@functools.cache
def by_dest(at: str) -> dict[str, tuple[Flag, ...]]:
    """argparse dest -> the flags that set it at ``at`` (a dest may have several spellings)."""
    out: dict[str, list[Flag]] = {}
    for flag in flags(at).values():
        out.setdefault(flag.dest, []).append(flag)
    return {dest: tuple(fs) for dest, fs in out.items()}


@functools.cache
def known_names() -> frozenset[str]:
    """Every dest and flag name (``fp8_format``) any Megatron-LM version primusc has read has."""
    return frozenset(name for v in version_names() for flag in flags(v).values()
                     for name in (flag.dest, flag.option.lstrip("-").replace("-", "_")))


@functools.cache
def switch_dests(at: str) -> frozenset[str]:
    """The dests only switches set at ``at`` (``--no-create-attention-mask-in-dataloader``'s)."""
    return frozenset(dest for dest, fs in by_dest(at).items() if all(f.arity == SWITCH for f in fs))


@functools.cache
def list_dests(at: str | None = None) -> frozenset[str]:
    """The dests of flags that take a list of words (nargs ``*``, ``+`` or more than one) at ``at``, or at
    any version when None."""
    names = (at,) if at is not None else version_names()
    return frozenset(dest for v in names for dest, fs in by_dest(v).items() if any(f.arity == LIST for f in fs))


def versions_with(option: str) -> tuple[str, ...]:
    """The versions that have ``option``, oldest first."""
    forms = _table()["flags"].get(option, ())
    have = {name for form in forms for name in form["versions"]}
    return tuple(v for v in version_names() if v in have)


def at_least(name: str, release: str) -> bool:
    """Whether version ``name`` (a release or a pinned commit) is as new as ``release``, by date."""
    return version(name).date >= version(release).date


# The first release whose Megatron-FSDP adapter takes --megatron-fsdp-main-grads-dtype as it is
# (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py, MixedPrecisionPolicy): before it, BF16 training's
# FP32 gradient accumulation (grad_reduce_in_fp32, on unless --grad-reduce-in-bf16) set FP32 over it
# (core_v0.17.1 to core_v0.18.2; the commit Bridge v0.6 pins, cd4afff, takes it as it is)
FSDP_MAIN_GRADS_AS_GIVEN = "bridge_v0.6"
FSDP_MAIN_GRADS_RELEASE = "core_v0.19"  # the first Megatron-LM release with that adapter


# A dropless MoE sizes its dispatch by the tokens each expert received, which the alltoall and allgather
# dispatchers and DeepEP copy to the host mid-layer: no CUDA graph can hold that (megatron-core's MoE
# README: "the resulting dynamic shapes make MoE layers uncapturable"). HybridEP dispatches without the
# copy when each rank's routed tokens have a static budget, --moe-expert-rank-capacity-factor (core_v0.18
# on; tokens past it are dropped, token_dispatcher.py). Every MoE recipe of Megatron-Bridge 067f987 that
# graphs the whole iteration (DeepSeek-V3, Qwen3 30B-A3B and 235B-A22B, gpt-oss 120B) dispatches with
# HybridEP at a factor of 1.5 (the paged-stash development recipes, 1.2).
RANK_BUDGET_FLAG = "--moe-expert-rank-capacity-factor"
RANK_BUDGET_DEST = "moe_expert_rank_capacity_factor"
RANK_BUDGET = 1.5
# what TransformerConfig asks beside the budget with HybridEP (core_v0.18 and core_v0.19: "requires
# use_transformer_engine_op_fuser to be enabled"), and NVIDIA's recipes set
RANK_BUDGET_NEEDS = "use_transformer_engine_op_fuser"


# megatron-core's null tokenizer counted its end-of-document token past the vocabulary it was given
# (tokenizers/text/libraries/null_tokenizer.py: `vocab_size + 1`; Megatron-LM's legacy _NullTokenizer
# alike) until Megatron-LM commit c9dfe34 (22 Apr 2026), first released in core_v0.18: from it the
# vocabulary is the size given, the token its last id (`eod_id = vocab_size - 1`). Megatron-Bridge's
# pins are past it; Primus's and core_v0.16/0.17 are not.
NULL_TOKENIZER_EXACT = "core_v0.18"


# Megatron-LM f7dfb99 (7 Dec 2025, "Support TP greater than num_kv_heads by supporting QKV activation
# sub-sharding"): TransformerConfig takes a TP that is a multiple of the key/value heads as well as one
# dividing them (transformer_config.py, "must be a multiple or divisor of"), and attention.py gathers
# the QKV output (``derived.qkv_gathered``). First in the versions read at Primus's v26.2 pin, then
# core_v0.16; core_v0.15's branch was cut without it.
TP_OVER_KV_HEADS = "primus_v26.2"


def takes_tp_over_kv_heads(at: str) -> bool:
    """Whether Megatron-LM version ``at`` runs a TP larger than (a multiple of) the key/value heads."""
    return at_least(at, TP_OVER_KV_HEADS)


def null_tokenizer_extra(at: str) -> int:
    """The tokens the null tokenizer of Megatron-LM version ``at`` has past its `--vocab-size`."""
    return 0 if at_least(at, NULL_TOKENIZER_EXACT) else 1


def has_rank_budget(at: str) -> bool:
    """Whether Megatron-LM version ``at`` takes HybridEP's static per-rank token budget."""
    return RANK_BUDGET_FLAG in flags(at)


def releases() -> tuple[str, ...]:
    """The tagged Megatron-LM releases, oldest first (not the commits other frameworks pin)."""
    return tuple(v.name for v in versions() if v.name.startswith("core_v"))


def describe(names: tuple[str, ...]) -> str:
    """Versions as a reader wants them: runs of consecutive releases as ranges, pins by name."""
    order = releases()
    rel = [n for n in order if n in names]
    parts: list[str] = []
    run: list[str] = []
    for name in order:
        if name in rel:
            run.append(name)
            continue
        if run:
            parts.append(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}")
            run = []
    if run:
        parts.append(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}")
    parts += [n for n in names if n not in order]
    return ", ".join(parts) if parts else "no version primusc has read"
