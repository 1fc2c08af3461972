"""Files → ``Program``/``Space``: imports, the names each file sees, inheritance with overrides."""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_syntax as S
from primus_lang.diagnostics import codes_types as T
from primus_lang.diagnostics.suggest import NameIndex
from primus_lang.ir.derived import MODEL_DEFAULTS
from primus_lang.ir.hardware import Cluster, Gpu, Provenance
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.ranges import range_problems
from primus_lang.ir.run import MEGATRON_NAMES, Run
from primus_lang.ir.site import LAUNCHER_NAMES, Site
from primus_lang.ir.space import BLOCK_CLASSES, Program, Space
from primus_lang.ir.span import Span
from primus_lang.lower.scope import Entry, LoadedModule
from primus_lang.lower.site import site_blocks
from primus_lang.lower.space import lower_space
from primus_lang.lower.values import block_class, count, describe, fail, name_span, scalar, unit_quantity
from primus_lang.resources import data_dir
from primus_lang.syntax import ast, parse, parse_by_item, read_source

CLASSES: dict[str, type] = {"model": Model, "gpu": Gpu, "cluster": Cluster, "site": Site}
KIND_OF_CLASS = {cls: kind for kind, cls in CLASSES.items()}


# Fields a definition may leave out because they follow from others, per class (ir/derived.py).
DERIVED_DEFAULTS: dict[type, dict[str, tuple[str, Any]]] = {Model: MODEL_DEFAULTS}
# Another tool's name for a field, by block: said instead of the nearest field name
_OTHER_NAMES: dict[type, tuple[dict[str, str], str]] = {
    Run: (MEGATRON_NAMES, "Megatron's"), Site: (LAUNCHER_NAMES, "the launcher's"),
}


