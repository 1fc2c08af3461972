"""The terminal views: one candidate's memory account and time breakdown, and two candidates' diff."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from primus_lang.ir import units
from primus_lang.memory import not_counted
from primus_lang.report.compare import CandidateDiff
from primus_lang.report.view import CandidateView

if TYPE_CHECKING:
    from primus_lang.project import PrecisionGain

MIB = 1 << 20


def figures_table(view: CandidateView, limit: int, run: Sequence[tuple[str, str]] = ()) -> Table:
    """The candidate's figures, then ``run``: what a whole training run of it takes (explain's days and
    cost for a space with ``train_tokens``)."""
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column("what", style="bold")
    t.add_column("value", justify="right")
    spare = limit - view.memory_peak
    rows = [
        ("tokens/s/GPU", units.rate(view.tokens_per_gpu)),
        *([(f"{view.coverage:.0%} band", f"{units.band(view.tokens_low, view.tokens_high)} ({view.basis} profile"
            + ("; widened: beyond its runs, W6012)" if view.beyond else ")"))] if view.basis else []),
        ("step time", units.seconds(view.step_time)),
        ("TFLOP/s/GPU", f"{view.tflops_per_gpu:,.1f}"),
        ("MFU", units.percent(view.mfu)),
        ("bubble (busiest stage)", units.percent(view.bubble_fraction)),
        ("memory peak", units.gib(view.memory_peak)),
        ("spare vs limit", units.gib(spare) if spare >= 0 else f"[red]over by {units.gib(-spare)}[/red]"),
        *run,
    ]
    for name, value in rows:
        t.add_row(name, value)
    return t


def ranks_table(view: CandidateView, capacity: int, limit: int) -> Table:
    """Each rank class's total against the limit."""
    t = Table(title=f"memory per rank class (capacity {units.gib(capacity)}, limit {units.gib(limit)})",
              title_justify="left")
    t.add_column("rank class")
    t.add_column("total", justify="right")
    t.add_column("spare vs limit", justify="right")
    peak = max(view.ranks, key=lambda r: r.total, default=None)
    for r in view.ranks:
        spare = limit - r.total
        text = units.gib(spare) if spare >= 0 else f"[red]over by {units.gib(-spare)}[/red]"
        t.add_row(f"[bold]{r.name}[/bold]" if r is peak else r.name, units.gib(r.total), text)
    return t


def memory_table(view: CandidateView, capacity: int, limit: int) -> Table:
    """Every term of the fullest rank class with the formula the memory proof evaluated."""
    peak = max(view.ranks, key=lambda r: r.total)
    t = Table(title=f"the fullest rank class, {peak.name}, term by term", title_justify="left")
    # On a narrow terminal the term names fold before the formulas do, which read badly when broken.
    t.add_column("term", overflow="fold", max_width=30)
    t.add_column("GiB", justify="right", no_wrap=True)
    t.add_column("bytes", justify="right", no_wrap=True)
    t.add_column("formula", overflow="fold", style="dim", min_width=24)
    for term in peak.terms:
        t.add_row(term.name, units.gib(term.bytes).removesuffix(" GiB"), f"{term.bytes:,}", term.formula)
    colour = "red" if peak.total > limit else "green"
    t.add_row("[bold]total[/bold]", f"[{colour}]{units.gib(peak.total).removesuffix(' GiB')}[/{colour}]",
              f"{peak.total:,}", f"limit {limit:,} B of {capacity:,} B", end_section=True)
    notes = not_counted(dict(view.knobs).get("cuda_graph", "none"))
    if notes:
        t.caption, t.caption_justify = "; ".join(notes), "left"
    return t


def breakdown_table(view: CandidateView) -> Table:
    t = Table(title="where the step time goes", title_justify="left")
    if any(kind == "bubble" and secs > 0 for kind, secs in view.breakdown):
        # the figures' bubble is another quantity: the idle share of the stage with the most work
        t.caption = ("bubble: the critical stage's idle seconds, the light stages' slack included; the figures' "
                     "bubble is the busiest stage's idle share, the pipeline's own")
        t.caption_justify = "left"
    t.add_column("part")
    t.add_column("time", justify="right")
    t.add_column("share of step", justify="right")
    t.add_column("", no_wrap=True)
    step = view.step_time if view.step_time > 0 else 1.0
    for kind, secs in view.breakdown:
        if secs == 0:
            continue
        share = secs / step
        t.add_row(kind, units.seconds(secs), units.percent(share), "█" * round(max(0.0, min(share, 1.0)) * 30))
    t.add_row("[bold]step[/bold]", units.seconds(view.step_time), "", "", end_section=True)
    return t


def explain_view(view: CandidateView, capacity: int, limit: int,
                 run: Sequence[tuple[str, str]] = ()) -> RenderableType:
    head = Text(f"candidate {view.label}", style="bold")
    if not view.fits:
        head.append(f"\ndoes not fit in memory: its fullest rank is over the limit by "
                    f"{units.gib(view.memory_peak - limit)}; the figures are what it would cost, not a run",
                    style="bold red")
    parts: list[RenderableType] = [head, figures_table(view, limit, run), Text("")]
    if view.ranks:
        parts += [ranks_table(view, capacity, limit), Text(""), memory_table(view, capacity, limit), Text("")]
    if view.breakdown:
        parts.append(breakdown_table(view))
    else:
        parts.append(Text("no projection breakdown (the candidate was not projected)", style="dim"))
    return Group(*parts)


