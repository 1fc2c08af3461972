"""The corpus's recipes measured in both BF16 and a low precision: how the projected ratio of their
tokens/s compares with the measured one (``primusc validate --pairs``; the table in
docs/projection.md). In a search with ``precision : bf16 | fp8`` this ratio decides the winner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from attrs import frozen

from primus_lang.ir import Candidate
from primus_lang.project import precision_label
from primus_lang.validate.runs import Run
from primus_lang.validate.sweeps import Sweep

# knobs that only mean something in a low precision: a recipe's BF16 twin leaves them at their default
LOW_PRECISION_KNOBS = ("precision", "fp8_recipe", "fp8_param_gather")


@frozen
class PrecisionPair:
    """A recipe measured in BF16 and in a low precision: the measured and projected ratios."""

    bf16_id: str
    low_id: str
    group: str  # model / GPU / GPU count
    low: str  # the low precision's label: fp8 (tensorwise), fp4, ...
    measured: float  # measured tokens/s, low precision over BF16
    projected: float

    @property
    def error(self) -> float:
        return self.projected / self.measured - 1


def twin_key(cand: Candidate) -> str:
    """The label of a candidate with its low-precision knobs at their defaults: rows that share it
    (and a model, GPU count, source and release) measured one recipe in different precisions."""
    blank = Candidate()
    return attrs.evolve(cand, **{k: getattr(blank, k) for k in LOW_PRECISION_KNOBS}).label()


def precision_pairs(runs: Sequence[Run], projected: Mapping[str, float]) -> list[PrecisionPair]:
    """Every (BF16 row, low-precision row) of one recipe among ``runs`` that both have a projection."""
    groups: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        if run.cand is None or run.cluster is None or run.model is None or run.id not in projected:
            continue
        key = (run.model.name, run.cluster.gpu.name, str(run.cluster.world), run.source, run.release,
               twin_key(run.cand))
        groups.setdefault(key, []).append(run)
    out = []
    for (model, gpu, world, *_), members in groups.items():
        for b in (r for r in members if r.cand and r.cand.precision == "bf16"):
            for low in (r for r in members if r.cand and r.cand.precision != "bf16"):
                assert low.cand is not None and b.measured and low.measured
                out.append(PrecisionPair(b.id, low.id, f"{model} / {gpu} / {world}", precision_label(low.cand),
                                         low.measured / b.measured, projected[low.id] / projected[b.id]))
    return out


def sweep_pairs(sweeps: Sequence[Sweep]) -> list[PrecisionPair]:
    """The pairs inside the controlled sweeps that vary the precision: one recipe measured in both
    on one release, everything else as the sweep holds it (where a row of the corpus may differ in
    what it does not record, such as torch.compile)."""
    from primus_lang.validate.ranking import rank_sweep

    out: list[PrecisionPair] = []
    for sweep in sweeps:
        if not {"precision", "fp8_recipe"} & set(sweep.varies) or sweep.metric == "step_time_s":
            continue
        result = {v.id: v.projected for v in rank_sweep(sweep).variants if v.projected is not None}
        runs = [attrs.evolve(v.run, id=f"{sweep.id}/{v.id}") for v in sweep.variants
                if v.run is not None and not v.reason and v.id in result]
        out += precision_pairs(runs, {f"{sweep.id}/{k}": p for k, p in result.items()})
    return out


def bundled_pairs(runs: Sequence[Run], projected: Mapping[str, float]) -> list[PrecisionPair]:
    """The pairs inside the bundled controlled sweeps (validation/sweeps.yaml), and among ``runs`` those
    of a model, GPU and GPU count no sweep compares: a sweep holds fixed what rows leave unrecorded
    (the corpus's torchtitan rows pair an eager BF16 run with a compiled FP8 one, and an async-TP
    run with one without it; their sweeps pair like with like)."""
    from primus_lang.validate.corpus import folder
    from primus_lang.validate.sweeps import load_sweeps

    controlled = sweep_pairs(load_sweeps(folder() / "sweeps.yaml"))
    covered = {p.group for p in controlled}
    return [p for p in precision_pairs(runs, projected) if p.group not in covered] + controlled


def pairs_summary(pairs: Sequence[PrecisionPair]) -> dict[str, float | int | None]:
    """Mean absolute and signed error of the ratio, and how many pairs it overestimates."""
    if not pairs:
        return {"pairs": 0, "mean_abs_error": None, "mean_error": None, "over": 0}
    errors = [p.error for p in pairs]
    return {"pairs": len(pairs), "mean_abs_error": sum(abs(e) for e in errors) / len(errors),
            "mean_error": sum(errors) / len(errors), "over": sum(e > 0 for e in errors)}


def to_markdown(pairs: Sequence[PrecisionPair]) -> str:
    lines = ["| recipe | BF16 row | low-precision row | precision | measured ratio | projected ratio | error |",
             "|---|---|---|---|---:|---:|---:|"]
    for p in pairs:
        lines.append(f"| {p.group} | `{p.bf16_id}` | `{p.low_id}` | {p.low} | {p.measured:.2f} | "
                     f"{p.projected:.2f} | {p.error:+.1%} |")
    s = pairs_summary(pairs)
    if pairs:
        lines.append(f"| **all ({s['pairs']} pairs)** | | | | | | **mean \\|error\\| {s['mean_abs_error']:.1%}, "
                     f"mean {s['mean_error']:+.1%}, {s['over']} over** |")
    return "\n".join(lines)
