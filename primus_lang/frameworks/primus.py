"""Primus's Megatron presets per release (``frameworks/primus/presets.json``) and the rules Primus
loads an experiment by, so an experiment file reads as the settings Primus hands Megatron.

The rules, from Primus v26.5.1 (primus/core/config/yaml_loader.py, preset_loader.py and
primus/core/launcher/parser.py), in the order Primus applies them:

1. ``${VAR}`` and ``${VAR:default}`` anywhere in a string take the environment's value or the default;
   a string that changed becomes ``true``/``false``, an integer or a float when it reads as one.
   primusc reads no environment: it takes the default, or the value ``--set VAR=VALUE`` gives.
2. A preset's ``extends:`` files are merged first, each later one over the earlier, the file itself
   over them all; mappings merge key by key, anything else is replaced.
3. The module preset (``config: pre_trainer.yaml``, from ``primus/configs/modules/megatron/``) is the
   base; the model preset (``model: NAME.yaml``, from ``primus/configs/models/megatron/``) adds only
   the keys the module preset lacks (the module preset wins a key both have).
4. The experiment's ``overrides`` are merged over the result.
"""

from __future__ import annotations

import copy
import functools
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from primus_lang.frameworks import megatron, table

# Primus's pattern: a name without `:`, `{` or `}`, then an optional default up to the first `}`
ENV = re.compile(r"\$\{([^:{}]+)(?::([^}]*))?\}")
_FLOAT = re.compile(r"-?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)")
DEFAULT_VERSION = "v26.5"


Version = table.Release


@frozen
class Unset:
    """A ``${VAR}`` without a default, which only the environment of the run can fill."""

    variable: str


_TABLE = "presets.json"


# the module preset of Primus's pretraining trainer, the one every launch primusc writes runs
PRETRAINER = "pre_trainer.yaml"
# the generic model card a launch builds on when the model has no Primus card of its own
GENERIC_CARD = "language_model.yaml"


def _table() -> dict[str, Any]:
    return table.load("primus", _TABLE)


def versions() -> tuple[Version, ...]:
    return table.releases("primus", _TABLE)


def version_names() -> tuple[str, ...]:
    return tuple(v.name for v in versions())


def megatron_version(primus: str) -> str:
    """The name of the Megatron-LM version table a Primus release runs on (its pinned commit)."""
    return table.pinned_megatron("primus", _TABLE, primus, f"Primus {primus}")


