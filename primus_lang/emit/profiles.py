"""Megatron-LM version profiles: how each setting is spelt as a ``pretrain_gpt.py`` flag.

A flag is ``--`` plus the setting's name with dashes unless a profile renames it. A boolean setting
is written as the switch the version's own parser stores that value with (``--bf16`` for true,
``--no-rope-fusion`` for ``apply_rope_fusion`` false: frameworks/megatron's table), and not at all
where the value is the parser's default. A flag a release's parser lacks, or a value outside its
choices, is refused (P7001) from that release's own flag table (frameworks/megatron), naming the release
where it arrived; what no flag table says (a value a config check refuses, a feature that shipped with a
flag before it was usable) is a written rule (``Unsupported``), gated on the release's flags where it
hinges on one.

Sources: Megatron-LM ``megatron/training/arguments.py`` at core_v0.12.0, core_v0.16.1 and
core_v0.19.0 (0.16 on generates most flags from ``TransformerConfig`` fields, same spelling),
Megatron-FSDP user guide.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from attrs import frozen

from primus_lang.emit.arguments import Setting, Settings
from primus_lang.frameworks import megatron, rules, spelling

# what is said of a flag no version of Megatron-LM has (``missing``)
NO_VERSION = "no version primusc has read has it"

# dest -> its flag, where the spelling is not the dest's (in every version)
_SPELLING = {"fp8": "--fp8-format", "fp4": "--fp4-format"}

# dest -> what an older release called it, spelt so where the release's parser has only the old dest
_FORMER = {"use_megatron_fsdp": "use_custom_fsdp"}


def _first_after(at: str, have: tuple[str, ...]) -> str | None:
    """The first release among ``have`` newer than version ``at``, where ``at`` has none before it: the
    release something ``at`` lacks arrived in (None where ``at`` comes after one that had it)."""
    if at not in megatron.version_names():
        return None
    older = [r for r in megatron.releases() if r in have and not megatron.at_least(r, at)]
    newer = [r for r in megatron.releases() if r in have and r != at and megatron.at_least(r, at)]
    return newer[0] if newer and not older else None


def _arrival(option: str, at: str) -> str:
    """Where ``option`` is to be had, for a version ``at`` that lacks it."""
    others = megatron.versions_with(option)
    if not others:
        return NO_VERSION
    first = _first_after(at, others)
    if first is not None:
        return f"it arrived in {first}"
    return f"{megatron.describe(others)} {'has' if len(others) == 1 else 'have'} it"


def _taking(option: str, value: str, at: str) -> str:
    """Where ``option`` takes ``value``, for a version ``at`` whose choices lack it."""
    have = tuple(v for v in megatron.version_names() if (f := megatron.flags(v).get(option)) is not None
                 and f.choices is not None and value in [str(c) for c in f.choices])
    if not have:
        return ""
    first = _first_after(at, have)
    return f" ({value} arrived in {first})" if first is not None else f" ({megatron.describe(have)} take {value})"


@frozen
class Unsupported:
    dest: str
    applies: Callable[[Setting], bool]
    reason: str  # `{release}` stands for the release the launch names
    # whether the rule holds given the other settings (a value refused only beside another)
    beside: Callable[[Settings], bool] = lambda settings: True
    # the flag whose absence at a release is what the rule is about: the rule holds only where the
    # release's parser lacks it, whichever profile the release borrows
    without: str = ""
    # the companions written only beside the refused setting, of which its reason speaks too
    covers: tuple[str, ...] = ()


@frozen
class Profile:
    name: str
    renames: dict[str, str]  # dest -> the dest this version calls it (its flag follows the new name)
    unsupported: tuple[Unsupported, ...]
    extras: Callable[[Settings], Settings]  # version-required companions of some settings
    hybrid_script: str = "pretrain_mamba.py"  # the training script of a hybrid (Mamba) model

    def problems(self, settings: Settings, own: frozenset[str] | None = None) -> list[str]:
        """``own``: for a framework that hands Megatron its settings by argparse dest (Primus sets them on
        the parsed namespace), the settings it reads itself; None for a command line of flags."""
        out = self.rule_problems(settings)
        # a written reason says more than "the parser lacks the flag" of the setting it refuses
        refused = {dest for rule in self.refusing(settings) for dest in (rule.dest, *rule.covers)}
        rest = {k: v for k, v in settings.items() if k not in refused}
        if own is not None:
            dests = megatron.by_dest(self.name)
            flags = megatron.flags(self.name)
            absent = [k for k in rest if k not in own and self.dest(k) not in dests
                      and "--" + self.dest(k).replace("_", "-") not in flags]
            return out + ([f"the Megatron-LM Primus runs ({self.name}) has no argument "
                           + ", ".join(f"`{self.dest(k)}`" for k in absent)] if absent else [])
        return out + self.missing(rest)

    def refusing(self, settings: Settings) -> list[Unsupported]:
        """The written rules that refuse a setting of ``settings`` at this release."""
        flags = megatron.flags(self.name)
        return [rule for rule in self.unsupported
                if rule.dest in settings and rule.applies(settings[rule.dest]) and rule.beside(settings)
                and not (rule.without and rule.without in flags)]

    def rule_problems(self, settings: Settings) -> list[str]:
        """The version's written refusals of a setting (``unsupported``), whatever reads it."""
        return [f"`{rule.dest}` = {format_setting(settings[rule.dest])}: "
                + (f"Megatron-LM {self.name} has no `{rule.without}` ({_arrival(rule.without, self.name)}); "
                   if rule.without else "")
                + rule.reason.replace("{release}", self.name)
                for rule in self.refusing(settings)]

    def missing(self, settings: Settings) -> list[str]:
        """Flags the version's own parser lacks or values it refuses (frameworks/megatron), each once:
        a launch that writes one exits at start."""
        known = megatron.flags(self.name)
        out: list[str] = []
        absent: list[str] = []
        for flag, values in self.argv(settings):
            have = known.get(flag)
            if have is None:
                absent.append(f"`{flag}` ({_arrival(flag, self.name)})")
                continue
            if have.choices is not None:
                choices = [str(c) for c in have.choices]
                bad = [v for v in values if v not in choices]
                if bad:
                    out.append(f"`{flag} {bad[0]}`: Megatron-LM {self.name} takes one of {', '.join(choices)}"
                               + _taking(flag, bad[0], self.name))
        if absent:
            out.insert(0, f"Megatron-LM {self.name} has no {', '.join(absent)}")
        return out

    def complete(self, settings: Settings) -> Settings:
        """``settings`` with what this release needs beside them (``extras``), spelt as its parser has them
        where an older release names a setting otherwise."""
        out = self.extras(settings)
        flags = megatron.flags(self.name)
        if "--moe-flex-dispatcher-backend" not in flags and out.get("moe_flex_dispatcher_backend") == "deepep":
            # a release before the flex dispatcher's backend flag turns DeepEP on with a switch
            del out["moe_flex_dispatcher_backend"]
            out["moe_enable_deepep"] = True
        if "--overlap-moe-expert-parallel-comm" not in flags and out.get("overlap_moe_expert_parallel_comm") is False:
            del out["overlap_moe_expert_parallel_comm"]  # off is all such a release can do
        return out

    def implied(self, settings: Settings) -> Settings:
        """What this release's rules leave no choice of beside ``settings`` (``rules.implied``: Megatron-FSDP's
        checkpoint format), keyed as ``settings`` are; only settings no knob writes, since a rule against a
        knob's value (MTP beside CP) refuses the candidate rather than change it."""
        named = {self.dest(k): k for k in settings} | {new: old for old, new in self.renames.items()}
        return {named.get(dest, dest): value for dest, value in rules.implied(self.arguments(settings), self.name).items()
                if spelling.knob_behind(named.get(dest, dest)) is None}

    def arguments(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` as the argparse dests and values of this version (``argument``; a setting it has no flag
        for is left out): what its rules read."""
        return {stored[0]: stored[1] for k, v in settings.items() if (stored := self.argument(k, v)) is not None}

    def dest(self, dest: str) -> str:
        if dest in self.renames:
            return self.renames[dest]
        former = _FORMER.get(dest)
        if former is not None:
            dests = megatron.by_dest(self.name)
            if dest not in dests and former in dests:
                return former
        return dest

    def flag(self, dest: str) -> str:
        name = self.dest(dest)
        return _SPELLING.get(name) or "--" + name.replace("_", "-")

    def switch(self, dest: str, value: bool) -> str:
        """The switch that stores ``value`` in ``dest`` at this version ("" where that is the parser's
        default, or where no switch stores a false); a dest the parser lacks is its own store-true flag."""
        flags = megatron.by_dest(self.name).get(self.dest(dest), ())
        action = "store_true" if value else "store_false"
        for f in flags:
            if f.action == action:
                return "" if f.default is value else f.option
        if any(f.action in ("store_true", "store_false") for f in flags):
            return ""  # the value is the switch's default: nothing to write
        return self.flag(dest) if value else ""

    def argument(self, key: str, value: Setting) -> tuple[str, Setting] | None:
        """A setting as the argparse dest and value this version stores it under (a recipe's switch carried
        under its flag's name: ``no_gradient_accumulation_fusion`` true is ``gradient_accumulation_fusion``
        false); None where the version has no flag for it."""
        name = self.dest(key)
        if name in megatron.by_dest(self.name):
            return name, value
        flag = megatron.flags(self.name).get("--" + name.replace("_", "-"))
        if flag is None:
            return None
        if isinstance(value, bool) and flag.action == "store_false":
            return flag.dest, not value
        if isinstance(value, bool) and flag.action == "store_const":
            stored = flag.const if value else flag.default
            return (flag.dest, stored) if isinstance(stored, bool | int | float | str) else None
        return flag.dest, value

    def argv(self, settings: Settings) -> list[tuple[str, tuple[str, ...]]]:
        """Flags with their values (none for switches, several for list flags), in the settings' order."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for dest, value in self.complete(settings).items():
            if isinstance(value, bool):
                switch = self.switch(dest, value)
                # a recipe's switch carried under its flag's name (`no_bias_gelu_fusion`) and the same
                # switch by its dest (`bias_gelu_fusion` false) are one flag
                if switch and (switch, ()) not in out:
                    out.append((switch, ()))
                continue
            if isinstance(value, tuple):
                out.append((self.flag(dest), tuple(format_setting(x) for x in value)))
                continue
            out.append((self.flag(dest), (format_setting(value),)))
        return out


def format_setting(value: Setting) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return " ".join(format_setting(x) for x in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _no_extras(settings: Settings) -> Settings:
    return dict(settings)


# megatron-core 0.16.1's MambaModel builds no MTP layers: they came with --mtp-hybrid-override-pattern
# (core_v0.17), and the flag's absence is the one mark of a release without them that the data has
_HYBRID_MTP = Unsupported("mtp_hybrid_override_pattern", lambda v: True,
                          "its MambaModel builds no MTP layers for a hybrid (Mamba) model",
                          without="--mtp-hybrid-override-pattern")
# a release before --cuda-graph-impl graphs whole layers or attention only, through --enable-cuda-graph
# or --external-cuda-graph, and refuses them with any recomputation: not the knob's meaning, so
# primusc does not write the knob as those flags
_CUDA_GRAPH_IMPL = Unsupported("cuda_graph_impl", lambda v: True,
                               "its --enable-cuda-graph/--external-cuda-graph take scope full or attn only, "
                               "under other rules, and are not the `cuda_graph` knob",
                               without="--cuda-graph-impl",
                               covers=("cuda_graph_scope", "moe_pad_experts_for_cuda_graph_inference",
                                       megatron.RANK_BUDGET_DEST, megatron.RANK_BUDGET_NEEDS))
# written rules of every release, each holding only where the release lacks its flag
_EVERY_RELEASE = (_HYBRID_MTP, _CUDA_GRAPH_IMPL)

CORE_V0_16 = Profile(
    name="core_v0.16",
    renames={},
    unsupported=_EVERY_RELEASE,
    extras=_no_extras,
)

CORE_V0_12 = Profile(
    name="core_v0.12",
    renames={},
    unsupported=(
        # --recompute-modules has no choices in the flag table: which modules a release recomputes is
        # its TransformerConfig's, and core_v0.12.0's has no shared experts among them (core_v0.13 and
        # core_v0.14 borrow this profile and this rule, unread)
        Unsupported("recompute_modules", lambda v: isinstance(v, tuple) and "shared_experts" in v,
                    "{release} cannot recompute the shared experts selectively"),
        *_EVERY_RELEASE,
    ),
    extras=_no_extras,
)

# megatron-core 0.19's canonical hybrid layer spec (megatron/core/models/mamba/mamba_layer_specs.py
# re-exports it as mamba_stack_spec for old scripts)
HYBRID_SPEC = ("megatron.core.models.hybrid.hybrid_layer_specs", "hybrid_stack_spec")
# the separator of MTP depths in a unified hybrid layer pattern (hybrid_layer_allocation.Symbols)
MTP_SEPARATOR = "/"


def _v019_extras(settings: Settings) -> Settings:
    out = dict(settings)
    if out.get("spec") == ("megatron.core.models.mamba.mamba_layer_specs", "mamba_stack_spec"):
        out["spec"] = HYBRID_SPEC
    mtp = out.pop("mtp_hybrid_override_pattern", None)
    if isinstance(mtp, str) and isinstance(out.get("hybrid_override_pattern"), str):
        # core_v0.19 deprecates --mtp-hybrid-override-pattern: one pattern holds the main stack and
        # each MTP depth after a `/` (arguments.py's unified hybrid layer pattern)
        depths = out.get("mtp_num_layers", 1)
        assert isinstance(depths, int)
        out["hybrid_override_pattern"] = MTP_SEPARATOR.join([str(out["hybrid_override_pattern"]), *[mtp] * depths])
    if out.get("cuda_graph_impl") == "local" and out.get("cuda_graph_scope") == ("full_iteration",):
        # the full-iteration graph is an implementation of its own in core_v0.19, without a scope,
        # and validate_args no longer asks for the MoE inference padding with it
        out["cuda_graph_impl"] = "full_iteration"
        del out["cuda_graph_scope"]
        out.pop("moe_pad_experts_for_cuda_graph_inference", None)
    return out


def _hybrid(settings: Settings) -> bool:
    return settings.get("is_hybrid_model") is True


# core_v0.19 (megatron/training/arguments.py at core_v0.19.0) reads a hybrid model's pipeline split
# from `|` segments of --hybrid-layer-pattern and asserts the other split flags away
_HYBRID_SPLIT = "core_v0.19 takes a hybrid model's pipeline split only from `|` segments of its layer pattern"

CORE_V0_19 = Profile(
    name="core_v0.19",
    # Flags renamed between core_v0.16.1 and core_v0.19.0 that primusc writes (the old spellings are
    # deprecated aliases there); MEGATRON_CHANGES_0_16_TO_0_19 below lists every rename and removal.
    renames={"hybrid_override_pattern": "hybrid_layer_pattern", "cuda_graph_scope": "cuda_graph_modules"},
    unsupported=(
        Unsupported("num_virtual_stages_per_pipeline_rank", lambda v: True,
                    f"{_HYBRID_SPLIT} (virtual stages are segments of it)", _hybrid),
        Unsupported("account_for_embedding_in_pipeline_split", lambda v: v is True, _HYBRID_SPLIT, _hybrid),
        Unsupported("account_for_loss_in_pipeline_split", lambda v: v is True, _HYBRID_SPLIT, _hybrid),
        Unsupported("pipeline_model_parallel_layout", lambda v: True, _HYBRID_SPLIT, _hybrid),
        *_EVERY_RELEASE,
    ),
    extras=_v019_extras,
    # pretrain_mamba.py is a deprecated wrapper that runs pretrain_hybrid.py in core_v0.19
    hybrid_script="pretrain_hybrid.py",
)

PROFILES = {p.name: p for p in (CORE_V0_16, CORE_V0_12, CORE_V0_19)}


@functools.cache
def profile_for(version: str) -> Profile:
    """The profile a launch naming ``version`` is written with: a profile of its own where primusc has one,
    else the written profile whose release shares most flags with it (frameworks/megatron), under the
    version's name, so every flag is still checked against the version's own parser."""
    if version in PROFILES:
        return PROFILES[version]
    flags = set(megatron.flags(version))

    def overlap(profile: Profile) -> float:
        theirs = set(megatron.flags(profile.name))
        return len(flags & theirs) / max(1, len(flags | theirs))

    nearest = max(PROFILES.values(), key=overlap)
    return attrs.evolve(nearest, name=version)

# What changed in megatron/training/arguments.py's flags between core_v0.16.1 (55ac708) and
# core_v0.19.0 (5be9626, package version 0.19.1), read from the parsers both build
# (tests/emit/megatron_flags/ holds both lists): flag -> its replacement ("" if none).
MEGATRON_CHANGES_0_16_TO_0_19: dict[str, str] = {
    # renamed; the old flag stays as a deprecated alias that validate_args converts
    "--hybrid-override-pattern": "--hybrid-layer-pattern",
    # added in core_v0.17, deprecated by core_v0.19: MTP depths follow `/` in the one pattern
    "--mtp-hybrid-override-pattern": "--hybrid-layer-pattern",
    "--cuda-graph-scope": "--cuda-graph-modules",  # and scope full_iteration -> --cuda-graph-impl full_iteration
    # renamed, the old flag gone
    "--muon-use-nesterov": "--muon-nesterov",
    # inverted: what was a switch to turn on is now on unless the new switch turns it off
    "--tokenizer-hf-use-fast": "--tokenizer-hf-no-use-fast",
    "--tokenizer-hf-include-special-tokens": "--tokenizer-hf-no-include-special-tokens",
    # one of two spellings of a dest removed, the other kept
    "--inference-max-batch-size": "--inference-max-requests",
    "--disable-chunked-prefill": "--enable-chunked-prefill",
    # removed
    "--disable-async-tensor-model-parallel-allreduce": "",
    "--no-async-tensor-model-parallel-allreduce": "",
    "--disable-ckpt-fully-parallel-save": "",
    "--hybrid-attention-ratio": "",
    "--hybrid-mlp-ratio": "",
    "--inference-dynamic-batching-cuda-graph-max-tokens": "",
    "--langrl-external-server": "",
    "--no-langrl-external-server": "",
    "--langrl-inference-server-conversation-template": "",
    "--langrl-inference-server-type": "",
    "--legacy-tokenizer": "",
    "--moe-extended-tp": "",
    "--moe-use-legacy-grouped-gemm": "",
    "--no-rl-offload-kv-cache-during-training": "",
    "--no-rl-remove-kv-cache-during-training": "",
    "--no-rl-reset-cuda-graphs": "",
    "--no-scatter-gather-tensors-in-pipeline": "",
    "--rl-offload-kv-cache-during-training": "",
    "--rl-parallel-generation-tasks": "",
    "--rl-remove-kv-cache-during-training": "",
    "--rl-reset-cuda-graphs": "",
    "--tiktoken-special-tokens": "",
    "--use-legacy-models": "",
}
