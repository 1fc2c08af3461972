"""A release borrows the written profile nearest it (``profile_for``), but what its parser has is its own:
a flag it lacks, a value outside its choices and a rename are read from its flag table
(frameworks/megatron), never from the profile it borrows, and a written rule that hinges on a flag holds
only where the release lacks that flag."""

from __future__ import annotations

import pytest

from primus_lang.emit.arguments import Settings
from primus_lang.emit.profiles import CORE_V0_12, CORE_V0_16, profile_for

HYBRID_MTP: Settings = {"is_hybrid_model": True, "hybrid_override_pattern": "M*M*", "mtp_num_layers": 1,
              "mtp_hybrid_override_pattern": "*E"}


def test_the_borrowed_profiles() -> None:
    # what the tests below rely on: these releases write with another release's profile
    assert profile_for("core_v0.13").unsupported is CORE_V0_12.unsupported
    assert profile_for("core_v0.14").unsupported is CORE_V0_12.unsupported
    assert profile_for("core_v0.17").unsupported is CORE_V0_16.unsupported


@pytest.mark.parametrize(("version", "switch"), [("core_v0.12", "--use-custom-fsdp"),
                                                 ("core_v0.13", "--use-custom-fsdp"),
                                                 ("core_v0.14", "--use-megatron-fsdp"),
                                                 ("core_v0.16", "--use-megatron-fsdp")])
def test_megatron_fsdp_is_spelt_as_the_release_spells_it(version: str, switch: str) -> None:
    profile = profile_for(version)
    assert profile.argv({"use_megatron_fsdp": True})[0] == (switch, ())  # (core_v0.16: and its checkpoint format)
    assert profile.problems({"use_megatron_fsdp": True}) == []


@pytest.mark.parametrize(("version", "refused"), [("core_v0.12", True), ("core_v0.16", True),
                                                  ("core_v0.17", False), ("core_v0.19", False)])
def test_hybrid_mtp_is_refused_where_its_flag_is_absent(version: str, refused: bool) -> None:
    problems = profile_for(version).problems(HYBRID_MTP)
    assert bool(problems) == refused
    if refused:
        assert problems == [f"`mtp_hybrid_override_pattern` = *E: Megatron-LM {version} has no "
                            "`--mtp-hybrid-override-pattern` (it arrived in core_v0.17); its MambaModel builds no "
                            "MTP layers for a hybrid (Mamba) model"]


@pytest.mark.parametrize(("settings", "since"), [
    ({"fp8_recipe": "blockwise"}, "core_v0.13"),
    ({"exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16"}, "core_v0.13"),
    ({"pipeline_model_parallel_layout": "Et|tL"}, "core_v0.13"),
    ({"overlap_moe_expert_parallel_comm": True}, "core_v0.14"),
    ({"fp4": "e2m1"}, "core_v0.15"),
    ({"window_size": (127, 0), "window_attn_skip_freq": 2}, "core_v0.15"),
    ({"cuda_graph_impl": "local"}, "core_v0.15"),
    ({"moe_latent_size": 512}, "core_v0.16"),
])
def test_a_setting_is_refused_until_the_release_it_arrived_in(settings: Settings, since: str) -> None:
    """core_v0.12 still refuses all of them; each is launched from the release it arrived in, borrowed
    profile or not, and the refusal names that release."""
    releases = ("core_v0.12", "core_v0.13", "core_v0.14", "core_v0.15", "core_v0.16", "core_v0.17")
    for version in releases:
        problems = profile_for(version).problems(settings)
        if version < since:
            assert problems and all(f"arrived in {since}" in p and f"Megatron-LM {version} " in p
                                    for p in problems), (version, problems)
        else:
            assert problems == [], (version, problems)


def test_a_value_outside_the_choices_names_where_it_arrived() -> None:
    assert profile_for("core_v0.12").problems({"fp8_recipe": "blockwise"}) == [
        "`--fp8-recipe blockwise`: Megatron-LM core_v0.12 takes one of tensorwise, delayed, mxfp8 "
        "(blockwise arrived in core_v0.13)"]


def test_a_flag_a_later_release_dropped_names_the_releases_that_have_it() -> None:
    assert profile_for("core_v0.14").problems({"use_custom_fsdp": True}) == [
        "Megatron-LM core_v0.14 has no `--use-custom-fsdp` (core_v0.12 to core_v0.13 have it)"]


def test_shared_expert_recompute_stays_a_written_refusal_of_core_v0_12() -> None:
    # --recompute-modules has no choices to read: the refusal is the profile's own
    problems = profile_for("core_v0.12").problems({"recompute_modules": ("moe_act", "shared_experts")})
    assert problems == ["`recompute_modules` = moe_act shared_experts: core_v0.12 cannot recompute the shared "
                        "experts selectively"]
    assert profile_for("core_v0.16").problems({"recompute_modules": ("moe_act", "shared_experts")}) == []


@pytest.mark.parametrize(("version", "flags"), [
    ("core_v0.12", [("--moe-enable-deepep", ())]),
    ("core_v0.15", [("--moe-enable-deepep", ())]),
    ("core_v0.16", [("--moe-flex-dispatcher-backend", ("deepep",))]),
])
def test_deepep_is_a_switch_before_the_flex_backend_flag(version: str, flags: list[tuple[str, tuple[str, ...]]]) -> None:
    settings: Settings = {"moe_flex_dispatcher_backend": "deepep", "overlap_moe_expert_parallel_comm": False}
    assert profile_for(version).argv(settings) == flags
