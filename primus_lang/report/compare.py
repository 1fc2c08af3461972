"""What differs between two candidates, and why one is faster, from their view-models."""

from __future__ import annotations

import math

from attrs import frozen

from primus_lang.ir import units
from primus_lang.report.view import CandidateView, RankMemory


@frozen
class Change:
    name: str
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a


@frozen
class CandidateDiff:
    a: CandidateView
    b: CandidateView
    knobs: tuple[tuple[str, str, str], ...]  # (knob, value in a, value in b) where they differ
    time: tuple[Change, ...]  # breakdown seconds per kind, largest |delta| first
    memory: tuple[Change, ...]  # bytes per term on each side's peak rank class, largest |delta| first
    figures: tuple[Change, ...]  # step time, throughput, MFU, bubble, memory peak
    summary: tuple[str, ...]  # sentences, the verdict first


def peak_rank(view: CandidateView) -> RankMemory | None:
    return max(view.ranks, key=lambda r: r.total, default=None)


def _by_delta(changes: list[Change]) -> tuple[Change, ...]:
    return tuple(sorted(changes, key=lambda c: (-abs(c.delta), c.name)))


def _merge(a: dict[str, float], b: dict[str, float]) -> list[Change]:
    names = list(a) + [n for n in b if n not in a]
    return [Change(n, a.get(n, 0.0), b.get(n, 0.0)) for n in names]


