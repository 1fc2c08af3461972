"""The report's charts, each a function from view-models to one inline ``<svg>`` string."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence

import numpy as np
from attrs import frozen

from primus_lang.ir import units
from primus_lang.report.pareto import pareto_front
from primus_lang.report.sampling import TOP, scatter_sample, trajectory_sample
from primus_lang.report.svg import Scale, Svg, nice_ticks
from primus_lang.report.view import CandidateView, MemoryTerm, RankMemory, ReportData, TimelineEvent

# Okabe-Ito then Tableau: distinguishable for most colour-blind readers, stable across charts.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#4E79A7",
    "#59A14F", "#B07AA1", "#9C755F", "#76B7B2", "#EDC948", "#FF9DA7", "#BAB0AC", "#E15759",
)
BLOCK_COLOURS = {"F": "#4E79A7", "B": "#59A14F", "W": "#B07AA1", "comm": "#F28E2B"}
BLOCK_NAMES = {"F": "forward", "B": "backward (input grad)", "W": "weight grad", "comm": "communication"}
FONT = 11
CAPACITY_COLOUR = "#C0392B"
LIMIT_COLOUR = "#E67E22"
MUTED = "#888888"
GRID = "#E5E5E5"


def colour_map(names: Sequence[str]) -> dict[str, str]:
    """A colour per name, in first-seen order, so a term keeps its colour in every chart."""
    out: dict[str, str] = {}
    for name in names:
        if name not in out:
            out[name] = PALETTE[len(out) % len(PALETTE)]
    return out


CHAR_PX = 6.2  # the width of a character of the charts' text, about


def legend_row(svg: Svg, items: Sequence[tuple[str, str]], x: float, y: float, width: float) -> float:
    """Swatches left to right, wrapping at ``width``; returns the y below the last row."""
    cx, cy = x, y
    for label, colour in items:
        w = 14 + CHAR_PX * len(label) + 14
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 16
        svg.rect(cx, cy - 9, 10, 10, colour)
        svg.text(cx + 14, cy, label, font_size=FONT)
        cx += w
    svg.height = max(svg.height, cy + 8)  # a legend that wrapped to more rows than its chart planned for
    return cy + 16


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


MIN_BLOCK_PX = 4.0  # narrower blocks cannot be told apart one by one
TAIL_COLOUR = "#E4E4E4"  # the step after its last pass


@frozen
class Run:
    """Pixels ``[first, last)`` of a stage's row where narrow blocks are drawn as shares of the row's
    height: ``shares`` is (kind, eighths of the time there) in F, B, W order."""

    stage: int
    first: int
    last: int
    shares: tuple[tuple[str, int], ...]


RUN_KINDS = ("F", "B", "W")


def narrow_runs(events: Sequence[TimelineEvent], px_per_second: float, pixels: int) -> list[Run]:
    """Blocks narrower than ``MIN_BLOCK_PX`` drawn at a few pixels' resolution. A long interleaved step
    has thousands of them: one rectangle each would blur into the hatching and weigh most of the file,
    and colouring by the larger kind would hide the forwards behind the twice-longer backwards. So each
    bin of ``MIN_BLOCK_PX`` pixels shows the share of its time each kind takes, in eighths of the row's
    height, and neighbouring bins with the same shares merge."""
    bin_px = int(MIN_BLOCK_PX)
    bins = pixels // bin_px + 1
    per_bin = px_per_second / bin_px  # bins per second
    by_stage: dict[int, list[TimelineEvent]] = {}
    for e in events:
        if e.kind in RUN_KINDS and (e.end - e.start) * px_per_second < MIN_BLOCK_PX:
            by_stage.setdefault(e.stage, []).append(e)
    runs: list[Run] = []
    for stage, evs in sorted(by_stage.items()):
        cover = np.zeros((len(RUN_KINDS), bins))
        for e in evs:
            k = RUN_KINDS.index(e.kind)
            p0, p1 = e.start * per_bin, e.end * per_bin
            for i in range(max(int(p0), 0), min(math.ceil(p1), bins)):
                cover[k, i] += min(p1, i + 1) - max(p0, i)
        eighths = np.rint(np.clip(cover, 0.0, 1.0) * 8).astype(int)
        keys = [tuple((RUN_KINDS[k], int(eighths[k, i])) for k in range(len(RUN_KINDS)) if eighths[k, i])
                for i in range(bins)]
        i = 0
        while i < bins:
            j = i
            while j + 1 < bins and keys[j + 1] == keys[i]:
                j += 1
            if keys[i]:
                runs.append(Run(stage, i * bin_px, min((j + 1) * bin_px, pixels), keys[i]))
            i = j + 1
    return runs


def _idle(events: Sequence[TimelineEvent], until: float) -> bool:
    """Whether one stage's passes leave a gap before ``until`` (its timeline then shows a bubble)."""
    reached = 0.0
    for e in sorted((e for e in events if e.kind != "comm"), key=lambda e: e.start):
        if e.start > reached * (1 + 1e-9) + 1e-12:
            return True
        reached = max(reached, e.end)
    return reached < until * (1 - 1e-9)


