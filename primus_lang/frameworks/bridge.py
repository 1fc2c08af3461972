"""Megatron-Bridge's pretraining recipes per release (``frameworks/bridge/recipes.json``), as Bridge's own code
built them (tools/bridge_recipe_probe.py): each recipe's settings as the paths Hydra overrides take, and
the paths each model class accepts, so a launch names only fields its Bridge has.

A release may nest a model's transformer settings: at 067f987 the Llama recipes build
``BridgeGPTModelConfig``, whose parallel sizes, recomputation and graphs are ``model.transformer.*``
where v0.6.0 has them at ``model.*``; ``spelled`` gives a field as a recipe's model class takes it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from primus_lang.frameworks import table

DEFAULT_VERSION = "v0.6"
# megatron-core at the commit Bridge v0.6 pins renamed cuda_graph_scope to cuda_graph_modules (the old name
# still read, and migrated in TransformerConfig.__post_init__); a recipe may set either, never both
GRAPH_SCOPE, GRAPH_MODULES = "model.cuda_graph_scope", "model.cuda_graph_modules"
_GPUS_IN_NAME = re.compile(r"_(\d+)gpu_([a-z0-9]+)_")
# Megatron-LM settings Bridge's model provider holds under another name (its checkpoint converter's
# table, src/megatron/bridge/models/conversion/model_bridge.py at 067f987): a key spelled as Megatron-LM
# spells it (Bridge's own migration guide writes `model.max_position_embeddings=4096`) is no field
MEGATRON_NAMED = {"model.max_position_embeddings": "model.seq_length"}
# CommOverlapConfig's fields are copies its setup writes over the model's, ddp's and optimizer's
# (training/comm_overlap.py, _apply_cfgs): a field there is never where a setting itself lives
_COPIES = "comm_overlap"


Version = table.Release


@frozen
class Recipe:
    """One recipe function at one release."""

    name: str
    version: str
    where: str  # the module that exports it
    gpu: str  # the GPU its name says (a library recipe: h100)
    gpus: int  # the GPU count its name says (0: a library recipe names none)
    hf_id: str  # the Hugging Face model its AutoBridge reads
    model_class: str
    comm_overlap: bool  # it sets a CommOverlapConfig, whose setup writes the overlap settings at run time
    settings: dict[str, Any]


_TABLE = "recipes.json"
_LAUNCHERS = "launchers.json"


@frozen
class LauncherOption:
    """One option of a Bridge Slurm launcher (``frameworks/bridge/launchers.json``): its spellings, its
    dest, whether it takes a value, and what it falls back to: a value, or the environment variable its
    default reads."""

    options: tuple[str, ...]
    dest: str
    takes_value: bool
    default: str | None
    env: str
    group: str = ""  # the parser's argument group (`Slurm arguments`, `Performance arguments`, ...)


@functools.cache
def launcher_options(launcher: str, version: str = DEFAULT_VERSION) -> tuple[LauncherOption, ...]:
    """The options of ``launcher`` (``train.sh``, ``performance``) at Bridge ``version``, as its parser
    source declares them."""
    out = []
    for o in table.load("bridge", _LAUNCHERS)["launchers"][launcher][version]:
        default = o["default"]
        out.append(LauncherOption(tuple(o["options"]), o["dest"], o["action"] not in ("store_true", "store_false"),
                                  default if isinstance(default, str) else None,
                                  default["env"] if isinstance(default, dict) else "", o.get("group") or ""))
    return tuple(out)


def _table() -> dict[str, Any]:
    return table.load("bridge", _TABLE)


def versions() -> tuple[Version, ...]:
    return table.releases("bridge", _TABLE)


def version_names() -> tuple[str, ...]:
    return tuple(v.name for v in versions())


def megatron_version(bridge: str) -> str:
    """The name of the Megatron-LM version table the release runs on (its pinned commit)."""
    return table.pinned_megatron("bridge", _TABLE, bridge, f"Megatron-Bridge {bridge}")


@functools.cache
def recipe_names(version: str = DEFAULT_VERSION) -> tuple[str, ...]:
    return tuple(n for n, forms in _table()["recipes"].items() if any(version in f["versions"] for f in forms))


@functools.cache
def recipe(name: str, version: str = DEFAULT_VERSION) -> Recipe | None:
    for form in _table()["recipes"].get(name, ()):
        if version in form["versions"]:
            m = _GPUS_IN_NAME.search(name)
            lacks = _absent(form.get("absent", ()))
            base = _table()["base"][form["model_class"]]
            settings = {**{p: v for p, v in base.items() if not lacks(p)}, **form["settings"]}
            return Recipe(name=name, version=version, where=form["where"], gpu=m.group(2) if m else form["gpu"],
                          gpus=int(m.group(1)) if m else 0, hf_id=form["hf_id"], model_class=form["model_class"],
                          comm_overlap=form["comm_overlap"], settings=settings)
    return None


def perf_default_count(model: str, task: str, gpu: str, precision: str, variant: str | None,
                       version: str = DEFAULT_VERSION) -> int | None:
    """The GPU count the performance launcher runs a model's recipe at when the launch's count has none
    (its table of defaults; None: it takes the largest count there is)."""
    for *key, count in _table()["perf_default_counts"].get(version, ()):
        if key == [model, task, gpu, precision, variant]:
            return int(count)
    return None


def _absent(absent: list[str]) -> Callable[[str], bool]:
    """Whether the recipe lacks a path: named, or under a ``prefix.*`` it lacks whole (a set and a
    prefix tuple: every recipe of every release asks it of each of its base class's paths)."""
    named = frozenset(a for a in absent if not a.endswith(".*"))
    prefixes = tuple(a[:-1] for a in absent if a.endswith(".*"))
    return lambda path: path in named or path.startswith(prefixes)


def error(name: str, version: str = DEFAULT_VERSION) -> str | None:
    """Why the recipe could not be evaluated (a Bridge recipe primusc has no settings of), None otherwise."""
    why: str | None = _table()["errors"].get(name, {}).get(version)
    return why


@functools.cache
def fields(version: str = DEFAULT_VERSION, model_class: str | None = None) -> frozenset[str]:
    """The override paths a recipe of ``model_class`` accepts at ``version`` (any class: their union)."""
    models = _table()["models"][version]
    classes = [model_class] if model_class in models else list(models)
    return frozenset(_table()["sections"][version]).union(*(models[c] for c in classes))


@functools.cache
def precisions(version: str = DEFAULT_VERSION) -> dict[str, dict[str, Any]]:
    """The mixed-precision recipes Bridge registers (``mixed_precision=NAME``), each with its settings."""
    found: dict[str, dict[str, Any]] = _table()["precisions"][version]
    return found


def gemm_precision(fields: Mapping[str, object]) -> tuple[str, str]:
    """(precision, its recipe) a precision's fields, or a candidate's settings, compute the GEMMs in: a
    registered recipe carries ``fp8_recipe``/``fp4_recipe`` at their defaults whatever it runs, so only a
    format that is set says FP8 or FP4."""
    if fields.get("fp4"):
        return "fp4", str(fields.get("fp4_recipe") or "")
    if fields.get("fp8"):
        return "fp8", str(fields.get("fp8_recipe") or "")
    return "bf16", ""


def perf_precision(gemm: tuple[str, str], version: str = DEFAULT_VERSION) -> dict[str, Any] | None:
    """The fields of the registered precision recipe Bridge's performance scripts run for GEMMs in ``gemm``
    ((precision, recipe), ``gemm_precision``'s): their compute dtypes name the plain ``bf16_with_...`` recipes
    (scripts/performance/utils/precision.py ``get_precision_config``: fp8_cs the current-scaling one, fp8_mx
    MXFP8's, fp8_sc the sub-channel one), one per GEMM precision; None where none computes them."""
    return next((fields for name, fields in precisions(version).items()
                 if name.startswith("bf16_") and gemm_precision(fields) == gemm), None)


def precision_named(name: str, version: str = DEFAULT_VERSION) -> str | None:
    """The registered precision recipe Bridge runs for ``mixed_precision=NAME``, spelled as Bridge registers
    the recipe function (``bf16_mixed``); None where it registers none. get_mixed_precision_config reads
    every hyphen as an underscore before its look-up (training/mixed_precision.py, at v0.6.0 and 067f987),
    so ``bf16-mixed``, and even ``bf16-with_fp8-current-scaling-mixed``, run that recipe."""
    canonical = name.replace("-", "_")
    return canonical if canonical in precisions(version) else None


def canonical(path: str) -> str:
    """A field as primusc's tables name it: a nested ``model.transformer.X`` is ``model.X``."""
    return "model." + path.removeprefix("model.transformer.") if path.startswith("model.transformer.") else path


def spelled(path: str, version: str = DEFAULT_VERSION, model_class: str | None = None) -> str | None:
    """``path`` as a recipe of ``model_class`` takes it at ``version`` (``model.X`` may be
    ``model.transformer.X``), None when it has no such field."""
    known = fields(version, model_class)
    if path in known:
        return path
    nested = "model.transformer." + path.removeprefix("model.")
    if path.startswith("model.") and nested in known:
        return nested
    return None


def named(name: str, version: str = DEFAULT_VERSION) -> tuple[str, ...]:
    """The ConfigContainer fields named ``name`` at ``version``, a section's own (``section.name``, a nested
    model field as ``model.name``), CommOverlapConfig's copies left out."""
    return _by_name(version).get(name, ())


@functools.cache
def _by_name(version: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for path in map(canonical, fields(version)):
        section, _, name = path.partition(".")
        if name and "." not in name and section != _COPIES:
            out.setdefault(name, set()).add(path)
    return {name: tuple(sorted(paths)) for name, paths in out.items()}


def holding(name: str, version: str = DEFAULT_VERSION) -> str | None:
    """The one ConfigContainer field named ``name`` at ``version`` (``section.name``, a nested model field as
    ``model.name``), where a Megatron argument of that name lives: Bridge's sections are megatron-core's
    configs (TransformerConfig, GPTDatasetConfig, OptimizerConfig, DDPConfig), whose fields are named as the
    Megatron-LM arguments that fill them, and Bridge's own, which keep the arguments' names. None where no
    section has the field, or several do (the name alone cannot say which holds the setting)."""
    found = named(name, version)
    return found[0] if len(found) == 1 else None
