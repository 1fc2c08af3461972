"""A Primus experiment YAML → ``Recipe``: ``modules.pre_trainer`` with its model card and overrides
(AMD-AGI/Primus examples/megatron/configs/<GPU>/*.yaml). Override keys are Megatron's argument names
(Primus adds its own, which are carried through); ``${NAME:default}`` takes the default (W3130)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_ENV_DEFAULT, RECIPE_NOT_PRIMUS, RECIPE_SHELL_SYNTAX
from primus_lang.ir.span import Span
from primus_lang.recipes.settings import Entry, Recipe

_ENV = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?\}$")
_GPUS = ("MI300X", "MI325X", "MI355X", "MI350X", "H100", "H200", "B200", "GB200", "B300", "GB300")


def looks_like_yaml(data: Any) -> bool:
    return isinstance(data, dict)


def read_experiment(text: str, file: str, data: Any) -> Recipe:
    pre = data.get("modules", {}).get("pre_trainer") if isinstance(data.get("modules"), dict) else None
    if not isinstance(pre, dict) or "model" not in pre:
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{file}` has no `modules.pre_trainer.model`",
                                      span=Span(file, 1, 1, 1, 2),
                                      help="pass a Primus experiment (examples/megatron/configs/<GPU>/*.yaml)"))
    framework = pre.get("framework", "megatron")
    if framework != "megatron":
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"the experiment's framework is `{framework}`, not megatron",
                                      span=_span_of(text, file, "framework"),
                                      help="primusc reads Primus's Megatron experiments"))
    overrides = pre.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, "`modules.pre_trainer.overrides` is not a mapping",
                                      span=_span_of(text, file, "overrides")))
    entries: dict[str, Entry] = {}
    warnings: list[Diagnostic] = []
    problems: list[Diagnostic] = []
    notes: list[str] = []
    for key, value in overrides.items():
        span = _span_of(text, file, str(key))
        if isinstance(value, str):
            m = _ENV.match(value.strip())
            if m is not None:
                if m.group(2) is None:
                    problems.append(Diagnostic(RECIPE_SHELL_SYNTAX, f"`{key}` is `{value}`, an environment reference "
                                               "without a default", span=span, help="write the value the run used"))
                    continue
                value = yaml.safe_load(m.group(2)) if m.group(2) else ""
                warnings.append(Diagnostic(RECIPE_ENV_DEFAULT, f"`{key}` reads ${{{m.group(1)}}}; took its default "
                                           f"`{m.group(2)}`", span=span))
        if value is None:
            notes.append(f"`{key}: null` leaves the setting to Primus's default; not carried through")
            continue
        entries[str(key)] = Entry(str(key), value, span, f"overrides.{key}")
    if problems:
        raise CompileError(problems)
    if pre.get("config") == "pre_trainer.yaml" and "use_distributed_optimizer" not in entries:
        # Primus's pre_trainer.yaml turns the distributed optimizer on over Megatron's default
        entries["use_distributed_optimizer"] = Entry("use_distributed_optimizer", True, None,
                                                     "pre_trainer.yaml's use_distributed_optimizer")
        notes.append("`use_distributed_optimizer: true` is Primus's pre_trainer.yaml default")
    card = pre["model"]
    gpu = next((g for g in _GPUS if f"/{g}/" in file.replace("\\", "/")), "")
    return Recipe(file, "primus", entries, card=Entry("model", str(card), _span_of(text, file, "model"), "model"),
                  gpu_hint=gpu.lower(), notes=tuple(notes), warnings=tuple(warnings))


def _span_of(text: str, file: str, key: str) -> Span | None:
    m = re.search(r"^[ \t]*" + re.escape(key) + r"[ \t]*:", text, re.MULTILINE) \
        or re.search(r'"' + re.escape(key) + r'"[ \t]*:', text)  # an experiment written as JSON
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + m.group(0).index(key[0]) + 1
    return Span(file, line, col, line, col + len(key))
