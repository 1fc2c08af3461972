"""Every flag a Megatron version profile emits is one of that release's flags, as the generated table
``frameworks/megatron/arguments.json`` records them (read from the parser megatron/training/arguments.py
builds at the release tag), and the core_v0.19 profile spells what changed since core_v0.16."""

from __future__ import annotations

import random
import re
import shlex

import attrs
import pytest
import yaml

from primus_lang.check import legal_points
from primus_lang.emit import emit, unsupported
from primus_lang.emit.context import resolve_variables
from primus_lang.emit.frameworks import Megatron
from primus_lang.emit.profiles import CORE_V0_19, MEGATRON_CHANGES_0_16_TO_0_19
from primus_lang.frameworks import bridge, megatron, primus
from primus_lang.ir import Candidate, Space
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from tests.emit.harness import all_cases, context

# every release a launch may name, each checked against its own flags (a release without a profile of
# its own is written with the nearest profile, and what its parser lacks is refused)
RELEASES = megatron.releases()
# variables that bring the run's flags: data, tokenizer, checkpoints
RUN_VARIABLES = {"data_path": "0.7 /data/a 0.3 /data/b", "tokenizer_model": "meta-llama/Llama-3.1-8B",
                 "checkpoint_dir": "/ckpt/run", "save_interval": "50"}
SAMPLES = 25  # random legal points per example, besides each case's own point


def recorded(release: str) -> dict[str, str]:
    """flag -> its argparse dest at the release (frameworks/megatron)."""
    return {option: flag.dest for option, flag in megatron.flags(release).items()}


def spaces() -> list[tuple[str, Space, list[Candidate]]]:
    out = []
    for name, (space, cand) in all_cases().items():
        points = [cand]
        if name.startswith("example_"):
            legal = list(legal_points(space))
            points += random.Random(0).sample(legal, min(SAMPLES, len(legal)))
        out.append((name, space, points))
    for path in sorted((data_dir("examples") / "sites").glob("*.prx")):
        try:
            space = load_space(path)
        except Exception:  # a site file without a space
            continue
        legal = list(legal_points(space))
        out.append((path.stem, space, random.Random(0).sample(legal, min(SAMPLES, len(legal)))))
    return out


def emitted_flags(profile: str) -> set[str]:
    flags: set[str] = set()
    for _, space, points in spaces():
        for variables in ({}, RUN_VARIABLES):
            given = resolve_variables({"megatron_version": profile, **variables}, space.name)
            for cand in points:
                framework = Megatron(space.model, space.cluster, cand, given, space.run, space.site)
                if framework.unsupported():
                    continue
                flags |= {flag for flag, _ in framework.profile.argv(framework.settings)}
    return flags


@pytest.mark.parametrize("profile", sorted(RELEASES))
def test_every_emitted_flag_is_in_the_release(profile: str) -> None:
    known = recorded(profile)
    flags = emitted_flags(profile)
    assert len(flags) > 60  # the cases reach most of what primusc writes
    assert flags - set(known) == set()


@pytest.mark.slow
def test_every_primus_key_is_a_dest_of_the_megatron_primus_pins() -> None:
    """Every example's points and cases on the primus target: each override key is a dest of the
    Megatron-LM the Primus release pins, or a key of Primus's own presets."""
    dests = megatron.by_dest(primus.megatron_version(primus.DEFAULT_VERSION))
    keys: set[str] = set()
    for _, space, points in spaces():
        target = "primus+" + space.settings.target.split("+")[1]  # the launcher its site is for
        for cand in points:
            if unsupported(space, cand, target, context()):
                continue
            experiment = yaml.safe_load(emit(space, cand, target, context())["experiment.yaml"])
            keys |= set(experiment["modules"]["pre_trainer"]["overrides"])
    assert len(keys) > 60
    assert {k for k in keys if k not in dests and k not in PRIMUS_OWN} == set()


@pytest.mark.slow
@pytest.mark.parametrize("version", bridge.version_names())
def test_every_bridge_override_is_a_field_of_the_recipes_model_class(version: str) -> None:
    """Every example's points and cases on the bridge target at each Bridge release: each override names
    a field the launched recipe's model class has there (frameworks/bridge), once."""
    written = 0
    for _, space, points in spaces():
        target = "bridge+" + space.settings.target.split("+")[1]
        for cand in points:
            ctx = context(bridge_version=version)
            if unsupported(space, cand, target, ctx):
                continue
            node = emit(space, cand, target, ctx)["node.sh"]
            block = re.search(r"^ARGS=\(\n(.*?)^\)", node, re.MULTILINE | re.DOTALL)
            assert block is not None
            words = shlex.split(block.group(1))
            recipe = bridge.recipe(words[1], version)
            assert recipe is not None, words[1]
            fields = bridge.fields(version, recipe.model_class)
            paths = [w.partition("=")[0] for w in words[4:]]
            assert len(paths) == len(set(paths))
            assert [p for p in paths if p != "mixed_precision" and p not in fields] == []
            written += 1
    assert written > 20


def test_the_recorded_changes_match_the_recorded_flags() -> None:
    old, new = recorded("core_v0.16"), recorded("core_v0.19")
    assert set(old) - set(new) <= set(MEGATRON_CHANGES_0_16_TO_0_19)
    for flag, replacement in MEGATRON_CHANGES_0_16_TO_0_19.items():
        # a deprecated alias stays among the new flags; a removed one was among the old
        assert (flag in old or flag in new) and (replacement == "" or replacement in new), flag
    for dest in CORE_V0_19.renames.values():
        assert "--" + dest.replace("_", "-") in new


