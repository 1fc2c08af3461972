"""Text → AST. The Lark LALR parser is built once; errors become P1 diagnostics with a hint.

Common slips are recognised the way Lark's ``match_examples`` suggests: a small corpus of wrong
snippets, each labelled with the diagnostic it should produce, is parsed once and the parser state
at the failure is compared with the user's.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import lark
from lark import Token, Transformer, v_args

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_syntax as C
from primus_lang.ir.expr import Binary, Call, Const, Name, Tuple_, Unary, depth
from primus_lang.ir.span import Span
from primus_lang.ir.text import COUNT_SUFFIXES
from primus_lang.resources import data_dir
from primus_lang.sources import SOURCES, lines
from primus_lang.syntax import ast
from primus_lang.syntax.lexical import code_of
from primus_lang.syntax.units import UNITS, suggest_unit, takes_no_unit

MAX_BYTES = 4 * 2**20


# Comments are ignored by the grammar but collected for the formatter through a lexer callback;
# the parser is shared (each parse keeps its own state), so the callback appends to the running parse's
# list: one per thread, since the language server parses for a hover while an analysis parses.
_local = threading.local()


def _sink() -> list[Token]:
    if not hasattr(_local, "comments"):
        _local.comments = []
    found: list[Token] = _local.comments
    return found


def _collect_comment(tok: Token) -> Token:
    _sink().append(tok)
    return tok


def _can_be_strict() -> bool:
    try:
        import interegular  # noqa: F401  (Lark's strict mode needs it to find terminal collisions)
    except ImportError:
        return False
    return True


def build_parser(cache: bool = True, strict: bool | None = None) -> lark.Lark:
    """The LALR parser. ``strict`` makes Lark refuse grammar conflicts and terminal collisions; the
    check costs most of a second, so the built tables are cached on disk (keyed by the grammar's
    hash), and the test suite builds once strictly without the cache to keep the check honest. An
    installation without ``interegular`` parses the same language, only without re-proving it."""
    grammar = (data_dir("grammar") / "primus.lark").read_text(encoding="utf-8")
    return lark.Lark(
        grammar,
        parser="lalr",
        propagate_positions=True,
        strict=_can_be_strict() if strict is None else strict,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": _collect_comment},
        cache=cache,
    )


@functools.cache
def _parser() -> lark.Lark:
    try:
        return build_parser(cache=True)
    except OSError:  # an unwritable temp folder: build without the cache
        return build_parser(cache=False)


def _span(file: str, meta: Any) -> Span | None:
    if getattr(meta, "empty", True):
        return None
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(file: str, tok: Token) -> Span:
    return Span(
        file,
        tok.line or 1,
        tok.column or 1,
        tok.end_line or tok.line or 1,
        tok.end_column or (tok.column or 1) + len(tok),
    )


# Numbers travel as 64-bit integers and doubles once they reach the checks' arrays; a literal beyond
# them would otherwise surface as an OverflowError there, or print back as `inf` from `fmt`.
MAX_INT = 2**63 - 1


def whole_number(digits: str) -> int | None:
    """The value of a whole number's digits (``_`` between them allowed), None past ``MAX_INT``."""
    digits = digits.replace("_", "")
    if len(digits.lstrip("0")) > 19 or int(digits) > MAX_INT:  # length first: int() of 5,000 digits is refused
        return None
    return int(digits)


def _number(tok: Token, file: str) -> int | float:
    digits = str(tok).replace("_", "")
    if tok.type == "INT":
        whole = whole_number(digits)
        if whole is None:
            raise CompileError(_out_of_range(tok, file, f"is larger than {MAX_INT:,}"))
        return whole
    value = float(digits)
    if math.isinf(value):
        raise CompileError(_out_of_range(tok, file, "is too large for a number (above 1.8e308)"))
    mantissa = re.split("[eE]", digits)[0]
    if value == 0 and mantissa.strip("0.") != "":
        raise CompileError(_out_of_range(tok, file, "is too small for a number and would read as 0"))
    return value


def _out_of_range(tok: Token, file: str, why: str) -> Diagnostic:
    return Diagnostic(
        C.NUMBER_OUT_OF_RANGE,
        f"the number `{tok}` {why}",
        _tok_span(file, tok),
        help="no field or knob comes near this; check the digits (`primusc explain P1016`)",
    )


