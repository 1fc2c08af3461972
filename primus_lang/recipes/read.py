"""A recipe file of any kind: a Primus experiment when it is a YAML mapping (or JSON), else a launch script
or command line (read by ``shell`` into the launch command's words), Megatron-Bridge's (run_recipe.py
and its overrides, or the performance launcher) or Megatron-LM's."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from primus_lang.datafiles import load_yaml, loads_json, read_text
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_NOT_PRIMUS, RECIPE_UNREADABLE
from primus_lang.frameworks import bridge, primus
from primus_lang.ir.span import Span
from primus_lang.recipes.bridge import is_bridge_launch, read_bridge_launch
from primus_lang.recipes.megatron import read_command_line
from primus_lang.recipes.primus import read_experiment
from primus_lang.recipes.settings import CODES, Recipe
from primus_lang.recipes.shell import launch_of


@frozen
class ReadOptions:
    """What the user says of a recipe beside the file: values of what the script reads from its
    environment or arguments (``--set``), and the framework versions it runs on."""

    given: Mapping[str, str] = {}
    megatron_version: str | None = None  # None: the default, or a newer release the flags need
    primus_version: str | None = None
    bridge_version: str | None = None


def read_recipe(path: str | Path, options: ReadOptions | None = None) -> Recipe:
    options = options or ReadOptions()
    name = str(path)
    text = read_text(path, CODES, "a Megatron-LM command line, a Megatron-Bridge launch or a Primus experiment")
    data: object = _NOT_DATA
    if name.endswith((".yaml", ".yml")) or _YAML_EXPERIMENT.search(text):
        data = load_yaml(path, CODES, "a Primus experiment")
    elif name.endswith(".json") or text.lstrip().startswith("{"):
        # Primus reads an experiment as YAML, of which JSON is a part: one written as JSON is read alike
        data = loads_json(text, name, CODES, "a Primus experiment written as JSON")
    if data is not _NOT_DATA:
        if data is None:
            raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{name}` is empty: nothing to read",
                                          span=Span(name, 1, 1, 1, 2), help="pass a Primus experiment"))
        if not isinstance(data, dict):
            raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{name}` is not a YAML mapping",
                                          span=Span(name, 1, 1, 1, 2), help="pass a Primus experiment"))
        return read_experiment(text, name, _extended(Path(name), data, ()), options.given, options.primus_version)
    if name.endswith(".prx"):
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{name}` is a primusc space, not a framework's recipe",
                                      span=Span(name, 1, 1, 1, 2),
                                      help=f"plan it with `primusc plan {name}`; `import-recipe` reads a Megatron-LM "
                                      "command line, a Megatron-Bridge launch or a Primus experiment"))
    if name.endswith(".py"):
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{name}` is Python (a Megatron-Bridge recipe?), which "
                                      "primusc does not run or read",
                                      help="pass the launch line instead: scripts/training/run_recipe.py --recipe NAME "
                                      "section.field=value ..."))
    if not text.strip() or all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()):
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{name}` holds no command line (it is empty, or comments "
                                      "only): nothing to read",
                                      help="pass a Megatron-LM command line (`torchrun ... pretrain_gpt.py --flags`), "
                                      "a Megatron-Bridge launch (`run_recipe.py --recipe NAME ...`) or a Primus "
                                      "experiment YAML"))
    launch = launch_of(text, name, options.given)
    if is_bridge_launch(launch.words):
        return read_bridge_launch(launch, name, options.bridge_version or bridge.DEFAULT_VERSION)
    return read_command_line(launch, name, options.megatron_version)


_NOT_DATA = object()


def _extended(path: Path, data: dict[str, Any], seen: tuple[Path, ...]) -> dict[str, Any]:
    """An experiment with the files its ``extends:`` names merged under it, each later one over the
    earlier, as Primus's yaml_loader merges them (paths relative to the file; a lone name is a list of one)."""
    parents = data.get("extends")
    if parents is None:
        return data
    names = [parents] if isinstance(parents, str) else parents
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{path}`: `extends` is not a file name or a list of them",
                                      span=Span(str(path), 1, 1, 1, 2), help="write `extends: [base.yaml]`"))
    merged: dict[str, Any] = {}
    for parent in names:
        file = path.parent / parent
        if file in seen or len(seen) > 16:
            raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{path}` extends `{parent}`, which extends it back",
                                          span=Span(str(path), 1, 1, 1, 2), help="break the cycle of `extends`"))
        base = load_yaml(file, CODES, f"`{parent}`, which `{path.name}` extends")
        if not isinstance(base, dict):
            raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{file}`, which `{path.name}` extends, is not a YAML "
                                          "mapping", span=Span(str(path), 1, 1, 1, 2), help="pass a Primus experiment"))
        merged = primus.deep_merge(merged, _extended(file, base, (*seen, path)))
    return primus.deep_merge(merged, {k: v for k, v in data.items() if k != "extends"})
# a Primus experiment's top-level key at a line's start, whatever the file is called: no command line has it
_YAML_EXPERIMENT = re.compile(r"^modules[ \t]*:", re.MULTILINE)
