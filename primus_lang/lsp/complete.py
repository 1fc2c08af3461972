"""Completion: what may be written at the cursor, by the text before it on its line and the blocks
around it. Returns plain (label, kind, detail, documentation) items; the server wraps them."""

from __future__ import annotations

import re
from pathlib import Path

from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.quantity import Kind, doc_of, kind_of
from primus_lang.ir.space import CAPACITY_METRICS, METRIC_DOCS, OBJECTIVE_METRICS, STRATEGIES, user_settings
from primus_lang.lsp import context
from primus_lang.lsp.knowledge import (
    DERIVED_NAMES,
    FUNCTIONS,
    SPACE_REFS,
    SPACE_STATEMENTS,
    TOP_KEYWORDS,
    field_markdown,
    fields_of_block,
    stdlib_index,
    values_of,
)

Item = tuple[str, str, str, str]  # label, kind (keyword|field|value|module|name|function|variable), detail, doc

FRAMEWORKS = ("megatron", "primus", "bridge")
LAUNCHERS = ("slurm", "k8s", "local")


def _names(text: str, base: Path | None, kind: str) -> list[Item]:
    return [(name, "name", f"{o.kind} {('from ' + o.module) if o.module else ''}".strip(), "")
            for name, o in sorted(context.visible(text, base).items()) if o.kind == kind]


def _expression_names(text: str) -> list[Item]:
    items: list[Item] = [(k, "variable", "knob", doc_of(f)) for k, f in KNOBS.items()]
    items += [(k, "variable", "derived", doc) for k, doc in DERIVED_NAMES.items()]
    items += [(k, "function", "function", doc) for k, doc in FUNCTIONS.items()]
    items += [(m.group(1), "variable", "let", "") for m in re.finditer(r"\blet\s+([A-Za-z_]\w*)", text)]
    seen: set[str] = set()
    return [i for i in items if not (i[0] in seen or seen.add(i[0]))]  # type: ignore[func-returns-value]


def complete(text: str, base: Path | None, text_lines: list[str], line: int, index: int) -> list[Item]:
    prefix = text_lines[line][:index] if line < len(text_lines) else ""
    if "#" in prefix.split('"')[-1] and prefix.count('"') % 2 == 0:
        return []  # in a comment
    path = context.block_path(text_lines, line, index)
    m = re.match(r"^\s*import\s+([\w.]*)$", prefix)
    if m:
        return [(mod, "module", "stdlib", ", ".join(n for _, n in defs)) for mod, defs in stdlib_index().items()]
    m = re.match(r'^\s*import\s+("[^"]*"|[\w.]+)\s*\([^)]*$', prefix)
    if m:
        source = m.group(1)
        file = context.import_file(source.strip('"'), source.startswith('"'), base)
        defs = context.definitions(context._read(file)) if file is not None else []
        return [("*", "keyword", "everything the file defines", "")] + [
            (name, "name", kind, "") for kind, name, _, _ in defs]
    if not path:
        m = re.match(r"^\s*space\s+\w+\s+on\s+\w*$", prefix)
        if m:
            return _names(text, base, "cluster")
        m = re.match(r"^\s*(model|gpu|cluster)\s+\w+\s*=\s*\w*$", prefix)
        if m:
            return _names(text, base, m.group(1))
        if re.match(r"^\s*\w*$", prefix):
            return [(k, "keyword", "", "") for k in TOP_KEYWORDS]
        return []
    return _in_block(text, base, path, prefix)


def _in_block(text: str, base: Path | None, path: tuple[str, ...], prefix: str) -> list[Item]:
    fields = fields_of_block(path)
    owner = " ".join(path)
    statement = re.split(r"[;{]", prefix)[-1]
    if re.match(r"^\s*\w*$", statement):
        items: list[Item] = [(n, "field", owner, field_markdown(owner, f)) for n, f in fields.items()]
        if path == ("space",):
            items += [(n, "field", "space", f"the space's {n}") for n in SPACE_REFS]
            items += [(k, "keyword", "statement", doc) for k, doc in SPACE_STATEMENTS.items()]
        if path[-1] == "cluster":
            items.append(("nic", "field", "cluster", "`nic = N x BANDWIDTH`: NICs per node and each one's bandwidth"))
        return items
    if path == ("space",):
        for pattern, words, what in (
            (r"^\s*assume\s+\w*$", list(user_settings()), "setting"),
            (r"^\s*(maximize|minimize)\s+\w*$", [*OBJECTIVE_METRICS, *CAPACITY_METRICS], "metric"),
            (r"^\s*strategy\s+\w*$", list(STRATEGIES), "strategy"),
            (r"^\s*target\s+\w*$", list(FRAMEWORKS), "framework"),
            (r"^\s*target\s+\w+\s*\+\s*\w*$", list(LAUNCHERS), "launcher"),
        ):
            if re.match(pattern, statement):
                return [(w, "value", what, METRIC_DOCS.get(w, "")) for w in words]
        if re.match(r"^\s*(let|require)\b", statement) or re.search(r"\bwhen\b", statement):
            return _expression_names(text)
    m = re.match(r"^\s*(\w+)\s*[=:]\s*(.*)$", statement)
    if not m:
        return []
    name = m.group(1)
    if path == ("space",) and name in SPACE_REFS:
        return _names(text, base, name)
    f = fields.get(name)
    if f is None:
        return []
    if kind_of(f) is Kind.REF:
        return _names(text, base, name)
    if path == ("space",) and name in _SIZES:
        # a parallel size or batch: powers of two, and the range form (legality keeps what divides)
        return [(str(v), "value", name, doc_of(f)) for v in _SIZES[name]] + [
            (f"pow2({_SIZES[name][0]} .. {_SIZES[name][-1]})", "value", name, "every power of two in the range")]
    return [(v, "value", f"{name}", doc_of(f)) for v in values_of(f)]


# what a space's size knobs usually take: the checker removes the values a model or cluster cannot split by
_SIZES = {"tp": (1, 2, 4, 8), "pp": (1, 2, 4, 8, 16), "vpp": (1, 2, 3, 4), "cp": (1, 2, 4, 8),
          "ep": (1, 2, 4, 8, 16, 32, 64), "etp": (1, 2, 4, 8), "mbs": (1, 2, 4, 8), "offload_layers": (0, 1, 2, 4)}