def display_name(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def stdlib_modules() -> list[str]:
    try:
        root = data_dir("stdlib")
    except FileNotFoundError:
        return []
    return list(_modules_under(root))


@functools.lru_cache(maxsize=4)
def _modules_under(root: Path) -> tuple[str, ...]:
    # the installation's data, the same for the whole process: listed once, not at every stdlib import
    return tuple(sorted(".".join(p.relative_to(root).with_suffix("").parts) for p in root.rglob("*.prx")))


def stdlib_home(kind: str, name: str) -> str:
    """The stdlib module that defines ``kind`` ``name`` (``hardware.calibrated`` for the GPU
    ``mi300x_calibrated``), or "": what an unknown name's hint offers before a near spelling. Read as
    text, only when a name is unknown."""
    if not kind:
        return ""
    definition = re.compile(rf"^{re.escape(kind)}\s+{re.escape(name)}\b", re.M)
    modules = stdlib_modules()
    root = data_dir("stdlib") if modules else Path()
    for module in modules:
        path = root.joinpath(*module.split(".")).with_suffix(".prx")
        if definition.search(path.read_text(encoding="utf-8")):
            return module
    return ""


def _read(path: Path, name: str, span: Span | None) -> ast.Module:
    try:
        data = read_source(path, name)
    except OSError as exc:
        raise fail(N.UNKNOWN_MODULE, f"cannot read `{name}`: {exc.strerror or exc}", span, help="check the path") from None
    return parse(data, name)


def _duplicate(name: str, span: Span | None, first: Span | None) -> Diagnostic:
    return Diagnostic(N.DUPLICATE_DEFINITION, f"`{name}` is defined twice", span,
                      help=f"the first definition is at {first}; rename one" if first else "rename one")


@attrs.define(eq=False)
class _Frame:
    """A file being loaded: its own definitions bound, its imports taken one by one."""

    key: Path
    module: LoadedModule
    imports: Iterator[ast.Import]
    errors: list[Diagnostic]
    failed: bool = False  # an import failed: this file cannot load either
    waiting: tuple[ast.Import, Path] | None = None  # the import whose file is the frame above

    @classmethod
    def opened(cls, key: Path, name: str, tree_of: Callable[[str], ast.Module]) -> _Frame:
        module = LoadedModule(name, key.parent, tree_of(name))
        errors: list[Diagnostic] = []
        for item in module.tree.items:
            if isinstance(item, ast.Definition):
                if item.name in module.local:
                    errors.append(_duplicate(item.name, item.name_span, module.local[item.name].definition.span))
                    continue
                module.local[item.name] = module.visible[item.name] = Entry(item.kind, item, module)
        imports = (item for item in module.tree.items if isinstance(item, ast.Import))
        return cls(key, module, imports, errors)

    def attempt(self, step: Callable[..., None], *args: Any) -> None:
        try:
            step(*args)
        except CompileError as err:
            self.errors.extend(err.diagnostics)


class Loader:
    """One compilation: every file is read and bound once; definitions are lowered on first use."""

    def __init__(self) -> None:
        self.modules: dict[Path, LoadedModule] = {}
        # files that did not load, with their diagnostics (reported once, by their first importer)
        self.failed: dict[Path, list[Diagnostic]] = {}
        self._indexes: dict[tuple[int, str], NameIndex] = {}
        self.resolving: set[int] = set()
        # per object built, the fields it left to their rule (``_fill_derived_defaults``), the object kept alive
        self.derived: dict[int, tuple[Any, frozenset[str]]] = {}

    # ---- files -------------------------------------------------------------------------------
    def load_path(self, path: Path, span: Span | None = None, shown: str | None = None) -> LoadedModule:
        # not Path.resolve(): on Python 3.11 it raises RuntimeError for a symbolic-link loop, which
        # read_source below reports as the unreadable file it is
        key = Path(os.path.realpath(path))
        if key in self.modules:
            return self.modules[key]
        return self._load(_Frame.opened(key, shown or display_name(path), lambda n: _read(path, n, span)))

    def load_text(self, text: str, file: str) -> LoadedModule:
        base = Path(file).parent if not file.startswith("<") else Path.cwd()
        key = (base / Path(file).name).resolve() if not file.startswith("<") else base / file
        # a text given (an editor's buffer, a generated source) is parsed an item at a time, each cached:
        # typing in one definition re-parses that one
        return self._load(_Frame.opened(key, file, lambda n: parse_by_item(text, n)))

    def _load(self, root: _Frame) -> LoadedModule:
        """``root`` and every file it imports, depth first with a stack of its own rather than
        Python's: a chain of hundreds of files each importing the next is a chain, not a crash."""
        frames = [root]
        while frames:
            top = frames[-1]
            if top.waiting is not None:
                imp, child = top.waiting
                top.waiting = None
                if child in self.modules:
                    top.attempt(self._take, top.module, imp, self.modules[child])
                else:
                    top.failed = True  # the child's diagnostics are already the parent's
            item = next(top.imports, None)
            if item is not None:
                top.attempt(self._follow, frames, item)
                continue
            frames.pop()
            if not top.failed and not top.errors:
                self.modules[top.key] = top.module
                continue
            self.failed.setdefault(top.key, top.errors)
            if frames:
                frames[-1].errors.extend(top.errors)
                frames[-1].failed = True
            else:
                raise CompileError(top.errors or next(iter(self.failed.values())))
        return self.modules[root.key]

    def _follow(self, frames: list[_Frame], imp: ast.Import) -> None:
        """Take ``imp`` of the top frame's module: its names now if its file is loaded, else its file
        opened as the next frame (its names taken when that frame ends)."""
        top = frames[-1]
        path, shown = self._import_path(top.module, imp)
        key = Path(os.path.realpath(path))
        on_stack = [f.key for f in frames]
        if key in on_stack:
            chain = [f.module.file for f in frames[on_stack.index(key):]] + [shown or display_name(path)]
            raise fail(N.IMPORT_CYCLE, "import cycle: " + " → ".join(f"`{c}`" for c in chain), imp.span,
                       help="move the shared definitions into a file that both import")
        if key in self.modules:
            self._take(top.module, imp, self.modules[key])
        elif key in self.failed:
            top.failed = True
        else:
            try:
                frames.append(_Frame.opened(key, shown or display_name(path), lambda n: _read(path, n, imp.span)))
            except CompileError:
                self.failed[key] = []
                raise
            top.waiting = (imp, key)

    def _import_path(self, module: LoadedModule, imp: ast.Import) -> tuple[Path, str | None]:
        """The file ``imp`` names, and how to show it (None: its path)."""
        if imp.path:
            path = module.base_dir / imp.source
            if path.suffix != ".prx":
                # read as a source it would fail, and its first line would be quoted in the diagnostic
                raise fail(N.UNKNOWN_MODULE, f"`{imp.source}` is not a .prx file", imp.span,
                           help="an import names a source file: `import \"./models.prx\" (name)`")
            if not os.path.lexists(path):
                raise fail(N.UNKNOWN_MODULE, f"no file `{imp.source}` next to `{module.file}`", imp.span)
            # anything else there (a FIFO, a device, a folder, a link loop) is refused by the reader as what it is
            shown = None
        else:
            modules = stdlib_modules()
            if imp.source not in modules:
                close = difflib.get_close_matches(imp.source, modules, n=1)
                hint = f"did you mean `{close[0]}`?" if close else "stdlib modules: " + ", ".join(modules)
                raise fail(N.UNKNOWN_MODULE, f"no stdlib module `{imp.source}`", imp.span, help=hint)
            path = data_dir("stdlib").joinpath(*imp.source.split(".")).with_suffix(".prx")
            shown = f"<stdlib>/{imp.source.replace('.', '/')}.prx"
        return path, shown

    def _take(self, module: LoadedModule, imp: ast.Import, other: LoadedModule) -> None:
        """The names ``imp`` takes from the loaded ``other`` made visible in ``module``."""
        names = list(other.local) if imp.names is None else list(imp.names)
        for i, name in enumerate(names):
            where = imp.name_spans[i] if i < len(imp.name_spans) else imp.span
            entry = other.visible.get(name)
            if entry is None:
                close = self._index(other, "").closest(name)
                defines = list(other.local)
                listed = ", ".join(defines[:20]) + (f" and {len(defines) - 20:,} more" if len(defines) > 20 else "")
                hint = f"did you mean `{close}`?" if close else f"it defines: {listed}"
                raise fail(N.NOT_EXPORTED, f"`{other.file}` defines no `{name}`", where, help=hint)
            existing = module.visible.get(name)
            if existing is not None and existing is not entry:
                raise CompileError(_duplicate(name, where, existing.definition.span))
            module.visible[name] = entry

    # ---- names -------------------------------------------------------------------------------
    def _index(self, module: LoadedModule, kind: str) -> NameIndex:
        """The names ``module`` sees of ``kind`` (every name if it sees none of it, or for ``""``), for
        suggestions; built once per scope and kind, since a file's unknown names may be thousands."""
        key = (id(module), kind)
        if key not in self._indexes:
            same = [n for n, e in module.visible.items() if e.kind == kind] if kind else []
            self._indexes[key] = NameIndex(same or module.visible)
        return self._indexes[key]

    def resolve(self, module: LoadedModule, name: str, kind: str, span: Span | None) -> Any:
        entry = module.visible.get(name)
        if entry is None:
            home = stdlib_home(kind, name)
            close = self._index(module, kind).closest(name)
            hint = (f"the stdlib's `{home}` defines it: add it to the import (`import {home} (..., {name})`)" if home
                    else f"did you mean `{close}`?" if close else f"define it or import it (`import ... ({name})`)")
            raise fail(N.UNKNOWN_NAME, f"no {kind} named `{name}`", span, help=hint)
        if entry.kind != kind:
            raise fail(
                N.WRONG_KIND,
                f"`{name}` is a {entry.kind}, but a {kind} is expected here",
                span,
                help=f"`{name}` is defined at {entry.definition.name_span}",
            )
        return self.value_of(entry)

    def value_of(self, entry: Entry) -> Any:
        if entry.value is not None:
            return entry.value
        # the bases first, deepest first: a chain of a thousand definitions each over the last is a
        # loop here, not a thousand nested calls
        chain = [entry]
        on_chain = {id(entry)}  # a set, not a scan of the chain: each of a long cycle's entries walks it
        while (d := chain[-1].definition).kind != "space" and d.base is not None:
            base = chain[-1].module.visible.get(d.base)
            if base is None or base.kind != d.kind or base.value is not None:
                break
            if id(base) in on_chain:
                raise fail(N.INHERITANCE_CYCLE, f"`{base.definition.name}` inherits from itself",
                           base.definition.name_span)
            chain.append(base)
            on_chain.add(id(base))
        for e in reversed(chain):
            self._lower(e)
        return entry.value

    def _lower(self, entry: Entry) -> None:
        d = entry.definition
        if entry.value is not None:
            return
        if id(entry) in self.resolving:
            raise fail(N.INHERITANCE_CYCLE, f"`{d.name}` inherits from itself", d.name_span)
        self.resolving.add(id(entry))
        try:
            if d.kind == "space":
                entry.value = lower_space(self, entry.module, d)
            else:
                if d.on is not None:
                    raise fail(
                        T.MISPLACED_STATEMENT, f"only a space takes `on`; `{d.name}` is a {d.kind}", d.span
                    )
                cls = CLASSES[d.kind]
                base: dict[str, Any] = {}
                parent = None
                if d.base is not None:
                    parent = self.resolve(entry.module, d.base, d.kind, _base_span(d))
                    base = fields_of(parent)
                entry.value = self.build(cls, d.body, base, entry.module, {"name": d.name, "span": d.span}, d,
                                         parent)
        finally:
            self.resolving.discard(id(entry))

    def reference(self, module: LoadedModule, value: ast.Value, cls: type, what: str) -> Any:
        """A REF value: a name, or ``name { overrides }``."""
        kind = KIND_OF_CLASS[cls]
        if isinstance(value, ast.Ident):
            return self.resolve(module, value.name, kind, value.span)
        if isinstance(value, ast.Override):
            base = self.resolve(module, value.base, kind, value.span)
            fixed = {"name": base.name, "span": base.span}
            return self.build(cls, value.body, fields_of(base), module, fixed, None, base)
        raise fail(T.WRONG_TYPE, f"`{what}` takes the name of a {kind}, not {describe(value)}", value.span)

    # ---- blocks ------------------------------------------------------------------------------
    def build(
        self,
        cls: type,
        block: ast.Block,
        base: dict[str, Any],
        module: LoadedModule,
        fixed: dict[str, Any],
        d: ast.Definition | None,
        parent: Any = None,
    ) -> Any:
        """``cls`` from ``block`` over ``base`` (the fields of ``parent``, the definition it derives from)."""
        if cls is Site:  # its mounts and env name their own entries
            block, extra = site_blocks(self, block, base, module)
            fixed = {**extra, **fixed}
        fields = {f.name: f for f in attrs.fields(cls) if f.name not in ("name", "span")}
        values = dict(base)
        seen: dict[str, ast.Stmt] = {}
        errors: list[Diagnostic] = []
        what = cls.__name__.lower()
        for st in block.stmts:
            try:
                self._set(cls, st, fields, values, seen, module)
            except CompileError as err:
                errors.extend(err.diagnostics)
        if errors:
            raise CompileError(errors)
        if cls is Gpu and base and "efficiency" in seen and "provenance" not in seen:
            # efficiencies set by hand: the band measured for the base's evidence says nothing of them
            over = d.base if d is not None and d.base else fixed.get("name", "")
            values["provenance"] = Provenance(
                note=f"efficiencies set by hand over `{over}`'s: no band was measured for them, so the spec "
                     "sheet's is shown")
        inherited = self.derived[id(parent)][1] if id(parent) in self.derived else frozenset()
        filled = _fill_derived_defaults(cls, values, seen, d.name_span if d is not None else block.span,
                                        base, inherited)
        values.update(fixed)
        _refuse_missing_fields(cls, values, d, block)
        _refuse_out_of_range(cls, values, seen, d.name_span if d is not None else block.span)
        try:
            built = cls(**values)
        except (TypeError, ValueError) as exc:
            raise fail(T.WRONG_TYPE, f"invalid {what}: {exc}", block.span) from None
        if filled:  # which of its fields follow their rule, for a definition that derives from it
            self.derived[id(built)] = (built, filled)
        return built

    def _set(self, cls: type, st: ast.Stmt, fields: dict[str, Any], values: dict[str, Any],
             seen: dict[str, ast.Stmt], module: LoadedModule) -> None:
        """One statement of a ``cls`` block: the value of the field it sets into ``values``."""
        what = cls.__name__.lower()
        if isinstance(st, ast.AxisStmt):
            raise _axis_outside_space(st, what)
        if not isinstance(st, ast.Assign | ast.Nested):
            raise fail(
                T.MISPLACED_STATEMENT,
                f"{_a(what)} block holds only `field = value` and nested blocks",
                st.span,
                help="move this statement into a `space`",
            )
        if st.name in seen:
            raise fail(
                N.DUPLICATE_FIELD,
                f"`{st.name}` is set twice",
                st.span,
                help=f"first at {seen[st.name].span}",
            )
        seen[st.name] = st
        special = SPECIAL.get((cls, st.name))
        if special is not None and isinstance(st, ast.Assign):
            values.update(special(st.value))
            return
        f = fields.get(st.name)
        if f is None:
            raise _unknown_field(cls, st, list(fields))
        values[f.name] = self._field_value(cls, f, st, values.get(f.name), module)

    def _field_value(self, cls: type, f: Any, st: ast.Assign | ast.Nested, prev: Any, module: LoadedModule) -> Any:
        """What ``st`` sets field ``f`` of a ``cls`` to (``prev``: the value it had from the base)."""
        kind = kind_of(f)
        if isinstance(st, ast.Nested):
            if kind is not Kind.BLOCK:
                raise fail(
                    T.NOT_A_BLOCK,
                    f"`{st.name}` is not a block",
                    st.span,
                    help=f"write `{st.name} = value`",
                )
            sub = block_class(cls, f.name)
            return self.build(sub, st.body, fields_of(prev) if prev is not None else {}, module, {}, None)
        if kind is Kind.REF:
            return self.reference(module, st.value, block_class(cls, f.name), f.name)
        if kind is Kind.BLOCK:
            raise fail(T.NOT_A_BLOCK, f"`{st.name}` is a block", st.span, help=f"write `{st.name} {{ ... }}`")
        return scalar(f, st.value)


def _axis_outside_space(st: ast.AxisStmt, what: str) -> CompileError:
    one = st.domain.alts[0] if len(st.domain.alts) == 1 else None
    fix = f"write `{st.name} = ...`"
    if isinstance(one, ast.Quantity | ast.Ident):
        fix = f"write `{st.name} = {one.text if isinstance(one, ast.Quantity) else one.name}`"
    return fail(
        T.MISPLACED_STATEMENT,
        f"{_a(what)} field takes `=`; `{st.name} : ...` declares an axis, which only a space has",
        st.span,
        help=fix,
    )


def _base_span(d: ast.Definition) -> Span | None:
    """Where a definition names its base (`model m = mi325x {`): the AST keeps the name's span only, so
    the base is found after it on its line; the name's span where the source is not at hand."""
    from primus_lang.sources import SOURCES, lines

    span, text = d.name_span, SOURCES.get(d.name_span.file) if d.name_span is not None else None
    if span is None or text is None or d.base is None or not 0 < span.line <= len(every := lines(text)):
        return span
    found = re.compile(rf"=\s*({re.escape(d.base)})\b").search(every[span.line - 1], span.end_column - 1)
    return Span(span.file, span.line, found.start(1) + 1, span.line, found.end(1) + 1) if found else span


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: an efficiency, a model."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _unknown_field(cls: type, st: ast.Assign | ast.Nested, fields: list[str]) -> CompileError:
    what = cls.__name__.lower()
    candidates = fields + [name for (c, name) in SPECIAL if c is cls]
    close = difflib.get_close_matches(st.name, candidates, n=1)
    hint = f"did you mean `{close[0]}`?" if close else f"{what} fields: " + ", ".join(candidates)
    own, whose = _OTHER_NAMES.get(cls, ({}, ""))
    # a field written in another block's (P2002 names its home)
    home = next((c.__name__.lower() for c in BLOCK_CLASSES if c is not cls and st.name in attrs.fields_dict(c)), "")
    if st.name in own:
        hint = f"write `{own[st.name]}`: {whose} `{st.name}` is the {what}'s `{own[st.name]}`"
    elif home:
        # a field written in the wrong block (a GPU's price on the cluster): say whose it is
        where = f"where the {home} is named, `{home} = NAME {{ {st.name} = ... }}`" if home in attrs.fields_dict(cls) \
            else f"in the {home}'s block"
        hint = f"`{st.name}` is a field of {_a(home)}, not of {_a(what)}: write it {where}"
    return fail(N.UNKNOWN_FIELD, f"{_a(what)} has no field `{st.name}`", name_span(st.span, st.name), help=hint)


def _fill_derived_defaults(cls: type, values: dict[str, Any], seen: dict[str, ast.Stmt], at: Span | None,
                           base: dict[str, Any], inherited: frozenset[str]) -> frozenset[str]:
    """Fill the fields a block leaves to their rule (``DERIVED_DEFAULTS``); the names filled. A field the
    base left to its rule (``inherited``) follows it here too where this block changes what it reads
    (`heads = 24` over a card of 32 heads kept its 128-wide head); one the base set itself stays."""
    filled = set()
    for name, (_, rule) in DERIVED_DEFAULTS.get(cls, {}).items():
        if name in inherited and name not in seen and rule(values) != base.get(name):
            del values[name]
        if name not in values:
            v = rule(values)
            if v is not None:
                values[name] = v
                filled.add(name)
                if name == "head_dim":
                    _refuse_inexact_head_dim(values, seen, at)
    return frozenset(filled)


def _refuse_inexact_head_dim(values: dict[str, Any], seen: dict[str, ast.Stmt], at: Span | None) -> None:
    """A head width left to ``hidden / heads`` where that division leaves a remainder: the width would be
    rounded down (4000 / 30: 133, a 3,990-wide attention), which is a typo far more often than a design;
    Megatron-LM asserts the same where ``--kv-channels`` is not given."""
    hidden, heads = values["hidden"], values["heads"]
    if hidden % heads:
        where = seen["hidden"].span if "hidden" in seen else seen["heads"].span if "heads" in seen else at
        raise fail(T.OUT_OF_RANGE, f"`hidden` {hidden:,} is not a multiple of `heads` {heads}: the head width "
                   f"`head_dim` it gives would be {hidden / heads:.4g}", where,
                   help=f"set `head_dim` to the width meant (Megatron's --kv-channels), or a `hidden` that {heads} "
                        f"heads divide ({hidden - hidden % heads:,} or {hidden - hidden % heads + heads:,})")


def _refuse_missing_fields(cls: type, values: dict[str, Any], d: ast.Definition | None, block: ast.Block) -> None:
    derived = DERIVED_DEFAULTS.get(cls, {})
    needed = [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING and f.name not in ("name", "span")]
    # a field with a derived default is missing only because what it follows from is: that is what to name
    missing = [n for n in needed if n not in values and n not in derived]
    if missing:
        what = cls.__name__.lower()
        where = d.name_span if d is not None else block.span
        title = f"`{d.name}`" if d is not None else f"this {what} block"
        follows = "; ".join(f"`{n}` defaults to {rule}" for n, (rule, _) in derived.items())
        raise fail(
            T.MISSING_FIELD,
            f"{title} does not set {', '.join(f'`{m}`' for m in missing)}",
            where,
            help=f"{_a(what)} needs " + ", ".join(n for n in needed if n not in derived) + (f" ({follows})" if follows else ""),
        )


def _refuse_out_of_range(cls: type, values: dict[str, Any], seen: dict[str, ast.Stmt], at: Span | None) -> None:
    """Values outside their field's range, each at the statement that set it (``at``: one inherited)."""
    problems = range_problems(cls, values)
    if problems:
        raise CompileError([
            Diagnostic(T.TOO_LARGE if p.too_large else T.OUT_OF_RANGE, p.message,
                       seen[p.field].span if p.field in seen else at, help=p.help)
            for p in problems
        ])


def _nic(value: ast.Value) -> dict[str, Any]:
    """``nic = 8 x 400 Gbps`` sets the NIC count and each NIC's bandwidth."""
    if isinstance(value, ast.Times):
        out = {
            "nics_per_node": count(value.count, "nic"),
            "nic_bandwidth": unit_quantity(value.each, Kind.BANDWIDTH, "nic"),
        }
    elif isinstance(value, ast.Quantity) and value.unit is not None:
        out = {"nic_bandwidth": unit_quantity(value, Kind.BANDWIDTH, "nic")}
    else:
        raise fail(T.WRONG_TYPE, "`nic` takes `COUNT x BANDWIDTH`", value.span, help="e.g. `nic = 8 x 400 Gbps`")
    # 0 in the fields means "the default" (one NIC per GPU, the GPU profile's bandwidth): written
    # here it would be read as that default without a word
    if any(v <= 0 for v in out.values()):
        raise fail(T.OUT_OF_RANGE, "`nic` needs at least one NIC of some bandwidth", value.span,
                   help="e.g. `nic = 8 x 400 Gbps`; leave `nic` out for the GPU profile's NICs")
    return out


SPECIAL: dict[tuple[type, str], Any] = {(Cluster, "nic"): _nic}


def fields_of(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in attrs.fields(type(obj)) if f.name not in ("name", "span")}


# ---- public API ------------------------------------------------------------------------------
def _program(loader: Loader, module: LoadedModule) -> Program:
    if not module.tree.items:
        raise CompileError(
            Diagnostic(
                S.EMPTY_FILE,
                f"`{module.file}` defines nothing",
                help="check the path; the file has no definitions",
            )
        )
    out: dict[str, list[Any]] = {"model": [], "gpu": [], "cluster": [], "space": [], "site": []}
    errors: dict[Diagnostic, None] = {}  # in order, each once: a list's `in` made 20,000 errors quadratic
    for entry in module.local.values():
        try:
            out[entry.kind].append(loader.value_of(entry))
        except CompileError as err:
            errors.update(dict.fromkeys(err.diagnostics))
    if errors:
        raise CompileError(list(errors))
    return Program(
        module.file,
        tuple(out["model"]),
        tuple(out["gpu"]),
        tuple(out["cluster"]),
        tuple(out["space"]),
        tuple(out["site"]),
    )


def load_program(path: str | os.PathLike[str]) -> Program:
    """Read, resolve and lower one file and everything it imports."""
    loader = Loader()
    return _program(loader, loader.load_path(Path(path), None, str(path)))


def loads_program(text: str, file: str = "<input>") -> Program:
    """``load_program`` of ``text`` (named ``file`` in diagnostics and imports relative to it)."""
    loader = Loader()
    return _program(loader, loader.load_text(text, file))


def pick_space(program: Program, name: str | None = None) -> Space:
    """The space ``name`` of ``program``, or its only one; ``CompileError`` when there is none such,
    or several and no name."""
    names = [s.name for s in program.spaces]
    if name is not None:
        for s in program.spaces:
            if s.name == name:
                return s
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"did you mean `{close[0]}`?" if close else ("spaces: " + ", ".join(names) if names else "")
        raise CompileError(Diagnostic(N.UNKNOWN_SPACE, f"`{program.file}` has no space `{name}`", help=hint))
    if len(program.spaces) == 1:
        return program.spaces[0]
    if not program.spaces:
        raise CompileError(
            Diagnostic(
                N.NO_SPACE, f"`{program.file}` defines no space", help="add `space NAME on CLUSTER { ... }`"
            )
        )
    raise CompileError(
        Diagnostic(
            N.NO_SPACE,
            f"`{program.file}` defines {len(names)} spaces",
            help="choose one with `--space`: " + ", ".join(names),
        )
    )


def load_space(path: str | os.PathLike[str], name: str | None = None) -> Space:
    """The typed, checked ``Space`` of a ``.prx`` file: the entry point of the Python API (docs/search.md,
    Using it from Python). Raises ``CompileError`` with the diagnostics ``primusc check`` prints."""
    return pick_space(load_program(path), name)
