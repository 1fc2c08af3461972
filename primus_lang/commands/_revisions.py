"""A space as it was at a git revision: the file and the files it imports by relative path, read
with ``git show REV:PATH`` into a temporary folder laid out as the repository is, so relative
imports resolve against that revision. Stdlib imports come from the installed primusc."""

from __future__ import annotations

import posixpath
import subprocess
from pathlib import Path

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import GIT_REVISION
from primus_lang.sources import SOURCES
from primus_lang.syntax import ast, parse

MAX_FILES = 256  # relative imports followed at one revision; a space imports a handful


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except FileNotFoundError:
        raise CompileError(Diagnostic(GIT_REVISION, "`git` is not on the PATH",
                                      help="install git, or compare two files of the work tree")) from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CompileError(Diagnostic(GIT_REVISION, f"`git {' '.join(args)}` failed: {why[-1] if why else done.returncode}",
                                      help="`primusc explain P8051`"))
    return done.stdout


@attrs.frozen
class Located:
    root: Path  # the repository's top folder
    path: str  # FILE relative to it, with `/`


def locate(file: str) -> Located:
    path = Path(file).resolve()
    root = Path(_git(path.parent if path.parent.is_dir() else Path.cwd(), "rev-parse", "--show-toplevel")
                .decode().strip())
    try:
        rel = path.relative_to(root.resolve())
    except ValueError:
        raise CompileError(Diagnostic(GIT_REVISION, f"`{file}` is not inside the git work tree at `{root}`",
                                      help="run primusc diff --rev on a file of the repository")) from None
    return Located(root, rel.as_posix())


def commit_of(where: Located, rev: str) -> str:
    if rev.startswith("-"):
        raise CompileError(Diagnostic(GIT_REVISION, f"`{rev}` is not a revision", help="a branch, tag or hash"))
    return _git(where.root, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()


def checkout(where: Located, commit: str, dest: Path) -> Path:
    """Write FILE and its relative imports as of ``commit`` under ``dest``; the path of FILE there."""
    todo: list[str] = [where.path]
    seen: set[str] = set()
    while todo and len(seen) < MAX_FILES:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        try:
            data = _git(where.root, "show", f"{commit}:{rel}")
        except CompileError:
            if rel == where.path:
                raise CompileError(Diagnostic(GIT_REVISION, f"`{rel}` does not exist at {commit[:12]}",
                                              help="check the path and the revision")) from None
            continue  # the loader reports the missing import where it is written
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        for source in path_imports(data, f"{commit[:12]}:{rel}"):  # a file that does not parse: the load reports it
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), source))
            if not joined.startswith("../") and joined != "..":
                todo.append(joined)
    return dest / where.path


def path_imports(text: str | bytes, file: str) -> list[str]:
    """The paths a ``.prx`` text imports (``import "./lib.prx" (...)``), as written; none where it does not
    parse. Stdlib modules are no file of the repository."""
    try:
        tree = parse(text, file)
    except CompileError:
        return []
    return [item.source for item in tree.items if isinstance(item, ast.Import) and item.path]


def work_tree(path: Path) -> Path | None:
    """The top folder of the git work tree ``path`` lies in, or None."""
    try:
        return Path(_git(path, "rev-parse", "--show-toplevel").decode().strip())
    except CompileError:
        return None


def renamed(err: CompileError, dest: Path, label: str) -> CompileError:
    """Diagnostics that name ``label:PATH`` instead of the temporary folder they were read from."""
    prefix = str(dest) + "/"

    def fix(name: str) -> str:
        return label + ":" + name[len(prefix):] if name.startswith(prefix) else name

    out = []
    for d in err.diagnostics:
        if d.span is not None and d.span.file.startswith(prefix):
            text = SOURCES.get(d.span.file)
            if text is not None:
                SOURCES.add(fix(d.span.file), text)
            d = attrs.evolve(d, span=attrs.evolve(d.span, file=fix(d.span.file)))
        # a message may name the file without a span of it ("... defines no space")
        d = attrs.evolve(d, message=d.message.replace(prefix, label + ":"), help=d.help.replace(prefix, label + ":"),
                         notes=tuple(n.replace(prefix, label + ":") for n in d.notes))
        out.append(d)
    return CompileError(out)