def timeline_chart(cand: CandidateView, width: float = 960) -> str:
    """One step of the pipeline: a row per stage, F/B/W and communication blocks; the gaps are bubbles."""
    events = cand.timeline
    stages = sorted({e.stage for e in events})
    row_h, gap, left, top = 22.0, 6.0, 70.0, 10.0
    plot_w = width - left - 20
    end = max([e.end for e in events] + [cand.step_time])
    height = top + len(stages) * (row_h + gap) + 70
    svg = Svg(width, height, f"pipeline timeline of one step for {cand.label}", "chart timeline")
    svg.raw_defs(
        '<pattern id="bubble" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="6" height="6" fill="#F4F4F4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#D0D0D0" '
        'stroke-width="2"/></pattern>'
    )
    x = Scale(0.0, end, left, left + plot_w)
    pps = plot_w / end if end > 0 else 1.0
    wide = [e for e in events if e.kind == "comm" or (e.end - e.start) * pps >= MIN_BLOCK_PX]
    row_of = {s: i for i, s in enumerate(stages)}
    chunked = any(e.chunk for e in events)
    with_titles = len(wide) <= 4000  # hover titles double the bytes; past this the file grows too big
    # after the pipeline's last pass the step still syncs gradients and steps the optimizer: that is no bubble
    passes_end = max([e.end for e in events if e.kind != "comm"], default=0.0)
    for s, i in row_of.items():
        y = top + i * (row_h + gap)
        svg.rect(left, y, x(passes_end) - left, row_h, "url(#bubble)", class_="bubble")
        if end > passes_end:
            svg.rect(x(passes_end), y, x(end) - x(passes_end), row_h, TAIL_COLOUR, class_="tail")
        svg.text(left - 8, y + row_h / 2 + 4, f"stage {s}", font_size=FONT, text_anchor="end")
    runs = narrow_runs(events, pps, int(plot_w))
    run_titles = len(runs) <= 1500
    for r in runs:
        y = top + row_of[r.stage] * (row_h + gap)
        t0, t1 = r.first / pps, r.last / pps
        what = ", ".join(f"{BLOCK_NAMES[k]} {n * 100 // 8}%" for k, n in r.shares)
        for kind, n in r.shares:
            h = row_h * min(n, 8) / 8
            svg.rect(left + r.first, y, r.last - r.first, h, BLOCK_COLOURS[kind],
                     f"stage {r.stage}, {units.seconds(t0)} – {units.seconds(t1)}: {what} of the time "
                     "(blocks narrower than a few pixels)" if run_titles else None,
                     class_=f"block block-{kind} narrow")
            y += h
    for e in sorted(wide, key=lambda e: (e.kind == "comm", e.start)):
        y = top + row_of[e.stage] * (row_h + gap)
        comm = e.kind == "comm"
        # Communication is drawn as a thin band in the lower part of the row, over compute if it overlaps.
        by, bh = (y + row_h * 0.65, row_h * 0.35) if comm else (y, row_h)
        x0, x1 = x(e.start), x(max(e.end, e.start))
        chunk = f" chunk {e.chunk}" if chunked else ""
        mb = f" mb {e.microbatch}" if e.microbatch >= 0 else ""
        title = (f"stage {e.stage}{chunk} {BLOCK_NAMES.get(e.kind, e.kind)}{mb}: "
                 f"{units.seconds(e.start)} – {units.seconds(e.end)}") if with_titles else None
        # A rank's second virtual stage is drawn lighter, so interleaving reads at a glance.
        svg.rect(x0, by, max(x1 - x0, 0.5), bh, BLOCK_COLOURS.get(e.kind, MUTED), title,
                 class_=f"block block-{e.kind}", stroke="#FFFFFF", stroke_width=0.5,
                 fill_opacity=0.6 if e.chunk % 2 else None)
        if not comm and x1 - x0 > 16 and e.microbatch >= 0:
            svg.text((x0 + x1) / 2, y + row_h / 2 + 4, str(e.microbatch), font_size=9, fill="#FFFFFF",
                     text_anchor="middle")
    base = top + len(stages) * (row_h + gap)
    for t in nice_ticks(0.0, end, 8):
        if t > end * 1.0001:
            continue
        svg.line(x(t), base, x(t), base + 4, "#333333")
        svg.text(x(t), base + 16, units.seconds(t), font_size=FONT, text_anchor="middle")
    split_w = any(e.kind == "W" for e in events)
    names = {**BLOCK_NAMES, "B": BLOCK_NAMES["B"] if split_w else "backward"}
    items = [(names[k], BLOCK_COLOURS[k]) for k in ("F", "B", "W", "comm") if any(e.kind == k for e in events)]
    if len(stages) > 1 or _idle(events, passes_end):
        items.append(("idle (bubble)", "url(#bubble)"))
    if end > passes_end:
        items.append(("gradient sync and optimizer", TAIL_COLOUR))
    legend_row(svg, items, left, base + 40, plot_w)
    return svg.render()


