"""Why the winner wins: the knobs that differ and where the step's time went, from the breakdowns."""

from __future__ import annotations

from collections.abc import Sequence

from primus_lang.ir.candidate import Candidate, format_value
from primus_lang.ir.units import gib
from primus_lang.search.strategies.planner import BASELINE_MEANING
from primus_lang.search.trial import Trial

NAMES = {
    "compute": "compute",
    "tp_comm": "exposed TP comm",
    "cp_comm": "exposed CP comm",
    "ep_comm": "exposed EP all-to-all",
    "pp_comm": "exposed PP send/recv",
    "dp_comm": "exposed DP/FSDP comm",
    "host": "host launches",
    "offload": "exposed activation copies to host memory",
    "bubble": "pipeline bubble",
    "optimizer": "optimizer step",
}


def knob_changes(a: Candidate, b: Candidate, axes: Sequence[str]) -> list[str]:
    """``knob x -> y`` for every axis on which ``a`` (the loser) and ``b`` (the winner) differ."""
    return [
        f"{name} {format_value(getattr(a, name))} -> {format_value(getattr(b, name))}"
        for name in axes
        if getattr(a, name) != getattr(b, name)
    ]


def _seconds(x: float) -> str:
    return f"{x * 1e3:.0f} ms" if abs(x) < 1 else f"{x:.2f} s"


def compare(winner: Trial, other: Trial, axes: Sequence[str], metric: str, title: str) -> str:
    """One sentence: what changes from ``other`` to ``winner`` and which parts of the step explain it."""
    if winner.evaluation is None or other.evaluation is None or winner.candidate is None or other.candidate is None:
        return ""
    w, o = winner.evaluation, other.evaluation
    changes = knob_changes(other.candidate, winner.candidate, axes) or ["the same knobs"]
    if metric == "memory_peak" and winner.memory_peak is not None and other.memory_peak is not None:
        gain = f"peak memory {gib(other.memory_peak)} -> {gib(winner.memory_peak)}"
    elif w.step_time == o.step_time and winner.memory_peak is not None and other.memory_peak is not None:
        if winner.memory_peak < other.memory_peak:
            return (f"{title}: {', '.join(changes)}: the same projected step ({_seconds(w.step_time)}); the winner "
                    f"keeps {gib(other.memory_peak - winner.memory_peak)} more memory free.")
        return (f"{title}: {', '.join(changes)}: a tie, the same projected step ({_seconds(w.step_time)}) and "
                "memory peak; either recipe will do.")
    else:
        speedup = w.tokens_per_gpu / o.tokens_per_gpu - 1 if o.tokens_per_gpu else 0.0
        gain = (
            f"{speedup * 100:+.1f}% tokens/s/GPU ({o.tokens_per_gpu:,.0f} -> {w.tokens_per_gpu:,.0f}), "
            f"step {_seconds(o.step_time)} -> {_seconds(w.step_time)}"
        )
    before, after = dict(o.breakdown), dict(w.breakdown)
    deltas = sorted(
        ((after.get(k, 0.0) - before.get(k, 0.0), k) for k in set(before) | set(after)),
        key=lambda d: -abs(d[0]),
    )
    significant = [(d, k) for d, k in deltas if abs(d) >= 0.01 * max(o.step_time, 1e-12)][:3]
    parts = [f"{NAMES.get(k, k)} {'-' if d < 0 else '+'}{_seconds(abs(d))}" for d, k in significant]
    why = f"; where the time went: {', '.join(parts)}" if parts else ""
    if significant and significant[0][1] == "host":
        # the host's time per launch is one fitted number a profile learns only from host-bound runs
        why += (" (host launches lead: the least measured part of a projection, `host_launch` being fitted on "
                "the few runs the host bounds; measure the two to choose)")
    mem = ""
    if winner.memory_peak is not None and other.memory_peak is not None and metric != "memory_peak":
        mem = f"; memory peak {gib(other.memory_peak)} -> {gib(winner.memory_peak)}"
    return f"{title}: {', '.join(changes)}: {gain}{why}{mem}."


def explain(winner: Trial, runner_up: Trial | None, baseline: Trial | None, axes: Sequence[str], metric: str) -> list[str]:
    lines = []
    if runner_up is not None:
        lines.append(compare(winner, runner_up, axes, metric, "Over the runner-up"))
    if baseline is not None and baseline.candidate != winner.candidate:
        lines.append(compare(winner, baseline, axes, metric, "Over the baseline"))
    elif baseline is not None:
        # the space's own recipe (an import's), or the seed planner's when the space names none
        if baseline.is_space_recipe:
            lines.append("The space's baseline (the recipe it was imported from) is already the best found; "
                         "the launch files are the recipe's own.")
        else:
            lines.append(f"The baseline recipe ({BASELINE_MEANING}) is already the best found.")
    return [line for line in lines if line]