def _unquote(tok: Token) -> str:
    """A string literal's value: ``\\"``, ``\\\\``, ``\\n`` and ``\\t`` are escapes (``ir.text.quote`` writes
    them); any other backslash stays as written (`"C:\\data"` is a path, not `C:data`)."""
    body = str(tok)[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m.group(1), m.group(0)), body)


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    def __init__(self, file: str) -> None:
        super().__init__()
        self.file = file

    def sp(self, meta: Any) -> Span | None:
        return _span(self.file, meta)

    # top level
    def start(self, meta: Any, items: list[Any]) -> list[Any]:
        return items

    def module_source(self, meta: Any, c: list[Any]) -> tuple[str, bool]:
        return c[0], False

    def path_source(self, meta: Any, c: list[Token]) -> tuple[str, bool]:
        return _unquote(c[0]), True

    def dotted_name(self, meta: Any, c: list[Token]) -> str:
        return ".".join(str(t) for t in c)

    def import_all(self, meta: Any, c: list[Token]) -> None:
        return None

    def import_list(self, meta: Any, c: list[Token]) -> tuple[tuple[str, ...], tuple[Span, ...]]:
        return tuple(str(t) for t in c), tuple(_tok_span(self.file, t) for t in c)

    def import_stmt(self, meta: Any, c: list[Any]) -> ast.Import:
        (source, is_path), listed = c
        names, spans = listed if listed is not None else (None, ())
        return ast.Import(source, is_path, names, self.sp(meta), spans)

    def def_kind(self, meta: Any, c: list[Token]) -> str:
        return str(c[0])

    def base(self, meta: Any, c: list[Token]) -> tuple[str, str]:
        return ("base", str(c[0]))

    def on_clause(self, meta: Any, c: list[Token]) -> tuple[str, str]:
        return ("on", str(c[0]))

    def definition(self, meta: Any, c: list[Any]) -> ast.Definition:
        kind, name, *rest = c
        body = rest[-1]
        opts = dict(rest[:-1])
        return ast.Definition(
            kind, str(name), body, opts.get("base"), opts.get("on"), _tok_span(self.file, name), self.sp(meta)
        )

    def block(self, meta: Any, c: list[Any]) -> ast.Block:
        return ast.Block(tuple(s for s in c if not isinstance(s, Token)), self.sp(meta))

    # statements
    def assign(self, meta: Any, c: list[Any]) -> ast.Assign:
        return ast.Assign(str(c[0]), c[1], self.sp(meta))

    def nested(self, meta: Any, c: list[Any]) -> ast.Nested:
        return ast.Nested(str(c[0]), c[1], self.sp(meta))

    def when_clause(self, meta: Any, c: list[Any]) -> Any:
        return c[0]

    def axis(self, meta: Any, c: list[Any]) -> ast.AxisStmt:
        return ast.AxisStmt(str(c[0]), c[1], c[2] if len(c) > 2 else None, self.sp(meta))

    def let_stmt(self, meta: Any, c: list[Any]) -> ast.LetStmt:
        return ast.LetStmt(str(c[0]), c[1], self.sp(meta))

    def require_stmt(self, meta: Any, c: list[Any]) -> ast.RequireStmt:
        return ast.RequireStmt(c[0], _unquote(c[1]) if len(c) > 1 else None, self.sp(meta))

    def headroom(self, meta: Any, c: list[Any]) -> ast.Quantity:
        q: ast.Quantity = c[0]
        return q

    def fits_stmt(self, meta: Any, c: list[Any]) -> ast.FitsStmt:
        return ast.FitsStmt(c[0] if c else None, self.sp(meta))

    def objective_stmt(self, meta: Any, c: list[Token]) -> ast.ObjectiveStmt:
        return ast.ObjectiveStmt(str(c[0]), str(c[1]), self.sp(meta))

    def budget_evals(self, meta: Any, c: list[Any]) -> ast.BudgetItem:
        return ast.BudgetItem("evals", c[0], self.sp(meta))

    def budget_time(self, meta: Any, c: list[Any]) -> ast.BudgetItem:
        return ast.BudgetItem("time", c[0], self.sp(meta))

    def budget_llm(self, meta: Any, c: list[Any]) -> ast.BudgetItem:
        return ast.BudgetItem("llm", c[0], self.sp(meta))

    def budget_cost(self, meta: Any, c: list[Any]) -> ast.BudgetItem:
        return ast.BudgetItem("cost", c[0], self.sp(meta))

    def budget_stmt(self, meta: Any, c: list[Any]) -> ast.BudgetStmt:
        return ast.BudgetStmt(tuple(c), self.sp(meta))

    def strategy_stmt(self, meta: Any, c: list[Token]) -> ast.StrategyStmt:
        return ast.StrategyStmt(str(c[0]), self.sp(meta))

    def target_stmt(self, meta: Any, c: list[Token]) -> ast.TargetStmt:
        return ast.TargetStmt(tuple(str(t) for t in c), self.sp(meta))

    def assume_stmt(self, meta: Any, c: list[Any]) -> ast.AssumeStmt:
        return ast.AssumeStmt(str(c[0]), c[1], self.sp(meta))

    # values
    def quantity(self, meta: Any, c: list[Token]) -> ast.Quantity:
        unit = str(c[1]) if len(c) > 1 else None
        return ast.Quantity(str(c[0]), _number(c[0], self.file), unit, self.sp(meta))

    def string(self, meta: Any, c: list[Token]) -> ast.Str:
        return ast.Str(_unquote(c[0]), self.sp(meta))

    def ident(self, meta: Any, c: list[Token]) -> ast.Ident:
        return ast.Ident(str(c[0]), self.sp(meta))

    def override(self, meta: Any, c: list[Any]) -> ast.Override:
        return ast.Override(str(c[0]), c[1], self.sp(meta))

    def times(self, meta: Any, c: list[Any]) -> ast.Times:
        return ast.Times(c[0], c[1], self.sp(meta))

    def call(self, meta: Any, c: list[Any]) -> ast.CallValue:
        return ast.CallValue(str(c[0]), tuple(c[1:]), self.sp(meta))

    def call_arg(self, meta: Any, c: list[Any]) -> ast.Arg:
        if len(c) == 2:
            return ast.Arg(str(c[0]), c[1], self.sp(meta))
        return ast.Arg(None, c[0], self.sp(meta))

    def domain(self, meta: Any, c: list[Any]) -> ast.Domain:
        return ast.Domain(tuple(self._as_value(a) for a in c), self.sp(meta))

    def range(self, meta: Any, c: list[Any]) -> ast.Range:
        nums = [self._as_quantity(t) for t in c]
        return ast.Range(nums[0], nums[1], nums[2] if len(nums) > 2 else None, self.sp(meta))

    def _as_quantity(self, t: Any) -> ast.Quantity:
        if isinstance(t, ast.Quantity):
            return t
        return ast.Quantity(str(t), _number(t, self.file), None, _tok_span(self.file, t))

    def _as_value(self, a: Any) -> Any:
        return self._as_quantity(a) if isinstance(a, Token) else a

    # expressions
    def or_op(self, meta: Any, c: list[Any]) -> Binary:
        return Binary("or", c[0], c[1], self.sp(meta))

    def and_op(self, meta: Any, c: list[Any]) -> Binary:
        return Binary("and", c[0], c[1], self.sp(meta))

    def not_op(self, meta: Any, c: list[Any]) -> Unary:
        return Unary("not", c[0], self.sp(meta))

    def compare(self, meta: Any, c: list[Any]) -> Binary:
        return Binary(str(c[1]), c[0], c[2], self.sp(meta))

    def in_op(self, meta: Any, c: list[Any]) -> Binary:
        return Binary("in", c[0], c[1], self.sp(meta))

    def binop(self, meta: Any, c: list[Any]) -> Binary:
        return Binary(str(c[1]), c[0], c[2], self.sp(meta))

    def neg(self, meta: Any, c: list[Any]) -> Unary:
        return Unary("-", c[0], self.sp(meta))

    def const(self, meta: Any, c: list[Token]) -> Const:
        return Const(_number(c[0], self.file), self.sp(meta))

    def const_days(self, meta: Any, c: list[Token]) -> Const:
        return Const(_number(c[0], self.file), self.sp(meta), str(c[1]))

    def const_string(self, meta: Any, c: list[Token]) -> Const:
        return Const(_unquote(c[0]), self.sp(meta))

    def var(self, meta: Any, c: list[Token]) -> Name | Const:
        text = str(c[0])
        if text in ("true", "false"):
            return Const(text == "true", self.sp(meta))
        return Name(text, self.sp(meta))

    def fcall(self, meta: Any, c: list[Any]) -> Call:
        return Call(str(c[0]), tuple(c[1:]), self.sp(meta))

    def tuple(self, meta: Any, c: list[Any]) -> Tuple_:
        return Tuple_(tuple(c), self.sp(meta))


