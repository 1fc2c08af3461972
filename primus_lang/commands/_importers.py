"""The spaces a change to a library file reaches: every ``.prx`` file of the repository that imports it,
directly or through other files (``check --importers``, the pre-commit hook, the CI workflow). A hook
that checked only the changed files let a cluster library's `gpus_per_node = 3` through while every
space built on it lost its last legal point."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from primus_lang.diagnostics import CompileError
from primus_lang.syntax import ast, parse

MAX_FILES = 20_000  # a repository's .prx files read to find importers; past this the rest are not
_SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}


def repository_root(file: Path) -> Path:
    """The git work tree ``file`` lies in, else the folder it is in."""
    try:
        done = subprocess.run(["git", "-C", str(file.parent), "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return Path(done.stdout.strip())
    return file.parent


def _prx_files(root: Path) -> list[Path]:
    out: list[Path] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        out += [Path(here) / n for n in sorted(names) if n.endswith(".prx")]
        if len(out) >= MAX_FILES:
            break
    return out[:MAX_FILES]


def _imported(path: Path) -> set[Path]:
    """The files ``path`` imports by path (stdlib modules are no file of the repository)."""
    try:
        module = parse(path.read_text(encoding="utf-8", errors="replace"), str(path))
    except (CompileError, OSError):
        return set()
    return {(path.parent / item.source).resolve() for item in module.items
            if isinstance(item, ast.Import) and item.path}


def importers(files: Iterable[Path]) -> list[Path]:
    """The ``.prx`` files of the repository of ``files`` that import one of them, directly or through
    another file, in path order; ``files`` themselves are left out."""
    given = [Path(f).resolve() for f in files]
    if not given:
        return []
    graph = {p.resolve(): _imported(p) for p in _prx_files(repository_root(given[0]))}
    reached = set(given)
    changed = True
    while changed:
        changed = False
        for path, imports in graph.items():
            if path not in reached and imports & reached:
                reached.add(path)
                changed = True
    return sorted(reached - set(given))
