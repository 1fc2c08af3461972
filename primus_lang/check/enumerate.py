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

import itertools
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from primus_lang.check.evaluate import evaluate
from primus_lang.check.frame import (
    DEFAULTS,
    Frame,
    columns_of,
    constant_columns,
    frame_of,
    knob_deps,
)
from primus_lang.check.rules import RULES, Rule
from primus_lang.diagnostics import CompileError, Diagnostic, record_code
from primus_lang.diagnostics import codes_legality as L
from primus_lang.diagnostics.codes_types import BAD_ENUM, OUT_OF_RANGE, WRONG_TYPE
from primus_lang.ir.candidate import KNOBS, Candidate, format_value
from primus_lang.ir.checked import problem_of
from primus_lang.ir.expr import DERIVED, MODEL_FACTS, names_in, to_text
from primus_lang.ir.space import Axis, Constraint, Space

CHUNK = 1 << 17
# bounds that keep every command on a hostile space to seconds and well under a gigabyte
MAX_TABLE = 1 << 22  # cells of one rule's (or condition's) 0/1 table while counting
MAX_WALK = 1 << 22  # slots a walk over the space visits (values of its axes multiplied)
MAX_POINTS = 1 << 18  # legal points a search or `check`'s memory walk holds at once (~1 KiB each)


@frozen
class Violation:
    code: str
    rule: str
    message: str
    help: str = ""

    def __attrs_post_init__(self) -> None:
        record_code(self.code)  # a legality code is produced as a violation (a no-op outside the tests)


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


# the rules of a parallel layout's shape: the GPUs it takes, how it splits the batch, the heads, the layers and
# the experts; the others are the rules of one framework (Megatron's argument checks), at its release
SHAPE_RULES = frozenset(c.id for c in (L.WORLD_DIVISIBILITY, L.BATCH_DIVISIBILITY, L.HEADS_TP, L.QUERY_GROUPS_TP,
                                       L.PIPELINE_SPLIT, L.EXPERTS_EP, L.EP_NEEDS_MOE, L.EXPERT_WORLD))


def _checks(space: Space) -> list[_Check]:
    out = [_Check(r.code.id, r.code.name, r.code.summary, frozenset(r.reads), rule=r) for r in RULES]
    for c in space.constraints:
        deps = frozenset(knob_deps(space, names_in(c.expr)))
        out.append(_Check(L.REQUIRE_FAILED.id, L.REQUIRE_FAILED.name, _require_detail(c), deps, constraint=c))
    return out


def _require_detail(c: Constraint) -> str:
    """How a count names a `require`: its message, or its expression."""
    return c.message or f"require {to_text(c.expr)}"


# ---- enumeration --------------------------------------------------------------------------------
def _axes(space: Space, names: set[str] | None = None) -> list[Axis]:
    return [a for a in space.axes if names is None or a.name in names]


def _slots(axis: Axis) -> int:
    return len(axis.domain.values) + (1 if axis.when is not None else 0)


def too_large(space: Space, message: str, limit: int) -> CompileError:
    """P4190 at the space: ``message`` says what is too large, ``limit`` what primusc takes."""
    widest = sorted(space.axes, key=lambda a: -len(a.domain.values))[:3]
    named = ", ".join(f"`{a.name}` ({len(a.domain.values):,} values)" for a in widest)
    return CompileError(
        Diagnostic(
            L.SPACE_TOO_LARGE,
            f"{message}, more than the {limit:,} primusc takes",
            space.span,
            help="fix more knobs, take fewer values on the widest axes"
            + (f" ({named})" if named else "")
            + " or split the space into several",
        )
    )


def walk_size(space: Space) -> int:
    """The slots a walk over the whole space visits (a conditional axis has one more)."""
    return math.prod(_slots(a) for a in space.axes)


def _walk_message(space: Space, n: int) -> str:
    """What a walk of ``n`` slots is, where conditions leave far fewer points than it visits."""
    said = f"walking space `{space.name}` visits {n:,} combinations of its axes' values"
    if any(a.when is not None for a in space.axes):
        # the walk does not skip what a condition turns off: a user counting points reads the raw size
        said += (f" (every axis's values multiplied, a conditional axis counting one more whatever its condition; "
                 f"{raw_size(space):,} of them are points)")
    return said


