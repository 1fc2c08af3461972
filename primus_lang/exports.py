"""Stage packages' public APIs, loaded on first use.

A stage's ``__init__`` names what other stages and the front ends may read (its ``__all__``); most of
those live in submodules that a given command never needs (the corpus, torch, the language server's
tables), so the package imports each on first access through ``lazy_exports`` rather than at import.
For mypy the same names are imported under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, table: Mapping[str, tuple[str, str | None]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps an exported name to (module, attribute);
    an attribute of None exports the module itself."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = table[name]
        loaded = importlib.import_module(module)
        return loaded if attr is None else getattr(loaded, attr)

    return __getattr__