# ---- error reporting -----------------------------------------------------------------------
_EXAMPLES: dict[str, list[str]] = {
    "unclosed": [
        "model m { a = 1",
        "model m { a = 1 moe { b = 2 }",
        "space s on c { tp : 1 | 2",
        "space s on c { require (tp > 1 }",
        "space s on c { require min(tp, 2 }",
        "model m { a = b {",
        "space s on c { x : full(layers: 1 .. 2 }",
        "space s on c { x : pow2(1 .. 8 }",
        "model m {",
        "import a.b (x",
    ],
    "equals_domain": [
        "space s on c { tp = 1 | 2 }",
        "space s on c { p = a | b }",
        "space s on c { tp = 1 .. 8 }",
        "space s on c { tp = 1 .. 8 step 2 }",
    ],
    "missing_value": [
        "model m { a = }",
        "model m { a = ; }",
        "space s on c { tp : }",
        "space s on c { tp : ; }",
        "model m { a = \n b = 1 }",
        "space s on c { tp : 1 | }",
        "space s on c { tp : 1 | ; }",
        "space s on c { tp : 1 when }",
        "space s on c { let x = }",
        "space s on c { require }",
    ],
    "top_level": [
        "a = 1",
        "tp : 1",
        "model m { } a = 1",
        "x { }",
    ],
    "import_list": [
        "import models.llama3 llama",
        "import models.llama3 model m { }",
        'import "./a.prx" a',
        "import models.llama3",
    ],
    "keyword": [
        "space s on c { require = 1 }",
        "space s on c { let = 1 }",
        "space s on c { budget = 1 }",
        "space s on c { strategy = 1 }",
        "space s on c { target = 1 }",
        "space s on c { assume : 1 }",
        "space s on c { fits = 1 }",
        "space s on c { maximize = 1 }",
        "space s on c { minimize = 1 }",
        "space s on c { let require = 1 }",
    ],
    "missing_name": [
        "model { }",
        "gpu { }",
        "cluster { }",
        "space on c { }",
        "space { }",
        "model = m { }",
    ],
}

_HINTS: dict[str, tuple[Any, str, str]] = {
    "unclosed": (C.UNCLOSED_BLOCK, "a block or parenthesis is not closed", "add the missing `}` or `)`"),
    "equals_domain": (
        C.EQUALS_FOR_DOMAIN,
        "several values after `=`",
        "`=` fixes one value; write `knob : a | b` to make the knob an axis",
    ),
    "missing_value": (
        C.MISSING_VALUE,
        "a value is missing here",
        "write a value, e.g. `num_layers = 32` or `tp : 1 | 2`",
    ),
    "top_level": (
        C.TOP_LEVEL_STATEMENT,
        "fields and axes belong inside a definition",
        "put it inside a `model`, `gpu`, `cluster` or `space` block",
    ),
    "import_list": (
        C.MISSING_IMPORT_LIST,
        "an import needs the list of names it takes, in parentheses",
        "write `import models.llama3 (llama3_1_70b)` or `(*)` for everything",
    ),
    "keyword": (
        C.KEYWORD_AS_NAME,
        "a keyword cannot be used as a name",
        "keywords (`let require fits budget strategy target assume maximize minimize`) start statements; "
        "rename the field or knob",
    ),
    "missing_name": (C.MISSING_NAME, "a definition needs a name", "write `model my_model { ... }`"),
}