def _gib_ticks(most: float, count: int) -> list[float]:
    """Ticks at round GiB values, since bytes are read in GiB."""
    return [t * units.GIB for t in nice_ticks(0.0, most / units.GIB, count)]


def term_group(name: str) -> str:
    """The bar segment a memory term is drawn in: the memory account names its activation terms
    ``act: <tensor>`` and qualifies others in parentheses (``adam moments (experts)``); one segment per
    stem keeps the chart to a dozen colours, and the tooltip lists the members."""
    if ":" in name:
        stem = name.split(":", 1)[0].strip()
        return "activations" if stem == "act" else stem
    return re.sub(r"\s*\([^)]*\)$", "", name).strip() or name


def _groups(rank: RankMemory) -> list[tuple[str, int, list[MemoryTerm]]]:
    out: dict[str, tuple[int, list[MemoryTerm]]] = {}
    for term in rank.terms:
        total, members = out.get(term_group(term.name), (0, []))
        out[term_group(term.name)] = (total + term.bytes, [*members, term])
    return [(g, total, members) for g, (total, members) in out.items()]


def memory_chart(data: ReportData, cands: Sequence[CandidateView], width: float = 960) -> str:
    """Stacked bars per (candidate, rank class) against the GPU capacity and the headroom line."""
    rows = [(c, r) for c in cands for r in c.ranks]
    groups = colour_map([term_group(t.name) for _, r in rows for t in r.terms])
    left, top, bar_h, gap, head_h = 190.0, 30.0, 16.0, 4.0, 20.0
    plot_w = width - left - 80
    plot_bottom = top + len(rows) * (bar_h + gap) + head_h * len(cands)
    legend_rows = 1 + int(sum(34 + CHAR_PX * len(n) for n in groups) // plot_w)
    height = plot_bottom + 60 + 16 * legend_rows
    svg = Svg(width, height, "memory per rank class against GPU capacity", "chart memory")
    most = max([r.total for _, r in rows] + [data.capacity, 1]) * 1.02
    ticks = [t for t in _gib_ticks(most, 8) if t <= most]
    x = Scale(0.0, most, left, left + plot_w)
    for t in ticks:
        svg.line(x(t), top - 4, x(t), plot_bottom, GRID)
        svg.text(x(t), plot_bottom + 14, units.gib_tick(t), font_size=FONT, text_anchor="middle")
    y = top
    previous = None
    for cand, rank in rows:
        if cand is not previous:
            svg.text(8, y + head_h - 6, cand.label, font_size=FONT, font_weight="bold", class_="group")
            y += head_h
        previous = cand
        svg.text(left - 6, y + bar_h - 3, _shorten(rank.name, 30), font_size=FONT, text_anchor="end")
        cursor = 0
        for group, total, members in _groups(rank):
            if total <= 0:
                continue
            detail = "; ".join(f"{m.name} {units.gib(m.bytes)}"
                               for m in sorted(members, key=lambda m: -m.bytes)[:8] if m.bytes > 0)
            svg.rect(x(cursor), y, x(cursor + total) - x(cursor), bar_h, groups[group],
                     f"{cand.label} · {rank.name} · {group}: {units.gib(total)}"
                     + (f" ({detail})" if len(members) > 1 else ""), class_="term")
            cursor += total
        over = rank.total > data.limit
        svg.text(x(rank.total) + 4, y + bar_h - 3, units.gib(rank.total), font_size=FONT,
                 fill=CAPACITY_COLOUR if over else "#333333")
        y += bar_h + gap
    svg.line(x(data.capacity), top - 8, x(data.capacity), plot_bottom, CAPACITY_COLOUR, stroke_width=2,
             class_="capacity")
    svg.text(x(data.capacity), top - 12, f"capacity {units.gib(data.capacity)}", font_size=FONT,
             text_anchor="middle", fill=CAPACITY_COLOUR)
    if data.headroom > 0:
        svg.line(x(data.limit), top - 8, x(data.limit), plot_bottom, LIMIT_COLOUR, stroke_width=1.5,
                 stroke_dasharray="5,3", class_="headroom")
        svg.text(x(data.limit) - 4, plot_bottom + 30,
                 f"limit after {units.percent(data.headroom)} headroom: {units.gib(data.limit)}",
                 font_size=FONT, text_anchor="end", fill=LIMIT_COLOUR)
    legend_row(svg, list(groups.items()), left, plot_bottom + 52, plot_w)
    return svg.render()


def _axes(svg: Svg, x: Scale, y: Scale, xt: list[float], yt: list[float], xfmt: str, yfmt: str,
          box: tuple[float, float, float, float]) -> None:
    left, top, right, bottom = box
    for t in yt:
        svg.line(left, y(t), right, y(t), GRID)
        svg.text(left - 6, y(t) + 4, units.metric(yfmt, t), font_size=FONT, text_anchor="end")
    for t in xt:
        svg.line(x(t), bottom, x(t), bottom + 4, "#333333")
        label = str(int(t)) if xfmt == "count" else units.gib_tick(t) if xfmt == "memory_peak" else units.metric(xfmt, t)
        # centred under its tick, but kept inside the chart (the last tick sits at its right edge)
        half = 0.5 * CHAR_PX * len(label)
        svg.text(min(x(t), svg.width - half - 2), bottom + 16, label, font_size=FONT, text_anchor="middle")
    svg.line(left, bottom, right, bottom, "#333333")
    svg.line(left, top, left, bottom, "#333333")


def scatter_chart(data: ReportData, width: float = 960, height: float = 420) -> str:
    """Throughput against memory peak for every evaluated candidate; the Pareto front as a staircase."""
    left, top, right, bottom = 80.0, 20.0, width - 20, height - 70
    svg = Svg(width, height, "throughput against memory peak", "chart scatter")
    pts = [c for c in data.evaluated if math.isfinite(c.tokens_per_gpu)]
    mems = [c.memory_peak for c in pts] + [data.capacity]
    xt = _gib_ticks(max(mems) * 1.02, 8)
    yt = nice_ticks(0.0, max([c.tokens_per_gpu for c in pts] + [1.0]) * 1.05, 6)
    x = Scale(0.0, xt[-1], left, right)
    y = Scale(0.0, yt[-1], bottom, top)
    _axes(svg, x, y, xt, yt, "memory_peak", "tokens_per_gpu", (left, top, right, bottom))
    svg.line(x(data.capacity), top, x(data.capacity), bottom, CAPACITY_COLOUR, stroke_width=2, class_="capacity")
    if data.headroom > 0:
        svg.line(x(data.limit), top, x(data.limit), bottom, LIMIT_COLOUR, stroke_dasharray="5,3",
                 class_="headroom")
    for c, many in scatter_sample(pts).drawn:
        tip = (f"{c.label}: {units.rate(c.tokens_per_gpu)} tokens/s/GPU, peak {units.gib(c.memory_peak)}"
               + ("" if c.fits else " (does not fit)") + (f"; it stands for {many:,} here" if many > 1 else ""))
        if c.fits:
            svg.circle(x(c.memory_peak), y(c.tokens_per_gpu), 3.2, "#4E79A7", tip, fill_opacity=0.55,
                       class_="point")
        else:
            cx, cy = x(c.memory_peak), y(c.tokens_per_gpu)
            svg.path(f"M{cx - 3:.1f},{cy - 3:.1f}L{cx + 3:.1f},{cy + 3:.1f}M{cx - 3:.1f},{cy + 3:.1f}"
                     f"L{cx + 3:.1f},{cy - 3:.1f}", stroke=MUTED, stroke_width=1.2, class_="point over")
    front = pareto_front(pts)
    stairs: list[tuple[float, float]] = []
    for c in front:
        if stairs:
            stairs.append((x(c.memory_peak), stairs[-1][1]))
        stairs.append((x(c.memory_peak), y(c.tokens_per_gpu)))
    svg.polyline(stairs, "#E15759", stroke_width=1.5, class_="pareto")
    for c in front:
        svg.circle(x(c.memory_peak), y(c.tokens_per_gpu), 5, "none", f"Pareto: {c.label}",
                   stroke="#E15759", stroke_width=2, class_="pareto-point")
    if data.baseline is not None and math.isfinite(data.baseline.tokens_per_gpu):
        b = data.baseline
        svg.rect(x(b.memory_peak) - 5, y(b.tokens_per_gpu) - 5, 10, 10, "none", f"baseline: {b.label}",
                 stroke="#333333", stroke_width=2, class_="baseline")
    if data.winner is not None and math.isfinite(data.winner.tokens_per_gpu):
        w = data.winner
        svg.path(_star(x(w.memory_peak), y(w.tokens_per_gpu), 9), fill="#F0B400", stroke="#333333",
                 class_="winner")
    svg.text((left + right) / 2, bottom + 34, "memory peak per GPU (largest rank class)", font_size=FONT,
             text_anchor="middle")
    svg.text(14, (top + bottom) / 2, "tokens/s/GPU", font_size=FONT, text_anchor="middle",
             transform=f"rotate(-90 14 {(top + bottom) / 2:.0f})")
    items = [("fits", "#4E79A7"), ("does not fit", MUTED), ("Pareto front", "#E15759"), ("winner", "#F0B400"),
             ("baseline (square)", "#333333"), ("capacity", CAPACITY_COLOUR), ("headroom limit", LIMIT_COLOUR)]
    absent = {"does not fit": all(c.fits for c in pts), "baseline (square)": data.baseline is None,
              "winner": data.winner is None, "headroom limit": data.headroom <= 0}
    legend_row(svg, [i for i in items if not absent.get(i[0], False)], left, bottom + 54, right - left)
    return svg.render()


def _star(cx: float, cy: float, r: float) -> str:
    pts = []
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.45
        angle = math.pi / 2 + i * math.pi / 5
        pts.append(f"{cx + radius * math.cos(angle):.1f},{cy - radius * math.sin(angle):.1f}")
    return "M" + "L".join(pts) + "Z"


def trajectory_chart(data: ReportData, width: float = 960, height: float = 360) -> str:
    """Each evaluation's objective and the incumbent so far, coloured by the strategy that proposed it."""
    left, top, right, bottom = 80.0, 20.0, width - 20, height - 70
    metric = data.objective_metric
    svg = Svg(width, height, "search trajectory", "chart trajectory")
    trajs = [t for t in data.trajectories if t.points]
    values = [p.value for t in trajs for p in t.points if math.isfinite(p.value)]
    values += [p.incumbent for t in trajs for p in t.points if math.isfinite(p.incumbent)]
    last = max([p.evaluation for t in trajs for p in t.points] + [1])
    xt = nice_ticks(0.0, float(last), 8)
    lo = min([*values, 0.0]) if metric != "step_time" else 0.0
    yt = nice_ticks(lo, max([*values, 1e-09]) * 1.05, 6)
    x = Scale(0.0, xt[-1], left, right)
    y = Scale(yt[0], yt[-1], bottom, top)
    _axes(svg, x, y, xt, yt, "count", metric, (left, top, right, bottom))
    colours = colour_map([t.strategy for t in trajs])
    for t in trajectory_sample(trajs):
        colour = colours[t.strategy]
        steps: list[tuple[float, float]] = []
        for p in t.points:
            if not math.isfinite(p.incumbent):
                continue
            if steps:
                steps.append((x(p.evaluation), steps[-1][1]))
            steps.append((x(p.evaluation), y(p.incumbent)))
        svg.polyline(steps, colour, stroke_width=2, class_="incumbent")
        for p in t.points:
            if math.isfinite(p.value):
                svg.circle(x(p.evaluation), y(p.value), 2.6, colour,
                           f"{t.strategy} #{p.evaluation}: {units.metric(metric, p.value)}", fill_opacity=0.5,
                           class_="evaluation")
            else:
                svg.circle(x(p.evaluation), bottom - 3, 2.0, "none", f"{t.strategy} #{p.evaluation}: no value",
                           stroke=MUTED, class_="evaluation rejected")
    svg.text((left + right) / 2, bottom + 34, "evaluation", font_size=FONT, text_anchor="middle")
    title = units.METRIC_TITLES.get(metric, metric)
    svg.text(14, (top + bottom) / 2, title, font_size=FONT, text_anchor="middle",
             transform=f"rotate(-90 14 {(top + bottom) / 2:.0f})")
    items = [(f"{s} (dots: evaluations, line: incumbent)", c) for s, c in colours.items()]
    legend_row(svg, items, left, bottom + 54, right - left)
    return svg.render()


def breakdown_chart(cands: Sequence[CandidateView], width: float = 960) -> str:
    """Each shown candidate's step time split into the projection's breakdown kinds."""
    # Colours follow the projection's order of kinds, so a kind keeps its colour whatever is zero here.
    every = colour_map([k for c in cands for k, _ in c.breakdown])
    kinds = {k: colour for k, colour in every.items() if any(v > 0 for c in cands for kk, v in c.breakdown if kk == k)}
    left, top, bar_h, gap = 300.0, 10.0, 20.0, 8.0
    plot_w = width - left - 90
    plot_bottom = top + len(cands) * (bar_h + gap)
    legend_rows = 1 + int(sum(34 + CHAR_PX * len(n) for n in kinds) // plot_w)
    height = plot_bottom + 40 + 16 * legend_rows
    svg = Svg(width, height, "projection breakdown of the step time", "chart breakdown")
    most = max([max(sum(s for _, s in c.breakdown), c.step_time) for c in cands] + [1e-9])
    x = Scale(0.0, most, left, left + plot_w)
    for t in nice_ticks(0.0, most, 8):
        if t > most * 1.0001:
            continue
        svg.line(x(t), top - 4, x(t), plot_bottom, GRID)
        svg.text(x(t), plot_bottom + 14, units.seconds(t), font_size=FONT, text_anchor="middle")
    y = top
    for c in cands:
        svg.text(left - 6, y + bar_h - 5, _shorten(c.label, 44), font_size=FONT, text_anchor="end")
        cursor = 0.0
        for kind, secs in c.breakdown:
            if secs <= 0:
                continue
            svg.rect(x(cursor), y, x(cursor + secs) - x(cursor), bar_h, kinds[kind],
                     f"{c.label} · {kind}: {units.seconds(secs)} ({units.percent(secs / c.step_time)})"
                     if c.step_time > 0 else f"{kind}: {units.seconds(secs)}", class_="part")
            cursor += secs
        svg.line(x(c.step_time), y - 2, x(c.step_time), y + bar_h + 2, "#111111", stroke_width=2,
                 class_="step")
        svg.text(x(max(cursor, c.step_time)) + 6, y + bar_h - 5, units.seconds(c.step_time), font_size=FONT)
        y += bar_h + gap
    legend_row(svg, [*kinds.items(), ("step time (tick)", "#111111")], left, plot_bottom + 34, plot_w)
    return svg.render()


def scatter_note(data: ReportData) -> str:
    """When the scatter drew a sample: what it left out, and a histogram of every candidate."""
    pts = [c for c in data.evaluated if math.isfinite(c.tokens_per_gpu)]
    sample = scatter_sample(pts)
    if not sample.thinned:
        return ""
    note = (f"{sample.total:,} candidates were evaluated; to keep this page small the chart draws "
            f"{len(sample.drawn):,} of them: the Pareto front, the best {TOP}, and the best candidate of each "
            "small cell of the chart, whose tooltip says how many it stands for. The trace holds every "
            "evaluation; the histogram counts them all.")
    return f'<p class="note">{html.escape(note)}</p>' + histogram_chart(pts)


def trajectory_note(data: ReportData) -> str:
    trajs = [t for t in data.trajectories if t.points]
    total = sum(len(t.points) for t in trajs)
    drawn = sum(len(t.points) for t in trajectory_sample(trajs))
    if drawn == total:
        return ""
    note = (f"The chart draws {drawn:,} of {total:,} evaluations: every step of each incumbent line, and "
            "one evaluation of each small cell of the chart. The trace holds every evaluation.")
    return f'<p class="note">{html.escape(note)}</p>'


def histogram_chart(cands: Sequence[CandidateView], width: float = 960, height: float = 220,
                    bins: int = 40) -> str:
    """How many evaluated candidates reach each throughput, fitting and not fitting stacked."""
    left, top, right, bottom = 80.0, 20.0, width - 20, height - 50
    svg = Svg(width, height, "evaluated candidates by throughput", "chart histogram")
    most = max([c.tokens_per_gpu for c in cands] + [1.0])
    xt = nice_ticks(0.0, most * 1.02, 8)
    edges = np.linspace(0.0, xt[-1], bins + 1)
    rates = np.array([c.tokens_per_gpu for c in cands])
    fits = np.array([c.fits for c in cands], dtype=bool)
    fit_counts = np.histogram(rates[fits], edges)[0]
    over_counts = np.histogram(rates[~fits], edges)[0]
    yt = nice_ticks(0.0, float(max(1, int((fit_counts + over_counts).max()))) * 1.05, 5)
    x = Scale(0.0, xt[-1], left, right)
    y = Scale(0.0, yt[-1], bottom, top)
    _axes(svg, x, y, xt, yt, "tokens_per_gpu", "count", (left, top, right, bottom))
    for i in range(bins):
        a, b = float(edges[i]), float(edges[i + 1])
        base = 0
        for n, colour, what in ((int(fit_counts[i]), "#4E79A7", "fit"), (int(over_counts[i]), MUTED, "do not fit")):
            if n:
                svg.rect(x(a) + 0.5, y(base + n), x(b) - x(a) - 1, y(base) - y(base + n), colour,
                         f"{units.rate(a)}–{units.rate(b)} tokens/s/GPU: {n:,} candidates that {what}",
                         class_="bar")
            base += n
    svg.text((left + right) / 2, bottom + 34, "tokens/s/GPU", font_size=FONT, text_anchor="middle")
    svg.text(14, (top + bottom) / 2, "candidates", font_size=FONT, text_anchor="middle",
             transform=f"rotate(-90 14 {(top + bottom) / 2:.0f})")
    return svg.render()


def empty_note(text: str) -> str:
    return f'<p class="empty">{html.escape(text)}</p>'


__all__ = [
    "breakdown_chart",
    "colour_map",
    "empty_note",
    "histogram_chart",
    "memory_chart",
    "scatter_chart",
    "scatter_note",
    "timeline_chart",
    "trajectory_chart",
    "trajectory_note",
]
