"""Lazy enumeration of a space and legality counting without materialising it.

Points are enumerated in chunks of numpy columns, first axis slowest. A conditional axis gets one
extra "default" slot: a row is kept when the condition holds and the axis takes a real value, or the
condition fails and it takes the default slot — so each point appears exactly once.

Counting uses the rules' declared dependencies: a rule that reads ``tp`` and ``pp`` is judged over
the product of those two axes (closed under the conditions that link them to others) and the count
is multiplied by the size of the rest. The total of legal points factorises over the connected
components of the rules' dependency sets.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from attrs import frozen

from primus_lang.check.evaluate import evaluate, to_text
from primus_lang.check.frame import (
    DEFAULTS,
    Frame,
    columns_of,
    constant_columns,
    frame_of,
    knob_deps,
)
from primus_lang.check.rules import RULES, Rule
from primus_lang.diagnostics import codes_legality as L
from primus_lang.ir.candidate import KNOBS, Candidate, Recompute
from primus_lang.ir.space import Axis, Constraint, Space
from primus_lang.lower.names import names_in

CHUNK = 1 << 17


@frozen
class Violation:
    code: str
    rule: str
    message: str
    help: str = ""


@frozen
class RuleCount:
    code: str
    rule: str
    removed: int
    detail: str = ""  # the require's message or expression


@frozen
class LegalitySummary:
    space: str
    raw: int
    rules: tuple[RuleCount, ...]
    legal: int
    seconds: float


# ---- checks: Megatron rules and the space's requires, one interface -----------------------------
@frozen
class _Check:
    code: str
    name: str
    detail: str
    knobs: frozenset[str]
    rule: Rule | None = None
    constraint: Constraint | None = None

    def ok(self, frame: Frame, space: Space) -> Any:
        if self.rule is not None:
            return self.rule.ok(frame, space)
        assert self.constraint is not None
        return evaluate(self.constraint.expr, frame)


def _checks(space: Space) -> list[_Check]:
    out = [_Check(r.code.id, r.code.name, r.code.summary, frozenset(r.reads), rule=r) for r in RULES]
    for c in space.constraints:
        detail = c.message or f"require {to_text(c.expr)}"
        deps = frozenset(knob_deps(space, names_in(c.expr)))
        out.append(_Check(L.REQUIRE_FAILED.id, L.REQUIRE_FAILED.name, detail, deps, constraint=c))
    return out


# ---- enumeration --------------------------------------------------------------------------------
def _axes(space: Space, names: set[str] | None = None) -> list[Axis]:
    return [a for a in space.axes if names is None or a.name in names]


def _slots(axis: Axis) -> int:
    return len(axis.domain.values) + (1 if axis.when is not None else 0)


def _chunks(space: Space, axes: list[Axis], chunk: int = CHUNK) -> Iterator[tuple[Frame, Any]]:
    """(frame, valid-mask) chunks over the product of ``axes``; other knobs fixed or default."""
    sizes = [_slots(a) for a in axes]
    total = math.prod(sizes)
    const = constant_columns(space, {a.name for a in axes})
    values = []
    for a in axes:
        vals = list(a.domain.values) + ([DEFAULTS[a.name]] if a.when is not None else [])
        values.append(columns_of(a.name, vals))
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(axes))]
    for start in range(0, total, chunk):
        idx = np.arange(start, min(total, start + chunk), dtype=np.int64)
        cols: dict[str, Any] = dict(const)
        digits = []
        for i in range(len(axes)):
            d = (idx // strides[i]) % sizes[i]
            digits.append(d)
            for col, arr in values[i].items():
                cols[col] = arr[d]
        frame = Frame(space, cols, len(idx))
        valid = np.ones(len(idx), dtype=bool)
        for i, a in enumerate(axes):
            if a.when is None:
                continue
            cond = np.broadcast_to(np.asarray(evaluate(a.when, frame), dtype=bool), idx.shape)
            is_default = digits[i] == len(a.domain.values)
            valid &= np.where(cond, ~is_default, is_default)
        yield frame, valid


def _closure(space: Space, knobs: set[str]) -> set[str]:
    """The axes to enumerate together with ``knobs`` so that every condition can be decided."""
    names = {a.name for a in space.axes}
    group = set(knobs) & names
    conds = {a.name: knob_deps(space, names_in(a.when)) & names for a in space.axes if a.when is not None}
    changed = True
    while changed:
        changed = False
        for axis, deps in conds.items():
            if axis in group and not deps <= group:
                group |= deps
                changed = True
            elif axis not in group and deps & group:
                group |= deps | {axis}
                changed = True
    return group


def _count(space: Space, names: set[str]) -> int:
    """Raw points over the axes ``names`` (closed under conditions)."""
    conditional = {a.name for a in space.axes if a.name in names and a.when is not None}
    linked = _closure(space, conditional) & names if conditional else set()
    free = math.prod(len(a.domain.values) for a in space.axes if a.name in names and a.name not in linked)
    if not linked:
        return free
    counted = sum(int(valid.sum()) for _, valid in _chunks(space, _axes(space, linked)))
    return free * counted


def raw_size(space: Space) -> int:
    """How many points the space holds, computed without enumerating the unconditional axes."""
    return _count(space, {a.name for a in space.axes})


def _mask(check: _Check, frame: Frame, space: Space) -> Any:
    return np.broadcast_to(np.asarray(check.ok(frame, space), dtype=bool), (frame.size,))


def _candidates(space: Space, frame: Frame, rows: Any) -> Iterator[Candidate]:
    picked = np.flatnonzero(rows)
    if not len(picked):
        return
    lists: dict[str, list[Any]] = {}
    for name in [*KNOBS, "recompute_layers", "recompute_method"]:
        lists[name] = np.broadcast_to(frame[name], (frame.size,))[picked].tolist()
    kinds, layers, methods = (
        lists.pop("recompute"),
        lists.pop("recompute_layers"),
        lists.pop("recompute_method"),
    )
    names = list(lists)
    for i, values in enumerate(zip(*lists.values(), strict=True)):
        kw = dict(zip(names, values, strict=True))
        yield Candidate(**kw, recompute=Recompute(kinds[i], layers[i], methods[i]))


def raw_points(space: Space) -> Iterator[Candidate]:
    """Every point of the space, lazily, first axis slowest."""
    for frame, valid in _chunks(space, list(space.axes)):
        yield from _candidates(space, frame, valid)


def legal_points(space: Space) -> Iterator[Candidate]:
    """The points that pass every legality rule and every ``require``, lazily."""
    checks = _checks(space)
    for frame, valid in _chunks(space, list(space.axes)):
        keep = valid.copy()
        for check in checks:
            keep &= _mask(check, frame, space)
            if not keep.any():
                break
        yield from _candidates(space, frame, keep)


def legality(space: Space, cand: Candidate) -> list[Violation]:
    """Every rule and ``require`` that ``cand`` breaks, each with a message naming the values."""
    frame = frame_of(space, [cand])
    env = ScalarView(frame)
    out: list[Violation] = []
    for check in _checks(space):
        if bool(_mask(check, frame, space)[0]):
            continue
        if check.rule is not None:
            message, help = check.rule.explain(env, space)
        else:
            assert check.constraint is not None
            message, help = _explain_require(check.constraint, env)
        out.append(Violation(check.code, check.name, message, help))
    return out


def _explain_require(c: Constraint, env: ScalarView) -> tuple[str, str]:
    values = ", ".join(f"{n} = {env[n]}" for n in sorted(names_in(c.expr)))
    text = to_text(c.expr)
    message = f"{c.message} (`{text}`)" if c.message else f"`{text}` is false"
    return message, f"here {values}" if values else "the constraint holds for no point"


class ScalarView(Mapping[str, Any]):
    """A frame of one point read as Python scalars (for messages and ``environment``)."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame

    def __iter__(self) -> Iterator[str]:
        return iter(self.frame)

    def __len__(self) -> int:
        return len(self.frame)

    def __getitem__(self, name: str) -> Any:
        v = self.frame[name]
        arr = np.asarray(v)
        item = arr.reshape(-1)[0].item() if arr.size else None
        if isinstance(item, bool):
            return "true" if item else "false"
        return item


