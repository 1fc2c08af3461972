"""Micro-batches in flight per pipeline schedule: how many forward passes a stage has run and not yet
finished backward for, at its peak. The projection's schedule simulator must agree with this.

The unit is a *model-chunk micro-batch*: one micro-batch through one model chunk of
``layers / (pp * vpp)`` layers (``vpp = 1`` without interleaving, 2 for ZBV). For stage ``i`` of ``p``
with ``m`` micro-batches:

- 1F1B (PipeDream-flush) and zero-bubble (ZB-H1, same memory limit as 1F1B): ``min(p - i, m)``;
- interleaved 1F1B with ``v > 1`` chunks: Megatron's warm-up count plus the one in steady state,
  ``min(2 (p - i - 1) + (v - 1) p + 1, m v)``; for stage 0 that is ``p v`` chunk-micro-batches times the
  interleaving penalty ``1 + (p - 1) / (p v)``;
- ZBV (two chunks per rank, V-shaped placement): ``min(2 p, 2 m)`` on every stage, the activation
  memory of ``p`` whole-stage micro-batches (Qi et al., "Pipeline Parallelism with Controllable Memory").
With fewer micro-batches than stages the caps by ``m`` apply.
"""

from __future__ import annotations

from primus_lang.ir import Candidate
from primus_lang.memory.dual import Num, minimum, where
from primus_lang.memory.knobs import SCHEDULE_CODES, from_candidate


def inflight_chunks(pp: Num, vpp: Num, schedule: Num, stage: Num, microbatches: Num) -> Num:
    plain = minimum(pp - stage, microbatches)
    interleaved = minimum(2 * (pp - stage - 1) + (vpp - 1) * pp + 1, microbatches * vpp)
    zbv = minimum(2 * pp, 2 * microbatches)
    return where(schedule == SCHEDULE_CODES["zbv"], zbv, where(vpp > 1, interleaved, plain))


def inflight_microbatches(cand: Candidate, stage: int, world: int) -> int:
    """In-flight model-chunk micro-batches on pipeline stage ``stage`` (see the module docstring)."""
    k = from_candidate(cand, world)
    return int(inflight_chunks(k.pp, k.vpp, k.schedule, stage, k.microbatches))
