"""The spaces a change to a library file reaches: every ``.prx`` file of the repository that imports it,
directly or through other files (``check --importers``, the pre-commit hook, the CI workflow). A hook
that checked only the changed files let a cluster library's `gpus_per_node = 3` through while every
space built on it lost its last legal point."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from primus_lang.commands._revisions import path_imports, work_tree

MAX_FILES = 20_000  # a repository's .prx files read to find importers; past this the rest are not
_SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}


def _prx_files(root: Path) -> list[Path]:
    out: list[Path] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        out += [Path(here) / n for n in sorted(names) if n.endswith(".prx")]
        if len(out) >= MAX_FILES:
            break
    return out[:MAX_FILES]


def _imported(path: Path) -> set[Path]:
    """The files ``path`` imports by path; none for a file that cannot be read as a source (a named pipe,
    a link to a device or round in a loop, one past the size limit: read as any source is, never blocking)."""
    from primus_lang.diagnostics import CompileError
    from primus_lang.syntax import read_source

    try:
        text = read_source(path, str(path))
    except (OSError, CompileError):
        return set()
    found = (_resolved(path.parent / source) for source in path_imports(text, str(path)))
    return {p for p in found if p is not None}


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links
        return None


def importers(files: Iterable[Path]) -> list[Path]:
    """The ``.prx`` files of the repository of ``files`` that import one of them, directly or through
    another file, in path order; ``files`` themselves are left out."""
    given = [Path(f).resolve() for f in files]
    if not given:
        return []
    root = work_tree(given[0].parent) or given[0].parent
    graph = {resolved: _imported(p) for p in _prx_files(root) if (resolved := _resolved(p)) is not None}
    reached = set(given)
    changed = True
    while changed:
        changed = False
        for path, imports in graph.items():
            if path not in reached and imports & reached:
                reached.add(path)
                changed = True
    return sorted(reached - set(given))
