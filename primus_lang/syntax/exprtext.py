"""Expressions back to source text, with the fewest parentheses that keep their meaning."""

from __future__ import annotations

from primus_lang.ir.space import Binary, Call, Const, Expr, Name, Tuple_, Unary


def quote(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


def to_text(e: Expr, quote_strings: bool = False) -> str:
    """Source-like text of an expression (fully parenthesised where nesting is ambiguous)."""
    if isinstance(e, Const):
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        if isinstance(e.value, str):
            return quote(e.value) if quote_strings else e.value
        return str(e.value)
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Unary):
        inner = to_text(e.operand, quote_strings)
        # `-` takes a factor, so `-(not x)` keeps its parentheses (`-not x` does not parse)
        wrap = isinstance(e.operand, Binary) or (e.op == "-" and isinstance(e.operand, Unary) and e.operand.op == "not")
        inner = f"({inner})" if wrap else inner
        return f"not {inner}" if e.op == "not" else f"-{inner}"
    if isinstance(e, Binary):
        mine = _prec(e.op)

        def side(x: Expr, right: bool) -> str:
            if e.op == "in" and right and isinstance(x, Binary | Unary):
                return f"({to_text(x, quote_strings)})"  # `in` takes an atom: `x in (1 + 0)`, not `x in 1 + 0`
            if isinstance(x, Unary) and x.op == "not" and mine > 3:
                return f"({to_text(x, quote_strings)})"
            if not isinstance(x, Binary):
                return to_text(x, quote_strings)
            theirs = _prec(x.op)
            # same level: left-associative arithmetic keeps the left side bare; comparisons never chain
            wrap = theirs < mine or (theirs == mine and (right or mine == 4))
            return f"({to_text(x, quote_strings)})" if wrap else to_text(x, quote_strings)

        return f"{side(e.left, False)} {e.op} {side(e.right, True)}"
    if isinstance(e, Call):
        return f"{e.func}({', '.join(to_text(a, quote_strings) for a in e.args)})"
    if isinstance(e, Tuple_):
        return (
            "("
            + ", ".join(to_text(a, quote_strings) for a in e.items)
            + ("," if len(e.items) == 1 else "")
            + ")"
        )
    return repr(e)


_PRECEDENCE = {"or": 1, "and": 2, "in": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}


def _prec(op: str) -> int:
    return _PRECEDENCE.get(op, 4)
