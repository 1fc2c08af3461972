"""A Primus experiment YAML → ``Recipe``: ``modules.pre_trainer`` with its model card and overrides
(AMD-AGI/Primus examples/megatron/configs/<GPU>/*.yaml). Override keys are Megatron's argument names
(Primus adds its own, which are carried through); ``${NAME:default}`` takes the default (W3130)."""

from __future__ import annotations

import re
from typing import Any

from primus_lang.datafiles import loads_yaml
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    RECIPE_BAD_VALUE,
    RECIPE_ENV_DEFAULT,
    RECIPE_NOT_PRIMUS,
    RECIPE_SHELL_SYNTAX,
    RECIPE_UNKNOWN_FLAG,
)
from primus_lang.ir.span import Span
from primus_lang.recipes.settings import CODES, Entry, Recipe

_ENV = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?\}$")
_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
        if not isinstance(key, str) or _ARGUMENT.fullmatch(key) is None:
            problems.append(Diagnostic(RECIPE_UNKNOWN_FLAG, f"`{str(key)[:60]}` in `overrides` is not an argument name",
                                       span=span, help="an override is a Megatron or Primus argument, e.g. "
                                       "`micro_batch_size: 2`"))
            continue
        if isinstance(value, str):
            m = _ENV.match(value.strip())
            if m is not None:
                if m.group(2) is None:
                    problems.append(Diagnostic(RECIPE_SHELL_SYNTAX, f"`{key}` is `{value}`, an environment reference "
                                               "without a default", span=span, help="write the value the run used"))
                    continue
                value = _default(m.group(2), str(key), span) if m.group(2) else ""
                if isinstance(value, Diagnostic):
                    problems.append(value)
                    continue
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


def _default(written: str, key: str, span: Span | None) -> Any:
    """A ``${NAME:default}``'s default read as the YAML scalar Primus substitutes, with the limits of
    any data file; a diagnostic when it is not one value."""
    name = f"the default of overrides.{key}"
    help = "write the default as a number, a word or true/false"
    try:
        value = loads_yaml(written, name, CODES, "an environment reference's default")
    except CompileError as err:
        return Diagnostic(RECIPE_BAD_VALUE, err.diagnostics[0].message, span=span, help=help)
    if isinstance(value, dict | list):
        return Diagnostic(RECIPE_BAD_VALUE, f"`{name}` is a {'mapping' if isinstance(value, dict) else 'list'}, "
                          "not one value", span=span, help=help)
    return value


def _span_of(text: str, file: str, key: str) -> Span | None:
    m = (re.search(r"^[ \t]*" + re.escape(key) + r"[ \t]*:", text, re.MULTILINE) if key else None) \
        or re.search(r"([\"'])" + re.escape(key) + r"\1[ \t]*:", text)  # quoted, or an experiment written as JSON
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    # at the key's first character: past the indent, or past the opening quote (at it when the key is empty)
    skip = len(m.group(0)) - len(m.group(0).lstrip()) if m.lastindex is None else int(bool(key))
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + skip + 1
    return Span(file, line, col, line, col + max(len(key), 1))
