"""A loaded file's names, and what lowering a block asks of the loader.

``lower/load.py`` owns the loader; the passes it calls (``lower/space.py``, ``lower/site.py``) need
to resolve names and build nested blocks through it. They take a ``Resolver`` instead of the
``Loader`` itself, so that they need not import ``lower/load.py`` back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import attrs

from primus_lang.ir.span import Span
from primus_lang.syntax import ast


@attrs.define(eq=False)
class Entry:
    kind: str
    definition: ast.Definition
    module: LoadedModule
    value: Any = None


@attrs.define(eq=False)
class LoadedModule:
    file: str
    base_dir: Path
    tree: ast.Module
    local: dict[str, Entry] = attrs.field(factory=dict)
    visible: dict[str, Entry] = attrs.field(factory=dict)


class Resolver(Protocol):
    def resolve(self, module: LoadedModule, name: str, kind: str, span: Span | None) -> Any:
        """The value of the definition ``name`` of ``kind`` visible from ``module``."""

    def reference(self, module: LoadedModule, value: ast.Value, cls: type, what: str) -> Any:
        """A field's reference to a definition, or an override of one."""

    def build(self, cls: type, block: ast.Block, base: dict[str, Any], module: LoadedModule,
              fixed: dict[str, Any], d: ast.Definition | None) -> Any:
        """An instance of ``cls`` from a block's statements over ``base``."""
