"""A recipe file of any kind: a Primus experiment when it is a YAML mapping (or JSON), else a launch script
or command line (read by ``shell`` into the launch command's words), Megatron-Bridge's (run_recipe.py
and its overrides, or the performance launcher) or Megatron-LM's."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from primus_lang.datafiles import load_yaml, loads_json, read_text
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_NOT_PRIMUS, RECIPE_UNREADABLE
from primus_lang.frameworks import bridge, primus
from primus_lang.ir.span import Span
from primus_lang.recipes.bridge import is_bridge_launch, read_bridge_launch
from primus_lang.recipes.megatron import read_command_line
from primus_lang.recipes.primus import read_experiment
from primus_lang.recipes.settings import CODES, Entry, Recipe
from primus_lang.recipes.shell import PrimusRun, launch_or_primus
from primus_lang.recipes.words import Word


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
    launch = launch_or_primus(text, name, options.given)
    if isinstance(launch, PrimusRun):
        return _read_primus_run(launch, Path(name), options)
    if is_bridge_launch(launch.words):
        return read_bridge_launch(launch, name, options.bridge_version or bridge.DEFAULT_VERSION)
    return read_command_line(launch, name, options.megatron_version)


_NOT_DATA = object()


def _read_primus_run(run: PrimusRun, script: Path, options: ReadOptions) -> Recipe:
    """The experiment a script runs through Primus's launchers, with the script's command-line overrides
    merged over its settings as Primus's launcher merges them (``parse_cli_overrides``, then a deep merge
    over the pre-trainer module's parameters). The experiment's path is Primus's checkout's, where the script
    runs: looked for beside the script and in each folder above it."""
    named = Path(run.config.text)
    places = [named] if named.is_absolute() else [d / named for d in (script.parent, *script.resolve().parent.parents)]
    found = next((p for p in places if p.is_file()), None)
    if found is None:
        raise CompileError(Diagnostic(
            RECIPE_UNREADABLE, f"the script runs Primus's `{run.via}` on the experiment `{run.config.text}`, which "
            "is neither beside the script nor under a folder above it", span=run.config.span,
            help="import it from the Primus checkout the script runs in, or import the experiment itself "
            f"(`primusc import-recipe {run.config.text}`) with the script's overrides written into its `overrides`"))
    data = load_yaml(found, CODES, "a Primus experiment")
    if not isinstance(data, dict):
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{found}`, the experiment the script runs, is not a YAML "
                                      "mapping", span=run.config.span, help="pass a Primus experiment"))
    overrides, notes, spans = _cli_overrides(run.overrides)
    data = _extended(found, data, ())
    if overrides:
        modules = data.get("modules")
        pre = modules.get("pre_trainer") if isinstance(modules, dict) else None
        if isinstance(modules, dict) and isinstance(pre, dict):
            given = pre.get("overrides")
            merged = primus.deep_merge(given if isinstance(given, dict) else {}, overrides)
            data = {**data, "modules": {**modules, "pre_trainer": {**pre, "overrides": merged}}}
    text = read_text(found, CODES, "a Primus experiment")
    # the experiment's `${PRIMUS_TP:1}` reads the environment the launcher runs with: what the script exports
    referenced = {k: v for k, v in run.env if f"${{{k}" in text}
    recipe = read_experiment(text, str(found), data, {**referenced, **options.given}, options.primus_version)
    said = (f"read through `{script}`, which runs Primus's `{run.via}` on `{run.config.text}`"
            + (f" with its overrides {' '.join(f'`{k}={v!r}`' for k, v in overrides.items())}" if overrides else ""))
    # Primus's launchers size the job from the environment (`srun -N "${NNODES}"`, `--nproc_per_node
    # ${GPUS_PER_NODE}`): what the script exports is what the launch ran on
    env = dict(run.env)
    nodes, gpus = (Entry(dest, env[name], None, name) if env.get(name, "").isdigit() and len(env[name]) <= 6 else None
                   for dest, name in (("nnodes", "NNODES"), ("nproc_per_node", "GPUS_PER_NODE")))
    # a setting the script gives is the script's: a diagnostic about it points at the script's word
    entries = {k: evolve(e, span=spans[k] or e.span, written=f"the script's `--{k}`") if k in spans else e
               for k, e in recipe.entries.items()}
    return evolve(recipe, entries=entries, notes=(said, *run.notes, *notes, *recipe.notes),
                  nodes=recipe.nodes or nodes, gpus_per_node=recipe.gpus_per_node or gpus)


def _cli_overrides(words: tuple[Word, ...]) -> tuple[dict[str, Any], list[str], dict[str, Span | None]]:
    """Primus's command-line overrides (``--key value``, ``--key=value``, ``key=value``, a bare ``--flag``
    true), each value read as its launcher reads it (``_cli_value``), and where the script writes each; a
    word whose value only the running script knows, or a dotted key, is left out, and said."""
    out: dict[str, Any] = {}
    notes: list[str] = []
    spans: dict[str, Span | None] = {}  # where the script writes each override
    i = 0
    while i < len(words):
        word = words[i]
        item = word.text.strip()
        i += 1
        if not item:
            continue
        if "=" in item:
            key, value, unknown = item.split("=", 1)[0], item.split("=", 1)[1], bool(word.unknown)
        elif item.startswith("--") and i < len(words) and not words[i].text.startswith("--"):
            key, value, unknown = item, words[i].text, bool(words[i].unknown)
            i += 1
        elif item.startswith("--"):
            key, value, unknown = item, "true", False
        else:
            notes.append(f"the word `{item}` after the experiment is not an override Primus reads (`--key value`): left out")
            continue
        key = key.lstrip("-").strip()
        if unknown:
            held = words[i - 1] if "=" not in item and i > 0 else word
            named = next((w.variable for w in held.unknown if w.variable), "")
            notes.append(f"the override `--{key}` reads a value only the running script knows: left out, so the "
                         "experiment's own value is read and launched ("
                         + (f"`--set {named}=VALUE` gives it)" if named else "write the value in the script)"))
            continue
        if "." in key:
            # Primus nests a dotted key; the Megatron backend's settings are one flat namespace, where a
            # nested mapping would replace the setting it names (`model`, the preset's file name)
            notes.append(f"the override `--{key}` names a nested setting, which the Megatron backend does not have: "
                         "left out")
            continue
        out[key] = _cli_value(value.strip())
        spans[key] = word.span
    return out, notes, spans


def _cli_value(value: str) -> Any:
    """A value as Primus's launcher reads an override (``parse_cli_overrides(type_mode="legacy")``): true or
    false in any case, else a Python literal (a number, ``None``, a quoted string, a list), else the text."""
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return value


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
