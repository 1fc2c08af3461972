"""Hover, go-to-definition and document symbols over a document's text and its last analysis."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from primus_lang.diagnostics import lookup
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.space import METRIC_DOCS, Settings, user_settings
from primus_lang.ir.span import Span
from primus_lang.lsp import context
from primus_lang.lsp.analysis import Analysis, Counts
from primus_lang.lsp.knowledge import (
    DERIVED_NAMES,
    FUNCTIONS,
    SPACE_REFS,
    SPACE_STATEMENTS,
    comment_above,
    field_markdown,
    fields_of_block,
    stdlib_index,
)
from primus_lang.lsp.positions import word_at
from primus_lang.lsp.slow import Fits
from primus_lang.syntax import ast

_CODE = re.compile(r"^[PW]\d{4}$")


@attrs.frozen
class HoverFacts:
    """What a hover says without the parser, and the name to resolve on the analysis thread."""

    parts: tuple[str, ...]
    resolve: context.Origin | None = None


def _covers(span: Span, line: int, index: int) -> bool:
    start, end = (span.line - 1, span.column - 1), (span.end_line - 1, span.end_column - 1)
    return start <= (line, index) <= end


def counts_markdown(counts: Counts, fits: Fits | None) -> str:
    fitting = ("computing…" if fits is None else
               f"{fits.fitting:,} (least peak {fits.least_peak / 2**30:.1f} GiB of {fits.usable / 2**30:.1f} GiB usable)"
               if fits.least_peak >= 0 else "0")
    return (f"**space `{counts.name}`**\n\n| points | count |\n|---|---|\n| raw | {counts.raw:,} |\n"
            f"| legal | {counts.legal:,} |\n| fitting in memory | {fitting} |")


def counts_title(counts: Counts, fits: Fits | None) -> str:
    fitting = "fitting …" if fits is None else f"{fits.fitting:,} fitting"
    return f"{counts.raw:,} raw · {counts.legal:,} legal · {fitting}"


def hover(analysis: Analysis | None, text: str, base: Path | None, text_lines: list[str], line: int, index: int,
          fits: dict[str, Fits]) -> HoverFacts | None:
    parts = _diagnostics_at(analysis, line, index)
    word, start, end = word_at(text_lines, line, index)
    if not word:
        return HoverFacts(tuple(parts)) if parts else None
    src = text_lines[line]
    before, after = src[:start], src[end:]
    found = _code_or_module_doc(word, before)
    if found is not None:
        return HoverFacts((*parts, found))
    path = context.block_path(text_lines, line, start)
    statement = re.split(r"[;{]", before)[-1]
    found = _place_doc(analysis, fits, path, statement, before, after, word)
    if found is not None:
        return HoverFacts((*parts, found))
    origin = context.visible(text, base).get(word)
    if origin is not None and origin.kind != "space":
        return HoverFacts((*parts, _origin_doc(origin, word)), origin)
    found = _name_doc(path, statement, word)
    if found is not None:
        parts.append(found)
    return HoverFacts(tuple(parts)) if parts else None


def _diagnostics_at(analysis: Analysis | None, line: int, index: int) -> list[str]:
    """The analysis's diagnostics over the cursor, each with its code's explanation."""
    if analysis is None:
        return []
    return [f"**{d.severity.value}[{d.code.id}]** {d.message}\n\n" + _code_text(d.code.id)
            for d in analysis.diagnostics
            if d.span is not None and d.span.file == analysis.file and _covers(d.span, line, index)]


def _code_or_module_doc(word: str, before: str) -> str | None:
    """A diagnostic code's explanation, or what a stdlib module being imported defines."""
    if _CODE.match(word) and lookup(word) is not None:
        return _code_text(word)
    if re.match(r"^\s*import\s+$", before) and word in stdlib_index():
        names = ", ".join(f"{k} `{n}`" for k, n in stdlib_index()[word])
        return f"**stdlib module `{word}`**\n\n{names}"
    return None


def _place_doc(analysis: Analysis | None, fits: dict[str, Fits], path: tuple[str, ...], statement: str,
               before: str, after: str, word: str) -> str | None:
    """What the word is where it stands: a field being set, a space's statement or setting, or the
    name of a space being defined (its point counts)."""
    if path and re.match(r"^\s*$", statement) and re.match(r"^\s*[=:{]", after):
        found = _field_doc(path, word)
        if found:
            return found
    if path == ("space",) and re.match(r"^\s*$", statement) and word in SPACE_STATEMENTS:
        return SPACE_STATEMENTS[word]
    if path == ("space",) and re.match(r"^\s*assume\s+$", statement):
        fields = attrs.fields_dict(Settings)
        if word in user_settings():
            return f"**setting `{word}`** (default `{fields[word].default}`)\n\n{SPACE_STATEMENTS['assume']}"
    if path == ("space",) and re.match(r"^\s*(maximize|minimize)\s+$", statement) and word in METRIC_DOCS:
        return f"**metric `{word}`**: {METRIC_DOCS[word]}"
    first = re.match(r"^\s*(\w+)\s", statement)
    if path == ("space",) and first and first.group(1) in _STATEMENT_ARGUMENTS:
        # a word of a statement's arguments (`300 evals`, `10 min`, `headroom 5%`, `megatron + slurm`)
        return SPACE_STATEMENTS[first.group(1)]
    if not path and re.match(r"^\s*space\s+$", before) and analysis is not None:
        for c in analysis.counts:
            if c.name == word:
                return counts_markdown(c, fits.get(word))
    return None


