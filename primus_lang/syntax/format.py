"""The canonical layout of a ``.prx`` file (``primusc fmt``), comments kept.

Rules: two-space indentation; one statement per line in a block written over several lines; a block
written on one line stays on one line (statements joined by ``; ``) while it fits in 100 columns;
one blank line between top-level definitions; the user's blank lines inside blocks are kept
(several collapse into one); a trailing comment stays on its line, two spaces after the code. A
statement written over several lines with comments between its lines (an axis's choices, each with
its note) keeps its lines and their comments as written, re-indented: joining them would move every
comment away from what it is about. Formatting twice gives the same text as formatting once.
"""

from __future__ import annotations

from primus_lang.ir.expr import to_text
from primus_lang.ir.span import Span
from primus_lang.ir.text import quote
from primus_lang.sources import lines
from primus_lang.syntax import ast
from primus_lang.syntax.parser import parse

WIDTH = 100
INDENT = "  "


def _quantity(q: ast.Quantity) -> str:
    if q.unit is None:
        return q.text
    return f"{q.text}%" if q.unit == "%" else f"{q.text} {q.unit}"


def _alt(a: ast.Alt) -> str:
    if isinstance(a, ast.Range):
        step = f" step {_quantity(a.step)}" if a.step is not None else ""
        return f"{_quantity(a.lo)} .. {_quantity(a.hi)}{step}"
    return _value(a)


def _domain(d: ast.Domain) -> str:
    return " | ".join(_alt(a) for a in d.alts)


def _value(v: ast.Value) -> str:
    if isinstance(v, ast.Quantity):
        return _quantity(v)
    if isinstance(v, ast.Str):
        return quote(v.value)
    if isinstance(v, ast.Ident):
        return v.name
    if isinstance(v, ast.Override):
        return f"{v.base} {_one_line(v.body)}"
    if isinstance(v, ast.Times):
        return f"{_quantity(v.count)} x {_quantity(v.each)}"
    args = ", ".join((f"{a.key}: " if a.key else "") + _domain(a.domain) for a in v.args)
    return f"{v.func}({args})"


def _one_line(b: ast.Block) -> str:
    if not b.stmts:
        return "{ }"
    return "{ " + "; ".join(_stmt_text(s) for s in b.stmts) + " }"


def _stmt_text(s: ast.Stmt) -> str:
    prefix, block = _parts(s)
    return prefix if block is None else f"{prefix} {_one_line(block)}"


def _parts(s: ast.Stmt) -> tuple[str, ast.Block | None]:
    """A statement as the text before its block (if it ends in one) and that block."""
    if isinstance(s, ast.Nested):
        return s.name, s.body
    if isinstance(s, ast.Assign):
        if isinstance(s.value, ast.Override):
            return f"{s.name} = {s.value.base}", s.value.body
        return f"{s.name} = {_value(s.value)}", None
    if isinstance(s, ast.AxisStmt):
        when = f" when {to_text(s.when, True)}" if s.when is not None else ""
        return f"{s.name} : {_domain(s.domain)}{when}", None
    if isinstance(s, ast.LetStmt):
        return f"let {s.name} = {to_text(s.expr, True)}", None
    if isinstance(s, ast.RequireStmt):
        msg = f" {quote(s.message)}" if s.message is not None else ""
        return f"require {to_text(s.expr, True)}{msg}", None
    if isinstance(s, ast.FitsStmt):
        head = f" headroom {_quantity(s.headroom)}" if s.headroom is not None else ""
        return f"fits memory{head}", None
    if isinstance(s, ast.ObjectiveStmt):
        return f"{s.sense} {s.metric}", None
    if isinstance(s, ast.BudgetStmt):
        words = {"evals": "{} evals", "time": "{}", "llm": "llm {} calls", "cost": "cost {} usd"}
        return "budget " + ", ".join(words[i.kind].format(_quantity(i.amount)) for i in s.items), None
    if isinstance(s, ast.StrategyStmt):
        return f"strategy {s.name}", None
    if isinstance(s, ast.TargetStmt):
        return "target " + " + ".join(s.names), None
    if isinstance(s, ast.AssumeStmt):
        if isinstance(s.value, ast.Override):
            return f"assume {s.name} = {s.value.base}", s.value.body
        return f"assume {s.name} = {_value(s.value)}", None
    raise TypeError(f"not a statement: {s!r}")


def _continued(indent: str, piece: str) -> str:
    """A continuation line: two levels in, or level with its statement where it closes a bracket."""
    return indent + ("" if piece[:1] in ")]}" else 2 * INDENT) + piece


def _same_line_start(s: ast.Stmt, after: ast.Stmt | None) -> int | None:
    """The column where ``after`` begins when it begins on the line ``s`` ends on (``a = 1; b = 2``)."""
    if after is None or s.span is None or after.span is None or after.span.line != s.span.end_line:
        return None
    return after.span.column


def _line(span: object, end: bool = False) -> int:
    if span is None:
        return 0
    return int(span.end_line if end else span.line)  # type: ignore[attr-defined]


