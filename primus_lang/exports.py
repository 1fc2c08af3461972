"""Stage packages' public APIs, loaded on first use.

A stage's ``__init__`` names what other stages and the front ends may read (its ``__all__``); most of
those live in submodules that a given command never needs (the corpus, torch, the language server's
tables). The package states them once, as imports under ``if TYPE_CHECKING:`` (which mypy reads),
and sets ``__getattr__ = lazy_exports(__name__, __file__)``: on first access a name is looked up in
those imports and its module imported then.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


@functools.cache
def _deferred(path: str) -> dict[str, tuple[str, str]]:
    """The names imported under ``if TYPE_CHECKING:`` in the module at ``path``: name -> (module, attribute)."""
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(Path(path).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module:
                    table.update({a.asname or a.name: (imp.module, a.name) for a in imp.names})
    return table


def lazy_exports(package: str, path: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` (its ``__init__`` at ``path``); ``from package import
    submodule`` under ``TYPE_CHECKING`` exports the submodule."""

    def __getattr__(name: str) -> Any:
        found = _deferred(path).get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = found
        if module == package:
            return importlib.import_module(f"{module}.{attr}")
        return getattr(importlib.import_module(module), attr)

    return __getattr__