def scalar(text: str) -> Any:
    """A substituted string as Primus types it (``_try_scalar``)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if _FLOAT.fullmatch(text):
        try:
            return float(text)
        except ValueError:
            return text
    return text


def assigned(value: Any) -> Any:
    """A setting's value as Primus assigns it to the arguments it hands Megatron: the string "null" (an
    environment default, `${PRIMUS_TOKENIZED_DATA_PATH:null}`) is None (``set_value_by_key``)."""
    return None if value == "null" else value


def substitute(value: str, given: Mapping[str, str]) -> tuple[Any, tuple[str, ...]]:
    """``value`` with each ``${VAR:default}`` replaced (``given`` first, then the default), and the
    variables it read; an ``Unset`` when a ``${VAR}`` without a default is not given."""
    read: list[str] = []
    unset: list[str] = []

    def replace(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        read.append(name)
        if name in given:
            return given[name]
        if default is None:
            unset.append(name)
            return ""
        return default

    replaced = ENV.sub(replace, value)
    if unset:
        return Unset(unset[0]), tuple(read)
    return (scalar(replaced) if replaced != value else value), tuple(read)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _raw(path: str, version: str) -> dict[str, Any] | None:
    for form in _table()["presets"].get(path, ()):
        if version in form["versions"]:
            data: dict[str, Any] = form["data"]
            return data
    return None


def preset_names(kind: str, version: str) -> tuple[str, ...]:
    """The Megatron preset files of ``kind`` (``models`` or ``modules``) a release ships."""
    prefix = f"{kind}/megatron/"
    return tuple(p[len(prefix):] for p, forms in _table()["presets"].items()
                 if p.startswith(prefix) and any(version in f["versions"] for f in forms))


def preset(kind: str, name: str, version: str) -> dict[str, Any] | None:
    """A Megatron preset (``primus/configs/KIND/megatron/NAME``) with its ``extends:`` merged (rule 2), as
    written (no substitution); None if the release has no such file."""
    file = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
    return _preset(f"{kind}/megatron/{file}", version, ())


# Primus's own tokenizer types, which it builds as Megatron's HuggingFaceTokenizer over `tokenizer_model`
# (primus/backends/megatron/training/tokenizer/tokenizer.py, CUSTOM_TOKENIZER_TYPES, AMD-AGI/Primus fd1eeab)
HF_TOKENIZERS = frozenset({"DeepSeekV2Tokenizer", "DeepSeekV3Tokenizer", "DeepSeekV4Tokenizer", "Llama2Tokenizer",
                           "Llama3Tokenizer", "MixtralTokenizer", "Llama4Tokenizer", "Lfm2Tokenizer", "KimiK2Tokenizer"})
# of those, the names Megatron-LM's own parser also takes, for another tokenizer (Llama2Tokenizer: SentencePiece
# over `tokenizer_model`, megatron/training/tokenizer/tokenizer.py)
REUSED_TOKENIZER_NAMES = frozenset({"Llama2Tokenizer"})


# Names Primus's presets and experiments set that Megatron-LM's validate_args computes and so overwrites,
# with the setting it computes them from (megatron/training/arguments.py at d98e8a6: VPP is
# `num_virtual_stages_per_pipeline_rank`, or layers over `num_layers_per_virtual_pipeline_stage`, else
# none; Primus's own tuning agent writes `num_virtual_stages_per_pipeline_rank`, fd1eeab)
COMPUTED = {"virtual_pipeline_model_parallel_size": "num_virtual_stages_per_pipeline_rank"}


@functools.cache
def own_settings() -> frozenset[str]:
    """Settings Primus's presets hold that no Megatron-LM version's parser has, by dest or by flag:
    Primus's own (its logging and checkpointing, Primus Turbo's kernel switches, the generic card's
    `virtual_pipeline_model_parallel_size`), which only a Primus launch reads."""
    keys = {k for forms in _table()["presets"].values() for form in forms for k in form["data"]}
    return frozenset(keys - megatron.known_names() - {"extends"})


def lineage(kind: str, name: str, version: str) -> tuple[str, ...]:
    """A Megatron preset's file name and those its ``extends:`` chain names, nearest first
    (``llama3.3_70B.yaml``, ``llama3_70B.yaml``, ...): the models a preset says it is a variant of."""
    file = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
    out: list[str] = []
    todo = [f"{kind}/megatron/{file}"]
    while todo:
        path = todo.pop(0)
        if path in out or ".." in path.split("/"):
            continue
        out.append(path)
        raw = _raw(path, version) or {}
        folder = posixpath.dirname(path)
        todo += [posixpath.normpath(posixpath.join(folder, str(p))) for p in raw.get("extends") or ()]
    return tuple(posixpath.basename(p) for p in out)


def _preset(path: str, version: str, seen: tuple[str, ...]) -> dict[str, Any] | None:
    if path in seen or ".." in path.split("/"):
        return None
    raw = _raw(path, version)
    if raw is None:
        return None
    merged: dict[str, Any] = {}
    folder = posixpath.dirname(path)
    for parent in raw.get("extends") or ():
        base = _preset(posixpath.normpath(posixpath.join(folder, str(parent))), version, (*seen, path))
        if base is not None:
            merged = deep_merge(merged, base)
    return deep_merge(merged, {k: v for k, v in raw.items() if k != "extends"})


def module_config(module: Mapping[str, Any], model: Mapping[str, Any],
                  overrides: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Rules 3 and 4: the settings Primus hands Megatron, and which of the three each came from
    (``module``, ``model`` or ``overrides``)."""
    out = copy.deepcopy(dict(module))
    origin = dict.fromkeys(out, "module")
    for key, value in model.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
            origin[key] = "model"
    out = deep_merge(out, overrides)
    origin.update(dict.fromkeys(overrides, "overrides"))
    return out, origin
