"""``primusc validate --runs FILE --row ID``: why a published run projects as it does.

A row that misses its measurement raises the question of what primusc understood from it: which
candidate the row was read as, which knobs it left out and how they were judged, and where the
projected step time goes. This shows the same account and projection ``validate`` ranked by.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import NO_ROW
from primus_lang.ir import units
from primus_lang.ir.candidate import format_value
from primus_lang.report.evaluate import Evaluated, evaluate_run
from primus_lang.report.explain import explained_json
from primus_lang.report.terminal import explain_view
from primus_lang.validate import row_result


def chosen(runs: Sequence[Any], ids: Sequence[str]) -> list[Any]:
    """The runs named by ``ids``, in the order given; an unknown id is a user error with the nearest ids."""
    by_id = {r.id: r for r in runs}
    out = []
    for rid in ids:
        if rid not in by_id:
            near = difflib.get_close_matches(rid, list(by_id), n=3)
            raise CompileError(Diagnostic(
                NO_ROW, f"no row `{rid}` in the runs file",
                help=f"did you mean {', '.join(f'`{n}`' for n in near)}?" if near
                else "`primusc validate --runs FILE` lists the row ids"))
        out.append(by_id[rid])
    return out


def _facts(run: Any, ev: Evaluated | None, judged: Any = None) -> dict[str, Any]:
    """What the row was read as, beside the numbers: the JSON and the terminal view share these."""
    out: dict[str, Any] = {"id": run.id, "model": run.group[0], "gpu": run.group[1], "precision": run.group[2],
                           "source": run.source, "release": run.release, "measured": run.measured,
                           "measured_from": run.measured_from, "skipped": run.skip}
    if ev is None:
        return out
    cluster = run.cluster
    projected = ev.view.tokens_per_gpu
    out.update({
        "projected": projected,
        "error": row_result(run, projected).error,
        "gpus": cluster.world, "nodes": cluster.nodes, "gpus_per_node": cluster.gpus_per_node,
        "profile": cluster.gpu.name,
        "moe_balanced": run.balanced,
        "memory_judged_at": {knob: format_value(getattr(judged, knob)) for knob in run.unpublished},
        "offload": run.cand.offload_layers if run.cand is not None else 0,
    })
    return out


def _header(facts: dict[str, Any]) -> RenderableType:
    lines = [Text(f"row {facts['id']}: {facts['model']} · {facts['gpu']} · {facts['precision']}", style="bold")]
    if facts["source"] or facts["release"]:
        lines.append(Text("source: " + ", ".join(x for x in (facts["source"], facts["release"]) if x)))
    if facts["skipped"]:
        lines.append(Text(f"skipped: {facts['skipped']}", style="yellow"))
        return Group(*lines)
    lines.append(Text(f"{facts['gpus']} GPUs: {facts['nodes']} nodes × {facts['gpus_per_node']}, "
                      f"profile {facts['profile']}"))
    err = facts["error"]
    lines.append(Text(f"measured {units.rate(facts['measured'])} tokens/s/GPU, projected "
                      f"{units.rate(facts['projected'])}" + (f" ({err:+.1%})" if err is not None else "")))
    if facts["measured_from"]:
        lines.append(Text(f"measured tokens/s/GPU derived from {facts['measured_from']}; primusc's own "
                          "TFLOP/s/GPU below count causal attention at half the square"))
    if facts["moe_balanced"]:
        lines.append(Text("the benchmark forced an even token split over experts: no busiest-rank imbalance"))
    if facts["memory_judged_at"]:
        lines.append(Text("not published, so memory is judged at the least-memory setting: "
                          + ", ".join(f"{k} = {v}" for k, v in facts["memory_judged_at"].items())))
    if facts["offload"]:
        lines.append(Text(f"activations of {facts['offload']} layers offloaded to host memory (accounted)"))
    return Group(*lines)


def explain_rows(runs: Sequence[Any], ids: Sequence[str], oracle_for: Callable[[Any], Any],
                 ) -> list[tuple[dict[str, Any], Evaluated | None]]:
    """Each named row's facts and, unless it was skipped (its facts say why), its evaluation."""
    explained: list[tuple[dict[str, Any], Evaluated | None]] = []
    for run in chosen(runs, ids):
        if run.skip:
            explained.append((_facts(run, None), None))
            continue
        ev, judged = evaluate_run(run, run.settings(), oracle_for(run))
        explained.append((_facts(run, ev, judged), ev))
    return explained


def rows_json(explained: Sequence[tuple[dict[str, Any], Evaluated | None]]) -> dict[str, Any]:
    return {"rows": [{**facts, **(explained_json(ev) if ev is not None else {})} for facts, ev in explained]}


def rows_view(explained: Sequence[tuple[dict[str, Any], Evaluated | None]]) -> RenderableType:
    """Each row's header, then its memory and time as ``explain`` shows a candidate."""
    parts: list[RenderableType] = []
    for i, (facts, done) in enumerate(explained):
        if i:
            parts.append(Text(""))
        parts.append(_header(facts))
        if done is not None:
            parts += [Text(""), explain_view(done.view, int(done.account.capacity), done.limit)]
    return Group(*parts)
