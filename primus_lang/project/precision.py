"""What a low precision buys one recipe: the same candidate projected in BF16 and in FP8 (or NVFP4),
and where the difference comes from.

FP8 speeds up only the linear layers' GEMMs, and it adds the quantize kernels that feed them; the
attention, the norms and activations, the optimizer and the communication (but an FP8 parameter
gather) stay as they were. ``precision_gain`` shows those parts side by side as GPU seconds per step
of one rank (the work, before overlap and the pipeline schedule), beside the projected ratio of
tokens/s, which is what the schedule makes of them. ``explain`` and ``diff`` print it, and
``precision_pairs`` checks it against the corpus's recipes measured in both precisions.
"""

from __future__ import annotations

import attrs
from attrs import frozen

from primus_lang.ir import Candidate, Cluster, Model, Settings, derived
from primus_lang.project.build import stage_ops
from primus_lang.project.ops import Attention, Collective, Gemm, GroupedGemm, MemoryOp, Op, Stage
from primus_lang.project.oracle import Oracle, SimulateOracle, op_time
from primus_lang.project.projection import project

PARTS = ("GEMMs", "quantize kernels", "attention", "other kernels", "communication")


@frozen
class PrecisionGain:
    """One recipe in BF16 and in ``precision``; ``parts``: (part, BF16 seconds, low-precision seconds)
    of GPU work per step on one rank, averaged over the pipeline stages."""

    precision: str  # fp8 or fp4
    label: str  # the precision with its FP8 scaling recipe: fp8 (tensorwise), fp4
    bf16_tokens: float  # projected tokens/s/GPU in BF16
    low_tokens: float  # ... in ``precision``
    parts: tuple[tuple[str, float, float], ...]
    # host launch seconds per step the GPU waits for, in BF16 and in ``precision`` (the critical stage's
    # `host` breakdown): not GPU work, so not among ``parts``, yet a low precision's added quantize kernels
    # each cost a launch
    host: tuple[float, float] = (0.0, 0.0)
    # the memory limit's excess of each twin's fullest rank (0 where it fits), set where a space's memory
    # account is at hand (``report.precision_gain``); None where unknown
    over: tuple[float, float] | None = None

    @property
    def ratio(self) -> float:
        """Projected tokens/s in the low precision over BF16."""
        return self.low_tokens / self.bf16_tokens


def precision_label(cand: Candidate) -> str:
    """A candidate's GEMM precision, with the scaling recipe an FP8 one uses."""
    return f"fp8 ({cand.fp8_recipe})" if cand.precision == "fp8" else cand.precision


def twins(cand: Candidate) -> tuple[Candidate, Candidate]:
    """The candidate in BF16 and in its low precision: itself where it has one, else FP8 with the
    candidate's FP8 recipe."""
    bf16 = attrs.evolve(cand, precision="bf16", fp8_param_gather=False)
    low = cand if cand.precision != "bf16" else attrs.evolve(cand, precision="fp8")
    return bf16, low


def precision_gain(model: Model, cluster: Cluster, cand: Candidate, settings: Settings | None = None,
                   oracle: Oracle | None = None) -> PrecisionGain:
    oracle = oracle or SimulateOracle(cluster)
    settings = settings or Settings()
    bf16, low = twins(settings.as_launched(cand))
    done = [project(model, cluster, c, settings, oracle=oracle) for c in (bf16, low)]
    work = [_work(model, cluster, c, oracle, settings.torch_fsdp2) for c in (bf16, low)]
    parts = tuple((p, work[0].get(p, 0.0), work[1].get(p, 0.0)) for p in PARTS)
    host = tuple(dict(d.breakdown).get("host", 0.0) for d in done)
    return PrecisionGain(low.precision, precision_label(low), done[0].tokens_per_gpu, done[1].tokens_per_gpu, parts,
                         (host[0], host[1]))


def _part(op: Op) -> str:
    if isinstance(op, Collective):
        return "communication"
    if isinstance(op, Gemm | GroupedGemm):
        return "GEMMs"
    if isinstance(op, Attention):
        return "attention"
    if isinstance(op, MemoryOp) and ("_cast" in op.name or "_rescale" in op.name):
        return "quantize kernels"
    return "other kernels"


def _work(model: Model, cluster: Cluster, cand: Candidate, oracle: Oracle, torch_fsdp2: bool) -> dict[str, float]:
    """GPU seconds per step of one rank by part, averaged over the pipeline stages: every pass of
    every micro-batch, and the once-a-step work (gradient reduction, optimizer, weight casts)."""
    stages = stage_ops(model, cluster, cand, torch_fsdp2)
    microbatches = derived.at_least_one(cand.microbatches(cluster.world))
    out: dict[str, float] = {}
    for stage in stages:
        for part, t in _stage_work(stage, oracle, microbatches).items():
            out[part] = out.get(part, 0.0) + t / len(stages)
    return out


def _stage_work(stage: Stage, oracle: Oracle, microbatches: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for chunk in stage.chunks:
        for block in chunk:
            for task in block.tasks:
                part = _part(task.op)
                out[part] = out.get(part, 0.0) + op_time(oracle, task.op) * task.times * block.count * microbatches
    for task in stage.step_tasks:
        part = _part(task.op)
        out[part] = out.get(part, 0.0) + op_time(oracle, task.op) * task.times
    return out
