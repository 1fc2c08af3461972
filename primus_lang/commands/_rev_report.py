"""``primusc diff --rev A --rev B FILE``: what a change to a space does, for review: the space's
own changes, its raw, legal and fitting counts, and the projected winner of a bounded search on
each side."""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.check import summarize
from primus_lang.diagnostics import CompileError
from primus_lang.ir.expr import to_text
from primus_lang.ir.serialize import to_data
from primus_lang.ir.space import Space

_OWN = {"name", "span", "knob_spans", "axes", "lets", "constraints", "fixed"}


@attrs.frozen
class Side:
    label: str
    space: str
    raw: int
    legal: int
    fitting: int | None  # None: no search ran (no legal point)
    winner: str | None
    metrics: dict[str, float] = attrs.field(factory=dict)
    objective: str = ""
    evaluations: int = 0
    note: str = ""


def _flat(prefix: str, data: Any, out: dict[str, str]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if key != "span":
                _flat(f"{prefix}.{key}" if prefix else key, value, out)
    elif isinstance(data, list | tuple):
        out[prefix] = ", ".join(str(v) for v in data)
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
            _flat(f.name, to_data(getattr(space, f.name)), out)
    return out


def changes(a: Space, b: Space) -> list[tuple[str, str | None, str | None]]:
    fa, fb = facts(a), facts(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [(k, fa.get(k), fb.get(k)) for k in keys if fa.get(k) != fb.get(k)]


def side(label: str, space: Space, budget: int, seed: int) -> Side:
    """One revision's counts and the winner ``plan`` would choose there (the tie rule and the space's own
    recipe applied, as ``plan`` applies them), from a search of ``budget`` evaluations."""
    from primus_lang.search import Limits, choose, prepare, run_search
    from primus_lang.search.plan import baseline_trial

    summary = summarize(space)
    if not summary.legal:
        return Side(label, space.name, summary.raw, 0, None, None, note="no legal point")
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
    metrics: dict[str, float] = {}
    if best is not None and best.evaluation is not None:
        ev = best.evaluation
        metrics = {"tokens_per_gpu": ev.tokens_per_gpu, "step_time": ev.step_time, "mfu": ev.mfu}
    return Side(label, space.name, summary.raw, summary.legal, result.fitting_points,
                best.candidate.label() if best is not None and best.candidate is not None else None,
                metrics, result.objective, result.evaluations,
                "" if best is not None else "no legal point fits in memory")


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
            what = f"{code(s.winner)}: {s.metrics['tokens_per_gpu']:,.0f} tokens/s/GPU, step {s.metrics['step_time']:.2f} s"
        out.append(f"- {s.label}: {what}" if markdown else f"  {s.label}: {what}")
    if a.metrics and b.metrics:
        ta, tb = a.metrics["tokens_per_gpu"], b.metrics["tokens_per_gpu"]
        moved = "the same winner" if a.winner == b.winner else "a different winner"
        line = f"throughput {(tb - ta) / ta:+.1%} with {moved}"
        out.append(f"- {line}" if markdown else f"  {line}")
    return "\n".join(out)


def as_json(a: Side, b: Side, changed: list[tuple[str, str | None, str | None]]) -> dict[str, Any]:
    return {"a": attrs.asdict(a), "b": attrs.asdict(b),
            "changes": [{"what": w, "a": x, "b": y} for w, x, y in changed]}
