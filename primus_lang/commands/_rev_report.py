"""``primusc diff --rev A --rev B FILE``: what a change to a space does, for review: the space's
own changes, its raw, legal and fitting counts, and the projected winner of a bounded search on
each side."""

from __future__ import annotations

import hashlib
from typing import Any

import attrs

from primus_lang.check import require_legal, summarize
from primus_lang.diagnostics import CompileError
from primus_lang.ir import KNOBS
from primus_lang.ir.candidate import format_value
from primus_lang.ir.expr import to_text
from primus_lang.ir.quantity import META_KIND, Kind
from primus_lang.ir.serialize import to_data
from primus_lang.ir.space import Space
from primus_lang.syntax import with_unit

_OWN = {"name", "span", "knob_spans", "axes", "lets", "constraints", "fixed"}


@attrs.frozen
class Side:
    label: str
    space: str
    raw: int
    legal: int
    fitting: int | None  # None: no search ran (no legal point)
    winner: str | None
    projection: dict[str, Any] = attrs.field(factory=dict)  # the winner's figures, as the search projected it
    objective: str = ""
    evaluations: int = 0
    note: str = ""
    knobs: tuple[tuple[str, str], ...] = ()  # the winner's every knob, as a label writes its value


_LONG = 80  # a text longer than this (a profile's provenance note) is said to have changed, not quoted


def _flat(prefix: str, data: Any, out: dict[str, str], obj: Any = None) -> None:
    """``data`` (``to_data`` of ``obj``) as `path: value` pairs, each quantity in its unit (the field's kind,
    read from ``obj``'s class): `hbm_capacity: 288 GiB`, not `309237645312`."""
    if isinstance(data, dict):
        fields = attrs.fields_dict(type(obj)) if obj is not None and attrs.has(type(obj)) else {}
        for key, value in data.items():
            if key == "span":
                continue
            path = f"{prefix}.{key}" if prefix else key
            f = fields.get(key)
            inner = getattr(obj, key, None) if f is not None else None
            kind = f.metadata.get(META_KIND) if f is not None else None
            if isinstance(kind, Kind) and isinstance(value, int | float) and not isinstance(value, bool):
                out[path] = with_unit(kind, value)
            else:
                _flat(path, value, out, inner)
    elif isinstance(data, list | tuple):
        out[prefix] = ", ".join(str(v) for v in data)
    elif isinstance(data, str) and len(data) > _LONG:
        out[prefix] = f"({len(data):,} characters, sha {hashlib.sha256(data.encode()).hexdigest()[:8]})"
    else:
        out[prefix] = "none" if data is None else str(data).lower() if isinstance(data, bool) else str(data)


def facts(space: Space) -> dict[str, str]:
    """The space as flat `what: value` pairs, each as a reviewer would name it."""
    out: dict[str, str] = {}
    for axis in space.axes:
        values = " | ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in axis.domain.values)
        out[f"axis `{axis.name}`"] = values + (f" when {to_text(axis.when)}" if axis.when is not None else "")
    for name, value in space.fixed:
        out[f"`{name}`"] = str(value).lower() if isinstance(value, bool) else str(value)
    for let in space.lets:
        out[f"let `{let.name}`"] = to_text(let.expr)
    for c in space.constraints:
        out[f"require `{to_text(c.expr)}`"] = c.message or "(no message)"
    for f in attrs.fields(type(space)):
        if f.name not in _OWN:
            _flat(f.name, to_data(getattr(space, f.name)), out, getattr(space, f.name))
    return out