def _with_preceding(examples: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each example also after an earlier definition and statement.

    Lark compares parser states including the stack depth, which grows by one once a file has a
    definition before the failing one, and once a block has a statement before the failing one.
    """
    out: dict[str, list[str]] = {}
    for label, texts in examples.items():
        more: list[str] = []
        for t in texts:
            inner = [t, t.replace("{ ", "{ a = 1; ", 1)] if "{ " in t else [t]
            for v in inner:
                more += [v, "model z { }\n" + v]
        out[label] = more
    return out


_ALL_EXAMPLES = _with_preceding(_EXAMPLES)


def _error_key(err: lark.exceptions.UnexpectedInput) -> tuple[Any, ...] | None:
    state = getattr(err, "state", None)
    if state is None:
        return None
    stack = getattr(state, "state_stack", None)
    return (type(err).__name__, getattr(state, "position", state), len(stack) if stack is not None else -1)


@functools.cache
def _example_errors() -> list[tuple[tuple[Any, ...], str, str, str]]:
    """Each labelled example's failure, computed once: (state key, token type, token text, label)."""
    parser = _parser()
    out = []
    for label, texts in _ALL_EXAMPLES.items():
        for text in texts:
            try:
                parser.parse(text)
            except lark.exceptions.UnexpectedInput as err:
                key = _error_key(err)
                tok = getattr(err, "token", None)
                if key is not None:
                    out.append((key, getattr(tok, "type", ""), str(tok) if tok is not None else "", label))
    return out


def _match(err: lark.exceptions.UnexpectedInput) -> str | None:
    """The label of the example that failed in the same parser state (same token first)."""
    key = _error_key(err)
    if key is None:
        return None
    tok = getattr(err, "token", None)
    same_state = [e for e in _example_errors() if e[0] == key]
    for _, ttype, text, label in same_state:
        if tok is not None and text == str(tok) and ttype == tok.type:
            return label
    for _, ttype, _, label in same_state:
        if tok is not None and ttype == tok.type:
            return label
    return same_state[0][3] if same_state else None


_NUMBER_WORD = re.compile(
    r"(?<![A-Za-z0-9_.])[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[ \t]*([A-Za-z%][A-Za-z/%]*)"
)
_GLUED_COUNT = re.compile(r"[0-9][0-9_]*[A-Z]")  # `15T`: a count as the lexer reads it
_ITERATIONS = {"iter", "iters", "iteration", "iterations", "its", "steps"}
# `30 days >= time_to_train`: the number, its unit and the comparison, to write the other way round
_DAYS_FIRST = re.compile(r"([0-9][0-9_.]*)\s*(days?)\s*(<=|>=|<|>|==|!=)\s*time_to_train")
_MIRRORED = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "==", "!=": "!="}
_NOT_UNITS = {"x", "step", "evals", "calls", "usd", "when", "and", "or", "in", "not"}
# a time's other units, in days, where a requirement on a run's time names them (0: no one length)
_TIME_IN_DAYS = {"s": 1 / 86_400, "sec": 1 / 86_400, "seconds": 1 / 86_400, "min": 1 / 1_440, "mins": 1 / 1_440,
                 "minutes": 1 / 1_440, "h": 1 / 24, "hr": 1 / 24, "hrs": 1 / 24, "hour": 1 / 24, "hours": 1 / 24,
                 "d": 1.0, "week": 7.0, "weeks": 7.0, "wk": 7.0, "wks": 7.0, "month": 0.0, "months": 0.0, "year": 0.0,
                 "years": 0.0}
# the field a number on a line is the value of: ``nodes = 16 Gb``, ``mbs : 2 kb``
_ASSIGNED = re.compile(r"(\w+)\s*[=:]\s*$")
_CURRENCIES = {"usd", "eur", "dollars", "dollar", "gbp", "cny", "jpy"}
_CURRENCY_SIGNS = set("$€£¥")
# words that count what a number before them is (a budget's evaluations, LLM calls, dollars)
_COUNTED = {"evals": "`evals` (a budget's evaluations)", "calls": "`calls` (LLM calls)", "usd": "`usd` (dollars)"}


def _lines_before(found: list[str], line: int) -> list[int]:
    """The error's line and the one with the statement before it (blank and comment lines between skipped):
    a word after a number starts what the parser reads as a new statement, which fails a line or more later."""
    ln = line - 1
    while 0 < ln <= len(found) and not found[ln - 1].split("#", 1)[0].strip():
        ln -= 1
    return [line, ln]


