"""The memory account's result types: terms, per-rank accounts, the verdict."""

from __future__ import annotations

import math

from attrs import frozen


@frozen
class Term:
    """One named line of a rank's account: ``bytes`` = ``formula`` evaluated on ``inputs``."""

    name: str
    formula: str
    inputs: tuple[tuple[str, int | float], ...]
    bytes: int


@frozen
class RankAccount:
    """Every byte one class of ranks holds at its peak (a pipeline stage; its dense and expert share)."""

    name: str
    stage: int
    terms: tuple[Term, ...]
    total: int

    def term(self, name: str) -> Term:
        for t in self.terms:
            if t.name == name:
                return t
        raise KeyError(name)

    def largest(self, n: int = 3) -> tuple[Term, ...]:
        return tuple(sorted(self.terms, key=lambda t: (-t.bytes, t.name))[:n])


def not_counted(cuda_graph: str) -> tuple[str, ...]:
    """What a candidate's GPU holds that the account has no term for, said beside it: CUDA graphs keep each
    captured part's static inputs and outputs and a private memory pool for what they capture, which only a
    GPU can measure (megatron-core builds no graph on CPU)."""
    if cuda_graph == "none":
        return ()
    return (f"CUDA graphs (`cuda_graph = {cuda_graph}`): their static input and output buffers and private memory "
            "pool are not in this account; keep spare memory for them",)


def usable_bytes(capacity: int, headroom: float) -> int:
    """HBM bytes a recipe may use when ``headroom`` (a fraction) of the capacity is kept free."""
    return capacity - math.ceil(capacity * headroom)


@frozen
class MemoryAccount:
    """Every rank class's bytes, term by term (``memory.account``); ``peak`` is the fullest, ``fits(headroom)``
    whether it fits the GPU less the headroom."""

    ranks: tuple[RankAccount, ...]
    capacity: int
    not_counted: tuple[str, ...] = ()  # what the GPU holds beside these terms, unmeasured (``not_counted``)

    @property
    def peak(self) -> RankAccount:
        # The first stage wins ties: it is the one a person looks at first.
        return max(self.ranks, key=lambda r: (r.total, -r.stage))

    def spare(self, headroom: float = 0.0) -> int:
        """Bytes left on the fullest rank; negative when it is over by that many."""
        return usable_bytes(self.capacity, headroom) - self.peak.total

    def fits(self, headroom: float = 0.0) -> bool:
        return self.spare(headroom) >= 0
