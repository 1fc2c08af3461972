"""A synthetic landscape: real Candidates over made-up legality, memory and throughput.

The throughput has interactions on purpose (micro-batch helps only without full recompute, TP costs
less with overlap, VPP only pays with PP), so single-axis sweeps cannot always reach the optimum.
"""

from __future__ import annotations

import itertools

import numpy as np

from primus_lang.ir.candidate import Candidate, Recompute
from primus_lang.ir.space import Objective
from primus_lang.search.evaluator import Evaluator
from primus_lang.search.landscape import AxisView, Landscape
from primus_lang.search.trial import Evaluation

GIB = 2**30
WORLD = 64
AXES = (
    AxisView("tp", (1, 2, 4, 8)),
    AxisView("pp", (1, 2, 4, 8)),
    AxisView("vpp", (1, 2, 4)),
    AxisView("mbs", (1, 2, 4)),
    AxisView("recompute", (Recompute("none"), Recompute("selective"), Recompute("full", 4))),
    AxisView("precision", ("bf16", "fp8")),
    AxisView("tp_comm_overlap", (False, True)),
)
BASE = Candidate(gbs=256, seq_len=4096)


def legal(c: Candidate) -> bool:
    if c.vpp > 1 and c.pp == 1:
        return False
    if c.tp_comm_overlap and c.tp == 1:
        return False
    dp = WORLD // (c.tp * c.pp)
    return c.gbs % (c.mbs * dp) == 0 and c.microbatches(WORLD) >= c.pp


def peak(c: Candidate) -> int:
    weights = 140 * GIB // (c.tp * c.pp)
    act = {"none": 40, "selective": 22, "full": 6}[c.recompute.kind] * GIB * c.mbs // c.tp
    act = act * (1 + (c.pp - 1) // max(1, c.pp)) // 1
    return weights + act + 4 * GIB


def throughput(c: Candidate) -> float:
    compute = 1.0 / (1.0 + 0.06 * np.log2(c.tp) * (0.4 if c.tp_comm_overlap else 1.0))
    mb = {1: 1.0, 2: 1.08, 4: 1.12}[c.mbs] if c.recompute.kind != "full" else 1.0
    rec = {"none": 1.0, "selective": 0.95, "full": 0.75}[c.recompute.kind]
    m = c.microbatches(WORLD)
    bubble = (c.pp - 1) / (c.vpp * m) if c.pp > 1 else 0.0
    prec = 1.35 if c.precision == "fp8" else 1.0
    return 1000.0 * compute * mb * rec * prec / (1.0 + bubble)


def evaluate(c: Candidate) -> Evaluation:
    tps = throughput(c)
    step = c.gbs * c.seq_len / (WORLD * tps)
    m = c.microbatches(WORLD)
    bubble = (c.pp - 1) / (c.vpp * m) if c.pp > 1 else 0.0
    return Evaluation(
        step_time=step,
        tokens_per_gpu=tps,
        tflops_per_gpu=tps * 0.4,
        mfu=tps / 3000.0,
        bubble_fraction=bubble,
        exposed_comm=0.01 * np.log2(c.tp),
        breakdown=(("compute", step * (1 - bubble)), ("bubble", step * bubble)),
    )


def landscape(limit: int = 80 * GIB, objective: Objective | None = None) -> Landscape:
    points = []
    for values in itertools.product(*(a.values for a in AXES)):
        c = BASE.replace(**{a.name: v for a, v in zip(AXES, values, strict=True)})
        if legal(c):
            points.append(c)
    return Landscape(
        "synthetic", AXES, points, [peak(c) for c in points], limit, objective=objective,
        capacity=96 * GIB, explain_illegal=lambda c: ["synthetic rule"], base=BASE,
    )


def upper_bound(land: Landscape, slack: float = 1.0) -> np.ndarray:
    """A valid bound on tokens/s: the throughput without bubble and with perfect overlap."""
    out = np.empty(len(land))
    for i, c in enumerate(land.points):
        prec = 1.35 if c.precision == "fp8" else 1.0
        rec = {"none": 1.0, "selective": 0.95, "full": 0.75}[c.recompute.kind]
        out[i] = slack * 1000.0 * prec * rec * 1.12
    return out


def evaluator() -> Evaluator:
    return Evaluator(evaluate)


def optimum(land: Landscape) -> float:
    return max(throughput(land.points[i]) for i in land.fitting)
