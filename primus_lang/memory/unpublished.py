"""Judging a published run whose recipe leaves knobs out: could its layout fit under any setting of them?

A published run that really ran fits; where the source does not say how activations were recomputed or
in which dtype gradients and Adam moments were kept, the account is taken at the setting of those knobs
that needs the least memory. Each option is still an exact account of one concrete candidate.
"""

from __future__ import annotations

from collections.abc import Iterable

from primus_lang.ir import Candidate, Cluster, Model, Recompute, Settings
from primus_lang.memory.account import account
from primus_lang.memory.result import MemoryAccount

# The knobs published recipes most often leave out, with the values Megatron allows for them.
UNPUBLISHED = ("recompute", "main_grad_dtype", "optimizer_dtype")


def _options(cand: Candidate, knobs: Iterable[str], settings: Settings) -> list[Candidate]:
    out = [cand]
    for knob in knobs:
        if knob == "recompute":
            more = [c.replace(recompute=Recompute("full", 1, "uniform")) for c in out]
        elif knob == "main_grad_dtype":
            more = [c.replace(main_grad_dtype="bf16") for c in out]
        elif knob == "optimizer_dtype":
            # BF16 Adam moments are the precision-aware optimizer's, which runs only beside the
            # distributed optimizer (P4045)
            more = [c.replace(optimizer_dtype="bf16") for c in out if settings.distributed_optimizer(c.sharding)]
        else:
            raise ValueError(f"no admissible values known for `{knob}`")
        out += more
    return out


def least_memory(model: Model, cluster: Cluster, cand: Candidate, settings: Settings,
                 unpublished: Iterable[str] = UNPUBLISHED) -> tuple[MemoryAccount, Candidate]:
    """The account (and candidate) with the smallest peak over the admissible values of ``unpublished``."""
    best: tuple[MemoryAccount, Candidate] | None = None
    for option in _options(cand, unpublished, settings):
        acc = account(model, cluster, option, settings)
        if best is None or acc.peak.total < best[0].peak.total:
            best = (acc, option)
    assert best is not None
    return best
