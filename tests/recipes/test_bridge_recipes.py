"""Every pretraining recipe Megatron-Bridge ships for a stdlib model, at each release read
(frameworks/bridge/recipes.json, evaluated by Bridge's own code): `import-recipe --recipe NAME` gives a
space whose baseline is legal, whose bridge launch names only fields of the recipe's model class, and
whose launch read back gives the same baseline, as does the performance launcher's line naming it by
its parts (`setup_experiment.py -mr MODEL -ng N -g GPU -c PRECISION [-cv VARIANT]`); so does the candidate with every knob at its default
(what emission leaves unwritten must still be what the launch runs, whatever the recipe set). A recipe
primusc refuses is refused with a diagnostic, and the refusals are pinned (snapshot), so a change in
what imports shows in review."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import attrs
import pytest
from syrupy.assertion import SnapshotAssertion

from primus_lang.check import baseline_point, legality
from primus_lang.commands.import_recipe import build
from primus_lang.diagnostics import CompileError
from primus_lang.emit import LAUNCHERS, emit, recipes
from primus_lang.frameworks import bridge
from primus_lang.ir.candidate import Candidate
from primus_lang.ir.space import Space
from primus_lang.lower import load_space

# the knobs emission leaves unwritten at their defaults
DEFAULTED = ("precision", "fp8_recipe", "fp8_format", "recompute", "cuda_graph", "tp_comm_overlap", "ep_comm_overlap",
             "main_grad_dtype", "optimizer_dtype", "fp8_param_gather", "attention", "moe_dispatcher", "cp_comm",
             "overlap_grad_reduce", "overlap_param_gather", "schedule")


_PERF_NAME = re.compile(r"(\w+?)_pretrain_(\d+)gpu_([a-z0-9]+)_(bf16|fp8cs|fp8mx|fp8sc|fp8ds|nvfp4)(?:_(\w+))?_config")
_LAUNCHER_PRECISIONS = {name: flag for flag, name in LAUNCHERS.perf_precisions.items()}


def _import(tmp_path: Path, line: str, version: str, name: str) -> Space:
    """What `primusc import-recipe launch.sh --bridge-version VERSION` writes, loaded."""
    launch = tmp_path / f"{name}.sh"
    launch.write_text(line + "\n")
    args = argparse.Namespace(recipe=str(launch), given=[], megatron_version=None, primus_version=None,
                              bridge_version=version, gpu=None, gpus_per_node=None, nodes=None, name=None)
    out = tmp_path / f"{name}.prx"
    out.write_text(build(args)[0], encoding="utf-8")
    return load_space(out)


def _launch_line(space: Space, cand: Candidate) -> str:
    node = emit(space, cand, space.settings.target)["node.sh"]
    block = re.search(r"^ARGS=\(\n(.*?)^\)", node, re.MULTILINE | re.DOTALL)
    assert block is not None
    words = shlex.split(block.group(1))
    recipe = bridge.recipe(words[1], version=space.settings.bridge_version or bridge.DEFAULT_VERSION)
    assert recipe is not None
    fields = bridge.fields(space.settings.bridge_version or bridge.DEFAULT_VERSION, recipe.model_class)
    for word in words[4:]:
        path = word.partition("=")[0]
        assert path == "mixed_precision" or path in fields, f"{path} is no field of {recipe.model_class}"
    return "python scripts/training/run_recipe.py " + shlex.join(words)


def _same(a: Candidate, b: Candidate) -> dict[str, Any]:
    """The knobs that differ, sequence parallelism as it runs: a recipe may say it at TP 1, where emission
    writes it off (megatron-core refuses it without tensor parallelism)."""
    left = attrs.asdict(attrs.evolve(a, sequence_parallel=a.sp))
    right = attrs.asdict(attrs.evolve(b, sequence_parallel=b.sp))
    return {k: (left[k], right[k]) for k in left if left[k] != right[k]}


@pytest.mark.slow
@pytest.mark.parametrize("version", bridge.version_names())
def test_every_recipe_imports_and_comes_back_or_is_refused(tmp_path: Path, version: str,
                                                            snapshot: SnapshotAssertion) -> None:
    refused: dict[str, str] = {}
    defaults = attrs.asdict(Candidate(), recurse=False)
    for name in sorted(recipes(version)):
        try:
            space = _import(tmp_path, f"python scripts/training/run_recipe.py --recipe {name}", version, "a")
        except CompileError as err:
            first = err.diagnostics[0]
            rule = re.search(r"\(([a-z0-9-]+)\)", first.message)  # a legality rule's slug
            refused[name] = f"{first.code.id} {rule.group(1) if rule else first.message.split(':')[0]}"
            continue
        cand = baseline_point(space)
        assert cand is not None and legality(space, cand) == [], name
        perf = _PERF_NAME.fullmatch(name)
        if perf is not None and recipes(version)[name].source.startswith("megatron.bridge.perf_recipes"):
            # the performance launcher names the same recipe by its parts
            model, gpus, gpu, precision, variant = perf.groups()
            line = (f"python scripts/performance/setup_experiment.py -m x -mr {model} -ng {gpus} -g {gpu} "
                    f"-c {_LAUNCHER_PRECISIONS[precision]}" + (f" -cv {variant}" if variant else ""))
            launched = baseline_point(_import(tmp_path, line, version, "p"))
            assert launched is not None and _same(cand, launched) == {}, name
        back = baseline_point(_import(tmp_path, _launch_line(space, cand), version, "b"))
        assert back is not None and _same(cand, back) == {}, name
        plain = attrs.evolve(cand, **{k: defaults[k] for k in DEFAULTED})
        if legality(space, plain):
            continue
        back = baseline_point(_import(tmp_path, _launch_line(space, plain), version, "c"))
        assert back is not None and _same(plain, back) == {}, name
    assert len(refused) < len(recipes(version)) / 4
    assert refused == snapshot
