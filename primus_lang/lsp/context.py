"""Where the cursor is and which names it can see, read from the text itself: while one types the
document rarely parses, and completion and go-to-definition must still work then."""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

from primus_lang.lsp.knowledge import stdlib_index, stdlib_path
from primus_lang.syntax import code_of

_NAME = re.compile(r"[A-Za-z_]\w*")


def block_path(text_lines: list[str], line: int, index: int) -> tuple[str, ...]:
    """The blocks enclosing a position, outermost first: a definition's kind, then each nested
    block's field name (``("space", "model", "moe")`` inside ``model = m { moe { ... } }``)."""
    stack: list[str] = []
    statement = ""  # text of the statement since the last `{`, `}`, `;` or newline
    for row in range(min(line + 1, len(text_lines))):
        src = text_lines[row] if row < line else text_lines[row][:index]
        for ch in code_of(src)[0]:
            if ch == "{":
                m = _NAME.search(statement)
                stack.append(m.group() if m else "")
                statement = ""
            elif ch == "}":
                if stack:
                    stack.pop()
                statement = ""
            elif ch == ";":
                statement = ""
            else:
                statement += ch
        statement = ""
    return tuple(stack)


@attrs.frozen
class Origin:
    """Where a visible name is defined: ``file`` None is the document itself."""

    kind: str
    name: str
    file: Path | None
    module: str = ""  # the stdlib module, for display


_DEF = re.compile(r"^[ \t]*(model|gpu|cluster|space)[ \t]+([A-Za-z_]\w*)", re.M)
_IMPORT = re.compile(r'^[ \t]*import[ \t]+("[^"\n]*"|[A-Za-z_][\w.]*)[ \t]*\(([^)]*)\)', re.M)


def imports(text: str) -> list[tuple[str, bool, tuple[str, ...] | None]]:
    """(source, is a quoted path, names or None for ``*``) of each import line."""
    out: list[tuple[str, bool, tuple[str, ...] | None]] = []
    for m in _IMPORT.finditer(text):
        source, names = m.group(1), m.group(2).strip()
        listed = None if names == "*" else tuple(n.strip() for n in names.split(",") if n.strip())
        out.append((source.strip('"'), source.startswith('"'), listed))
    return out


def definitions(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, name, 0-based line, 0-based column of the name) of each definition."""
    out = []
    for m in _DEF.finditer(text):
        line = text.count("\n", 0, m.start(2))
        col = m.start(2) - (text.rfind("\n", 0, m.start(2)) + 1)
        out.append((m.group(1), m.group(2), line, col))
    return out


def import_file(source: str, is_path: bool, base: Path | None) -> Path | None:
    if is_path:
        return (base / source) if base is not None else None
    return stdlib_path(source) if source in stdlib_index() else None


def _read(path: Path) -> str:
    """A file's text as the compiler reads it (regular files only, bounded, never blocking on a FIFO or
    reading a device without end), or "" where the compiler would refuse it."""
    from primus_lang.diagnostics import CompileError
    from primus_lang.syntax import read_source

    try:
        return read_source(path, str(path)).decode("utf-8", errors="replace")
    except (OSError, CompileError):
        return ""


MAX_DEPTH = 8  # imports followed this deep, as far as completion needs to look


def visible(text: str, base: Path | None, depth: int = 0, seen: dict[Path, dict[str, Origin]] | None = None,
            ) -> dict[str, Origin]:
    """Every name a file sees: its own definitions and what its imports bring (stdlib or relative
    files, followed through their own imports a few levels, as lowering does). Each file is read once
    (``seen``): a file importing itself six times would otherwise be read 6^9 times."""
    seen = {} if seen is None else seen
    out: dict[str, Origin] = {}
    for source, is_path, names in imports(text):
        path = import_file(source, is_path, base)
        if path is None or depth > MAX_DEPTH:
            continue
        module = "" if is_path else source
        key = Path(os.path.realpath(path))
        if key not in seen:
            seen[key] = {}  # while it is read: an import back to it (a cycle) sees nothing more
            seen[key] = visible(_read(path), path.parent, depth + 1, seen)
        theirs = seen[key]
        for name, origin in theirs.items():
            if names is None and origin.file is not None and origin.file != path:
                continue  # `*` brings the file's own definitions only
            if names is None or name in names:
                found = origin if origin.file is not None else Origin(origin.kind, name, path, module)
                out[name] = found
    for kind, name, _, _ in definitions(text):
        out[name] = Origin(kind, name, None)
    return out


def locate(origin: Origin) -> tuple[Path, int, int] | None:
    """The file, 0-based line and column of an imported name's definition."""
    if origin.file is None:
        return None
    for kind, name, line, col in definitions(_read(origin.file)):
        if name == origin.name and kind == origin.kind:
            return origin.file, line, col
    return origin.file, 0, 0