class _Printer:
    def __init__(self, module: ast.Module, text: str) -> None:
        self.src = lines(text)
        self.out: list[str] = []
        self.pending = sorted(module.comments, key=lambda c: (c.line, c.column))
        self.last = 0  # the last source line already printed

    def _blank_before(self, line: int) -> bool:
        return self.last < line - 1 and 1 < line <= len(self.src) + 1 and not self.src[line - 2].strip()

    def _gap(self, line: int, force: bool) -> None:
        if not self.out or self.out[-1] == "" or self.out[-1].endswith("{"):
            return
        if force or self._blank_before(line):
            self.out.append("")

    def _is_trailing(self, c: ast.Comment) -> bool:
        return 0 < c.line <= len(self.src) and self.src[c.line - 1][: c.column - 1].strip() != ""

    def comments_before(self, line: int, indent: str, force_gap: bool = False) -> None:
        while self.pending and self.pending[0].line < line:
            c = self.pending.pop(0)
            self._gap(c.line, force_gap)
            force_gap = False
            self.out.append(indent + c.text)
            self.last = max(self.last, c.line)
        if force_gap:
            self._gap(line, True)

    def emit(self, text: str, indent: str, first: int, last: int, force_gap: bool = False,
             until: int | None = None) -> None:
        """``text`` on a line of its own; a comment trailing its source line joins it, unless a later
        statement on that line begins before the comment (``until``: its column) and owns it."""
        self.comments_before(first, indent, force_gap)
        if text != "}":
            self._gap(first, False)
        line = indent + text
        while (self.pending and self.pending[0].line == last and self._is_trailing(self.pending[0])
               and (until is None or self.pending[0].column < until)):
            line += "  " + self.pending.pop(0).text
        self.out.append(line)
        self.last = max(self.last, last)

    def block_unit(
        self,
        prefix: str,
        block: ast.Block | None,
        indent: str,
        first: int,
        last: int,
        force_gap: bool = False,
        span: Span | None = None,
        until: int | None = None,
    ) -> None:
        if block is None and last > first and any(first <= c.line < last for c in self.pending):
            self.verbatim(span, indent, force_gap)
            return
        single = block is None or _line(block.span) == _line(block.span, True)
        text = prefix if block is None else f"{prefix} {_one_line(block)}"
        if block is None or (single and len(indent + text) <= WIDTH):
            self.emit(text, indent, first, last, force_gap, until)
            return
        opening = _line(block.span)
        head = block.stmts[0].span if block.stmts else None
        # a comment ending the opening line belongs to the statements written on it, if any
        self.emit(f"{prefix} {{", indent, first, opening, force_gap,
                  until=head.column if head is not None and head.line == opening else None)
        inner = indent + INDENT
        for k, s in enumerate(block.stmts):
            after = block.stmts[k + 1] if k + 1 < len(block.stmts) else None
            p, b = _parts(s)
            self.block_unit(p, b, inner, _line(s.span), _line(s.span, True), span=s.span,
                            until=_same_line_start(s, after))
        end = _line(block.span, True)
        self.comments_before(end, inner)
        self.emit("}", indent, end, end)

    def verbatim(self, span: Span | None, indent: str, force_gap: bool) -> None:
        """A statement's own text, its continuation lines two levels in, with the comments between
        its lines where they were (its last line's trailing comment as ``emit`` places it)."""
        assert span is not None
        first, last = span.line, span.end_line
        text = "\n".join(self.src[first - 1:last])
        start = span.column - 1
        stop = len(text) - len(self.src[last - 1]) + span.end_column - 1
        pieces = [piece.strip() for piece in text[start:stop].split("\n")]
        self.pending = [c for c in self.pending if not first <= c.line < last]
        for k, piece in enumerate(pieces[:-1]):
            if k == 0:
                self.emit(piece, indent, first, first, force_gap)
            elif piece:
                self.out.append(_continued(indent, piece))
            self.last = first + k
        self.emit(pieces[-1], _continued(indent, pieces[-1])[:-len(pieces[-1])], last, last)

    def module(self, module: ast.Module) -> None:
        previous: object = None
        for item in module.items:
            first, last = _line(item.span), _line(item.span, True)
            force = previous is not None and (
                isinstance(item, ast.Definition) or isinstance(previous, ast.Definition)
            )
            if isinstance(item, ast.Import):
                names = "*" if item.names is None else ", ".join(item.names)
                source = quote(item.source) if item.path else item.source
                if last > first and any(first <= c.line < last for c in self.pending):
                    self.verbatim(item.span, "", force)  # its names' comments stay beside them
                else:
                    self.emit(f"import {source} ({names})", "", first, last, force)
            else:
                head = f"{item.kind} {item.name}"
                if item.base:
                    head += f" = {item.base}"
                if item.on:
                    head += f" on {item.on}"
                self.block_unit(head, item.body, "", first, last, force)
            previous = item
        self.comments_before(10**9, "")


def format_module(module: ast.Module, text: str) -> str:
    printer = _Printer(module, text)
    printer.module(module)
    out = "\n".join(printer.out).rstrip("\n")
    return out + "\n" if out else ""


def format_source(text: str, file: str = "<input>") -> str:
    """The canonical layout of ``text``; raises ``CompileError`` if it does not parse."""
    return format_module(parse(text, file), text)
