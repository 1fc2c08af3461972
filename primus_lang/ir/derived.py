"""Facts that follow from other facts: parallel group sizes, micro-batch counts, model defaults.

Every stage asks here, so that legality, memory, projection, the benchmark and the published-run
reader agree on what DP or a micro-batch count is. Each function takes Python ints (one candidate)
or numpy columns (the legality frame, the memory pre-filter) and computes the same integers on both.

Two floors, on purpose:
- ``dp``, ``edp``, ``microbatches`` are the exact quotients, 0 where the parallel sizes exceed the
  world or GBS: legality reads them to reject such a point, so they must not be rounded up;
- ``at_least_one`` is what memory applies before using them, so that a byte count stays defined on
  a point the legality checker rejects (memory is also asked about illegal points, to explain them).
A divisor below 1 counts as 1: the quotient of a knob left at 0 is never a ZeroDivisionError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Num = Any  # a Python int, a numpy scalar or a numpy integer column


def maximum(a: Num, b: Num) -> Num:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return np.maximum(a, b)


def at_least_one(x: Num) -> Num:
    return maximum(x, 1)


def expert_tp(etp: Num, tp: Num) -> Num:
    """Expert tensor parallelism: ``etp``, or TP where ``etp`` is 0 (Megatron's default)."""
    if isinstance(etp, int) and isinstance(tp, int):
        return etp or tp
    return np.where(etp == 0, tp, etp)


def expert_knobs(ep: int, etp: int, tp: int, moe: bool) -> tuple[int, int]:
    """The ``ep`` and ``etp`` knobs of a layout a recipe or a log states: an expert TP equal to TP is
    Megatron's default, which the knob says with 0, and a dense model's expert TP is nothing (Megatron
    prints ``expert_tensor_parallel_size`` for every run). An EP above 1 on a dense model is kept for
    legality to refuse, as Megatron asserts experts for it."""
    return ep, 0 if etp == tp or not moe else etp


def model_parallel(tp: Num, pp: Num, cp: Num) -> Num:
    return tp * pp * cp


def dp(world: Num, tp: Num, pp: Num, cp: Num) -> Num:
    """Data-parallel replicas: the world over TP x PP x CP."""
    return world // at_least_one(model_parallel(tp, pp, cp))


def dp_cp(world: Num, tp: Num, pp: Num) -> Num:
    """The distributed optimizer's shard group: data- and context-parallel ranks together."""
    return world // at_least_one(tp * pp)


def edp(world: Num, etp: Num, ep: Num, pp: Num) -> Num:
    """Expert data-parallel replicas; ``etp`` is the effective expert TP (see ``expert_tp``)."""
    return world // at_least_one(etp * ep * pp)


def microbatches(gbs: Num, mbs: Num, dp: Num) -> Num:
    """Micro-batches per step on each data-parallel replica."""
    return gbs // at_least_one(mbs * dp)


# The pipeline schedule is simulated op by op (project/schedule.py), about a kilobyte each: a point
# needing more (stage, chunk, micro-batch) slots than this is refused by legality (P4191) rather
# than projected for minutes and gigabytes. 2^19 admits PP 256 with every micro-batch count.
MAX_SCHEDULE_SLOTS = 2**19


def schedule_slots(pp: Num, vpp: Num, microbatches: Num) -> Num:
    """The slots the projection simulates for one step: every micro-batch on every virtual stage,
    or, once the pipeline has reached its period, the first four groups of PP micro-batches only
    (schedule.fast extrapolates the rest)."""
    m = at_least_one(microbatches)
    window = 4 * pp
    if isinstance(m, int) and isinstance(pp, int):
        return pp * vpp * min(m, window)
    return pp * vpp * np.minimum(m, window)


# -- per-rank shapes and bytes: what one rank of a candidate holds --------------------------------
# Memory, the projection and the benchmark oracle each build a layer's tensors; they read these so
# that the bytes proved and the time projected are of the same layer (tests/ir/test_derived_facts.py).

# Megatron-LM pads the vocabulary to a multiple of 128 x TP (--make-vocab-size-divisible-by 128).
VOCAB_DIVISOR = 128


def padded_vocab(vocab: Num, tp: Num) -> Num:
    """The vocabulary Megatron builds: ``vocab`` rounded up to a multiple of 128 x TP."""
    step = VOCAB_DIVISOR * at_least_one(tp)
    return -(-vocab // step) * step


def vocab_per_rank(vocab: Num, tp: Num) -> Num:
    """Rows of the word embedding and the output layer on one TP rank (of the padded vocabulary)."""
    return padded_vocab(vocab, tp) // at_least_one(tp)


def heads_per_rank(heads: Num, tp: Num) -> Num:
    """Heads TP splits (query heads, key/value heads, Mamba heads and groups) on one TP rank.

    Legality requires TP to divide them (P4003, P4004); at least one, so that a point it rejects
    stays costed when memory explains why."""
    return at_least_one(heads // at_least_one(tp))


def qkv_gathered(kv_heads: Num, tp: Num) -> Num:
    """Whether TP exceeds the key/value heads: then megatron-core (Megatron-LM f7dfb99, core_v0.16 and
    Primus's pins on) still splits the QKV projection's output over TP, all-gathers it whole and keeps
    its own group's heads on each rank, one key/value head that TP/kv_heads ranks share
    (``attention.py``, "QKV activation sub-sharding"); before it, TP had to divide the key/value heads."""
    return kv_heads < tp


def qkv_width(heads: Num, kv_heads: Num, head_dim: Num, tp: Num) -> Num:
    """The fused QKV projection's output columns on one TP rank: a TP-th of every head's q, k and v, as
    megatron-core's column-parallel linear splits them (by heads where TP divides the key/value heads,
    past them as well, ``qkv_gathered``)."""
    return (heads + 2 * kv_heads) * head_dim // tp


def kv_heads_split(heads: Num, kv_heads: Num, head_dim: Num, tp: Num, over: bool | Num) -> Num:
    """Whether TP can split the key/value heads: TP divides them, or (``over``: a Megatron-LM that takes
    it, ``frameworks.megatron.takes_tp_over_kv_heads``) is a multiple of them that also divides the QKV
    projection's columns, which its column-parallel linear splits evenly or asserts (``divide``)."""
    whole = qkv_width(heads, kv_heads, head_dim, 1)
    return (kv_heads % tp == 0) | (over & (tp % kv_heads == 0) & (whole % tp == 0))


def virtual_stages(schedule: Num, vpp: Num) -> Num:
    """Model chunks each pipeline rank builds: ZBV's V shape places two, interleaving ``vpp``, and
    legality holds every other schedule at VPP 1."""
    if isinstance(schedule, str):
        return 2 if schedule == "zbv" else vpp
    return np.where(schedule == "zbv", 2, vpp)


# Bytes of one element of each dtype a tensor is kept in (FP8 and FP4 scales are counted apart).
DTYPE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def dtype_bytes(dtype: str) -> int:
    return DTYPE_BYTES[dtype]


def _head_dim(v: dict[str, Any]) -> Any:
    return v["hidden"] // v["heads"] if "hidden" in v and v.get("heads") else None


# Model fields a card may leave out because they follow from others (Megatron's own defaults); the
# language, `import-hf` and the published-run reader all fill them from here.
# Each: (the rule as the docs and the hover write it, the rule that computes it from the other
# fields, None where those are missing).
MODEL_DEFAULTS: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
    "kv_heads": ("heads", lambda v: v.get("heads")),
    "head_dim": ("hidden / heads", _head_dim),
    "max_position_embeddings": ("seq_len", lambda v: v.get("seq_len")),
}


def model_default(name: str, fields: dict[str, Any]) -> Any:
    """The default of model field ``name`` given the fields already known (None if it has none yet)."""
    return MODEL_DEFAULTS[name][1](fields)
