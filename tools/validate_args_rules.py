"""The refusals of Megatron-LM's ``validate_args`` a launch can be checked against before it runs.

``validate_args`` (megatron/training/arguments.py) stops a run at start with an ``assert`` on the parsed
arguments. Of its asserts, those whose condition and whose enclosing ``if`` tests only compare arguments
with constants (``args.X``, ``not``, ``and``/``or``, ``==``, ``in``, ``is None``, ``>``) are read here as
rules: *when* the enclosing tests hold, *require* the asserted test. A rule that reads an argument
``validate_args`` itself assigns anywhere is left out: the value the assert sees is then not the one the
launch wrote. Nothing is executed and no code is kept: each rule is a small JSON expression over
argparse dests (``primus_lang/frameworks/rules.py`` evaluates them), with the assert's message and line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from primus_lang.frameworks.rules import reads

Expr = dict[str, Any]

_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.In: "in", ast.NotIn: "not_in", ast.Is: "is", ast.IsNot: "is_not",
            ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le"}
_NOTHING = object()


def _is_arg(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args"


def _constant(node: ast.AST) -> Any:
    """A literal's value (lists and tuples of literals as lists), or ``_NOTHING``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int | float):
        return -node.operand.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [_constant(e) for e in node.elts]
        return _NOTHING if any(i is _NOTHING for i in items) else items
    return _NOTHING


def expression(node: ast.AST) -> Expr | None:
    """The JSON form of a test over ``args`` alone, or None where it reads anything else."""
    if _is_arg(node):
        assert isinstance(node, ast.Attribute)
        return {"arg": node.attr}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = expression(node.operand)
        return None if inner is None else {"not": inner}
    if isinstance(node, ast.BoolOp):
        parts = [expression(v) for v in node.values]
        if any(p is None for p in parts):
            return None
        return {"and" if isinstance(node.op, ast.And) else "or": parts}
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Attribute) \
            and _is_arg(node.left):
        op = _COMPARE.get(type(node.ops[0]))
        value = _constant(node.comparators[0])
        if op is None or value is _NOTHING:
            return None
        return {op: [node.left.attr, value]}
    return None


def _assigned(function: ast.FunctionDef, name: str = "args") -> set[str]:
    """The dests ``function`` assigns on its parameter ``name`` (``args.X = ...``, ``args.X += ...``,
    ``setattr(args, "X", ...)``; ``*`` for a ``setattr`` whose name is not a literal)."""
    out: set[str] = set()
    for node in ast.walk(function):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            out |= {n.attr for n in ast.walk(target) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.value.id == name}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name \
                and not _program_default(node):
            key = node.args[1] if len(node.args) > 1 else None
            out.add(key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "*")
    return out


Resolve = Callable[[str], str | None]  # a module's dotted name -> its source text (None: not found)


def _helpers_assign(tree: ast.Module, function: ast.FunctionDef, resolve: Resolve | None) -> set[str]:
    """The dests the functions ``validate_args`` hands ``args`` to assign on it (``load_retro_args(args)``),
    whether defined beside it or imported (``from megatron.training.utils import ...``, read with ``resolve``).
    A helper that sets a name it computes (a heterogeneous model's config) is taken to set only literal names:
    such helpers act in modes a pretraining launch does not use."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    imported = {alias.asname or alias.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom)
                and node.module for alias in node.names}
    out: set[str] = set()
    for call in (n for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        where = [i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == "args"]
        callee = call.func.id
        if not where or callee in ("setattr", "getattr", "hasattr", "print", "isinstance", "vars"):
            continue
        helper = local.get(callee)
        if helper is None and callee in imported and resolve is not None:
            text = resolve(str(imported[callee]))
            found = ast.parse(text) if text is not None else None
            helper = next((n for n in found.body if isinstance(n, ast.FunctionDef) and n.name == callee), None) \
                if found is not None else None
        if helper is None or where[0] >= len(helper.args.args):
            continue
        out |= _assigned(helper, helper.args.args[where[0]].arg) - {"*"}
    return out


def _program_default(call: ast.Call) -> bool:
    """``setattr(args, key, defaults[key])``: the training script's defaults, given only to arguments the
    command line left None (pretrain_gpt.py passes none, or the tokenizer type)."""
    value = call.args[2] if len(call.args) == 3 else None
    return isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == "defaults"


def _message(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant):
        text = str(node.value)
    elif isinstance(node, ast.JoinedStr):  # an f-string: its literal parts
        text = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    else:
        text = ""
    return " ".join(text.split())


def _walk(body: list[ast.stmt], when: list[Expr], out: list[dict[str, Any]]) -> None:
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = expression(stmt.test)
            if test is None:  # a test of something else: what holds under it is not known
                continue
            _walk(stmt.body, [*when, test], out)
            _walk(stmt.orelse, [*when, {"not": test}], out)
        elif isinstance(stmt, ast.Assert):
            require = expression(stmt.test)
            if require is not None:
                condition = None if not when else when[0] if len(when) == 1 else {"and": when}
                out.append({"when": condition, "require": require, "message": _message(stmt.msg),
                            "line": stmt.lineno})


def rules(source: str, resolve: Resolve | None = None) -> list[dict[str, Any]]:
    """The rules of ``validate_args`` in ``source`` (arguments.py's text), in the order it asserts them;
    ``resolve`` reads the modules it imports helpers from."""
    tree = ast.parse(source)
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "validate_args"), None)
    if function is None:
        return []
    found: list[dict[str, Any]] = []
    _walk(function.body, [], found)
    assigned = _assigned(function) | _helpers_assign(tree, function, resolve)
    if "*" in assigned:
        return []
    return [r for r in found if not (reads(r["when"]) | reads(r["require"])) & assigned]
