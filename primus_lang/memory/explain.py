"""The diagnostic for a candidate that does not fit: where, by how much, why, and what would help."""

from __future__ import annotations

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_memory import OUT_OF_MEMORY
from primus_lang.memory.activations import SCORES, V_COPY
from primus_lang.memory.result import MemoryAccount, RankAccount, usable_bytes

GIB = 2**30


def gib(n: int) -> str:
    return f"{n / GIB:.2f} GiB"


def _helps(rank: RankAccount, one_stage: bool) -> list[str]:
    names = {t.name: t.bytes for t in rank.terms}
    act = sum(b for n, b in names.items() if n.startswith("act: "))
    states = sum(b for n, b in names.items() if n.startswith(("parameters", "gradients", "master", "adam")))
    out = []
    if act >= states:
        # plain `selective` recomputes core attention, which frees only an unfused kernel's score
        # square; under a flash kernel its checkpoint keeps the fused q|k|v buffer the kernel frees
        if names.get(f"act: {SCORES}", 0) > 0:
            recompute = "`recompute : selective | full(layers: ..)`"
        else:
            recompute = "`recompute : selective(mlp, layernorm) | full(layers: ..)`"
            if names.get(f"act: {V_COPY}", 0) > 0:
                recompute += "; plain `selective` (core attention) adds memory under a flash kernel"
        out += [f"more recomputation ({recompute})", "a smaller micro-batch (`mbs`)",
                "more TP or CP (splits activations)", "more PP (fewer layers per stage)"]
        if one_stage:
            # megatron-core offloads only without PP and recomputation: an alternative to both
            out.append("or, at PP 1 without recomputation, activations in host memory (`offload_layers : ..`)")
    else:
        out += ["more TP, PP or EP (fewer parameters per rank)"]
        sharding = _sharding_help(rank)
        if sharding:
            out.append(sharding)
        out += ["more recomputation", "a smaller micro-batch (`mbs`)"]
    return out


def _sharding_help(rank: RankAccount) -> str:
    """What `sharding` has left to offer: the account's own formulas say what is already sharded over DP
    (the optimizer states under the distributed optimizer, everything under FSDP)."""
    formulas = [t.formula for t in rank.terms if t.name.startswith(("master", "parameters"))]
    if any("FSDP shard" in f for f in formulas):
        return ""
    if any("/" in f for f in formulas):
        return "FSDP (`sharding = fsdp`: the distributed optimizer already shards the optimizer states)"
    return "FSDP or the distributed optimizer (`sharding`)"


def explain_overflow(account: MemoryAccount, headroom: float) -> Diagnostic:
    """P5001 naming the fullest rank, the bytes over, its three largest terms and the knobs that help;
    ``ValueError`` for an account that fits (``refuse_overflow`` is the check and the diagnostic in one)."""
    if account.fits(headroom):
        raise ValueError(f"the account fits with {headroom:.0%} headroom: there is no overflow to explain")
    rank = account.peak
    over = -account.spare(headroom)
    top = ", ".join(f"`{t.name}` {gib(t.bytes)}" for t in rank.largest(3))
    limit = usable_bytes(account.capacity, headroom)
    return Diagnostic(
        OUT_OF_MEMORY,
        f"{rank.name} needs {gib(rank.total)} and exceeds the usable {gib(limit)} by {over:,} bytes ({gib(over)})",
        notes=(f"largest terms: {top}", f"headroom kept free: {headroom:.0%} of {gib(account.capacity)}"),
        help="try " + "; ".join(_helps(rank, all(r.stage == 0 for r in account.ranks))),
    )


def refuse_overflow(account: MemoryAccount, headroom: float, what: str) -> None:
    """Raise P5001 when ``account`` does not fit: ``what`` says what the command did not do (a point
    that does not fit is not a candidate of a space whose memory is proved)."""
    if account.fits(headroom):
        return
    diag = explain_overflow(account, headroom)
    raise CompileError(attrs.evolve(diag, message=f"{what}: {diag.message}"))
