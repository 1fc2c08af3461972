"""The report's section on a plan across clusters: each cluster's run as days against cost on log
axes, its band as a cross, the front as a staircase, and the table beside it."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from primus_lang.report.charts import colour_map
from primus_lang.report.charts import legend_row as legend
from primus_lang.report.svg import Scale, Svg
from primus_lang.report.view import ClusterPoint
from primus_lang.search import days_text

FONT = 11
FRONT = "#E15759"


def views_of(capacity: Any) -> tuple[ClusterPoint, ...]:
    """The view of a ``search.CapacityPlan``: the clusters that have a run (a searched best)."""
    nan = float("nan")
    out = []
    for c in capacity.clusters:
        if c.days is None:
            continue
        cost = c.cost
        out.append(ClusterPoint(c.label, c.gpus, c.recipe, c.days.value, c.days.low, c.days.high,
                                cost.value if cost else nan, cost.low if cost else nan, cost.high if cost else nan,
                                c.front, c.label == capacity.chosen, c.excluded, capacity.note(c), c.front_gpus,
                                c.beyond, c.proven, c.tokens_per_gpu.value if c.tokens_per_gpu else nan,
                                c.tokens_per_dollar.value if c.tokens_per_dollar else nan))
    return tuple(out)


COMPARED_BY = "clusters compared by"  # the run's objective among ``run_facts``


def run_facts(capacity: Any) -> tuple[tuple[str, str], ...]:
    """What the clusters were compared by, for the report's header: the run's objective, the tokens it
    trains and each GPU's price (the report is read by others, who must see what its costs assume)."""
    from primus_lang.ir import text

    prices = dict.fromkeys(f"{c.gpu} {_label(c.price_per_hour)}" if c.price_per_hour > 0 else f"{c.gpu} none"
                           for c in capacity.clusters)
    tokens = text.count(capacity.train_tokens) if capacity.train_tokens > 0 else "not given (no days or cost)"
    return ((COMPARED_BY, capacity.objective), ("train tokens", tokens),
            ("price per GPU-hour", ", ".join(prices)))