def require_walkable(space: Space, legal: int | None = None) -> None:
    """Raise P4190 when walking ``space`` (or holding its ``legal`` points) would not end quickly."""
    if (n := walk_size(space)) > MAX_WALK:
        raise too_large(space, _walk_message(space, n), MAX_WALK)
    if legal is not None and legal > MAX_POINTS:
        raise too_large(space, f"space `{space.name}` has {legal:,} legal points to search", MAX_POINTS)


def _chunks(space: Space, axes: list[Axis], chunk: int = CHUNK) -> Iterator[tuple[Frame, Any]]:
    """(frame, valid-mask) chunks over the product of ``axes``; other knobs fixed or default."""
    sizes = [_slots(a) for a in axes]
    total = math.prod(sizes)
    if total > MAX_WALK:
        raise too_large(space, _walk_message(space, total), MAX_WALK)
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


def _grid(space: Space, axes: list[Axis]) -> tuple[Frame, list[Any]]:
    """The full product of ``axes`` (default slots included), with each row's slot per axis."""
    sizes = [_slots(a) for a in axes]
    total = math.prod(sizes)
    if total > MAX_TABLE:
        names = ", ".join(f"`{a.name}`" for a in axes)
        raise too_large(space, f"counting space `{space.name}` judges a rule over {names} together: "
                        f"{total:,} combinations", MAX_TABLE)
    digits = list(np.unravel_index(np.arange(total, dtype=np.int64), sizes)) if axes else []
    cols: dict[str, Any] = constant_columns(space, {a.name for a in axes})
    for a, d in zip(axes, digits, strict=True):
        vals = list(a.domain.values) + ([DEFAULTS[a.name]] if a.when is not None else [])
        for col, arr in columns_of(a.name, vals).items():
            cols[col] = arr[d]
    return Frame(space, cols, total), digits


Factor = tuple[tuple[str, ...], Any]  # axis names, an int64 tensor over their slots


def _reads(space: Space, knobs: set[str] | frozenset[str]) -> list[Axis]:
    return [a for a in space.axes if a.name in knobs]


def _validity(space: Space) -> list[Factor]:
    """One factor per conditional axis: 1 where its slot agrees with its condition."""
    out: list[Factor] = []
    for a in space.axes:
        if a.when is None:
            continue
        deps = knob_deps(space, names_in(a.when)) - {a.name}
        axes = [a, *_reads(space, deps)]
        frame, digits = _grid(space, axes)
        cond = np.broadcast_to(np.asarray(evaluate(a.when, frame), dtype=bool), (frame.size,))
        is_default = digits[0] == len(a.domain.values)
        ok = np.where(cond, ~is_default, is_default)
        out.append((tuple(x.name for x in axes), ok.reshape([_slots(x) for x in axes]).astype(np.int64)))
    return out


def _check_factor(space: Space, check: _Check) -> Factor:
    axes = _reads(space, check.knobs)
    frame, _ = _grid(space, axes)
    ok = _mask(check, frame, space)
    return tuple(x.name for x in axes), ok.reshape([_slots(x) for x in axes]).astype(np.int64)


def _contract(space: Space, factors: list[Factor]) -> int:
    """The number of points on which every factor is 1: one einsum over all axes' slots."""
    letters = {
        a.name: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, a in enumerate(space.axes)
    }
    used = {n for names, _ in factors for n in names}
    free = math.prod(len(a.domain.values) for a in space.axes if a.name not in used)
    scalars = [int(t) for names, t in factors if not names]
    if any(v == 0 for v in scalars):
        return 0
    tensors = _merged([(names, t) for names, t in factors if names], [a.name for a in space.axes])
    if not tensors:
        return free
    subscripts = ",".join("".join(letters[n] for n in names) for names, _ in tensors) + "->"
    total = np.einsum(subscripts, *(t for _, t in tensors), optimize="greedy")
    return int(total) * free