def _terms(rank: RankMemory | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in rank.terms if rank is not None else ():
        out[t.name] = out.get(t.name, 0.0) + t.bytes
    return out


def diff(a: CandidateView, b: CandidateView, names: tuple[str, str] = ("A", "B")) -> CandidateDiff:
    knobs_a, knobs_b = dict(a.knobs), dict(b.knobs)
    knobs = tuple((k, knobs_a.get(k, ""), knobs_b.get(k, ""))
                  for k in list(knobs_a) + [k for k in knobs_b if k not in knobs_a]
                  if knobs_a.get(k) != knobs_b.get(k))
    time = _by_delta(_merge(dict(a.breakdown), dict(b.breakdown)))
    memory = _by_delta(_merge(_terms(peak_rank(a)), _terms(peak_rank(b))))
    figures = tuple(Change(n, a.metric(n), b.metric(n))
                    for n in ("step_time", "tokens_per_gpu", "tflops_per_gpu", "mfu", "bubble_fraction",
                              "memory_peak"))
    return CandidateDiff(a, b, knobs, time, memory, figures, explain(a, b, time, memory, names))


def explain(a: CandidateView, b: CandidateView, time: tuple[Change, ...], memory: tuple[Change, ...],
            names: tuple[str, str]) -> tuple[str, ...]:
    """The verdict in words: who is faster and by how much, then the parts of the step that moved most."""
    na, nb = names
    out: list[str] = []
    if not (math.isfinite(a.step_time) and math.isfinite(b.step_time)) or a.step_time <= 0 or b.step_time <= 0:
        out.append("one of the two has no projected step time, so speed cannot be compared")
    elif a.step_time == b.step_time:
        out.append(f"{na} and {nb} project the same step time ({units.seconds(a.step_time)})")
    else:
        work_a, work_b = a.tokens_per_gpu * a.step_time, b.tokens_per_gpu * b.step_time
        if math.isclose(work_a, work_b, rel_tol=1e-6):
            fast, slow = (na, nb) if a.step_time < b.step_time else (nb, na)
            t_fast, t_slow = min(a.step_time, b.step_time), max(a.step_time, b.step_time)
            verdict = (f"{fast} is {(t_slow / t_fast - 1) * 100:.1f}% faster than {slow}: a step takes "
                       f"{units.seconds(t_fast)} instead of {units.seconds(t_slow)}")
        else:
            # steps of other sizes (another batch or sequence): the faster is the one that trains more
            # tokens a second, whichever step is shorter
            fast, slow = (na, nb) if a.tokens_per_gpu > b.tokens_per_gpu else (nb, na)
            t_slow, t_fast = min(a.tokens_per_gpu, b.tokens_per_gpu), max(a.tokens_per_gpu, b.tokens_per_gpu)
            verdict = (f"{fast} trains {(t_fast / t_slow - 1) * 100:.1f}% more tokens/s/GPU than {slow} "
                       f"({t_fast:,.0f} against {t_slow:,.0f}): their steps hold other numbers of tokens "
                       f"({work_a:,.0f} a GPU in {na}, {work_b:,.0f} in {nb}), so their step times "
                       f"({units.seconds(a.step_time)} and {units.seconds(b.step_time)}) do not say which is faster")
        paired = a.paired if a.basis else b.paired
        if a.basis or b.basis:
            inside = abs(math.log(t_slow / t_fast)) <= math.log1p(paired)
            verdict += (f"; inside the ±{paired:.1%} by which the ratio of two projections on this profile "
                        "typically errs: a tie, measure both to choose" if inside else
                        f"; beyond the ±{paired:.1%} by which the ratio of two projections on this profile "
                        "typically errs")
            if a.beyond or b.beyond:
                # that figure comes from pairs of runs the profile was fitted on; this pair lies beyond them
                who = "both lie" if a.beyond and b.beyond else f"{na if a.beyond else nb} lies"
                verdict += (f" (measured on pairs inside the profile's runs; {who} beyond them, W6012, so the order "
                            "is less sure than that)")
        out.append(verdict)
        gap = b.step_time - a.step_time
        # Name the parts that account for the gap, largest first, until most of it is explained.
        explained = 0.0
        for change in time:
            if change.delta == 0 or len(out) > 3:
                break
            moved = "shrinks" if change.delta < 0 else "grows"
            share = change.delta / gap if gap else 0.0
            out.append(f"{change.name} {moved} by {units.seconds(abs(change.delta))} "
                       f"({units.seconds(change.a)} in {na}, {units.seconds(change.b)} in {nb})"
                       + (f", {share * 100:.0f}% of the difference" if 0 < share <= 5 else ""))
            explained += change.delta
            if abs(gap) > 0 and abs(explained) >= 0.8 * abs(gap) and len(out) >= 2:
                break
        named = {line.split(" ", 1)[0] for line in out[1:]}
        offset = [c for c in time if c.name not in named and c.delta * gap < 0 and abs(c.delta) >= 0.05 * abs(gap)]
        if offset:
            c = offset[0]
            out.append(f"partly offset by {c.name}, which {'shrinks' if c.delta < 0 else 'grows'} by "
                       f"{units.seconds(abs(c.delta))}")
    if a.memory_peak != b.memory_peak:
        more, less = (nb, na) if b.memory_peak > a.memory_peak else (na, nb)
        line = (f"{more} needs {units.gib(abs(b.memory_peak - a.memory_peak))} more on its busiest rank "
                f"than {less} ({units.gib(a.memory_peak)} in {na}, {units.gib(b.memory_peak)} in {nb})")
        top = [c for c in memory if c.delta != 0][:2]
        if top:
            line += "; the largest moves: " + ", ".join(
                f"{c.name} {units.gib(c.a)} → {units.gib(c.b)}" for c in top)
        out.append(line)
    # first: a point that cannot run is not the faster of two in any sense a user acts on (a new user
    # read "A is 6.3% faster" and found A's overflow lines further down)
    unfit = [name for name, v in ((na, a), (nb, b)) if not v.fits]
    if unfit:
        who = " and ".join(unfit)
        out.insert(0, f"{who} {'does' if len(unfit) == 1 else 'do'} not fit in memory, so "
                      f"{'it cannot' if len(unfit) == 1 else 'neither can'} run: the figures say what "
                      f"{'it' if len(unfit) == 1 else 'each'} would cost")
    return tuple(out)
