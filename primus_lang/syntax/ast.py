"""The syntax tree of a ``.prx`` file: frozen nodes that keep their source spans.

Expressions reuse the IR's expression classes (``primus_lang.ir.space``): they already carry spans
and lowering passes them through unchanged. Comments are kept beside the tree, not in it, so the
formatter can put them back without every node knowing about them.
"""

from __future__ import annotations

from attrs import field, frozen

from primus_lang.ir.expr import Expr
from primus_lang.ir.span import Span


@frozen
class Quantity:
    """A number with an optional unit, as written (``text`` keeps ``1_000`` for the formatter)."""

    text: str
    value: int | float
    unit: str | None = None
    span: Span | None = field(default=None, eq=False)


@frozen
class Str:
    value: str
    span: Span | None = field(default=None, eq=False)


@frozen
class Ident:
    """A bare name: an enum value, ``true``/``false``, or a reference to a definition."""

    name: str
    span: Span | None = field(default=None, eq=False)


@frozen
class Override:
    """``base { field = value ... }``: a reference with fields replaced."""

    base: str
    body: Block
    span: Span | None = field(default=None, eq=False)


@frozen
class Times:
    """``8 x 400 Gbps``: a count of identical things, each of the given quantity."""

    count: Quantity
    each: Quantity
    span: Span | None = field(default=None, eq=False)


@frozen
class CallValue:
    """``full(layers: 0 .. 80 step 4, method: uniform)`` or ``pow2(1 .. 8)``."""

    func: str
    args: tuple[Arg, ...]
    span: Span | None = field(default=None, eq=False)


@frozen
class Arg:
    key: str | None
    domain: Domain
    span: Span | None = field(default=None, eq=False)


@frozen
class Range:
    """``lo .. hi [step s]``: inclusive integer range."""

    lo: Quantity
    hi: Quantity
    step: Quantity | None = None
    span: Span | None = field(default=None, eq=False)


Value = Quantity | Str | Ident | Override | Times | CallValue
Alt = Value | Range


@frozen
class Domain:
    alts: tuple[Alt, ...]
    span: Span | None = field(default=None, eq=False)


# --- statements -------------------------------------------------------------------------------
@frozen
class Assign:
    name: str
    value: Value
    span: Span | None = field(default=None, eq=False)


@frozen
class Nested:
    name: str
    body: Block
    span: Span | None = field(default=None, eq=False)


@frozen
class AxisStmt:
    name: str
    domain: Domain
    when: Expr | None = None
    span: Span | None = field(default=None, eq=False)


@frozen
class LetStmt:
    name: str
    expr: Expr
    span: Span | None = field(default=None, eq=False)


@frozen
class RequireStmt:
    expr: Expr
    message: str | None = None
    span: Span | None = field(default=None, eq=False)


@frozen
class FitsStmt:
    headroom: Quantity | None = None
    span: Span | None = field(default=None, eq=False)


@frozen
class ObjectiveStmt:
    sense: str
    metric: str
    span: Span | None = field(default=None, eq=False)


@frozen
class BudgetItem:
    kind: str  # evals | time | llm | cost
    amount: Quantity
    span: Span | None = field(default=None, eq=False)


@frozen
class BudgetStmt:
    items: tuple[BudgetItem, ...]
    span: Span | None = field(default=None, eq=False)


@frozen
class StrategyStmt:
    name: str
    span: Span | None = field(default=None, eq=False)


@frozen
class TargetStmt:
    names: tuple[str, ...]
    span: Span | None = field(default=None, eq=False)


@frozen
class AssumeStmt:
    name: str
    value: Value
    span: Span | None = field(default=None, eq=False)


Stmt = (
    Assign
    | Nested
    | AxisStmt
    | LetStmt
    | RequireStmt
    | FitsStmt
    | ObjectiveStmt
    | BudgetStmt
    | StrategyStmt
    | TargetStmt
    | AssumeStmt
)


@frozen
class Block:
    stmts: tuple[Stmt, ...]
    span: Span | None = field(default=None, eq=False)


# --- top level --------------------------------------------------------------------------------
@frozen
class Import:
    """``import models.llama3 (a, b)`` (``path`` False) or ``import "./x.prx" (*)`` (``names`` None)."""

    source: str
    path: bool
    names: tuple[str, ...] | None
    span: Span | None = field(default=None, eq=False)
    name_spans: tuple[Span, ...] = field(default=(), eq=False)


DEF_KINDS = ("model", "gpu", "cluster", "space", "site")


@frozen
class Definition:
    kind: str  # model | gpu | cluster | space | site
    name: str
    body: Block
    base: str | None = None
    on: str | None = None
    name_span: Span | None = field(default=None, eq=False)
    span: Span | None = field(default=None, eq=False)


@frozen
class Comment:
    text: str
    line: int
    column: int


@frozen
class Module:
    file: str
    items: tuple[Import | Definition, ...]
    comments: tuple[Comment, ...] = ()