def _signed(name: str, delta: float) -> str:
    if name in ("memory_peak",):
        return units.signed_gib(delta)
    if name in ("step_time",):
        return units.signed_seconds(delta)
    if name in ("mfu", "bubble_fraction"):
        return f"{delta * 100:+.1f} pt"
    return f"{delta:+,.1f}"


def diff_view(d: CandidateDiff, names: tuple[str, str] = ("A", "B")) -> RenderableType:
    na, nb = names
    head = Table(show_header=False, box=None, pad_edge=False)
    head.add_column(style="bold")
    head.add_column()
    head.add_row(na, d.a.label)
    head.add_row(nb, d.b.label)

    knobs = Table(title="knobs that differ", title_justify="left")
    for col in ("knob", na, nb):
        knobs.add_column(col)
    for k, va, vb in d.knobs:
        knobs.add_row(k, va, vb)

    figs = Table(title="figures", title_justify="left")
    for col in ("", na, nb, f"{nb} − {na}"):
        figs.add_column(col, justify="right" if col else "left")
    for c in d.figures:
        fa, fb = (units.metric(c.name, c.a), units.metric(c.name, c.b)) if c.name != "bubble_fraction" else (
            units.percent(c.a), units.percent(c.b))
        figs.add_row(units.METRIC_TITLES.get(c.name, c.name.replace("_", " ")), fa, fb, _signed(c.name, c.delta))

    time = Table(title="time breakdown, largest change first", title_justify="left")
    for col in ("part", na, nb, f"{nb} − {na}"):
        time.add_column(col, justify="right" if col != "part" else "left")
    for c in d.time:
        if c.a == 0 and c.b == 0:
            continue
        colour = "green" if c.delta < 0 else "red" if c.delta > 0 else "dim"
        time.add_row(c.name, units.seconds(c.a), units.seconds(c.b),
                     f"[{colour}]{units.signed_seconds(c.delta)}[/{colour}]")

    mem = Table(title="memory on each side's busiest rank, largest change first", title_justify="left")
    for col in ("term", na, nb, f"{nb} − {na}"):
        mem.add_column(col, justify="right" if col != "term" else "left")
    small = 0
    for c in d.memory:
        # Terms that move by less than a MiB are noise at this scale; count them instead.
        if abs(c.delta) < MIB:
            small += c.a != 0 or c.b != 0
            continue
        mem.add_row(c.name, units.gib(c.a), units.gib(c.b), units.signed_gib(c.delta))
    if small:
        mem.caption = f"{small} more terms change by less than 1 MiB"

    why = Text()
    for i, line in enumerate(d.summary):
        why.append(("" if i == 0 else "  • ") + line + "\n", style="bold" if i == 0 else "")
    parts: list[RenderableType] = [head, Text(""), why]
    parts += [knobs if d.knobs else Text("the two candidates have the same knobs", style="dim"), Text(""), figs]
    if d.time:
        parts += [Text(""), time]
    if d.memory:
        parts += [Text(""), mem]
    return Group(*parts)


def precision_table(gain: PrecisionGain) -> Table:
    """A ``project.precision.PrecisionGain``: the recipe's GPU work per part in BF16 and in its low
    precision, under the projected ratio of tokens/s."""
    title = (f"{gain.label} against BF16, same recipe: {gain.ratio:.2f}x the tokens/s "
             f"({gain.low_tokens:,.0f} against {gain.bf16_tokens:,.0f})")
    for name, over in zip(("BF16", gain.precision.upper()), gain.over or (), strict=False):
        if over > 0:
            title += f"; in {name} it does not fit in memory (over the limit by {units.gib(over)})"
    work = sum(b - a for _part, a, b in gain.parts)
    host = gain.host[1] - gain.host[0]
    if abs(host) > abs(work):
        # a host-bound recipe: the low precision's quantize kernels are launches too, and the host's time per
        # launch is the least measured part of a projection (W6012 says where)
        title += (f"; the host's launches decide it ({units.signed_seconds(host)} a step of exposed host time, "
                  f"{units.signed_seconds(work)} of GPU work)")
    caption = "GPU work per step of one rank, before overlap and the pipeline schedule"
    if any(gain.host):
        caption += (f"; beside it, host launches the GPU waits for: {units.seconds(gain.host[0])} a step in BF16, "
                    f"{units.seconds(gain.host[1])} in {gain.precision.upper()}")
    t = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for col in ("part", "BF16", gain.precision.upper(), "change"):
        t.add_column(col, justify="right" if col != "part" else "left")
    for part, a, b in gain.parts:
        if a == 0 and b == 0:
            continue
        colour = "green" if b < a else "red" if b > a else "dim"
        t.add_row(part, units.seconds(a), units.seconds(b), f"[{colour}]{units.signed_seconds(b - a)}[/{colour}]")
    return t
