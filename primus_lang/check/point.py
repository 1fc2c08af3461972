"""``--point tp=2,pp=4,recompute=full(8)``: one candidate of a space, written by hand."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from primus_lang.check.evaluate import evaluate
from primus_lang.check.frame import DEFAULTS, frame_of
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.diagnostics.codes_syntax import NUMBER_OUT_OF_RANGE
from primus_lang.ir.candidate import KNOBS, Candidate, format_value
from primus_lang.ir.hardware import Cluster
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.space import Axis, Space
from primus_lang.lower import knob_hint, single
from primus_lang.syntax import MAX_INT, ast, whole_number


def _split(text: str) -> list[str]:
    # a double-quoted value (a pipeline layout with its cosmetic commas) is one part
    parts, depth, quoted, cur = [], 0, False, ""
    for ch in text:
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
            continue
        if ch == '"':
            quoted = not quoted
        elif not quoted:
            depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


_NUMBER = re.compile(r"^[0-9][0-9_]*$")
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_CALL = re.compile(r"^([A-Za-z_]+)\((.*)\)$")


def _value(text: str, where: str) -> ast.Value:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return ast.Str(text[1:-1])
    if _NUMBER.match(text):
        whole = whole_number(text)
        if whole is None:
            raise CompileError(Diagnostic(NUMBER_OUT_OF_RANGE, f"the number in {where} ({len(text):,} digits) is larger "
                                          f"than {MAX_INT:,}", help="no knob comes near this; check the digits"))
        return ast.Quantity(text, whole)
    if _NAME.match(text):
        return ast.Ident(text)
    m = _CALL.match(text)
    if m:
        args = []
        for part in _split(m.group(2)):
            key, sep, rest = part.partition(":")
            if sep and _NAME.match(key.strip()):
                args.append(ast.Arg(key.strip(), ast.Domain((_value(rest, where),))))
            else:
                args.append(ast.Arg(None, ast.Domain((_value(part, where),))))
        return ast.CallValue(m.group(1), tuple(args))
    raise CompileError(
        Diagnostic(
            T.WRONG_TYPE, f"cannot read the value `{text}` in {where}", help="e.g. `tp=2,recompute=full(8)`"
        )
    )


def _unnamed(axis: Axis) -> Any:
    """The value of an axis's knob that a point leaves out."""
    default = DEFAULTS[axis.name]
    return default if default in axis.domain.values else axis.domain.values[0]


def baseline_point(space: Space) -> Candidate | None:
    """The space's ``baseline`` as a candidate (None without one): its knobs, the rest as ``parse_point``
    fills them in."""
    if space.baseline is None:
        return None
    return _point(space, dict(space.baseline))


def parse_point(space: Space, text: str) -> Candidate:
    """A candidate from ``knob=value`` pairs, or ``baseline`` for the space's own. A knob left out takes
    the space's fixed value, else its default where its axis allows it, else the axis's first value: a
    label names the knobs that differ from their defaults, so every label the tool prints reads back
    as the same candidate."""
    parts = _split(text)
    base: Candidate | None = None
    if parts and parts[0].strip() == "baseline":
        # the space's own recipe (`baseline { ... }`), with what the rest of the point changes of it
        base = baseline_point(space)
        if base is None:
            from primus_lang.diagnostics.codes_import import RECIPE_NO_BASELINE

            raise CompileError(Diagnostic(RECIPE_NO_BASELINE, f"space `{space.name}` has no `baseline`",
                                          help="write `baseline { tp = ...; ... }` in the space, or give the knobs"))
        parts = parts[1:]
    given: dict[str, Any] = {}
    if text.strip() == "defaults":  # the label of a candidate whose every knob is at its default
        parts = []
    for part in parts:
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep:
            raise CompileError(
                Diagnostic(T.WRONG_TYPE, f"`{part}` is not `knob=value`", help="e.g. `--point tp=2,pp=4`")
            )
        if key not in KNOBS:
            axes = [a.name for a in space.cluster_axes]
            if key in axes or key in attrs.fields_dict(Cluster):
                # the cluster a point runs on is named apart from the point (a new user wrote
                # `--point gpu=b200_calibrated,nodes=64,tp=4`): the two, split as they were meant
                if axes:
                    pairs = {p.partition("=")[0].strip(): p.strip() for p in parts}
                    cluster = ",".join(pairs.get(a, f"{a}=...") for a in axes)
                    recipe = ",".join(p for k, p in pairs.items() if k in KNOBS)
                    where = f"with `--cluster {cluster}`" + (f", and give the point the recipe alone: `{recipe}`"
                                                             if recipe else ", and give the point the recipe's knobs")
                else:
                    where = ("with --cluster where the space has cluster axes (`gpu : ...`, `nodes : ...`), else in "
                             "the space, and give the point the recipe's knobs")
                raise CompileError(Diagnostic(
                    N.UNKNOWN_KNOB, f"`{key}` is the cluster's, not a knob of a point", help=f"name the cluster {where}"))
            hint = knob_hint(key, KNOBS)
            raise CompileError(Diagnostic(N.UNKNOWN_KNOB, f"`{key}` is not a knob", help=hint))
        if key in given:
            raise CompileError(Diagnostic(N.DUPLICATE_FIELD, f"`{key}` given twice in the point"))
        # a text knob (pipeline_layout) reads as a label prints it, unquoted, or in double quotes
        text_knob = kind_of(KNOBS[key]) is Kind.TEXT and not raw.strip().startswith('"')
        given[key] = single(KNOBS[key], ast.Str(raw.strip()) if text_knob else _value(raw, f"`{key}`"))
    if base is not None:
        return _point(space, given, base) if given else base
    return _point(space, given)