def _merged(factors: list[Factor], order: list[str]) -> list[Factor]:
    """The factors with each one over the same axes as another, or over a subset of them, multiplied
    into it: a product of 0/1 tables is one 0/1 table, and einsum's search for a contraction order
    grows with the cube of the operands (a thousand `require tp <= ...` lines took minutes)."""
    rank = {name: i for i, name in enumerate(order)}
    ordered: list[Factor] = []
    for names, table in factors:
        if len(set(names)) != len(names):  # a repeated axis is a diagonal: left to einsum
            ordered.append((names, table))
            continue
        perm = sorted(range(len(names)), key=lambda i: rank[names[i]])
        ordered.append((tuple(names[i] for i in perm), np.transpose(table, perm)))
    ordered.sort(key=lambda f: -len(f[0]))
    out: list[Factor] = []
    for names, table in ordered:
        host = next((i for i, (held, _) in enumerate(out)
                     if len(set(held)) == len(held) and set(names) <= set(held)), None)
        if host is None or len(set(names)) != len(names):
            out.append((names, table))
            continue
        held, product = out[host]
        # both in the axes' order, so the smaller table broadcasts once its missing axes are added as 1s
        shape = [table.shape[names.index(n)] if n in names else 1 for n in held]
        out[host] = (held, product * table.reshape(shape))
    return out


def raw_size(space: Space) -> int:
    """How many points the space holds, computed without enumerating it."""
    return _contract(space, _validity(space))


def _mask(check: _Check, frame: Frame, space: Space) -> Any:
    return np.broadcast_to(np.asarray(check.ok(frame, space), dtype=bool), (frame.size,))


def _candidates(space: Space, frame: Frame, rows: Any) -> Iterator[Candidate]:
    picked = np.flatnonzero(rows)
    if not len(picked):
        return
    lists: dict[str, list[Any]] = {}
    for name in KNOBS:
        column = "$recompute" if name == "recompute" else name
        lists[name] = np.broadcast_to(frame[column], (frame.size,))[picked].tolist()
    # KNOBS lists Candidate's fields in their declared order, which is its __init__'s positional order:
    # positional arguments spare a dict per point (a plan across clusters builds millions of them)
    for values in zip(*lists.values(), strict=True):
        yield Candidate(*values)


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


def legal_list(space: Space) -> list[Candidate]:
    """Every legal point of ``space`` in a list; P4190 when more than ``MAX_POINTS`` (they would fill
    gigabytes) or when the walk itself is too long."""
    require_walkable(space, summarize(space).legal)  # counting takes milliseconds; walking may not
    return list(legal_points(space))


def legal_mask(space: Space, cands: Sequence[Candidate]) -> Any:
    """A numpy bool array: which of ``cands`` pass every rule and ``require`` (one vectorised pass)."""
    frame = frame_of(space, list(cands))
    keep = np.ones(len(cands), dtype=bool)
    for check in _checks(space):
        keep &= _mask(check, frame, space)
    return keep


def legality(space: Space, cand: Candidate, shape_only: bool = False) -> list[Violation]:
    """Every rule and ``require`` that ``cand`` breaks, each with a message naming the values.
    ``shape_only``: only the rules of how a layout splits the model and the batch, which every framework
    shares (``SHAPE_RULES``); a run measured on another framework or release is judged by these."""
    kind, why = problem_of(cand)
    if kind:  # a hand-made candidate (the Python API): its rules would read nonsense, or divide by zero
        code = {"type": WRONG_TYPE, "choice": BAD_ENUM}.get(kind, OUT_OF_RANGE)
        return [Violation(code.id, code.name, why, "build candidates with `check.parse_point(space, \"tp=2,...\")`, "
                          "which reads each knob as the language does")]
    frame = frame_of(space, [cand])
    env = ScalarView(frame)
    out: list[Violation] = []
    for check in _checks(space):
        if shape_only and check.code not in SHAPE_RULES:
            continue
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
    """Raw size, how many points each check removes, and how many remain, without enumerating.

    Every check and every condition is a 0/1 table over the few axes it reads; a count is the sum,
    over all points, of the product of tables — one ``einsum``, which numpy contracts axis by axis.
    """
    start = time.perf_counter()
    validity = _validity(space)
    raw = _contract(space, validity)
    checks = _checks(space)
    factors = [_check_factor(space, c) for c in checks]
    counts = [
        RuleCount(c.code, c.name, raw - _contract(space, [*validity, f]), c.detail)
        for c, f in zip(checks, factors, strict=True)
    ]
    legal = _contract(space, [*validity, *factors])
    return LegalitySummary(space.name, raw, tuple(counts), legal, time.perf_counter() - start)


