"""What the investigator tells the model: the space, the incumbent, the best and worst trials with
their breakdowns, and what became of its last proposals. Deterministic text: same state, same prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from primus_lang.ir.candidate import KNOBS, Candidate, format_value
from primus_lang.search.trial import EVALUATED, Trial

if TYPE_CHECKING:
    from primus_lang.search.view import SearchView

SYSTEM = """You tune distributed LLM-training recipes (Megatron-LM style) for throughput.
You get a search space (axes and their allowed values), the incumbent recipe and the best and worst
recipes tried so far, each with where its step time goes. Propose recipes likely to beat the incumbent.

Rules:
- Change only the listed axes, only to listed values. Fixed knobs and what is trained (global batch,
  sequence length, model, data, learning rate, MoE routing) must not change.
- Prefer cross-axis moves: change two or more axes together when they only pay off together
  (pipeline size with virtual stages and schedule, tensor parallel with micro-batch and recompute).
- Recipes must fit in memory; more parallelism or recompute frees memory, larger micro-batches use it.
- Tools: `estimate_memory` checks legality and memory for free; `project` projects throughput and
  costs one evaluation of the budget.

Answer with JSON only, no prose around it:
{"proposals": [{"changes": {"<axis>": <value>, ...}, "hypothesis": "<why this should be faster>"}, ...]}
with 3 to 5 proposals. `changes` apply on top of the incumbent."""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "estimate_memory",
            "description": "Check a recipe's legality and per-GPU memory peak against the limit (free).",
            "parameters": {
                "type": "object",
                "properties": {
                    "changes": {"type": "object", "description": "axis -> value, applied on top of the incumbent"}
                },
                "required": ["changes"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "project",
            "description": "Project a recipe's step time, tokens/s/GPU and breakdown (costs one evaluation).",
            "parameters": {
                "type": "object",
                "properties": {
                    "changes": {"type": "object", "description": "axis -> value, applied on top of the incumbent"}
                },
                "required": ["changes"],
            },
        },
    },
]


def _gb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e9:.1f} GB"


def describe_trial(search: SearchView, t: Trial) -> str:
    land = search.land
    if t.candidate is None:
        return "(no recipe)"
    knobs = ", ".join(f"{a.name}={format_value(getattr(t.candidate, a.name))}" for a in land.axes)
    line = f"{knobs} | memory {_gb(t.memory_peak)}"
    ev = t.evaluation
    if ev is not None:
        line += (
            f" | {ev.tokens_per_gpu:.1f} tokens/s/GPU, step {ev.step_time:.4g} s, MFU {ev.mfu:.3f},"
            f" bubble {ev.bubble_fraction:.3f}, exposed comm {ev.exposed_comm:.4g} s"
        )
        shown = [(name, sec) for name, sec in ev.breakdown if sec > 1e-3 * ev.step_time]
        if shown:
            parts = ", ".join(f"{name} {sec:.4g}s" for name, sec in shown)
            line += f" | breakdown: {parts}"
    return line


def user_message(search: SearchView, feedback: Sequence[Trial], proposals: int) -> str:
    land = search.land
    base = land.base
    lines = [
        f"Space `{land.name}`: {land.objective.sense} {land.objective.metric}.",
        f"Memory limit per GPU: {_gb(land.limit)} (capacity {_gb(land.capacity)}).",
        f"Legal points: {len(land)}, of which {int(land.fits.sum())} fit; evaluated so far: {int(search.seen.sum())}.",
    ]
    left = search.meter.remaining_evaluations()
    if left is not None:
        lines.append(f"Evaluations left in the budget: {left}.")
    lines.append("Axes:")
    for a in land.axes:
        lines.append(f"  {a.name}: {' | '.join(format_value(v) for v in a.values)}")
    defaults = Candidate()
    fixed = [
        f"{k}={format_value(getattr(base, k))}"
        for k in KNOBS
        if k not in land.axis_names and (k in ("gbs", "seq_len") or getattr(base, k) != getattr(defaults, k))
    ]
    lines.append(f"Fixed (must not change): {', '.join(fixed)} and every knob not listed as an axis.")
    lines.append("Write values as listed (recompute as none, selective or full(LAYERS,METHOD)).")
    evaluated = sorted(
        (t for t in search.trial_of.values() if t.verdict == EVALUATED),
        key=lambda t: (-(t.score or 0.0), t.number),
    )
    if search.best is not None:
        lines += ["Incumbent:", "  " + describe_trial(search, search.best)]
    if evaluated:
        lines.append("Best so far:")
        lines += ["  " + describe_trial(search, t) for t in evaluated[:5]]
        lines.append("Worst so far:")
        lines += ["  " + describe_trial(search, t) for t in evaluated[-3:][::-1]]
    if feedback:
        lines.append("What became of your last proposals:")
        for t in feedback:
            outcome = t.verdict if not t.reasons else f"{t.verdict}: {'; '.join(t.reasons)}"
            if t.score is not None and search.best is not None and search.best.score:
                outcome += f" (score {t.score / search.best.score:.3f} of the incumbent)"
            lines.append(f"  [{t.hypothesis or 'no hypothesis'}] {t.label or '-'} -> {outcome}")
    lines.append(f"Give {min(3, proposals)} to {proposals} proposals as JSON.")
    return "\n".join(lines)
