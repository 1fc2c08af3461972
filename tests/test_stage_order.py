"""The stage order of docs/architecture.md, held by reading every module's imports.

Every ``import`` counts, at module level, inside a function, or under ``TYPE_CHECKING``: a lazy
import still makes the earlier stage depend on the later one. The order is read from the table of
docs/architecture.md, so the document and this test cannot disagree.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import primus_lang

PACKAGE = Path(primus_lang.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"

# Front ends: they run stages and may import any of them, and no stage imports them.
FRONT_ENDS = ("commands", "cli", "lsp")

# Imports from a stage into a later one, kept on purpose: (importer, imported) -> why.
LATER_STAGE_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("primus_lang.bench.campaign", "primus_lang.emit"):
        "a benchmark campaign renders its job scripts with the emitters' shell-quoting Jinja2 "
        "environment rather than a second one",
}

# The package's own modules beneath every stage: where data files are (resources), the one reader of
# data files (datafiles) and writer of outputs (outputs), the source-text cache diagnostics quote
# (sources), the collector's thresholds (gc_policy), lazy package exports (exports), bounded memos
# (memo). They import ir/, diagnostics/ and each other only.
BASE = ("primus_lang", "primus_lang.resources", "primus_lang.sources", "primus_lang.datafiles", "primus_lang.exports",
        "primus_lang.outputs", "primus_lang.gc_policy", "primus_lang.memo")

def stage_order() -> list[str]:
    """The stages in the order of the table of docs/architecture.md."""
    return re.findall(r"^\| `(\w+)/` \|", ARCHITECTURE.read_text(encoding="utf-8"), flags=re.M)


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("primus_lang", *path.relative_to(PACKAGE).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = modules()


def bound_in(package: str) -> set[str]:
    """Names a package's ``__init__`` binds or exports in ``__all__``: ``from package import name``
    then means its attribute (``memory.prefilter`` the function), or a submodule the package makes
    public (``validate.trust``), not a private submodule of the same name."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return set()
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            out.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                out.update(ast.literal_eval(node.value))
    return out


def imports_of(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """The primus_lang modules ``name`` imports (a ``from package import submodule`` names the
    submodule), with the line of each, wherever the import statement sits."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            bound = bound_in(base)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES and a.name not in bound else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            # a module's own packages are initialised before it in any case
            if target.startswith("primus_lang") and target != name and not name.startswith(target + "."):
                yield target, node.lineno


@functools.cache
def graph() -> dict[str, list[tuple[str, int]]]:
    """Each module's imports of primus_lang, read on first use (seconds: only the worker that runs
    these tests pays for them)."""
    return {name: sorted(set(imports_of(name, path))) for name, path in MODULES.items()}


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_table_names_the_stages() -> None:
    order = stage_order()
    assert order[:3] == ["ir", "diagnostics", "syntax"] and "commands" in order
    for stage in order:
        assert f"primus_lang.{stage}" in MODULES, f"docs/architecture.md lists `{stage}/`, which is no package"


def test_no_stage_imports_a_later_one() -> None:
    order = [s for s in stage_order() if s not in FRONT_ENDS]
    rank = {s: i for i, s in enumerate(order)}
    bad = []
    for name, targets in graph().items():
        here = stage_of(name)
        if here not in rank:
            continue
        for target, line in targets:
            there = stage_of(target)
            if there in FRONT_ENDS:
                bad.append(f"{name}:{line} imports the front end {target}")
            elif there in rank and rank[there] > rank[here] and (name, target) not in LATER_STAGE_EXCEPTIONS:
                bad.append(f"{name}:{line} imports {target}, a later stage")
    assert not bad, "\n".join(bad)


def test_every_module_has_a_place() -> None:
    """A module is in a stage of the table, a front end, or the base; nothing is outside the order."""
    places = set(stage_order()) | set(FRONT_ENDS)
    lost = [name for name in MODULES if name not in BASE and stage_of(name) not in places]
    assert not lost, f"modules in no stage of docs/architecture.md and not in BASE: {lost}"


def test_the_base_imports_only_the_vocabulary() -> None:
    bad = [f"{name}:{line} imports {target}" for name in BASE for target, line in graph().get(name, ())
           if target not in BASE and stage_of(target) not in ("ir", "diagnostics")]
    assert not bad, "\n".join(bad)


def test_exceptions_are_still_needed() -> None:
    used = {(name, target) for name, targets in graph().items() for target, _ in targets}
    assert set(LATER_STAGE_EXCEPTIONS) <= used, set(LATER_STAGE_EXCEPTIONS) - used


def private_imports() -> set[tuple[str, str]]:
    out = set()
    for name, targets in graph().items():
        for target, _ in targets:
            there = stage_of(target)
            if (there != stage_of(name) and there not in ("ir", "diagnostics")
                    and target.count(".") > 1 and target in MODULES):
                out.add((name, target))
    return out


def test_no_stage_imports_another_stages_submodules() -> None:
    """A stage or a front end reads another stage through its package, the public API of the table
    of docs/architecture.md (the names its ``__init__`` exports in ``__all__``); a fact two stages
    share that is no stage's API moves to ``ir/``. ir/ and diagnostics/ are vocabulary: every
    submodule of theirs is public."""
    found = sorted(private_imports())
    assert not found, "use the stage's package (its public API), not its submodules:\n" + "\n".join(map(str, found))


def test_no_import_cycles() -> None:
    """Strongly connected components of the module graph (Tarjan), lazy imports included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w, _ in graph().get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in MODULES:
        if name not in index:
            visit(name)
    assert not cycles, "import cycles (break them with a small interface module):\n" + "\n".join(map(str, cycles))


def test_every_exported_name_resolves() -> None:
    """A package's ``__all__`` is its API: each name is there, most of them found on first use in the
    imports its ``__init__`` keeps under ``TYPE_CHECKING`` (primus_lang/exports.py)."""
    import importlib

    missing = []
    for name, path in MODULES.items():
        if path.name != "__init__.py" or name.count(".") != 1:
            continue
        package = importlib.import_module(name)
        missing += [f"{name}.{export}" for export in getattr(package, "__all__", ()) if not hasattr(package, export)]
    assert not missing, missing
