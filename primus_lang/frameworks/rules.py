"""What Megatron-LM's ``validate_args`` refuses at start, as the generated table ``frameworks/megatron/rules.json``
states it (tools/validate_args_rules.py): for a launch's arguments, the rules they break.

A rule is *when* (the asserts' enclosing tests) and *require* (the assert's test), each a small expression
over argparse dests. An argument the launch does not write has the value its framework gives it beneath
(Primus's preset), else its parser default at that version; an expression that reads an argument the
version's parser lacks, or orders (``>``, ``<=``) values that are not both numbers, is not judged (``None``):
a rule is broken only where both sides are known. A recipe's number written as text is compared as the
number the rule names; anything else is compared as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from attrs import frozen

from primus_lang.frameworks import megatron
from primus_lang.frameworks.table import load

Expr = dict[str, Any]
_ABSENT = object()


@frozen
class Rule:
    key: str  # the table's readable form: ``when fsdp_manual_registration: use_megatron_fsdp``
    when: Expr | None
    require: Expr
    message: str  # the assert's own message
    line: int  # in megatron/training/arguments.py at the version asked for

    @property
    def reads(self) -> frozenset[str]:
        return frozenset(reads(self.when) | reads(self.require))

    @property
    def condition(self) -> str:
        return describe(self.when)

    @property
    def requirement(self) -> str:
        return describe(self.require)

    def says(self) -> str:
        """The rule as a sentence's predicate: ``requires `use_megatron_fsdp` when `fsdp_manual_registration```."""
        return f"requires `{self.requirement}`" + ("" if self.when is None else f" when `{self.condition}`")

    def cite(self, version: str) -> str:
        """Where the rule is written: ``arguments.py:694 at core_v0.16``."""
        return f"megatron/training/arguments.py:{self.line} at {version}"

    def quoted(self, version: str) -> str:
        """Its message and where it is written (an assert without a message: where alone)."""
        return f"\"{self.message}\", {self.cite(version)}" if self.message else self.cite(version)


@functools.cache
def rules(version: str) -> tuple[Rule, ...]:
    """The rules Megatron-LM ``version`` (a name of frameworks/megatron's tables) asserts."""
    out = []
    for key, entry in load("megatron", "rules.json")["rules"].items():
        if version in entry["versions"]:
            out.append(Rule(key, entry["when"], entry["require"], entry["message"], entry["lines"][version]))
    return tuple(out)


def broken(arguments: Mapping[str, Any], version: str, beneath: Mapping[str, Any] | None = None) -> list[Rule]:
    """The rules ``arguments`` (argparse dest -> value) break at ``version``: an argument they do not set has
    its value in ``beneath`` (what a framework sets under a launch's own settings: Primus's preset), else the
    version's parser default."""
    value = _values(arguments, version, beneath)
    return [r for r in rules(version)
            if (r.when is None or _holds(r.when, value) is True) and _holds(r.require, value) is False]


def refused(settings: Mapping[str, Any], version: str) -> list[Rule]:
    """The rules of ``version`` that ``settings`` break whatever else a launch writes: those that read
    nothing but them (TE's fused cross entropy, refused from core_v0.18 on every launch)."""
    given = set(settings)
    return [r for r in broken(settings, version) if r.reads <= given]


def implied(arguments: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The values ``version`` leaves an argument no choice of beside ``arguments``, where it does not have
    them already: each rule whose *when* ``arguments`` make true and whose *require*, one argument equal to
    one value (Megatron-FSDP's ``ckpt_format == 'fsdp_dtensor'``), the argument or its parser default breaks;
    by argparse dest. A launch writes them rather than restate the fact."""
    value = _values(arguments, version, None)
    out: dict[str, Any] = {}
    for r in rules(version):
        ((op, arg),) = r.require.items()
        if op == "eq" and r.when is not None and reads(r.when) <= set(arguments) \
                and _holds(r.when, value) is True and _holds(r.require, value) is False:
            out[arg[0]] = arg[1]
    return out


def known(arguments: Mapping[str, Any], version: str, dests: Iterable[str],
          beneath: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The values ``dests`` have under ``arguments`` as ``broken`` reads them, those it knows."""
    value = _values(arguments, version, beneath)
    return {d: v for d in dests if (v := value(d)) is not _ABSENT}


def _values(arguments: Mapping[str, Any], version: str, beneath: Mapping[str, Any] | None) -> Callable[[str], Any]:
    defaults = _defaults(version)
    below = beneath or {}

    def value(dest: str) -> Any:
        if dest in arguments:
            return arguments[dest]
        if dest in below:
            return below[dest]
        return defaults.get(dest, _ABSENT)

    return value


@functools.cache
def _defaults(version: str) -> dict[str, Any]:
    """Each argparse dest's parser default at ``version``."""
    return {dest: flags[0].default for dest, flags in megatron.by_dest(version).items()}


def reads(expr: Expr | None) -> set[str]:
    """The argument dests an expression reads."""
    if expr is None:
        return set()
    ((op, arg),) = expr.items()
    if op == "arg":
        return {arg}
    if op == "not":
        return reads(arg)
    if op in ("and", "or"):
        return set().union(*(reads(p) for p in arg))
    return {arg[0]}


def _holds(expr: Expr, value: Any) -> bool | None:
    """Whether ``expr`` holds (None: not known) with ``value(dest)`` an argument's value."""
    ((op, arg),) = expr.items()
    if op == "arg":
        v = value(arg)
        return None if v is _ABSENT else bool(v)
    if op == "not":
        inner = _holds(arg, value)
        return None if inner is None else not inner
    if op in ("and", "or"):
        parts = [_holds(p, value) for p in arg]
        decided = op == "or"  # a true part decides an `or`, a false one an `and`
        if decided in parts:
            return decided
        return None if None in parts else not decided
    dest, const = arg
    v = value(dest)
    if v is _ABSENT:
        return None
    return _compare(op, _like(v, const), const)


def _like(v: Any, const: Any) -> Any:
    """``v`` as the kind of ``const`` where it is written as text (a recipe's ``"1"`` beside ``1``)."""
    kind = type(const[0]) if isinstance(const, list) and const else type(const)
    if isinstance(v, str) and kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            return v
    if isinstance(v, tuple):
        return list(v)
    return v


def _compare(op: str, v: Any, const: Any) -> bool | None:
    if op in ("is", "is_not"):
        same = v is None if const is None else v == const
        return same if op == "is" else not same
    if op in ("in", "not_in"):
        inside = v in const
        return inside if op == "in" else not inside
    if op in ("eq", "ne"):
        equal = v == const
        return equal if op == "eq" else not equal
    if isinstance(v, bool) or not isinstance(v, int | float) or not isinstance(const, int | float):
        return None
    return {"gt": v > const, "ge": v >= const, "lt": v < const, "le": v <= const}[op]


_SYMBOLS = {"eq": "==", "ne": "!=", "in": "in", "not_in": "not in", "is": "is", "is_not": "is not", "gt": ">",
            "ge": ">=", "lt": "<", "le": "<="}


def describe(expr: Expr | None) -> str:
    """An expression in words a user reads beside Megatron's flags (``fsdp_manual_registration``,
    ``not (use_legacy_models)``, ``ckpt_format == 'torch'``); the table keys rules by it."""
    if expr is None:
        return "always"
    ((op, arg),) = expr.items()
    if op == "arg":
        return str(arg)
    if op == "not":
        return f"not ({describe(arg)})"
    if op in ("and", "or"):
        return f" {op} ".join(f"({describe(p)})" for p in arg)
    return f"{arg[0]} {_SYMBOLS[op]} {arg[1]!r}"