def _point(space: Space, given: dict[str, Any], base: Candidate | None = None) -> Candidate:
    """The candidate ``given`` names; the others at the space's fixed values and axes' first values, or at
    ``base``'s (the space's recipe) where one is given."""
    if base is not None:
        values: dict[str, Any] = {name: getattr(base, name) for name in KNOBS}
    else:
        values = {name: DEFAULTS[name] for name in KNOBS}
        values.update(dict(space.fixed))
        for axis in space.axes:
            values[axis.name] = _unnamed(axis)
    values.update(given)
    # A conditional axis the user did not set keeps the knob's default where its condition fails,
    # as in enumeration (the recipe's pp=1 has no interleaved schedule); where it holds, its first value, or
    # the recipe's where that is one of the axis's; conditions may read other conditional axes, so settle
    # them in passes.
    conditional = [a for a in space.axes if a.when is not None and a.name not in given]
    for _ in range(len(conditional)):
        changed = False
        cand = Candidate(**values)
        for axis in conditional:
            assert axis.when is not None
            holds = bool(np.asarray(evaluate(axis.when, frame_of(space, [cand]))).reshape(-1)[0])
            kept = base is not None and getattr(base, axis.name) in axis.domain.values
            want = (getattr(base, axis.name) if kept else _unnamed(axis)) if holds else DEFAULTS[axis.name]
            if values[axis.name] != want:
                values[axis.name] = want
                changed = True
        if not changed:
            break
    return Candidate(**values)


def outside(space: Space, cand: Candidate) -> list[str]:
    """The knobs of ``cand`` set to values no point of ``space`` has: off their axis (where its
    condition holds), or off the space's fixed value."""
    fixed = dict(space.fixed)
    out = [f"`{k}` = {format_value(getattr(cand, k))}, where the space fixes {format_value(v)}"
           for k, v in fixed.items() if getattr(cand, k) != v]
    axes = {a.name for a in space.axes}
    # a knob the space never names stays at its default in every point it holds
    out += [f"`{k}` = {format_value(getattr(cand, k))}, where the space leaves it at its default "
            f"{format_value(DEFAULTS[k])}" for k in KNOBS
            if k not in fixed and k not in axes and getattr(cand, k) != DEFAULTS[k]]
    for axis in space.axes:
        value = getattr(cand, axis.name)
        if value in axis.domain.values:
            continue
        if axis.when is not None and value == DEFAULTS[axis.name]:
            continue  # the knob's default is what the axis leaves where its condition fails
        shown = ", ".join(format_value(v) for v in axis.domain.values[:8])
        more = ", ..." if len(axis.domain.values) > 8 else ""
        out.append(f"`{axis.name}` = {format_value(value)}, not among the axis's values ({shown}{more})")
    return out


def outside_warning(space: Space, cand: Candidate) -> Diagnostic | None:
    """W6001 when ``cand`` sets a knob to a value the space would never search (it is still shown,
    projected or emitted: what a nearby recipe would do is a fair question), else None."""
    from primus_lang.diagnostics.codes_projection import OUTSIDE_SPACE

    notes = outside(space, cand)
    if not notes:
        return None
    return Diagnostic(OUTSIDE_SPACE, f"`{cand.label()}` is outside the space `{space.name}`", notes=tuple(notes),
                      help="it is still shown; add or widen the axis to search it")


NEAREST_SCAN = 200_000  # legal points read for a nearer one: a bound on a space of millions
NEAREST_FITS = 200  # of them, the nearest asked whether they fit, in order


def nearest_legal_point(space: Space, text: str, cand: Candidate,
                        fits: Callable[[Candidate], bool] | None = None) -> str | None:
    """A ``--point`` for the legal point of ``space`` that keeps every knob ``text`` names and changes the
    fewest of the others ``cand`` (its parse) took from the space: the knobs a user left out were filled with
    the axes' first values, which may contradict the ones named (`vpp=5` beside the schedule axis's first,
    1f1b). ``fits``: the nearest that also fits in memory is preferred (a suggestion the next command refuses
    is no help). None where no legal point keeps them all."""
    from primus_lang.check.enumerate import legal_points

    parts = _split(text)
    named = {p.partition("=")[0].strip() for p in parts if "=" in p}
    near: list[tuple[int, int, Candidate]] = []
    for n, point in enumerate(legal_points(space)):
        if n >= NEAREST_SCAN:
            break
        if not any(getattr(point, k) != getattr(cand, k) for k in named):
            near.append((sum(getattr(point, k) != getattr(cand, k) for k in KNOBS), n, point))
    if not near:
        return None
    near.sort(key=lambda t: t[:2])
    best = next((p for _, _, p in near[:NEAREST_FITS] if fits is None or fits(p)), near[0][2])
    more = [f"{k}={format_value(getattr(best, k))}" for k in KNOBS if getattr(best, k) != getattr(cand, k)]
    return ",".join([*parts, *more])
