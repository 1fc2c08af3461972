"""Which decoder layers each pipeline stage and virtual chunk holds: Megatron's rules, in one place.

Megatron-Core 0.16 (``transformer_block.get_num_layers_to_build`` and
``transformer_layer.get_transformer_layer_offset``):

* even split (neither ``--decoder-first-pipeline-num-layers`` nor ``--decoder-last-pipeline-num-layers``):
  every stage holds ``layers / pp``, which must divide;
* uneven split: the first (last) stage holds the given count, the remaining layers divide evenly over
  the other stages (when any remain);
* with ``vpp`` chunks per stage, every stage's count splits evenly into its chunks; chunk ``c`` of
  stage ``s`` is virtual stage ``c * pp + s`` along the model (ZBV, Primus's V schedule, runs chunk 1
  backwards: ``2 * pp - 1 - s``);
* MTP layers sit after the decoder on the last virtual stage.

Knob value 0 for ``first``/``last`` means "not set" (Megatron's ``None``); Megatron refuses an
explicit 0 only through the divisibility checks, so primusc reserves 0 for the even split.

The functions accept Python ints or numpy arrays (memory's pre-filter evaluates many candidates at
once); ``layout`` gives the full per-chunk picture for one candidate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from attrs import frozen

Num = Any  # int or numpy integer array


def _where(cond: Num, a: Num, b: Num) -> Num:
    if isinstance(cond, (bool, np.bool_)):
        return a if cond else b
    return np.where(cond, a, b)


def _max(a: Num, b: Num) -> Num:
    return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else max(a, b)


def middle_stages(pp: Num, first: Num = 0, last: Num = 0) -> Num:
    """Stages that share the layers the first/last knobs leave (all of them on an even split)."""
    return pp - _where(first > 0, 1, 0) - _where(last > 0, 1, 0)


def middle_layers(num_layers: int, first: Num = 0, last: Num = 0) -> Num:
    return num_layers - first - last


def _per_middle(num_layers: int, pp: Num, first: Num, last: Num) -> Num:
    n = middle_stages(pp, first, last)
    return _where(n > 0, middle_layers(num_layers, first, last) // _max(n, 1), 0)


def stage_layers(num_layers: int, pp: Num, stage: Num, first: Num = 0, last: Num = 0) -> Num:
    """Decoder layers on pipeline rank ``stage`` (over all its chunks)."""
    per = _per_middle(num_layers, pp, first, last)
    out = _where((stage == pp - 1) & (last > 0), last, per)
    return _where((stage == 0) & (first > 0), first, out)


def stage_start(num_layers: int, pp: Num, stage: Num, first: Num = 0, last: Num = 0) -> Num:
    """Layers held by the ranks before ``stage`` (its global start without interleaving)."""
    per = _per_middle(num_layers, pp, first, last)
    head = _where(first > 0, first, per)
    return _where(stage == 0, 0, head + _max(stage - 1, 0) * per)


def chunk_start(num_layers: int, pp: Num, vpp: Num, stage: Num, chunk: Num, first: Num = 0, last: Num = 0,
                zbv: Num = False) -> Num:
    """Global index of the first layer of ``chunk`` on ``stage`` (Megatron's layer offset)."""
    per_chunk_total = num_layers // _max(vpp, 1)
    own = stage_start(num_layers, pp, stage, first, last) // _max(vpp, 1)
    # ZBV's second chunk walks the stages backwards: after every first chunk, then the later stages' second chunks
    after = (num_layers - stage_start(num_layers, pp, stage, first, last)
             - stage_layers(num_layers, pp, stage, first, last)) // _max(vpp, 1)
    v_back = per_chunk_total + after
    return _where(zbv & (chunk == 1), v_back, chunk * per_chunk_total + own)


def stage_dense_layers(num_layers: int, dense: int, pp: Num, vpp: Num, stage: Num, first: Num = 0,
                       last: Num = 0, zbv: Num = False, max_vpp: int = 0) -> Num:
    """Layers among the model's first ``dense`` (dense-MLP in an MoE model) that ``stage`` holds."""
    if dense <= 0:
        return stage_layers(num_layers, pp, stage, first, last) * 0
    per_chunk = stage_layers(num_layers, pp, stage, first, last) // _max(vpp, 1)
    total: Num = 0
    chunks = max_vpp or int(np.max(vpp))
    for c in range(chunks):
        start = chunk_start(num_layers, pp, vpp, stage, c, first, last, zbv)
        here = np.minimum(_max(dense - start, 0), per_chunk) if isinstance(per_chunk, np.ndarray) \
            else min(max(dense - start, 0), per_chunk)
        total = total + _where(c < vpp, here, 0)
    return total


def mtp_stage(pp: int, zbv: bool = False) -> int:
    """The pipeline rank holding the last virtual stage (MTP layers, output layer and loss)."""
    return 0 if zbv and pp > 1 else pp - 1


@frozen(order=True)
class Chunk:
    """One virtual stage: decoder layers ``start .. start + layers - 1`` and ``mtp`` MTP layers."""

    stage: int
    chunk: int
    start: int
    layers: int
    mtp: int = 0


@frozen
class Layout:
    pp: int
    vpp: int
    chunks: tuple[Chunk, ...]  # in model order (virtual stage 0 first)

    def on_stage(self, stage: int) -> tuple[Chunk, ...]:
        """The stage's chunks in chunk order."""
        return tuple(sorted((c for c in self.chunks if c.stage == stage), key=lambda c: c.chunk))

    def stage_layers(self, stage: int) -> int:
        return sum(c.layers for c in self.chunks if c.stage == stage)


def problems(num_layers: int, pp: int, vpp: int = 1, first: int = 0, last: int = 0) -> list[str]:
    """Why Megatron would refuse this split (empty when it builds), in Megatron's own terms."""
    out: list[str] = []
    if (first or last) and pp <= 1:
        out.append("uneven first/last stage layers need PP > 1")
        return out
    if first < 0 or last < 0:
        out.append("first/last stage layers cannot be negative")
        return out
    n_mid = middle_stages(pp, first, last)
    mid = middle_layers(num_layers, first, last)
    if (n_mid > 0 and (mid <= 0 or mid % n_mid)) or (n_mid == 0 and mid != 0):
        if first or last:
            out.append(f"the {mid} layers left after the first/last stages do not divide over "
                       f"{n_mid} middle stage(s)")
        else:
            out.append(f"{num_layers} layers do not divide over PP {pp}")
    if vpp > 1 and first and last and pp == 2:
        # megatron-core 0.16.1 get_transformer_layer_offset divides by the middle stages: none here
        out.append("with VPP, first and last stage layers together need PP > 2")
    if vpp > 1 and not out:
        for name, n in (("first", first), ("last", last)):
            if n % vpp:
                out.append(f"{name} stage layers {n} are not divisible by VPP {vpp}")
        for s in range(pp):
            n = stage_layers(num_layers, pp, s, first, last)
            if n % vpp:
                out.append(f"stage {s} holds {n} layers, not divisible by VPP {vpp}")
                break
    return out


def layout(num_layers: int, pp: int, vpp: int = 1, first: int = 0, last: int = 0, mtp_layers: int = 0,
           zbv: bool = False) -> Layout:
    """Every chunk of a split Megatron accepts; ``ValueError`` with Megatron's reason otherwise."""
    why = problems(num_layers, pp, vpp, first, last)
    if why:
        raise ValueError("; ".join(why))
    chunks = []
    for s in range(pp):
        n = stage_layers(num_layers, pp, s, first, last) // vpp
        for c in range(vpp):
            chunks.append(Chunk(s, c, int(chunk_start(num_layers, pp, vpp, s, c, first, last, zbv)), int(n)))
    chunks.sort(key=lambda ch: _order(ch, pp, zbv))
    chunks[-1] = Chunk(chunks[-1].stage, chunks[-1].chunk, chunks[-1].start, chunks[-1].layers, mtp_layers)
    return Layout(pp, vpp, tuple(chunks))


def _order(ch: Chunk, pp: int, zbv: bool) -> int:
    """Virtual-stage index along the model."""
    if zbv:
        return ch.stage if ch.chunk == 0 else 2 * pp - 1 - ch.stage
    return ch.chunk * pp + ch.stage