def changes(a: Space, b: Space) -> list[tuple[str, str | None, str | None]]:
    fa, fb = facts(a), facts(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [(k, fa.get(k), fb.get(k)) for k in keys if fa.get(k) != fb.get(k)]


def side(label: str, space: Space, budget: int, seed: int) -> Side:
    """One revision's counts and the winner ``plan`` would choose there (the tie rule and the space's own
    recipe applied, as ``plan`` applies them), from a search of ``budget`` evaluations."""
    from primus_lang.search import Limits, baseline_trial, choose, prepare, run_search

    summary = summarize(space)
    if not summary.legal:
        try:
            require_legal(space, summary)
            why = ""
        except CompileError as err:  # why, rule by rule, as `check` says it
            why = ": " + "; ".join(_rule_said(d.message, d.help) for d in err.diagnostics)
        return Side(label, space.name, summary.raw, 0, None, None, note=f"no legal point{why}")
    # the LLM strategy would call a model from CI; the comparison needs the same cheap search both sides
    strategy = "auto" if space.strategy == "llm" else None
    try:
        prep = prepare(space)
        result = run_search(space, strategy=strategy, budget=Limits(evaluations=budget), seed=seed, prepared=prep)
    except CompileError as err:
        return Side(label, space.name, summary.raw, summary.legal, None, None,
                    note="; ".join(d.message for d in err.diagnostics))
    best = choose(result, space.cluster.gpu.provenance, prep.land.objective.metric, prep.land.objective.sense,
                  space.settings, baseline_trial(prep, result)).winner
    figures: dict[str, Any] = to_data(best.evaluation) if best is not None and best.evaluation is not None else {}
    cand = best.candidate if best is not None else None
    return Side(label, space.name, summary.raw, summary.legal, result.fitting_points,
                cand.label() if cand is not None else None,
                figures, result.objective, result.evaluations,
                "" if best is not None else "no legal point fits in memory",
                tuple((k, format_value(getattr(cand, k))) for k in KNOBS) if cand is not None else ())


def _rule_said(message: str, help: str) -> str:
    """What a "no point is legal" diagnostic says of its rule: its message past the space's name, else its
    help (the rules that remove the most)."""
    detail = message.split(" is legal", 1)[-1].lstrip(":").strip()
    return help if not detail or detail.startswith("(") else detail


def winner_changes(a: Side, b: Side) -> list[str]:
    """How the winner's knobs moved from ``a`` to ``b`` (`mbs 2 → 4`)."""
    before = dict(a.knobs)
    return [f"{k} {before[k]} → {v}" for k, v in b.knobs if k in before and before[k] != v]


def _delta(a: int | None, b: int | None) -> str:
    if a is None or b is None:
        return ""
    return f"{b - a:+,}" if b != a else "0"


def _count(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def render(a: Side, b: Side, changed: list[tuple[str, str | None, str | None]], budget: int,
           markdown: bool) -> str:
    code = (lambda s: f"`{s}`") if markdown else (lambda s: s)
    out: list[str] = []
    title = f"space {code(b.space)}: {a.label} → {b.label}"
    out += [f"### {title}" if markdown else title, ""]
    out.append("**Changes in the space**" if markdown else "changes in the space")
    if not changed:
        out.append("- none" if markdown else "  none")
    for what, old, new in changed:
        line = (f"added {what}: {new}" if old is None else f"removed {what}: {old}" if new is None
                else f"{what}: {old} → {new}")
        out.append(f"- {line}" if markdown else f"  {line}")
    out.append("")
    rows = [("raw points", a.raw, b.raw), ("legal", a.legal, b.legal), ("fitting in memory", a.fitting, b.fitting)]
    if markdown:
        out += [f"| points | {a.label} | {b.label} | change |", "|---|---:|---:|---:|"]
        out += [f"| {n} | {_count(x)} | {_count(y)} | {_delta(x, y)} |" for n, x, y in rows]
    else:
        w = max(len(a.label), len(b.label), 10)
        out.append(f"  {'':18}{a.label:>{w}}  {b.label:>{w}}  change")
        out += [f"  {n:18}{_count(x):>{w}}  {_count(y):>{w}}  {_delta(x, y)}" for n, x, y in rows]
    out.append("")
    head = f"projected winner (a search of at most {budget} evaluations on each side, `{b.objective or a.objective}`)"
    out.append(f"**{head}**" if markdown else head)
    for s in (a, b):
        if s.winner is None:
            what = s.note or "none"
        else:
            what = f"{code(s.winner)}: {s.projection['tokens_per_gpu']:,.0f} tokens/s/GPU, step {s.projection['step_time']:.2f} s"
        out.append(f"- {s.label}: {what}" if markdown else f"  {s.label}: {what}")
    if a.projection and b.projection:
        ta, tb = a.projection["tokens_per_gpu"], b.projection["tokens_per_gpu"]
        moved = "the same winner" if a.winner == b.winner else "a different winner"
        changes = winner_changes(a, b)
        line = f"throughput {(tb - ta) / ta:+.1%} with {moved}" + (f": {', '.join(changes)}" if changes else "")
        out.append(f"- {line}" if markdown else f"  {line}")
    return "\n".join(out)


def as_json(a: Side, b: Side, changed: list[tuple[str, str | None, str | None]]) -> dict[str, Any]:
    return {"a": attrs.asdict(a), "b": attrs.asdict(b),
            "changes": [{"what": w, "a": x, "b": y} for w, x, y in changed],
            "winner_changes": winner_changes(a, b)}