def environment(space: Space, cand: Candidate) -> dict[str, Any]:
    """Every name an expression of ``space`` can read, evaluated for ``cand``."""
    from primus_lang.lower.names import DERIVED, MODEL_FACTS

    frame = frame_of(space, [cand])
    out: dict[str, Any] = {}
    for name in [*KNOBS, *DERIVED, *MODEL_FACTS, *(let.name for let in space.lets)]:
        if name == "recompute":
            out[name] = cand.recompute
            continue
        v = np.asarray(frame[name]).reshape(-1)[0].item()
        out[name] = v
    return out


# ---- counting -----------------------------------------------------------------------------------
def summarize(space: Space) -> LegalitySummary:
    """Raw size, how many points each check removes, and how many remain, without enumerating all."""
    start = time.perf_counter()
    all_axes = {a.name for a in space.axes}
    raw = raw_size(space)
    checks = _checks(space)
    groups = [_closure(space, set(c.knobs)) for c in checks]
    counts = []
    for check, group in zip(checks, groups, strict=True):
        rest = _count(space, all_axes - group)
        failed = 0
        for frame, valid in _chunks(space, _axes(space, group)):
            failed += int((valid & ~_mask(check, frame, space)).sum())
        counts.append(RuleCount(check.code, check.name, failed * rest, check.detail))
    legal = _legal_count(space, checks, groups)
    return LegalitySummary(space.name, raw, tuple(counts), legal, time.perf_counter() - start)