def never_legal(space: Space) -> list[tuple[str, Any, str, str, bool]]:
    """Each axis value that some point takes but no legal point does (``precision = fp8`` on a GPU
    without FP8), with the code of a check that alone rules it out ("" where only several together do);
    where that check is a ``require`` (every one is P4100), which: its message or expression ("" for a
    rule); and whether it rules out every point with the value or only those the checks not reading the
    axis leave. A count per value, as ``summarize`` counts, with the axis held at that value."""
    validity = _validity(space)
    checks = _checks(space)
    factors = [_check_factor(space, c) for c in checks]
    out: list[tuple[str, Any, str, str, bool]] = []
    # a conditional axis takes its default where its condition is off, a value the listed ones may
    # hold too: only unconditional axes are judged
    for a in (a for a in space.axes if a.when is None):
        # the checks that do not read this axis (the fallback below judges a value among the points they leave)
        others = [f for c, f in zip(checks, factors, strict=True) if a.name not in c.knobs]
        for i, value in enumerate(a.domain.values):
            held = np.zeros(_slots(a), dtype=np.int64)
            held[i] = 1
            at: Factor = ((a.name,), held)
            if not _contract(space, [*validity, at]) or _contract(space, [*validity, *factors, at]):
                continue
            alone = next((c for c, f in zip(checks, factors, strict=True)
                          if not _contract(space, [*validity, f, at])), None)
            among = False
            # among the points the checks that do not read this axis leave: a rule may let a point through
            # that another rule removes for its other knobs (`batch-divisibility` passes a TP beyond the
            # world, which `world-divisibility` removes), and still be what rules the value out; not where
            # those checks leave no point with the value (a conditional axis ties them to it)
            if alone is None and _contract(space, [*validity, *others, at]):
                alone = next((c for c, f in zip(checks, factors, strict=True) if a.name in c.knobs
                              and not _contract(space, [*validity, *others, f, at])), None)
                among = alone is not None
            out.append((a.name, value, alone.code if alone is not None else "",
                        alone.detail if alone is not None and alone.constraint is not None else "", among))
    return out


def legal_values(space: Space, name: str) -> tuple[Any, ...]:
    """The values of the unconditional axis ``name`` that some legal point takes: a count per value, as
    ``never_legal`` counts (one pass over the checks for every value)."""
    (axis,) = [a for a in space.axes if a.name == name and a.when is None]
    every = [*_validity(space), *(_check_factor(space, c) for c in _checks(space))]
    out = []
    for i, value in enumerate(axis.domain.values):
        held = np.zeros(_slots(axis), dtype=np.int64)
        held[i] = 1
        if _contract(space, [*every, ((name,), held)]):
            out.append(value)
    return tuple(out)


_WHY_POINTS = 2_000  # the points with a value never_legal_why reads for the rule's words, at most


def never_legal_why(space: Space, name: str, value: Any, code: str) -> str:
    """Why no legal point takes ``name = value``: the rule ``code`` (``never_legal``'s) as it reads at the
    first point with that value; where no check alone rules it out (``code`` ""), the checks that remove
    some point with it, one of which each such point breaks ("" where the axis is conditional)."""
    if not code:
        together = ruled_out_together(space, name, value)
        return f"at {name} = {format_value(value)} {together}" if together else ""
    # the first point with the value that breaks the rule (the first with the value may break another rule
    # instead, one that does not read this axis: ``never_legal``)
    try:
        points = (p for p in raw_points(space) if getattr(p, name) == value)
        said = next((v.message for p in itertools.islice(points, _WHY_POINTS) for v in legality(space, p)
                     if v.code == code), None)
    except CompileError:  # a space too large to walk (P4190): the rule's code alone
        said = None
    if said is None:
        return f"at {name} = {format_value(value)}: `primusc explain {code}`"
    return f"at {name} = {format_value(value)}: {said}; `primusc explain {code}`"


