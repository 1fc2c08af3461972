"""The report page: one self-contained HTML document (inline CSS and SVG, no script, no network)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from primus_lang import __version__
from primus_lang.ir import units
from primus_lang.report import charts, clusters
from primus_lang.report.compare import diff
from primus_lang.report.view import CandidateView, ReportData

CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;margin:0;color:#222;
background:#fff;font-size:14px}
main{max-width:1000px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;
padding-bottom:4px}
.facts{color:#555;margin:0 0 12px}.facts span{margin-right:14px;white-space:nowrap}.facts span.long{white-space:normal}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;padding:10px 14px;
min-width:200px;flex:1}.card .big{font-size:24px;font-weight:600}.card .label{color:#666;font-size:12px}
.card code{font-size:12px;word-break:break-all}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:4px 6px;border-bottom:1px solid #eee;
text-align:right}th{background:#f6f6f6}td.l,th.l{text-align:left}tr.winner td{background:#FFF7DA}
tr.baseline td{background:#F0F4FA}td code{font-size:12px;word-break:break-all}td{white-space:nowrap}
td.l{white-space:normal}.knobs{display:grid;grid-template-columns:repeat(4,auto 1fr);gap:2px 10px;font-size:13px}
.knobs span{color:#555}details{margin-top:8px}summary{cursor:pointer;color:#444}
.chart{display:block;max-width:100%;height:auto;font-family:inherit}
.empty{color:#888;font-style:italic}.over{color:#C0392B;font-weight:600}.note{color:#666;font-size:12px}
ul.why li{margin:3px 0}footer{margin-top:30px;color:#999;font-size:12px}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _role(data: ReportData, cand: CandidateView) -> str:
    if cand is data.winner:
        return "winner"
    if cand is data.baseline:
        return "baseline"
    return "runner-up"


def shown(data: ReportData) -> list[CandidateView]:
    """The winner, the runners-up and the baseline, once each, in that order."""
    out: list[CandidateView] = []
    for cand in [data.winner, *data.runners_up, data.baseline]:
        if cand is not None and all(cand.label != c.label for c in out):
            out.append(cand)
    return out


def _spare(data: ReportData, cand: CandidateView) -> str:
    spare = data.limit - cand.memory_peak
    text = units.gib(spare) if spare >= 0 else "over by " + units.gib(-spare)
    return text if spare >= 0 else f'<span class="over">{_e(text)}</span>'


def _figures_table(data: ReportData, cands: Sequence[CandidateView]) -> str:
    banded = [c for c in cands if c.basis]
    band_head = f"<th>{_e(f'{banded[0].coverage:.0%} band')}</th>" if banded else ""
    head = ("<tr><th class='l'>role</th><th class='l'>layout</th><th>tokens/s/GPU</th>" + band_head +
            "<th>step time</th><th>TFLOP/s/GPU</th><th>MFU</th><th>bubble</th><th>memory peak</th>"
            "<th>spare vs limit</th></tr>")
    rows = []
    for c in cands:
        role = _role(data, c)
        spare = _spare(data, c)
        spare_cell = spare if spare.startswith("<span") else _e(spare)
        band = f"<td>{_e(units.band(c.tokens_low, c.tokens_high))}</td>" if banded else ""
        rows.append(
            f"<tr class='{role}'><td class='l'>{_e(role)}</td><td class='l'><code>{_e(c.label)}</code></td>"
            f"<td>{_e(units.rate(c.tokens_per_gpu))}</td>{band}<td>{_e(units.seconds(c.step_time))}</td>"
            f"<td>{_e(f'{c.tflops_per_gpu:,.1f}')}</td><td>{_e(units.percent(c.mfu))}</td>"
            f"<td>{_e(units.percent(c.bubble_fraction))}</td><td>{_e(units.gib(c.memory_peak))}</td>"
            f"<td>{spare_cell}</td></tr>"
        )
    return f"<table class='figures'>{head}{''.join(rows)}</table>"


def _breakdown_table(cands: Sequence[CandidateView]) -> str:
    kinds: list[str] = []
    for c in cands:
        kinds += [k for k, _ in c.breakdown if k not in kinds]
    kinds = [k for k in kinds if any(v > 0 for c in cands for kk, v in c.breakdown if kk == k)]
    head = "<tr><th class='l'>layout</th>" + "".join(f"<th>{_e(k)}</th>" for k in kinds) + "<th>step</th></tr>"
    rows = []
    for c in cands:
        parts = dict(c.breakdown)
        cells = "".join(f"<td>{_e(units.seconds(parts[k])) if k in parts else ''}</td>" for k in kinds)
        rows.append(f"<tr><td class='l'><code>{_e(c.label)}</code></td>{cells}"
                    f"<td>{_e(units.seconds(c.step_time))}</td></tr>")
    return f"<table class='breakdown'>{head}{''.join(rows)}</table>"


def _cards(data: ReportData) -> str:
    w, b = data.winner, data.baseline
    if w is None:
        return charts.empty_note("the search found no candidate that fits")
    metric = data.objective_metric
    title = units.METRIC_TITLES.get(metric, metric)
    widened = f"; widened: beyond its runs ({'; '.join(w.beyond)})" if w.beyond else ""
    band = (f"<div class='label'>{w.coverage:.0%} band {_e(units.band(w.tokens_low, w.tokens_high))} tokens/s/GPU "
            f"({_e(w.basis)} profile{_e(widened)})</div>" if w.basis else "")
    cards = [
        f"<div class='card winner'><div class='label'>winner · {_e(title)}</div>"
        f"<div class='big'>{_e(units.metric(metric, w.metric(metric)))}</div><code>{_e(w.label)}</code>{band}</div>"
    ]
    if b is not None:
        gain = _gain(data, w, b)
        cards.append(
            f"<div class='card'><div class='label'>baseline{_e(f' ({data.baseline_is})' if data.baseline_is else '')}"
            f" · {_e(title)}</div>"
            f"<div class='big'>{_e(units.metric(metric, b.metric(metric)))}</div><code>{_e(b.label)}</code>"
            f"<div class='label'>winner vs baseline: {_e(gain)}</div></div>"
        )
    cards.append(
        f"<div class='card'><div class='label'>winner's memory peak</div>"
        f"<div class='big'>{_e(units.gib(w.memory_peak))}</div>"
        f"<div class='label'>of {_e(units.gib(data.capacity))}; limit {_e(units.gib(data.limit))}</div></div>"
    )
    return f"<div class='cards'>{''.join(cards)}</div>"


def _gain(data: ReportData, w: CandidateView, b: CandidateView) -> str:
    metric = data.objective_metric
    wv, bv = w.metric(metric), b.metric(metric)
    if not (math.isfinite(wv) and math.isfinite(bv)) or bv == 0:
        return "n/a"
    change = (wv - bv) / abs(bv)
    better = change > 0 if data.objective_sense == "maximize" else change < 0
    word = "better" if better else ("same" if change == 0 else "worse")
    return f"{change * 100:+.1f}% ({word})"


def _why(data: ReportData) -> str:
    """The diff verdicts against the best runner-up and the baseline, in words."""
    w = data.winner
    if w is None:
        return ""
    rivals = [(c, "the runner-up") for c in data.runners_up[:1]]
    if data.baseline is not None and data.baseline.label != w.label:
        rivals.append((data.baseline, "the baseline"))
    items = []
    for rival, name in rivals:
        lines = diff(rival, w, (name, "the winner")).summary
        body = "".join(f"<li>{_e(line[0].upper() + line[1:])}</li>" for line in lines[1:])
        first = lines[0][0].upper() + lines[0][1:]
        items.append(f"<li><b>{_e(first)}</b> (<code>{_e(rival.label)}</code>)<ul>{body}</ul></li>")
    return f"<ul class='why'>{''.join(items)}</ul>" if items else ""


def _knobs_grid(cand: CandidateView) -> str:
    cells = "".join(f"<span>{_e(k)}</span><code>{_e(v)}</code>" for k, v in cand.knobs)
    return f"<div class='knobs'>{cells}</div>"


def _terms_table(cand: CandidateView) -> str:
    """Every term of the winner's fullest rank class, with the formula the memory proof evaluated."""
    peak = max(cand.ranks, key=lambda r: r.total)
    rows = "".join(
        f"<tr><td class='l'>{_e(t.name)}</td><td>{_e(units.gib(t.bytes))}</td><td>{t.bytes:,}</td>"
        f"<td class='l'><code>{_e(t.formula)}</code></td></tr>" for t in peak.terms)
    return (f"<details><summary>every term of the winner's fullest rank class ({_e(peak.name)}, "
            f"{_e(units.gib(peak.total))})</summary><table class='terms'><tr><th class='l'>term</th><th>GiB</th>"
            f"<th>bytes</th><th class='l'>formula</th></tr>{rows}</table></details>")