def _legal_count(space: Space, checks: list[_Check], groups: list[set[str]]) -> int:
    all_axes = {a.name for a in space.axes}
    # merge the checks' axis groups (and the conditions' own groups) into connected components
    components: list[set[str]] = []
    for g in [*groups, *(_closure(space, {a.name}) for a in space.axes if a.when is not None)]:
        merged = set(g)
        for comp in [c for c in components if c & merged]:
            merged |= comp
            components.remove(comp)
        components.append(merged)
    total = 1
    covered: set[str] = set()
    constant_ok = True
    for comp in components:
        covered |= comp
        mine = [c for c, g in zip(checks, groups, strict=True) if g and g <= comp]
        if not comp:
            continue
        n = 0
        for frame, valid in _chunks(space, _axes(space, comp)):
            keep = valid.copy()
            for check in mine:
                keep &= _mask(check, frame, space)
            n += int(keep.sum())
        total *= n
    # checks that read no axis at all hold everywhere or nowhere
    for check, group in zip(checks, groups, strict=True):
        if not group:
            frame = next(_chunks(space, []))[0]
            constant_ok = constant_ok and bool(_mask(check, frame, space)[0])
    free = math.prod(len(a.domain.values) for a in space.axes if a.name in all_axes - covered)
    return total * free if constant_ok else 0


def require_legal(space: Space, summary: LegalitySummary) -> None:
    """Raise a P4 diagnostic when the space has points but none of them is legal."""
    if summary.legal or not summary.raw:
        return
    from primus_lang.diagnostics import CompileError, Diagnostic, lookup

    first = next(raw_points(space))
    violations = {v.code: v for v in legality(space, first)}
    out: list[Diagnostic] = []
    for count in summary.rules:
        if count.removed != summary.raw:
            continue
        code = lookup(count.code)
        v = violations.get(count.code)
        if code is None or v is None:
            continue
        out.append(
            Diagnostic(
                code, f"no point of space `{space.name}` is legal: {v.message}", space.span, help=v.help
            )
        )
    if not out:
        worst = sorted(summary.rules, key=lambda r: -r.removed)[:3]
        listed = ", ".join(f"{r.code} {r.rule} removes {r.removed:,}" for r in worst if r.removed)
        out.append(
            Diagnostic(
                L.NO_LEGAL_POINT,
                f"no point of space `{space.name}` is legal ({summary.raw:,} raw points)",
                space.span,
                help=f"widen the axes these rules involve: {listed}",
            )
        )
    raise CompileError(out)