def _unit_slip(text: str, file: str, line: int) -> Diagnostic | None:
    """A number followed by a near-miss unit on the error's line or the statement before it."""
    found = lines(text)
    for ln in _lines_before(found, line):
        if not 0 < ln <= len(found):
            continue
        src = found[ln - 1].split("#", 1)[0]
        for m in _NUMBER_WORD.finditer(src):
            word = m.group(1)
            if word.lower() in _CURRENCIES and "price_per_hour" in src:
                col = m.start(1) + 1
                price = m.group(0)[: m.start(1) - m.start(0)].strip()
                return Diagnostic(
                    C.UNEXPECTED_TOKEN, f"`{word}` after a price: `price_per_hour` is a plain number",
                    Span(file, ln, col, ln, col + len(word)),
                    help=f"write the number alone (`price_per_hour = {price}`): costs are in whatever currency "
                         "the prices are, and only a budget's `cost ... usd` names one")
            flipped = _DAYS_FIRST.match(src, m.start()) if word in ("day", "days") else None
            if flipped is not None:
                # `30 days >= time_to_train`: the unit is read only on the right of the comparison
                fix = f"write `time_to_train {_MIRRORED[flipped.group(3)]} {flipped.group(1)} {flipped.group(2)}`"
                return Diagnostic(C.UNKNOWN_UNIT, f"`{m.group(0).strip()}` before `time_to_train`: a run's days are "
                                  "read after it", Span(file, ln, m.start(0) + 1, ln, m.end(1) + 1), help=fix)
            if word in ("day", "days") and "time_to_train" in src:
                continue  # `time_to_train <= 30 days` is right: the slip is elsewhere on the line
            if word.lower() in _ITERATIONS and "train_tokens" in src:
                return Diagnostic(C.UNKNOWN_UNIT, f"`{word}`: `train_tokens` counts tokens, not iterations",
                                  Span(file, ln, col := m.start(1) + 1, ln, col + len(word)),
                                  help="write the tokens: iterations x gbs x seq_len (`train_tokens = 15T`)")
            timed = word in _TIME_IN_DAYS and "time_to_train" in src
            if (word in UNITS or word in _NOT_UNITS) and not timed:
                continue
            col = m.start(1) + 1
            written = m.group(0).strip()
            whole = Span(file, ln, m.start(0) + 1, ln, m.end(1) + 1)
            number = float(m.group(0)[: m.start(1) - m.start(0)].replace("_", ""))
            if timed:
                per = _TIME_IN_DAYS[word]
                days = f"`{number * per:.4g} days`" if per else "the days"
                return Diagnostic(
                    C.UNKNOWN_UNIT, f"`{written}`: a run's time is counted in days", whole,
                    help=f"write {days} (`days` is the one unit a requirement on `time_to_train` takes)")
            if word in COUNT_SUFFIXES:
                if _GLUED_COUNT.fullmatch(written):
                    # `15T` reads as written; a word after it (`15T tokens`) starts a statement of its own
                    after = re.match(r"[ \t]+([A-Za-z]\w*)", src[m.end(1):])
                    if after is None or after.group(1) in _NOT_UNITS:
                        continue
                    at = m.end(1) + after.start(1) + 1
                    return Diagnostic(C.UNEXPECTED_TOKEN, f"`{after.group(1)}` after the count `{written}`",
                                      Span(file, ln, at, ln, at + len(after.group(1))),
                                      help=f"write the count alone (`{written}`): what it counts is the field's")
                # `1.5T`, `10 T`: a count's suffix is read only glued to a whole number (`15T`)
                value = number * COUNT_SUFFIXES[word]
                return Diagnostic(
                    C.UNEXPECTED_TOKEN, f"`{written}`: a count's suffix ({', '.join(COUNT_SUFFIXES)}) "
                    "follows a whole number with nothing between", whole,
                    help=f"write `{_as_count(value)}`, or the number in full (`{int(value):_}`)")
            keyword = difflib.get_close_matches(word, sorted(_COUNTED), n=1, cutoff=0.75)
            if keyword:
                # `budget 300 evls`: otherwise read as a new statement named `evls`, and reported
                # at the next line's first word
                return Diagnostic(
                    C.UNEXPECTED_TOKEN, f"`{word}` after a number is neither a unit nor {_COUNTED[keyword[0]]}",
                    Span(file, ln, col, ln, col + len(word)), help=f"did you mean `{keyword[0]}`?")
            target = _ASSIGNED.search(src[:m.start(0)])
            if target is not None and takes_no_unit(target.group(1)):
                return Diagnostic(
                    C.UNKNOWN_UNIT, f"`{target.group(1)}` takes no unit: `{word}` after its number",
                    Span(file, ln, col, ln, col + len(word)),
                    help=f"write the number alone (`{target.group(1)} = {m.group(0)[:m.start(1) - m.start(0)].strip()}`)")
            guess = suggest_unit(word)
            if "time_to_train" in src and word.lower() in ("d", "day", "days"):
                guess = "days"  # `30 Days`: a run's time, which only `days` measures
            if guess is None and difflib.get_close_matches(word, sorted(_NOT_UNITS), n=1, cutoff=0.75):
                continue  # `whne`: a slip of a keyword, which the parser's own error names better
            return Diagnostic(
                C.UNKNOWN_UNIT,
                f"unknown unit `{word}`",
                Span(file, ln, col, ln, col + len(word)),
                help=f"did you mean `{guess}`? units are case-sensitive (GB = 10^9 bytes, GiB = 2^30, Gbps = 10^9 bits a second)" if guess
                else "a run's time is in days (`time_to_train <= 30 days`)" if "time_to_train" in src
                else "a time is ns, us, ms, s, min or h; `primusc explain P1005` lists every unit",
            )
    return None


def _as_count(value: float) -> str:
    """A count as a whole number with the largest suffix that keeps it whole (1.5e12: ``1500B``)."""
    for name, scale in sorted(COUNT_SUFFIXES.items(), key=lambda kv: -kv[1]):
        if name != "G" and value >= scale and float(value / scale).is_integer():
            return f"{int(value / scale)}{name}"
    return f"{value:.6g}"


