"""One candidate, or two, as ``primusc explain FILE --point`` and ``primusc diff`` show them: the
evaluation (memory account and projection), the rules a point breaks, and the JSON both print."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import BAD_POINT
from primus_lang.ir import Candidate, Space
from primus_lang.ir.serialize import to_data
from primus_lang.report.evaluate import Evaluated, evaluate
from primus_lang.validate import trust

if TYPE_CHECKING:
    from primus_lang.project import PrecisionGain


def explained_json(ev: Evaluated) -> dict[str, Any]:
    """A candidate as ``explain``, ``diff`` and ``validate --row`` print it, named as ``project --json``
    names a result: ``label``, ``candidate``, ``memory_peak``, ``projection``, ``band``."""
    v = ev.view
    return {
        "label": v.label,
        "candidate": to_data(ev.candidate),
        "fits": v.fits,
        "memory_peak": v.memory_peak,
        "memory_limit": ev.limit,
        "memory_capacity": int(ev.account.capacity),
        "projection": projection_json(ev.projection),
        "band": {f.name: to_data(getattr(v, f.name)) for f in attrs.fields(trust.Band)},
        "memory": [to_data(r) for r in v.ranks],
    }


def projection_json(projection: Any) -> dict[str, Any] | None:
    """A projection's figures and breakdown as every command's JSON gives them (its timeline is the
    report's, not the JSON's)."""
    if projection is None:
        return None
    data: dict[str, Any] = to_data(projection)
    data.pop("timeline", None)
    return data


def violations(space: Space, cand: Candidate) -> list[tuple[str, str]]:
    """The legality rules and ``require``s the point breaks: it is still explained, since seeing what an
    illegal point would cost is often why one asks, but the reader must know it cannot run."""
    from primus_lang.check import legality

    return [(v.code, v.message) for v in legality(space, cand)]


def evaluate_point(space: Space, cand: Candidate, text: str) -> Evaluated:
    """``evaluate``, but an illegal point whose pipeline split Megatron refuses (the account and the
    projection need the split's layers per stage) is a diagnostic naming the broken rules."""
    try:
        return evaluate(space, cand)
    except ValueError:
        broken = violations(space, cand)
        if not broken:
            raise
        raise CompileError(Diagnostic(
            BAD_POINT,
            f"`{text}` is not a legal point of `{space.name}`, and its pipeline split cannot be built to explain it",
            help="the notes name the rules it breaks; `primusc explain CODE` says what each needs",
            notes=tuple(f"{code} {message}" for code, message in broken),
        )) from None


def attention_note(space: Space, cand: Candidate) -> str:
    """What the candidate's attention kernel costs where it is not the fused one the profile's
    ``attention`` is read on (empty otherwise)."""
    if cand.attention != "fa2":
        return ""
    gpu = space.cluster.gpu
    return (f"attention = fa2: FlashAttention-2's kernels, timed at {gpu.fa2_attention:.2f} of the fused kernel's "
            f"rate on {gpu.name} (`fa2_attention`, a published kernel benchmark; docs/projection.md)")


def layout_note(space: Space, cand: Candidate) -> str:
    """Where the candidate's TP group is wider than the scale-up domain (its GPUs on several nodes): every
    layer's TP collectives then cross the network, which ``tp_comm`` prices but its name does not say
    (empty otherwise)."""
    domain = space.cluster.domain
    if cand.tp <= domain:
        return ""
    return (f"TP {cand.tp} spans {cand.tp // domain} scale-up domains of {domain} GPUs: every layer's TP collectives "
            "cross the inter-node network (`tp_comm` above)")


def precision_gain(space: Space, cand: Candidate) -> PrecisionGain | None:
    """The candidate's recipe in BF16 beside its low precision (``project.precision``); None for a BF16
    recipe on a GPU without FP8 tensor cores, which has no FP8 twin to set beside it."""
    from primus_lang.project import precision_gain as gain
    from primus_lang.project import precision_twins

    if cand.precision == "bf16" and space.cluster.gpu.peak_fp8 <= 0:
        return None
    from primus_lang.memory import account, usable_bytes

    # whether each twin fits is what often decides between them (FP8's smaller weights let a micro-batch fit):
    # the twins as `gain` projects them, as launched
    over = []
    for twin in precision_twins(space.settings.as_launched(cand)):
        acc = account(space.model, space.cluster, twin, space.settings)
        over.append(max(0.0, float(acc.peak.total - usable_bytes(acc.capacity, space.headroom))))
    return attrs.evolve(gain(space.model, space.cluster, cand, space.settings), over=(over[0], over[1]))


def no_low_precision(space: Space) -> str:
    """What explain and diff say where ``precision_gain`` has nothing to compare."""
    return (f"{space.cluster.gpu.name} has no FP8 tensor cores: the recipe has no FP8 twin to compare "
            "(`primusc explain P4040`)")


def precision_json(gain: PrecisionGain | None) -> dict[str, Any] | None:
    if gain is None:
        return None
    return {"precision": gain.label, "ratio": gain.ratio, "bf16_tokens_per_gpu": gain.bf16_tokens,
            "low_tokens_per_gpu": gain.low_tokens,
            "parts": [{"part": p, "bf16": a, "low": b} for p, a, b in gain.parts],
            "host_seconds": {"bf16": gain.host[0], "low": gain.host[1]},
            "over_memory_limit": None if gain.over is None else {"bf16": gain.over[0], "low": gain.over[1]}}