# the statements whose arguments are words of their own, not names (a hover on them says the statement)
_STATEMENT_ARGUMENTS = ("budget", "fits", "target", "strategy")


def _origin_doc(origin: context.Origin, word: str) -> str:
    """Where a visible name comes from, with the comment above its definition in another file."""
    where = f"from `{origin.module or origin.file}`" if origin.file is not None else "defined in this file"
    note = ""
    if origin.file is not None:
        located = context.locate(origin)
        if located is not None:
            note = comment_above(context._read(located[0]), located[1] + 1)
    return f"{origin.kind} `{word}` {where}" + (f"\n\n{note}" if note else "")


def _name_doc(path: tuple[str, ...], statement: str, word: str) -> str | None:
    """A value of the field being set, or a knob, derived quantity or function of the expressions."""
    value = _value_doc(path, statement, word)
    if value:
        return value
    if word in KNOBS:
        return field_markdown("knob", KNOBS[word])
    if word in DERIVED_NAMES:
        return f"**`{word}`** (derived): {DERIVED_NAMES[word]}"
    if word in FUNCTIONS:
        return FUNCTIONS[word]
    return None


def _code_text(code_id: str) -> str:
    from primus_lang.lsp.knowledge import code_markdown

    code = lookup(code_id)
    return code_markdown(code) if code is not None else ""


def _field_doc(path: tuple[str, ...], word: str) -> str:
    if path == ("space",) and word in SPACE_REFS:
        return f"**`{word}`** (space): the {word} the space runs (a name or `NAME {{ overrides }}`)"
    if path[-1] == "cluster" and word == "nic":
        return "**`nic`** (cluster): `N x BANDWIDTH` sets `nics_per_node` and `nic_bandwidth` together"
    f = fields_of_block(path).get(word)
    if f is None:
        return ""
    owner = "knob" if path == ("space",) else " ".join(path) + " field"
    return field_markdown(owner, f)


def _value_doc(path: tuple[str, ...], statement: str, word: str) -> str:
    m = re.match(r"^\s*(\w+)\s*[=:]", statement)
    if not m or not path:
        return ""
    f = fields_of_block(path).get(m.group(1))
    if f is None:
        return ""
    return f"`{word}`: a value of " + field_markdown("knob" if path == ("space",) else "field", f)


def definition(text: str, base: Path | None, text_lines: list[str], line: int,
               index: int) -> tuple[Path | None, int, int] | None:
    """Where the name under the cursor is defined: (None: this document, 0-based line, column)."""
    if line >= len(text_lines):
        return None
    src = text_lines[line]
    m = re.match(r'^\s*import\s+("([^"\n]*)"|([A-Za-z_][\w.]*))', src)
    if m and m.start(1) <= index <= m.end(1):
        file = context.import_file(m.group(2) or m.group(3), m.group(2) is not None, base)
        return (file, 0, 0) if file is not None and file.is_file() else None
    word, _, _ = word_at(text_lines, line, index)
    origin = context.visible(text, base).get(word)
    if origin is None:
        return None
    if origin.file is None:
        for kind, name, row, col in context.definitions(text):
            if name == word and kind == origin.kind:
                return None, row, col
        return None
    return context.locate(origin)


@attrs.frozen
class Symbol:
    name: str
    kind: str  # model | gpu | cluster | space | field | axis | statement | import
    span: Span
    selection: Span
    children: tuple[Symbol, ...] = ()


def symbols(module: ast.Module) -> list[Symbol]:
    out: list[Symbol] = []
    for item in module.items:
        if item.span is None:
            continue
        if isinstance(item, ast.Import):
            out.append(Symbol(f"import {item.source}", "import", item.span, item.span))
            continue
        children = []
        for st in item.body.stmts:
            name = getattr(st, "name", None)
            if st.span is None or not isinstance(name, str):
                continue
            kind = "axis" if isinstance(st, ast.AxisStmt) else "field"
            children.append(Symbol(name, kind, st.span, st.span))
        out.append(Symbol(item.name, item.kind, item.span, item.name_span or item.span, tuple(children)))
    return out