def _log_ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks covering [low, high] on a log axis."""
    ticks = []
    for decade in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [m * 10.0**decade for m in (1, 2, 5) if low <= m * 10.0**decade <= high]
    return ticks or [low, high]


def _label(x: float) -> str:
    if not math.isfinite(x):
        return ""  # a figure the cluster has none of (no price)
    return f"{x / 1e6:.3g} M" if x >= 1e6 else f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _gpu(label: str) -> str:
    return next((part.removeprefix("gpu=") for part in label.split(",") if part.startswith("gpu=")), "")


def chart(points: Sequence[ClusterPoint], width: float = 960, height: float = 420) -> str:
    """Days against cost (GPUs where no cluster has a price), both on log axes."""
    priced = all(math.isfinite(p.cost) for p in points)
    ys = [(p.cost_low, p.cost, p.cost_high) if priced else (p.gpus,) * 3 for p in points]
    left, top, right, bottom = 90.0, 20.0, width - 20, height - 76
    svg = Svg(width, height, "days to train against cost" if priced else "days to train against GPUs", "chart")
    xlo, xhi = min(p.days_low for p in points) / 1.2, max(p.days_high for p in points) * 1.2
    ylo, yhi = min(y[0] for y in ys) / 1.2, max(y[2] for y in ys) * 1.2
    x = Scale(math.log10(xlo), math.log10(xhi), left, right)
    y = Scale(math.log10(ylo), math.log10(yhi), bottom, top)
    for t in _log_ticks(ylo, yhi):
        svg.line(left, y(math.log10(t)), right, y(math.log10(t)), "#E5E5E5")
        svg.text(left - 6, y(math.log10(t)) + 4, _label(t), font_size=FONT, text_anchor="end")
    for t in _log_ticks(xlo, xhi):
        svg.line(x(math.log10(t)), bottom, x(math.log10(t)), bottom + 4, "#333333")
        svg.text(x(math.log10(t)), bottom + 16, _label(t), font_size=FONT, text_anchor="middle")
    svg.line(left, bottom, right, bottom, "#333333")
    svg.line(left, top, left, bottom, "#333333")
    gpus = list(dict.fromkeys(_gpu(p.label) for p in points))
    colours = colour_map(gpus)
    for p, (c_low, c, c_high) in zip(points, ys, strict=True):
        cx, cy = x(math.log10(p.days)), y(math.log10(c))
        colour = colours[_gpu(p.label)]
        faint = {"opacity": 0.35} if p.excluded else {}
        svg.line(x(math.log10(p.days_low)), cy, x(math.log10(p.days_high)), cy, colour, class_="band", **faint)
        svg.line(cx, y(math.log10(c_low)), cx, y(math.log10(c_high)), colour, class_="band", **faint)
        tip = f"{p.label}: {days_text(p.days, days=True)}, {p.recipe}" + (f"; {p.excluded}" if p.excluded else "")
        svg.circle(cx, cy, 6 if p.chosen else 4, colour, tip, class_="cluster" + (" chosen" if p.chosen else ""),
                   **faint)
        if p.front:
            svg.circle(cx, cy, 8 if p.chosen else 6.5, "none", f"front: {p.label}", stroke=FRONT, stroke_width=2,
                       class_="front-point")
    front = sorted(((p.days, c) for p, (_, c, _) in zip(points, ys, strict=True) if p.front))
    stairs: list[tuple[float, float]] = []
    for days, c in front:
        if stairs:
            stairs.append((x(math.log10(days)), stairs[-1][1]))
        stairs.append((x(math.log10(days)), y(math.log10(c))))
    if len(stairs) > 1:
        svg.polyline(stairs, FRONT, stroke_width=1.5, class_="front")
    svg.text((left + right) / 2, bottom + 36, "days to train (log)", font_size=FONT, text_anchor="middle")
    legend(svg, [(g, colours[g]) for g in gpus] + [("front", FRONT)], left, bottom + 52, right - left)
    axis = "cost (log)" if priced else "GPUs (log)"
    svg.text(14, (top + bottom) / 2, axis, font_size=FONT, text_anchor="middle",
             transform=f"rotate(-90 14 {(top + bottom) / 2:.0f})")
    return svg.render()


def section(points: Sequence[ClusterPoint], per_price: bool = False) -> str:
    """The section: a note, the chart and a table, one row per cluster (``per_price``: with the tokens a
    unit of price buys, what a run objective of `maximize tokens_per_dollar` chose by)."""
    e = html.escape
    priced = all(math.isfinite(p.cost) for p in points)
    versus = "its cost" if priced else "its GPUs"
    better = "both faster and cheaper" if priced else "both faster and on fewer GPUs"
    rows = "".join(
        f"<tr class='{'winner' if p.chosen else ''}'><td class='l'>{e(p.label)}</td><td>{p.gpus:,}</td>"
        f"<td class='l'><code>{e(p.recipe)}</code></td><td>{_label(p.tokens_per_gpu)}</td>"
        f"<td>{e(days_text(p.days, p.days_low, p.days_high))}{' †' if p.beyond else ''}</td>"
        f"<td>{'' if not math.isfinite(p.cost) else f'{_label(p.cost)} ({_label(p.cost_low)}–{_label(p.cost_high)})'}"
        f"</td>" + (f"<td>{_label(p.tokens_per_dollar)}</td>" if per_price else "")
        + f"<td>{'★' if p.front else ''}</td>" + (f"<td>{'☆' if p.front_gpus else ''}</td>" if priced else "")
        + f"<td class='l'>{e(p.note)}</td></tr>"
        for p in points)
    return (f"<section id='clusters'><h2>Clusters: a whole run's days against {versus}</h2>"
            "<p class='note'>Each point is one cluster's best recipe, coloured by GPU; its cross spans the "
            f"projection's band. Ringed in red and joined: the front (no other cluster {better}); "
            "faint: a cluster a requirement excludes; the larger point is the cluster the launch files are "
            "for.</p>" + chart(points)
            + "<table><thead><tr><th class='l'>cluster</th><th>GPUs</th><th class='l'>best recipe</th>"
              "<th>tokens/s/GPU</th><th>days (band)</th><th>cost (band)</th>"
            + ("<th>tokens per unit of price</th>" if per_price else "")
            + "<th>front</th>" + ("<th>fewer GPUs</th>" if priced else "")
            + "<th></th></tr></thead><tbody>" + rows + "</tbody></table>"
            + (f"<p class='note'>★: no other cluster {better}; ☆: none is both faster and on fewer GPUs.</p>"
               if priced else "") + _beyond_note(points) + _unproven_note(points) + _outside_note(points) + "</section>")


def _outside_note(points: Sequence[ClusterPoint]) -> str:
    from primus_lang.search import outside_line

    line = outside_line((p.label, p.days, p.days_low, p.days_high) for p in points)
    return f"<p class='note'>{html.escape(line)}</p>" if line else ""


def _unproven_note(points: Sequence[ClusterPoint]) -> str:
    from primus_lang.search import unproven_line

    line = unproven_line(len(points), sum(1 for p in points if not p.proven))
    return f"<p class='note'>{html.escape(line)}</p>" if line else ""


def _beyond_note(points: Sequence[ClusterPoint]) -> str:
    """The terminal table's † line: one reason of each kind (its numbers aside) a band is the wider one."""
    from primus_lang.search import beyond_kinds

    kinds = beyond_kinds(r for p in points for r in p.beyond)
    if not kinds:
        return ""
    return ("<p class='note'>†: beyond the runs its GPU profile was fitted on, so its band is the wider one of "
            f"runs no fit saw, e.g. {html.escape('; '.join(kinds))}</p>")