def render_page(data: ReportData) -> str:
    cands = shown(data)
    facts = [
        ("model", data.model),
        ("cluster", f"{data.cluster}: {data.world} × {data.gpu}" if data.world else ""),
        ("HBM", units.gib(data.capacity)), ("headroom", units.percent(data.headroom)),
        *data.run,
        # across clusters, the objective the clusters' recipes were searched by is not the run's
        ("recipe objective" if data.clusters else "objective", f"{data.objective_sense} {data.objective_metric}"),
        ("evaluated", str(len(data.evaluated))), *data.notes,
    ]
    facts = [(k, v) for k, v in facts if v]
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>primusc plan: {_e(data.space)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>primusc plan: <code>{_e(data.space)}</code></h1>",
        # a sentence (the GPU profile's provenance) wraps; short facts stay on one line each
        "<p class='facts'>" + " ".join(f"<span class='{'long' if len(v) > 60 else 'fact'}'><b>{_e(k)}</b> {_e(v)}</span>"
                                       for k, v in facts) + "</p>",
        "<section id='summary'>", _cards(data), "</section>",
        clusters.section(data.clusters, dict(data.run).get(clusters.COMPARED_BY, "").endswith("tokens_per_dollar"))
        if data.clusters else "",
        "<section id='figures'><h2>Winner, runners-up and baseline</h2>",
        _figures_table(data, cands) if cands else charts.empty_note("no candidate was evaluated"),
        "</section>",
    ]
    w = data.winner
    why = _why(data)
    if why:
        out += ["<section id='why'><h2>Why the winner wins</h2>", why, "</section>"]
    out.append("<section id='timeline'><h2>One step of the winner's pipeline</h2>")
    if w is not None and w.timeline:
        out += ["<p class='note'>Each row is a pipeline stage; hatched gaps are bubbles. Wide blocks carry "
                "their micro-batch; where blocks are narrower than a few pixels, each kind fills its share of "
                "the time as a share of the row's height.</p>", charts.timeline_chart(w)]
        drawn = max(e.end for e in w.timeline)
        if math.isfinite(w.step_time) and abs(drawn - w.step_time) > 1e-3 * w.step_time:
            # The timeline comes from a second run of the schedule simulator; say so if it disagrees.
            out.append(f"<p class='note over'>The timeline's schedule simulation ends at "
                       f"{_e(units.seconds(drawn))}; the projection the search ranked by gives a step of "
                       f"{_e(units.seconds(w.step_time))}.</p>")
    else:
        out.append(charts.empty_note("the projection returned no timeline for the winner"))
    out.append("</section><section id='breakdown'><h2>Where the step time goes</h2>")
    with_breakdown = [c for c in cands if c.breakdown]
    if with_breakdown:
        out += [charts.breakdown_chart(with_breakdown), _breakdown_table(with_breakdown),
                # two figures share the word: say which is which where they meet
                "<p class='note'>The step of the stage that finishes last, by kind; its <em>bubble</em> is that "
                "stage's idle seconds less its pipeline sends. The tables' <em>bubble</em> percentage is another "
                "figure: the idle share of the busiest stage's step.</p>"]
    else:
        out.append(charts.empty_note("no projection breakdown available"))
    out.append("</section><section id='memory'><h2>Memory per rank class</h2>")
    with_ranks = [c for c in cands if c.ranks]
    if with_ranks:
        out += ["<p class='note'>Stacked by term of the byte account; the red line is the GPU's capacity, "
                "the dashed line the limit after the space's headroom.</p>", charts.memory_chart(data, with_ranks)]
        if w is not None and w.ranks:
            out.append(_terms_table(w))
    else:
        out.append(charts.empty_note("no memory account available"))
    out.append("</section><section id='pareto'><h2>Throughput against memory, all evaluated candidates</h2>")
    if any(math.isfinite(c.tokens_per_gpu) for c in data.evaluated):
        out += [charts.scatter_chart(data), charts.scatter_note(data)]
    else:
        out.append(charts.empty_note("no projected candidate"))
    out.append("</section><section id='trajectory'><h2>Search trajectory</h2>")
    if any(t.points for t in data.trajectories):
        out += [charts.trajectory_chart(data), charts.trajectory_note(data)]
    else:
        out.append(charts.empty_note("no search trajectory recorded"))
    out.append("</section>")
    if w is not None and w.knobs:
        out += ["<section id='knobs'><h2>The winner's knobs</h2>", _knobs_grid(w), "</section>"]
    out.append(f"<footer>primusc {_e(__version__)} · a self-contained file: no script, no network.</footer>")
    out.append("</main></body></html>\n")
    return "".join(out)
