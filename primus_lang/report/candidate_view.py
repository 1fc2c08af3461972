"""One candidate's view-model from its figures, memory account and projection.

Both the search's report (``report/adapt.py``) and the recomputation of a few candidates
(``report/evaluate.py``) build views; this is the piece both share, so neither imports the other.
Upstream classes are read by attribute, as in ``report/adapt.py``.
"""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.ir import Candidate, Model, Provenance
from primus_lang.ir.candidate import format_value
from primus_lang.report.view import CandidateView, MemoryTerm, RankMemory, TimelineEvent
from primus_lang.validate import trust

NAN = float("nan")


def knobs(cand: Candidate) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, format_value(getattr(cand, f.name))) for f in attrs.fields(Candidate))


def figure(obj: Any, name: str) -> float:
    """A numeric attribute of an upstream result, NaN where it is missing or not a number."""
    value = getattr(obj, name, None) if obj is not None else None
    return float(value) if isinstance(value, int | float) else NAN


def ranks_of(account: Any) -> tuple[RankMemory, ...]:
    """The rank classes of a ``memory.MemoryAccount``."""
    if account is None:
        return ()
    out = []
    for rank in getattr(account, "ranks", ()):
        terms = tuple(MemoryTerm(str(t.name), int(t.bytes), str(getattr(t, "formula", ""))) for t in rank.terms)
        out.append(RankMemory(str(rank.name), int(getattr(rank, "stage", 0)), terms, int(rank.total)))
    return tuple(out)


def timeline_of(projection: Any) -> tuple[TimelineEvent, ...]:
    """The projection's timeline events: attrs events, or tuples (stage, kind, mb, start, end) or
    the schedule simulator's (stage, kind, chunk, mb, start, end)."""
    events = getattr(projection, "timeline", None) or ()
    out = []
    for e in events:
        chunk: Any = 0
        if isinstance(e, tuple) and len(e) >= 6:
            stage, kind, chunk, mb, start, end = e[:6]
        elif isinstance(e, tuple):
            stage, kind, mb, start, end = e[:5]
        else:
            stage, kind, mb, start, end = e.stage, e.kind, e.microbatch, e.start, e.end
            chunk = getattr(e, "chunk", 0)
        out.append(TimelineEvent(int(stage), str(kind), int(mb), float(start), float(end), int(chunk)))
    return tuple(out)


def breakdown_of(obj: Any) -> tuple[tuple[str, float], ...]:
    parts = getattr(obj, "breakdown", None) or ()
    return tuple((str(k), float(v)) for k, v in parts)


def candidate_view(
    cand: Candidate,
    figures: Any,
    *,
    memory_peak: int,
    fits: bool,
    account: Any = None,
    projection: Any = None,
    strategy: str = "",
    evaluation: int = 0,
    provenance: Provenance | None = None,
    world: int = 0,
    model: Model | None = None,
    stack: str = "",
    arch: str = "",
) -> CandidateView:
    """``figures`` is anything with the projection's figures (a ``Projection`` or a search ``Evaluation``);
    ``projection``, when given, supplies the memory-independent extras: the timeline, and the figures
    when ``figures`` is None. The search's figures win when both exist: they are what it ranked by."""
    source = figures if figures is not None else projection
    p = provenance
    band = None
    if p is not None:
        low, high, beyond = trust.bounds(p, cand, world, model, stack, arch, trust.host_share(source))
        band = trust.banded(p, figure(source, "tokens_per_gpu"), figure(source, "step_time"), low, high, beyond)
    return CandidateView(
        label=cand.label(),
        knobs=knobs(cand),
        step_time=figure(source, "step_time"),
        tokens_per_gpu=figure(source, "tokens_per_gpu"),
        tflops_per_gpu=figure(source, "tflops_per_gpu"),
        mfu=figure(source, "mfu"),
        bubble_fraction=figure(source, "bubble_fraction"),
        memory_peak=int(memory_peak),
        fits=fits,
        breakdown=breakdown_of(source),
        ranks=ranks_of(account),
        timeline=timeline_of(projection),
        strategy=strategy,
        evaluation=evaluation,
        # the band's fields are the view's of the same names (no band: the view's defaults, no band shown)
        **(attrs.asdict(band, recurse=False) if band is not None else {}),
    )