def _describe(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    return f"`{tok}`"


def _expected(names: set[str]) -> str:
    pretty = {
        "NAME": "a name",
        "INT": "a number",
        "FLOAT": "a number",
        "STRING": "a string",
        "RBRACE": "`}`",
        "LBRACE": "`{`",
        "EQUAL": "`=`",
        "COLON": "`:`",
        "RPAR": "`)`",
        "LPAR": "`(`",
        "UNIT": "a unit",
        "DAYS": "`days`",
        "VBAR": "`|`",
        "COMMA": "`,`",
    }
    words = sorted({pretty.get(n, "") for n in names} - {""})
    return ", ".join(words[:6])


_NEGATIVE = re.compile(r"-[ \t]*[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?")


def _negative(text: str, file: str, err: lark.exceptions.UnexpectedInput) -> Diagnostic | None:
    """A minus before a number where a value is written (``tp : -1``): the grammar has no negative
    values, so the parser stops at the `-`; say that rather than "a value is missing"."""
    tok = getattr(err, "token", None)
    pos = tok.start_pos if isinstance(tok, Token) and tok.type != "$END" else err.pos_in_stream
    if pos is None or not 0 <= pos < len(text):
        return None
    m = _NEGATIVE.match(text, pos)
    before = text[:pos].rstrip()[-1:]
    if m is None or before not in (":", "=", "|", "(", ",", "."):  # `1 - 2` is arithmetic, not a sign
        return None
    line = max(1, getattr(err, "line", 1) or 1)
    col = max(1, getattr(err, "column", 1) or 1)
    return Diagnostic(
        C.NEGATIVE_VALUE,
        f"a value cannot be negative (found `{m.group(0)}`)",
        Span(file, line, col, line, col + len(m.group(0))),
        help="counts, sizes, rates and assumptions are 0 or more; write the value without `-` "
             "(only expressions in `require`, `let` and `when` may subtract)",
    )


_BAR_LAST = re.compile(r"\|[ \t]*(?:#[^\n]*)?$")


def _dangling_bar(text: str, file: str, err: lark.exceptions.UnexpectedInput) -> Diagnostic | None:
    """An axis line that ends with `|` (`tp : 1 | 2 |`): the parser reads the next line's first word as the
    missing value and fails there, or at the `}`; say it at the `|`."""
    tok = getattr(err, "token", None)
    # at the end of file lark's position is that of the last token it read (the `|` of `1 | 2`): the text
    # before it would end in a `|` that has its value
    pos = tok.start_pos if isinstance(tok, Token) and tok.type != "$END" else len(text)
    before = lines(text[:pos])
    for ln in range(len(before), max(0, len(before) - 2), -1):  # the error's line and the one above it
        src = before[ln - 1]
        m = _BAR_LAST.search(src)
        if m is not None and src[:m.start()].strip():
            col = m.start() + 1
            rest = lines(text)[ln - 1][m.start() + 1:].split("#", 1)[0].strip()
            if rest:  # `1 | | 2`: the line goes on after the `|`, with another `|` where a value belongs
                return Diagnostic(C.UNEXPECTED_TOKEN, "a `|` with no value after it",
                                  Span(file, ln, col, ln, col + 1),
                                  help="remove one of the two `|`, or write the value between them")
            return Diagnostic(C.UNEXPECTED_TOKEN, "a `|` ends the line with no value after it",
                              Span(file, ln, col, ln, col + 1),
                              help="remove the trailing `|`, or write the value that follows it")
    return None


def _unclosed_brace(text: str, file: str, err: lark.exceptions.UnexpectedInput) -> Diagnostic | None:
    """The file ending inside a block: said at the `{` left open (the innermost), not at the end of file."""
    tok = getattr(err, "token", None)
    if not (isinstance(tok, Token) and tok.type == "$END" and "RBRACE" in set(getattr(err, "expected", ()))):
        return None
    open_at: list[tuple[int, int]] = []
    for ln, src in enumerate(lines(text), 1):
        quoted = False
        for col, ch in enumerate(src, 1):
            if ch == '"':
                quoted = not quoted
            elif quoted:
                continue
            elif ch == "#":
                break
            elif ch == "{":
                open_at.append((ln, col))
            elif ch == "}" and open_at:
                open_at.pop()
    if not open_at:
        return None
    ln, col = open_at[-1]
    return Diagnostic(C.UNCLOSED_BLOCK, "the file ends inside the block this `{` opens",
                      Span(file, ln, col, ln, col + 1), help="add its closing `}` after the block's last line")


# operators of other languages an expression may be written with, and the word the language has for each
_OTHER_LANGUAGES = {"&&": "and", "||": "or", "!": "not", "&": "and"}


_CHAINED = re.compile(r"([\w.]+)\s*(<=|>=|<|>)\s*([\w.]+)\s*(<=|>=|<|>)\s*([\w.]+)")
_MODULE_NAME = re.compile(r"^\s*(model|gpu|cluster)\s*=\s*([A-Za-z_][\w.]*?)\.(\w+)\s*(?:$|[{#])")
_DOTTED_VALUE = re.compile(r"^\s*assume\s+\w+\s*=\s*([A-Za-z_]\w*\.[\w.]*)")


# the words that start a statement: a near miss of one (`spce`, `maximise`) is named at the word
_STATEMENT_WORDS = ("import", "model", "gpu", "cluster", "space", "site", "let", "require", "fits", "budget",
                    "strategy", "target", "assume", "maximize", "minimize", "baseline", "passthrough", "run")
_FIRST_WORD = re.compile(r"[ \t]*([A-Za-z_]\w*)")
_COMPARISON = re.compile(r"^[ \t]*[A-Za-z_][\w.*+/() -]*(<=|>=|==|!=|<|>)")


def _keyword_slip(text: str, file: str, line: int) -> Diagnostic | None:
    """A statement whose first word, on the error's line, is a near miss of a keyword and no field's
    name (read as a field, it fails a word later)."""
    found = lines(text)
    m = _FIRST_WORD.match(found[line - 1]) if 0 < line <= len(found) else None
    word = m.group(1) if m else ""
    if not word or word in _STATEMENT_WORDS:
        return None
    if _COMPARISON.search(found[line - 1].split("#", 1)[0]) and m is not None:
        # `gpus <= 64`: a requirement without its keyword
        col = m.start(1) + 1
        return Diagnostic(C.UNEXPECTED_TOKEN, "a comparison on its own is not a statement",
                          Span(file, line, col, line, col + len(word)),
                          help=f"write `require {found[line - 1].split('#', 1)[0].strip()}`")
    if word in _field_names():
        return None
    close = difflib.get_close_matches(word, _STATEMENT_WORDS, n=1, cutoff=0.75)
    if not close or m is None:
        return None
    col = m.start(1) + 1
    return Diagnostic(C.UNEXPECTED_TOKEN, f"unknown statement `{word}`", Span(file, line, col, line, col + len(word)),
                      help=f"did you mean `{close[0]}`?")


@functools.cache
def _field_names() -> frozenset[str]:
    """Every name a block's field or a space's knob has: none of them is a slip of a keyword."""
    import attrs

    from primus_lang.ir.candidate import KNOBS
    from primus_lang.ir.space import BLOCK_CLASSES

    return frozenset(KNOBS) | {f.name for cls in BLOCK_CLASSES for f in attrs.fields(cls)}


def _token_slip(text: str, file: str, span: Span, token: str) -> Diagnostic | None:
    """What a token the grammar does not expect most likely means, where the line says: a chained
    comparison (`1 < tp < 4`), a dotted word left unquoted (`core_v0.19`)."""
    every = lines(text)
    src = every[span.line - 1] if 0 < span.line <= len(every) else ""
    chained = _CHAINED.search(src) if token in ("<", ">", "<=", ">=") else None
    if chained is not None:
        a, op1, b, op2, c = chained.groups()
        return Diagnostic(C.UNEXPECTED_TOKEN, f"unexpected `{token}`: comparisons do not chain", span,
                          help=f"write `{a} {op1} {b} and {b} {op2} {c}`")
    module = _MODULE_NAME.search(src) if token == "." else None
    if module is not None:
        field, where, name = module.groups()
        return Diagnostic(C.UNEXPECTED_TOKEN, f"`{where}.{name}`: a definition is written by its name alone, once imported", span,
                          help=f"import it from the module that defines it (`import MODULE ({name})`; docs/stdlib.md "
                               f"lists the stdlib's) and write `{field} = {name}`")
    dotted = _DOTTED_VALUE.search(src) if token == "." else None  # only where a setting takes text
    if dotted is not None:
        return Diagnostic(C.UNEXPECTED_TOKEN, f"unexpected `.` in `{dotted.group(1)}`: a name has no `.`", span,
                          help=f'a release or other text is a string: write `"{dotted.group(1)}"`')
    return None


def _syntax_error(text: str, file: str, err: lark.exceptions.UnexpectedInput) -> Diagnostic:
    line = max(1, getattr(err, "line", 1) or 1)
    col = max(1, getattr(err, "column", 1) or 1)
    # the sign first: `-5T` is a negative count, whatever its suffix is read as
    negative = _negative(text, file, err)
    if negative is not None:
        return negative
    # then what a slip looks like where the parser stopped: a unit, a trailing `|`, a block left open
    slip = (_unit_slip(text, file, line) or _keyword_slip(text, file, line) or _dangling_bar(text, file, err)
            or _unclosed_brace(text, file, err))
    if slip is not None:
        return slip
    label = _match(err)
    if isinstance(err, lark.exceptions.UnexpectedToken):
        tok = err.token
        width = max(1, len(str(tok))) if tok.type != "$END" else 1
        if tok.type == "$END":
            every = lines(text) or [""]
            line, col = len(every), len(every[-1]) + 1
        span = Span(file, line, col, line, col + width)
        if tok.type != "$END" and text[tok.start_pos:tok.start_pos + 2] == "||":
            return Diagnostic(C.UNEXPECTED_TOKEN, "unexpected `||`", Span(file, line, col, line, col + 2),
                              help="write `or`: the language's operators are words")
        slip = _token_slip(text, file, span, str(tok)) if tok.type != "$END" else None
        if slip is not None:
            return slip
        found = _describe(tok)
        expected = _expected(set(err.expected))
    else:
        span = Span(file, line, col, line, col + 1)
        pos = err.pos_in_stream
        ch = text[pos] if pos is not None and 0 <= pos < len(text) else "?"
        if ch == '"':
            return Diagnostic(
                C.UNCLOSED_STRING, "string is not closed on this line", span, help='add the closing `"`'
            )
        found = f"`{ch}`"
        expected = ""
        operator = _OTHER_LANGUAGES.get(text[pos:pos + 2] if pos is not None else "") or _OTHER_LANGUAGES.get(ch)
        if label is None:
            every = lines(text)
            if ch in _CURRENCY_SIGNS and 0 < line <= len(every) and "price_per_hour" in every[line - 1]:
                # `price_per_hour = 2.5$`: quoting it would make a string, which a price is not
                return Diagnostic(C.UNEXPECTED_CHARACTER, f"unexpected character {found}: `price_per_hour` is a plain "
                                  "number", span, help="remove it: costs are in whatever currency the prices are")
            return Diagnostic(
                C.UNEXPECTED_CHARACTER,
                f"unexpected character {found}",
                span,
                help=f"write `{operator}`: the language's operators are words" if operator
                else "remove it, or put the text in double quotes",
            )
    if label is not None:
        code, message, hint = _HINTS[label]
        return Diagnostic(code, f"{message} (found {found})", span, help=hint)
    hint = f"expected {expected}" if expected else "see docs/language.md for the syntax"
    return Diagnostic(C.UNEXPECTED_TOKEN, f"unexpected {found}", span, help=hint)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def read_source(path: Path, file: str) -> bytes:
    """The bytes of a source file, never more than ``MAX_BYTES + 1`` of them: a 20 GB file or
    ``/dev/zero`` is refused after reading that much, and a pipe or a device before reading at all
    (``/dev/zero`` never ends, a named pipe blocks until someone writes). ``OSError`` for a path that
    cannot be opened; the caller names it."""
    # opened without blocking and looked at through the descriptor: a file swapped for a FIFO between a
    # look at the path and the open would block the open (and the language server with it) for ever
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise CompileError(Diagnostic(
            C.NOT_A_FILE, f"`{file}` is {what}, not a source file",
            help="give the path of a .prx file; primusc does not read devices, pipes or folders",
        ))
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise CompileError(_too_large(file, max(len(data), st.st_size)))
    return data


def decode(data: bytes | str, file: str) -> str:
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise CompileError(_too_large(file, len(data)))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
            raise CompileError(
                Diagnostic(
                    C.NOT_TEXT,
                    f"`{file}` is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})",
                    Span(file, line, column, line, column + 1),
                    help="check the path; primusc reads .prx source files in UTF-8 (`iconv -t UTF-8` converts one)",
                )
            ) from None
    else:
        text = data
    if len(text) > MAX_BYTES:
        raise CompileError(_too_large(file, len(text)))
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    # a line may end in \r\n or a lone \r (an old Mac file): one spelling, so that a comment ends
    # where its line does and a span's line is the line an editor shows
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        raise CompileError(
            Diagnostic(C.NOT_TEXT, f"`{file}` contains NUL bytes: not a text file", help="check the path")
        )
    return text


def _too_large(file: str, size: int) -> Diagnostic:
    return Diagnostic(
        C.FILE_TOO_LARGE,
        f"`{file}` is {'at least ' if size == MAX_BYTES + 1 else ''}{size:,} bytes, more than the "
        f"{MAX_BYTES:,}-byte limit for a source file",
        help="check the path; recipe files are a few kilobytes",
    )


_CACHED_TEXT = 64 * 2**10  # the largest stdlib file is 11 KB


def parse(data: str | bytes, file: str = "<input>") -> ast.Module:
    """Parse one ``.prx`` text into a ``Module``; raise ``CompileError`` (P1) on any syntax error."""
    text = decode(data, file)
    SOURCES.add(file, text)
    if len(text) <= _CACHED_TEXT:
        return _parse_cached(text, file)
    return _parse_text(text, file)


def parse_by_item(data: str | bytes, file: str = "<input>") -> ast.Module:
    """``parse``, one top-level item (an import, a definition) at a time, each cached: a file edited
    again and again (in an editor) re-parses only the items whose text or first line changed. Any
    syntax error is reported as ``parse`` reports it, from the whole text."""
    text = decode(data, file)
    chunks = _items(text)
    if len(chunks) < 2:
        return parse(text, file)
    items: list[ast.Import | ast.Definition] = []
    comments: list[ast.Comment] = []
    try:
        for line, chunk in chunks:
            # padded to its first line, so every span is the whole text's
            part = _parse_item("\n" * line + chunk, file)
            items += part.items
            comments += part.comments
    except CompileError:
        return parse(text, file)
    SOURCES.add(file, text)
    return ast.Module(file, tuple(items), tuple(comments))


@functools.lru_cache(maxsize=4096)
def _parse_item(text: str, file: str) -> ast.Module:
    return _parse_text(text, file)


_STARTS = ("import", "model", "gpu", "cluster", "space", "site")


def _items(text: str) -> list[tuple[int, str]]:
    """The text cut before each line that starts a top-level item (0-based line, text), or one piece
    when the braces, parentheses and strings do not close where an item should start."""
    cuts: list[int] = []  # 0-based lines
    depth = 0
    lines = text.split("\n")
    for number, line in enumerate(lines):
        head = line.split(None, 1)[0] if line.strip() else ""
        if depth == 0 and head in _STARTS and line[:1] not in (" ", "\t"):
            cuts.append(number)
        code, open_string = code_of(line)
        if open_string:
            return [(0, text)]  # a string does not span lines: leave the error to the whole parse
        for ch in code:
            if ch in "{(":
                depth += 1
            elif ch in "})":
                depth -= 1
                if depth < 0:
                    return [(0, text)]
    if depth != 0 or not cuts:
        return [(0, text)]
    if cuts[0] != 0:
        cuts[0] = 0  # comments and blank lines before the first item go with it
    bounds = [*cuts, len(lines)]
    return [(a, "\n".join(lines[a:b]) + ("\n" if b < len(lines) else "")) for a, b in itertools.pairwise(bounds)]


@functools.lru_cache(maxsize=32)
def _parse_cached(text: str, file: str) -> ast.Module:
    """A process that compiles many times (the test suite, the fuzzer, an editor) reads the same
    stdlib files each time, and parsing them is most of a compilation's cost; a ``Module`` is frozen,
    so the same text in the same file can share one. Only small texts: an entry holds its tree."""
    return _parse_text(text, file)


def _parse_text(text: str, file: str) -> ast.Module:
    parser = _parser()
    _sink().clear()
    try:
        tree = parser.parse(text)
    except lark.exceptions.UnexpectedInput as err:
        raise CompileError(_syntax_error(text, file, err)) from None
    except RecursionError:
        raise CompileError(Diagnostic(C.EXPRESSION_TOO_DEEP, "the input nests too deeply to parse",
                                      _busiest_line(text, file), help=_DEEP_HELP)) from None
    finally:
        found = list(_sink())
        _sink().clear()
    comments = tuple(ast.Comment(str(t).rstrip(), t.line or 1, t.column or 1) for t in found)
    try:
        items = _ToAst(file).transform(tree)
    except lark.exceptions.VisitError as err:  # Lark wraps what a transformer method raises
        if isinstance(err.orig_exc, CompileError):
            raise err.orig_exc from None
        raise
    except RecursionError:
        raise CompileError(Diagnostic(C.EXPRESSION_TOO_DEEP, "the input nests too deeply",
                                      _busiest_line(text, file), help=_DEEP_HELP)) from None
    module = ast.Module(file, tuple(items), comments)
    _check_depth(module)
    return module


MAX_DEPTH = 200
_DEEP_HELP = f"expressions nest at most {MAX_DEPTH} levels of operators; split a long one with `let`"


_OPERATORS = re.compile(r"[-+*/%()<>=!]|\b(?:not|and|or)\b")


def _busiest_line(text: str, file: str) -> Span | None:
    """Where a recursion limit was hit, which no node's span can say: the line whose code holds the
    most operators and parentheses, the likeliest to nest that deep."""
    best, where = 0, None
    for number, line in enumerate(text.splitlines(), 1):
        code = code_of(line)[0]
        n = len(_OPERATORS.findall(code))
        if n > best:
            start = len(code) - len(code.lstrip()) + 1
            best, where = n, Span(file, number, start, number, len(code.rstrip()) + 1)
    return where


def _check_depth(module: ast.Module) -> None:
    for item in module.items:
        if not isinstance(item, ast.Definition):
            continue
        for st in item.body.stmts:
            expr = getattr(st, "expr", None) or getattr(st, "when", None)
            if expr is not None and depth(expr) > MAX_DEPTH:
                raise CompileError(
                    Diagnostic(
                        C.EXPRESSION_TOO_DEEP,
                        f"this expression nests more than {MAX_DEPTH} levels",
                        st.span,
                        help=_DEEP_HELP,
                    )
                )
