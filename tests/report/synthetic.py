"""A synthetic report: view-models filled by small generators, for drawing tests independent of the
search, memory and projection stages. Figures are made up and only need to be self-consistent."""

from __future__ import annotations

import random

from primus_lang.report.view import (
    CandidateView,
    MemoryTerm,
    RankMemory,
    ReportData,
    TimelineEvent,
    Trajectory,
    TrajectoryPoint,
)

GIB = 1 << 30


def one_f_one_b(stages: int, microbatches: int, f: float, b: float, comm: float) -> list[TimelineEvent]:
    """A 1F1B timeline by dependency: F(s, m) after F(s-1, m); B(s, m) after B(s+1, m)."""
    ready_f = [[0.0] * microbatches for _ in range(stages)]
    done_b = [[0.0] * microbatches for _ in range(stages)]
    events: list[TimelineEvent] = []
    order: list[list[tuple[str, int]]] = []
    for s in range(stages):
        warm = min(stages - s - 1, microbatches)
        seq = [("F", m) for m in range(warm)]
        fi, bi = warm, 0
        while bi < microbatches:
            if fi < microbatches:
                seq.append(("F", fi))
                fi += 1
            seq.append(("B", bi))
            bi += 1
        order.append(seq)
    clock = [0.0] * stages
    pos = [0] * stages
    f_end = [[-1.0] * microbatches for _ in range(stages)]
    b_end = [[-1.0] * microbatches for _ in range(stages)]
    while any(pos[s] < len(order[s]) for s in range(stages)):
        for s in range(stages):
            while pos[s] < len(order[s]):
                kind, m = order[s][pos[s]]
                if kind == "F":
                    dep = 0.0 if s == 0 else f_end[s - 1][m]
                    if dep < 0:
                        break
                    start = max(clock[s], dep + (comm if s else 0.0))
                    f_end[s][m] = start + f
                else:
                    dep = f_end[s][m] if s == stages - 1 else b_end[s + 1][m]
                    if dep < 0:
                        break
                    start = max(clock[s], dep + (comm if s < stages - 1 else 0.0))
                    b_end[s][m] = start + b
                end = start + (f if kind == "F" else b)
                events.append(TimelineEvent(s, kind, m, start, end))
                if s and kind == "F":
                    events.append(TimelineEvent(s, "comm", m, start - comm, start))
                clock[s] = end
                pos[s] += 1
    _ = ready_f, done_b
    return events


def candidate(label: str, tokens: float, peak: int, fits: bool, evaluation: int, stages: int = 4,
              timeline: bool = False) -> CandidateView:
    step = 1.0e6 / tokens
    ranks = tuple(
        RankMemory(
            name=f"stage {s}" + (" (embedding)" if s == 0 else " (output)" if s == stages - 1 else ""),
            stage=s,
            terms=(
                MemoryTerm("weights", peak // 6),
                MemoryTerm("gradients", peak // 6),
                MemoryTerm("optimizer states", peak // 8),
                MemoryTerm("activations", peak // 3 - s * peak // 40),
                MemoryTerm("logits", peak // 20 if s == stages - 1 else 0),
                MemoryTerm("workspace", peak // 30),
            ),
            total=peak // 6 * 2 + peak // 8 + peak // 3 - s * peak // 40 + (peak // 20 if s == stages - 1 else 0)
            + peak // 30,
        )
        for s in range(stages)
    )
    events = tuple(one_f_one_b(stages, 8, step / 30, step / 15, step / 400)) if timeline else ()
    return CandidateView(
        label=label,
        knobs=tuple((k, v) for k, v in (part.split("=") for part in label.split(","))),
        step_time=step,
        tokens_per_gpu=tokens,
        tflops_per_gpu=tokens * 0.4,
        mfu=tokens * 0.4 / 1307.0,
        bubble_fraction=0.12,
        memory_peak=max(r.total for r in ranks),
        fits=fits,
        breakdown=(("compute", step * 0.7), ("tp_comm", step * 0.06), ("pp_comm", step * 0.02),
                   ("dp_comm", step * 0.04), ("bubble", step * 0.18)),
        ranks=ranks,
        timeline=events,
        strategy="planner" if evaluation <= 12 else "evolutionary",
        evaluation=evaluation,
    )


def report(n: int = 60, seed: int = 1) -> ReportData:
    rng = random.Random(seed)
    evaluated = []
    for i in range(1, n + 1):
        tp, pp = rng.choice((1, 2, 4, 8)), rng.choice((1, 2, 4, 8))
        peak = int(rng.uniform(60, 300) * GIB)
        # More memory tends to buy throughput (less recompute, bigger micro-batches): a visible front.
        tokens = 400 + 1400 * (peak / GIB - 60) / 240 * rng.uniform(0.5, 1.0)
        evaluated.append(candidate(f"tp={tp},pp={pp},mbs={rng.choice((1, 2))},n={i}", tokens, peak,
                                   peak < 240 * GIB, i))
    fitting = sorted((c for c in evaluated if c.fits), key=lambda c: -c.tokens_per_gpu)
    best = fitting[0]
    winner = candidate(best.label, best.tokens_per_gpu, best.memory_peak, True, best.evaluation, timeline=True)
    evaluated[best.evaluation - 1] = winner
    trajs = []
    incumbent = float("-inf")
    for strategy, lo, hi in (("planner", 1, 12), ("evolutionary", 13, n)):
        pts = []
        for c in evaluated[lo - 1 : hi]:
            value = c.tokens_per_gpu if c.fits else float("nan")
            if c.fits:
                incumbent = max(incumbent, value)
            pts.append(TrajectoryPoint(c.evaluation, value, incumbent))
        trajs.append(Trajectory(strategy, tuple(pts)))
    return ReportData(
        space="llama70b <script>alert(1)</script>",
        model="llama3_1_70b",
        cluster="mi325x_x8",
        gpu="mi325x",
        world=64,
        capacity=256 * 10**9,
        headroom=0.05,
        winner=winner,
        runners_up=tuple(fitting[1:4]),
        baseline=evaluated[0],
        evaluated=tuple(evaluated),
        trajectories=tuple(trajs),
        notes=(("seed", "1"),),
    )