def ruled_out_together(space: Space, name: str, value: Any) -> str:
    """The checks that remove a point with ``name = value``, by the same counts as ``never_legal``: every
    such point breaks one of them (no point with the value is legal); "" where the axis is conditional."""
    axis = next((a for a in space.axes if a.name == name and a.when is None), None)
    if axis is None or value not in axis.domain.values:
        return ""
    held = np.zeros(_slots(axis), dtype=np.int64)
    held[axis.domain.values.index(value)] = 1
    at: Factor = ((name,), held)
    checks = _checks(space)
    # among the points the checks that do not read the axis leave (those are not why the value is never legal),
    # unless they leave none (a conditional axis ties them to it): then among every point with the value
    base = [*_validity(space), *(_check_factor(space, c) for c in checks if name not in c.knobs)]
    points = _contract(space, [*base, at])
    every = not points
    if every:
        base = _validity(space)
        points = _contract(space, [*base, at])
    seen: list[str] = []
    for check in (c for c in checks if name in c.knobs or every):
        said = f"{check.code} ({check.detail if check.constraint is not None else check.name})"
        if said not in seen and _contract(space, [*base, _check_factor(space, check), at]) < points:
            seen.append(said)
    if not seen:
        return ""
    return f"each point breaks {' or '.join(seen)}; none of them alone rules out every such point"


def _others(space: Space, first: Candidate, knobs: tuple[str, ...]) -> str:
    """The other values the space lists for the knobs a rule reads: the rule removed every point, so
    each of them fails it too, and a message that named the first point's value alone would read as
    if the others were fine."""
    listed = []
    for a in space.axes:
        if a.name not in knobs or len(a.domain.values) < 2:
            continue
        shown = getattr(first, a.name, None)
        rest = [str(x) for x in a.domain.values if x != shown]
        if rest:
            listed.append(f"{a.name} {' or '.join(rest)}")
    return f"; the space's other values fail it too: {'; '.join(listed)}" if listed else ""


def require_legal(space: Space, summary: LegalitySummary) -> None:
    """Raise a P4 diagnostic when the space has points but none of them is legal."""
    if summary.legal or not summary.raw:
        return
    from primus_lang.diagnostics import lookup

    try:  # a space too large to walk is still named empty, by the rules' counts alone
        first = next(raw_points(space))
        violations = {v.code: v for v in legality(space, first)}
        env: ScalarView | None = ScalarView(frame_of(space, [first]))
    except CompileError:
        env, violations = None, {}
    spans = dict(space.knob_spans)
    reads = {r.code.id: r.reads for r in RULES}
    out: list[Diagnostic] = []
    for count in summary.rules:
        if count.removed != summary.raw:
            continue
        code = lookup(count.code)
        if count.code == L.REQUIRE_FAILED.id:
            # the `require`s share one code: each is its own, at its own line (by the count's detail)
            c = next((c for c in space.constraints if _require_detail(c) == count.detail), None)
            if code is None or c is None or env is None:
                continue
            message, help = _explain_require(c, env)
            out.append(Diagnostic(code, f"no point of space `{space.name}` is legal: {message}", c.span, help=help))
            continue
        v = violations.get(count.code)
        if code is None or v is None:
            continue
        # point at the knob the rule reads, not at the whole space
        where = next((spans[k] for k in reads.get(count.code, ()) if k in spans), space.span)
        others = _others(space, first, reads.get(count.code, ()))
        message = f"no point of space `{space.name}` is legal: {v.message}{others}"
        out.append(Diagnostic(code, message, where, help=v.help))
    if not out:
        worst = sorted(summary.rules, key=lambda r: -r.removed)[:3]
        # a `require` is named by its message (or expression): several share the code and the rule name
        listed = ", ".join(
            f"{r.code} {r.rule}{f' ({r.detail!r})' if r.code == L.REQUIRE_FAILED.id and r.detail else ''} "
            f"removes {r.removed:,}" for r in worst if r.removed)
        out.append(
            Diagnostic(
                L.NO_LEGAL_POINT,
                f"no point of space `{space.name}` is legal ({summary.raw:,} raw points)",
                space.span,
                help=f"widen the axes these rules involve: {listed}",
            )
        )
    raise CompileError(out)
