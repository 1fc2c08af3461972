"""Megatron-LM version profiles: how each setting is spelt as a ``pretrain_gpt.py`` flag.

A flag is ``--`` plus the setting's name with dashes unless a profile renames it. A boolean setting
is a store-true flag written only when true, except the few store-false flags listed in
``_NEGATED``, written only when false. What a version cannot express at all is listed with the
reason, so emission stops with P7001 instead of dropping it.

Sources: Megatron-LM ``megatron/training/arguments.py`` at core_v0.12.0 and core_v0.16.1 (0.16
generates most flags from ``TransformerConfig`` fields, same spelling), Megatron-FSDP user guide.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from primus_lang.emit.arguments import Setting, Settings

# dest -> its flag, where the spelling is not the dest's (in every version)
_SPELLING = {"fp8": "--fp8-format", "fp4": "--fp4-format"}

# dest -> the flag that turns a default-true behaviour off
_NEGATED = {
    "add_bias_linear": "--disable-bias-linear",
    "gradient_accumulation_fusion": "--no-gradient-accumulation-fusion",
    "check_for_nan_in_loss_and_grad": "--no-check-for-nan-in-loss-and-grad",
}


@frozen
class Unsupported:
    dest: str
    applies: Callable[[Setting], bool]
    reason: str


@frozen
class Profile:
    name: str
    renames: dict[str, str]  # dest -> the dest this version calls it (its flag follows the new name)
    unsupported: tuple[Unsupported, ...]
    extras: Callable[[Settings], Settings]  # version-required companions of some settings

    def problems(self, settings: Settings) -> list[str]:
        out = []
        for rule in self.unsupported:
            if rule.dest in settings and rule.applies(settings[rule.dest]):
                out.append(f"`{rule.dest}` = {format_setting(settings[rule.dest])}: {rule.reason}")
        return out

    def dest(self, dest: str) -> str:
        return self.renames.get(dest, dest)

    def flag(self, dest: str) -> str:
        name = self.dest(dest)
        return _SPELLING.get(name) or "--" + name.replace("_", "-")

    def argv(self, settings: Settings) -> list[tuple[str, tuple[str, ...]]]:
        """Flags with their values (none for switches, several for list flags), in the settings' order."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for dest, value in self.extras(settings).items():
            if dest in _NEGATED:
                if value is False:
                    out.append((_NEGATED[dest], ()))
                continue
            if isinstance(value, bool):
                if value:
                    out.append((self.flag(dest), ()))
                continue
            if isinstance(value, tuple):
                out.append((self.flag(dest), value))
                continue
            out.append((self.flag(dest), (format_setting(value),)))
        return out


def format_setting(value: Setting) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return " ".join(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _v016_extras(settings: Settings) -> Settings:
    out = dict(settings)
    if out.get("use_megatron_fsdp"):
        # Megatron-FSDP refuses any other checkpoint format (arguments.py, core_v0.16.1).
        out["ckpt_format"] = "fsdp_dtensor"
    return out


def _v012_extras(settings: Settings) -> Settings:
    out = dict(settings)
    # core_v0.12 turns DeepEP on with a switch instead of naming the flex dispatcher's backend.
    if out.pop("moe_flex_dispatcher_backend", None) == "deepep":
        out["moe_enable_deepep"] = True
    if out.get("overlap_moe_expert_parallel_comm") is False:
        del out["overlap_moe_expert_parallel_comm"]
    return out


# megatron-core 0.16.1's MambaModel builds no MTP layers; --mtp-hybrid-override-pattern came in 0.17
_HYBRID_MTP = Unsupported("mtp_hybrid_override_pattern", lambda v: True,
                          "MTP layers in a hybrid (Mamba) model arrived after core_v0.16 (MambaModel has none)")

CORE_V0_16 = Profile(
    name="core_v0.16",
    renames={},
    unsupported=(_HYBRID_MTP,),
    extras=_v016_extras,
)

CORE_V0_12 = Profile(
    name="core_v0.12",
    renames={"use_megatron_fsdp": "use_custom_fsdp"},
    unsupported=(
        Unsupported("overlap_moe_expert_parallel_comm", lambda v: v is True,
                    "EP communication overlap arrived after core_v0.12"),
        Unsupported("fp8_recipe", lambda v: v == "blockwise",
                    "core_v0.12 offers only the tensorwise, delayed and mxfp8 FP8 recipes"),
        Unsupported("fp4", lambda v: True, "core_v0.12 has no FP4 training (--fp4-format arrived later)"),
        # exp_avg_sq_dtype always equals exp_avg_dtype (one knob), so one rule reports both.
        Unsupported("exp_avg_dtype", lambda v: v == "bf16",
                    "core_v0.12 keeps Adam moments in fp32, fp16 or fp8 only"),
        Unsupported("recompute_modules", lambda v: isinstance(v, tuple) and "shared_experts" in v,
                    "core_v0.12 cannot recompute the shared experts selectively"),
        Unsupported("window_size", lambda v: True,
                    "core_v0.12 has no sliding-window attention flag"),
        # megatron-core 0.12.0 has neither PipelineParallelLayerLayout nor the config field
        Unsupported("pipeline_model_parallel_layout", lambda v: True,
                    "core_v0.12 has no explicit pipeline layout (--pipeline-model-parallel-layout arrived later)"),
        Unsupported("window_attn_skip_freq", lambda v: True,
                    "core_v0.12 has no sliding-window attention flag"),
        # core_v0.12 graphs whole layers or attention only, through --enable-cuda-graph or
        # --external-cuda-graph, and refuses them with any recomputation: not the knob's meaning
        _HYBRID_MTP,
        Unsupported("moe_latent_size", lambda v: True, "core_v0.12 has no LatentMoE (--moe-latent-size)"),
        Unsupported("cuda_graph_impl", lambda v: True,
                    "core_v0.12 has no --cuda-graph-impl (its --enable-cuda-graph/--external-cuda-graph take "
                    "scope full or attn only, under other rules); use core_v0.16"),
    ),
    extras=_v012_extras,
)

PROFILES = {p.name: p for p in (CORE_V0_16, CORE_V0_12)}