def argv(space: Space, cand: Candidate, profile: str = "core_v0.19") -> list[str]:
    framework = Megatron(space.model, space.cluster, cand, resolve_variables({"megatron_version": profile}, space.name),
                         space.run, space.site)
    assert framework.unsupported() == []
    out: list[str] = []
    for flag, values in framework.profile.argv(framework.settings):
        out += [flag, *values]
    return out


def test_a_hybrid_model_runs_pretrain_hybrid_with_the_layer_pattern() -> None:
    space, cand = all_cases()["nemotron_nano_b200"]
    files = emit(space, cand, "megatron+local", context(megatron_version="core_v0.19"))
    assert "pretrain_hybrid.py" in files["node.sh"]
    args = argv(space, cand)
    assert args[args.index("--hybrid-layer-pattern") + 1] == space.model.pattern
    assert "--hybrid-override-pattern" not in args
    spec = args.index("--spec")
    assert args[spec + 1:spec + 3] == ["megatron.core.models.hybrid.hybrid_layer_specs", "hybrid_stack_spec"]
    assert "--cuda-graph-modules" in args and "--cuda-graph-scope" not in args
    # the default profile is unchanged
    assert "pretrain_mamba.py" in emit(space, cand, "megatron+local", context())["node.sh"]


def test_a_hybrid_model_with_mtp_puts_its_depths_in_the_pattern() -> None:
    space, cand = all_cases()["nemotron_super_b200"]
    space = attrs.evolve(space, model=space.model.replace(mtp_layers=2))
    args = argv(space, cand)
    assert args[args.index("--hybrid-layer-pattern") + 1] == space.model.pattern + "/*E/*E"
    assert "--mtp-hybrid-override-pattern" not in args and args[args.index("--mtp-num-layers") + 1] == "2"


def test_a_hybrid_split_other_than_the_pattern_is_refused() -> None:
    space, cand = all_cases()["nemotron_super_b200"]
    framework = Megatron(space.model, space.cluster, cand.replace(account_for_embedding=True),
                         resolve_variables({"megatron_version": "core_v0.19"}, space.name))
    assert any("layer pattern" in why for why in framework.unsupported())


def test_the_full_iteration_graph_is_its_own_implementation() -> None:
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(cuda_graph="full")
    args = argv(space, cand)
    assert args[args.index("--cuda-graph-impl") + 1] == "full_iteration"
    assert "--cuda-graph-modules" not in args and "--moe-pad-experts-for-cuda-graph-inference" not in args
    assert "--no-check-for-nan-in-loss-and-grad" in args
    assert args[args.index("--moe-expert-rank-capacity-factor") + 1] == "1.5"  # HybridEP's budget (P4047)
    # core_v0.16 spells it as a scope of the local graphs (and has no budget, so a MoE launches no such graph)
    dense, plain = all_cases()["llama70b_mi325x"]
    old = argv(dense, plain.replace(cuda_graph="full"), "core_v0.16")
    assert old[old.index("--cuda-graph-scope") + 1] == "full_iteration"


def test_primus_writes_for_the_megatron_it_pins_whatever_release_a_megatron_launch_names() -> None:
    """Primus runs its own Megatron-LM submodule (frameworks/primus: v26.5 pins a commit before
    core_v0.16): a `megatron_version` asked of a Megatron launch changes none of its keys, and the
    full-iteration graph it cannot name is refused rather than written in core_v0.19's spelling."""
    space, cand = all_cases()["llama70b_mi325x"]
    graphed = cand.replace(cuda_graph="full")
    for version in ("core_v0.16", "core_v0.19"):
        assert any("`cuda_graph` = full" in why for why in unsupported(space, graphed, "primus+local",
                                                                        context(megatron_version=version)))
    plain = emit(space, cand, "primus+local", context())["experiment.yaml"]
    assert emit(space, cand, "primus+local", context(megatron_version="core_v0.19"))["experiment.yaml"] == plain
    overrides = yaml.safe_load(plain)["modules"]["pre_trainer"]["overrides"]
    # Primus sets its overrides on Megatron's parsed arguments: each is a dest of the parser it pins
    dests = megatron.by_dest("primus_v26.5")
    assert [k for k in overrides if k not in dests and k not in PRIMUS_OWN] == []


# keys Primus's own presets define (frameworks/primus), which Megatron's parser does not have
PRIMUS_OWN = frozenset(primus.preset("modules", "pre_trainer", primus.DEFAULT_VERSION) or {}) | {"model_type"}


def test_a_switch_is_the_one_the_parser_stores_the_value_with() -> None:
    """A boolean setting is written as the release's own switch for that value, and not at all where
    the value is the parser's default: `apply_rope_fusion` false is `--no-rope-fusion` (an imported Primus
    experiment carries the dest), true is nothing."""
    from primus_lang.emit.profiles import profile_for

    profile = profile_for("core_v0.16")
    assert profile.argv({"apply_rope_fusion": False, "add_bias_linear": False, "bf16": True}) == [
        ("--no-rope-fusion", ()), ("--disable-bias-linear", ()), ("--bf16", ())]
    assert profile.argv({"apply_rope_fusion": True, "add_bias_linear": True, "bf16": False}) == []
    assert profile.missing({"apply_rope_fusion": True}) == []
