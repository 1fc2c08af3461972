"""A recipe file of any kind: a Primus experiment when it is a YAML mapping (or JSON), else a command line,
Megatron-Bridge's (run_recipe.py and its overrides) or Megatron-LM's."""

from __future__ import annotations

import re
from pathlib import Path

from primus_lang.datafiles import load_yaml, loads_json, read_text
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_NOT_PRIMUS, RECIPE_UNREADABLE
from primus_lang.ir.span import Span
from primus_lang.recipes.bridge import is_bridge_launch, read_bridge_launch
from primus_lang.recipes.megatron import read_command_line
from primus_lang.recipes.primus import read_experiment
from primus_lang.recipes.settings import CODES, Recipe


def read_recipe(path: str | Path) -> Recipe:
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
        return read_experiment(text, name, data)
    if name.endswith(".py"):
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{name}` is Python (a Megatron-Bridge recipe?), which "
                                      "primusc does not run or read",
                                      help="pass the launch line instead: scripts/training/run_recipe.py --recipe NAME "
                                      "section.field=value ..."))
    if is_bridge_launch(text):
        return read_bridge_launch(text, name)
    return read_command_line(text, name)


_NOT_DATA = object()
# a Primus experiment's top-level key at a line's start, whatever the file is called: no command line has it
_YAML_EXPERIMENT = re.compile(r"^modules[ \t]*:", re.MULTILINE)
