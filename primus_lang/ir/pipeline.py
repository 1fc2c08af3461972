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
* ``--account-for-embedding/loss-in-pipeline-split`` count the embedding (loss) as a layer of the
  first (last) virtual stage in an otherwise even split;
* MTP layers sit after the decoder on the last virtual stage;
* an explicit layout (``--pipeline-model-parallel-layout``, ``PipelineParallelLayerLayout``) replaces
  all of the above: one string lists every virtual stage in model order (``|`` between them) with
  ``E`` the embedding, ``t`` a decoder layer, ``m`` an MTP layer, ``L`` the loss and output layer;
  ``x*n`` and ``(...)*n`` repeat, commas are cosmetic. Virtual stage ``j`` is chunk ``j // pp`` of
  stage ``j % pp``; each chunk holds the decoder layers written in it, in order.

Knob value 0 for ``first``/``last`` means "not set" (Megatron's ``None``); Megatron refuses an
explicit 0 only through the divisibility checks, so primusc reserves 0 for the even split.

``Split`` holds Python ints or numpy columns (memory's pre-filter evaluates many candidates at once);
``layout`` gives the full per-chunk picture for one candidate, ``problems`` Megatron's refusals. A
layout string cannot be a column: a ``Split`` with one holds scalar ``pp`` and ``vpp`` (the pre-filter
groups candidates by layout), and only ``stage``/``chunk`` arguments may be arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from primus_lang.ir.candidate import Candidate

Num = Any  # int or numpy integer array


def _where(cond: Num, a: Num, b: Num) -> Num:
    if isinstance(cond, (bool, np.bool_)):
        return a if cond else b
    return np.where(cond, a, b)


def _max(a: Num, b: Num) -> Num:
    return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else max(a, b)


def _min(a: Num, b: Num) -> Num:
    return np.minimum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else min(a, b)


def _int(flag: Num) -> Num:
    return flag.astype(np.int64) if isinstance(flag, np.ndarray) else int(flag)


LAYER_CHARS = {"E": "embedding", "t": "decoder layer", "m": "MTP layer", "L": "loss"}
# megatron-core's LayerType names, which a layout given as a list of stages uses
# (transformer/enums.py; PipelineParallelLayerLayout takes [["embedding", "decoder"], ...])
LAYER_NAMES = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


def layout_text(stages: Sequence[Sequence[str]]) -> str:
    """A layout given as a list of stages, each a list of LayerType names, as the string form;
    ``ValueError`` for a name that is no layer primusc places."""
    out = []
    for stage in stages:
        unknown = [name for name in stage if name not in LAYER_NAMES]
        if unknown:
            raise ValueError(f"`{unknown[0]}` is no layer type of a pipeline layout; known: {', '.join(LAYER_NAMES)}")
        out.append("".join(LAYER_NAMES[name] for name in stage))
    return "|".join(out)


# An unrolled layout has one character per layer, stage separator, embedding or loss; real ones have a
# few hundred. The bound stops `(t|)*100000000` before it is built (it would take gigabytes).
MAX_UNROLLED = 100_000


def _repeat_count(text: str, at: int, base: int) -> tuple[int | None, int]:
    """``*n`` at ``at``: (n, index after it), or (None, at) when no repeat follows. ASCII digits only:
    ``str.isdigit`` also takes superscripts, which ``int`` refuses."""
    if at >= len(text) or text[at] != "*":
        return None, at
    end = at + 1
    while end < len(text) and text[end] in "0123456789":
        end += 1
    if end == at + 1:
        raise ValueError(f"`*` at position {base + at} is not followed by a count")
    return int(text[at + 1:end]), end


def _too_long(size: int) -> ValueError:
    return ValueError(f"unrolls to {size:,} or more characters, over the limit of {MAX_UNROLLED:,}")


def _unroll(text: str, base: int = 0, group: bool = False) -> str:
    """Megatron's unrolling: ``(...)*n`` first (no nesting), then ``x*n`` for any one character.
    Positions in the errors count in the text without its cosmetic commas (``base``: where ``text``
    starts in it); the output is refused past ``MAX_UNROLLED`` before it is built."""
    out: list[str] = []
    size = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            if group:
                raise ValueError(f"parentheses cannot nest (position {base + i})")
            close = text.find(")", i + 1)
            if close < 0:
                raise ValueError(f"`(` at position {base + i} is never closed")
            body = text[i + 1:close]
            if not body:
                raise ValueError(f"empty `()` at position {base + i}")
            n, after = _repeat_count(text, close + 1, base)
            if n is None:
                raise ValueError(f"`({body})` at position {base + i} must be followed by a repeat count `*n`")
            piece = _unroll(body, base + i + 1, True)
            i = after
        else:
            if ch == ")":
                raise ValueError(f"`)` at position {base + i} closes nothing")
            if ch == "*":
                # Megatron would repeat the last character of an unrolled group here; nobody means that
                raise ValueError(f"`*` at position {base + i} repeats nothing")
            n, i = _repeat_count(text, i + 1, base)
            piece = ch
        count = 1 if n is None else n
        size += len(piece) * count
        if size > MAX_UNROLLED:
            raise _too_long(size)
        out.append(piece * count)
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> tuple[tuple[str, ...], str]:
    try:
        flat = _unroll(text.replace(",", ""))
    except ValueError as e:
        return (), f"pipeline layout {text!r}: {e}"
    stages = tuple(flat.split("|"))
    for j, stage in enumerate(stages):
        for ch in stage:
            if ch not in LAYER_CHARS:
                known = ", ".join(f"{c} ({what})" for c, what in LAYER_CHARS.items())
                return (), f"pipeline layout {text!r}: `{ch}` in virtual stage {j} is no layer; known: {known}"
    return stages, ""


def parse_layout(text: str) -> tuple[str, ...]:
    """The virtual stages of a layout string in model order, each unrolled to one character per layer;
    ``ValueError`` with the reason when it does not parse."""
    stages, why = _parse(text)
    if why:
        raise ValueError(why)
    return stages


@frozen
class _Table:
    """A parsed layout placed on ``pp`` ranks: [stage][chunk] decoder layers, first decoder index, MTP."""

    layers: np.ndarray
    start: np.ndarray
    mtp: np.ndarray


@functools.lru_cache(maxsize=256)
def _table(text: str, pp: int, vpp: int) -> _Table | None:
    """None when the layout does not parse or does not have ``pp * vpp`` virtual stages (``problems``
    says why); the split then falls back to its knobs so memory stays defined on refused points."""
    stages, why = _parse(text)
    if why or pp < 1 or len(stages) != pp * vpp:
        return None
    layers = np.array([[stages[c * pp + s].count("t") for c in range(vpp)] for s in range(pp)], dtype=np.int64)
    mtp = np.array([[stages[c * pp + s].count("m") for c in range(vpp)] for s in range(pp)], dtype=np.int64)
    in_order = [stages[j].count("t") for j in range(pp * vpp)]
    before = np.concatenate(([0], np.cumsum(in_order)[:-1])).astype(np.int64)
    start = np.array([[before[c * pp + s] for c in range(vpp)] for s in range(pp)], dtype=np.int64)
    for arr in (layers, start, mtp):
        arr.setflags(write=False)
    return _Table(layers, start, mtp)


def _at(table: np.ndarray, *index: Num) -> Num:
    out = table[index]
    return int(out) if np.ndim(out) == 0 else out


@frozen
class Split:
    """A candidate's split knobs; every field may be a numpy column (one row per candidate).

    ``embedding``/``loss`` are Megatron's ``--account-for-embedding-in-pipeline-split`` and
    ``--account-for-loss-in-pipeline-split``: the embedding (loss) counts as one more layer of the
    first (last) virtual stage, which builds one decoder layer fewer. They exclude ``first``/``last``.
    """

    num_layers: int
    pp: Num
    vpp: Num = 1
    first: Num = 0
    last: Num = 0
    embedding: Num = False
    loss: Num = False
    zbv: Num = False
    layout: str = ""  # Megatron's --pipeline-model-parallel-layout; "" = the knobs above

    @property
    def table(self) -> _Table | None:
        """The explicit layout on this split's ranks, when one is set and has ``pp * vpp`` stages."""
        if not self.layout:
            return None
        if isinstance(self.pp, np.ndarray) or isinstance(self.vpp, np.ndarray):
            raise TypeError("a Split with a pipeline layout takes scalar pp and vpp")
        return _table(self.layout, int(self.pp), max(int(self.vpp), 1))

    @property
    def uneven(self) -> Num:
        return (self.first > 0) | (self.last > 0)

    @property
    def units(self) -> Num:
        """What the even split divides: the layers, plus the embedding and loss when they count."""
        return self.num_layers + _int(self.embedding) + _int(self.loss)

    @property
    def middle_stages(self) -> Num:
        """Stages that share the layers the first/last knobs leave (all of them on an even split)."""
        return self.pp - _where(self.first > 0, 1, 0) - _where(self.last > 0, 1, 0)

    @property
    def middle_layers(self) -> Num:
        return _where(self.uneven, self.num_layers - self.first - self.last, self.units)

    @property
    def per_middle(self) -> Num:
        """Units on each middle stage (every stage's share on an even split)."""
        n = self.middle_stages
        return _where(n > 0, self.middle_layers // _max(n, 1), 0)

    @property
    def last_stage(self) -> Num:
        """The rank holding the last virtual stage (the output layer and the loss)."""
        return _where(self.zbv & (self.pp > 1), 0, self.pp - 1)

    @property
    def mtp_stage(self) -> Num:
        """The rank holding the MTP layers: the last stage, unless a layout puts them elsewhere."""
        table = self.table
        if table is not None and table.mtp.any():
            return int(np.argmax(table.mtp.sum(axis=1) > 0))
        return self.last_stage

    def virtual(self, stage: Num, chunk: Num) -> Num:
        """Index of (stage, chunk) along the model; ZBV runs chunk 1 back up the stages."""
        return _where(self.zbv & (chunk == 1), 2 * self.pp - 1 - stage, chunk * self.pp + stage)

    def stage_layers(self, stage: Num) -> Num:
        """Decoder layers on pipeline rank ``stage`` (over all its chunks)."""
        table = self.table
        if table is not None:
            return _at(table.layers.sum(axis=1), stage)
        per = self.per_middle
        even = per - _where(stage == 0, _int(self.embedding), 0) - _where(stage == self.last_stage,
                                                                          _int(self.loss), 0)
        out = _where((stage == self.pp - 1) & (self.last > 0), self.last, per)
        out = _where((stage == 0) & (self.first > 0), self.first, out)
        return _where(self.uneven, out, even)

    def chunk_layers(self, stage: Num, chunk: Num) -> Num:
        """Decoder layers of one chunk: the stage's share over its chunks, less the embedding/loss unit."""
        table = self.table
        if table is not None:
            return _at(table.layers, stage, chunk)
        v = _max(self.vpp, 1)
        j = self.virtual(stage, chunk)
        unit = self.per_middle // v
        even = unit - _where(j == 0, _int(self.embedding), 0) - _where(j == self.pp * v - 1, _int(self.loss), 0)
        return _where(self.uneven, self.stage_layers(stage) // v, even)

    def chunk_start(self, stage: Num, chunk: Num) -> Num:
        """Global index of the chunk's first layer (Megatron's get_transformer_layer_offset)."""
        table = self.table
        if table is not None:
            return _at(table.start, stage, chunk)
        v = _max(self.vpp, 1)
        j = self.virtual(stage, chunk)
        even = j * (self.per_middle // v) - _where(j > 0, _int(self.embedding), 0)
        # uneven: the stages before this one (first then middle), a 1/VPP share of each per chunk level
        head = _where(self.first > 0, self.first, self.per_middle)
        before = _where(stage == 0, 0, head + _max(stage - 1, 0) * self.per_middle)
        after = self.num_layers - before - self.stage_layers(stage)
        level = self.num_layers // v
        uneven = _where(self.zbv & (chunk == 1), level + after // v, chunk * level + before // v)
        return _where(self.uneven, uneven, even)

    def stage_dense_layers(self, dense: int, stage: Num) -> Num:
        """How many of the model's first ``dense`` layers (dense-MLP in an MoE model) ``stage`` holds."""
        total: Num = self.stage_layers(stage) * 0
        if dense <= 0:
            return total
        for c in range(int(np.max(self.vpp))):
            here = _min(_max(dense - self.chunk_start(stage, c), 0), self.chunk_layers(stage, c))
            total = total + _where(c < self.vpp, here, 0)
        return total

    def stage_kind_layers(self, prefix: tuple[int, ...], stage: Num, limit: Num = None) -> Num:
        """How many layers of one kind ``stage`` holds, from the kind's prefix counts
        (``Model.kind_prefix``); with ``limit``, only among the first ``limit`` layers of each chunk."""
        cum = np.asarray(prefix, dtype=np.int64)
        total: Num = self.stage_layers(stage) * 0
        for c in range(int(np.max(self.vpp))):
            start = self.chunk_start(stage, c)
            size = self.chunk_layers(stage, c)
            if limit is not None:
                size = _min(size, limit)
            lo = np.clip(start, 0, len(cum) - 1)
            hi = np.clip(start + _max(size, 0), 0, len(cum) - 1)
            here = cum[hi] - cum[lo]
            here = int(here) if np.ndim(here) == 0 else here
            total = total + _where(c < self.vpp, here, 0)
        return total


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


def chunk_sizes(split: Split) -> list[int]:
    """Every (virtual) stage's decoder layers, stage by stage, chunk by chunk."""
    return [int(split.chunk_layers(s, c)) for s in range(int(split.pp)) for c in range(int(split.vpp))]


def split_of(num_layers: int, cand: Candidate, vpp: int) -> Split:
    """The split ``cand``'s knobs ask for, with ``vpp`` model chunks per rank (2 under ZBV)."""
    return Split(num_layers, cand.pp, vpp, cand.first_stage_layers, cand.last_stage_layers,
                 cand.account_for_embedding, cand.account_for_loss, cand.schedule == "zbv",
                 cand.pipeline_layout)


def _layout_problems(split: Split, mtp_layers: int | None) -> list[str]:
    """Megatron's refusals of an explicit layout (TransformerConfig.__post_init__ and
    PipelineParallelLayerLayout.validate_layer_layout), in the order it checks them."""
    text = split.layout
    if split.first or split.last or split.embedding or split.loss:
        return ["a pipeline layout excludes first/last stage layers and account_for_embedding/loss"]
    if split.zbv:
        return ["a pipeline layout places virtual stages in interleaved order; ZBV's V shape cannot take one"]
    stages, why = _parse(text)
    if why:
        return [why]
    pp, vpp = int(split.pp), int(split.vpp)
    if len(stages) % pp:
        return [f"pipeline layout {text!r} has {len(stages)} virtual stages, which do not divide over PP {pp}"]
    if len(stages) != pp * vpp:
        return [f"pipeline layout {text!r} has {len(stages)} virtual stages; PP {pp} x VPP {vpp} needs {pp * vpp}"]
    flat = "".join(stages)
    out: list[str] = []
    if not flat.startswith("E") or flat.count("E") != 1:
        out.append("a pipeline layout holds the embedding `E` exactly once, first")
    if not flat.endswith("L") or flat.count("L") != 1:
        out.append("a pipeline layout holds the loss `L` exactly once, last")
    if flat.count("t") != split.num_layers:
        out.append(f"pipeline layout {text!r} places {flat.count('t')} decoder layers; the model has "
                   f"{split.num_layers}")
    mtp = flat.count("m")
    if mtp_layers is not None and mtp != mtp_layers:
        out.append(f"pipeline layout {text!r} places {mtp} MTP layers; the model has {mtp_layers}")
    if mtp and "t" in flat[flat.index("m"):]:
        out.append("a pipeline layout places every decoder layer before the MTP layers")
    table = _table(text, pp, vpp)
    if mtp and table is not None:
        if table.mtp[:, :-1].any():
            out.append("a pipeline layout puts MTP layers only in a stage's last virtual stage")
        if int(table.mtp.max()) != mtp:
            out.append("a pipeline layout puts all MTP layers in one virtual stage")
    return out


def problems(split: Split, mtp_layers: int | None = None) -> list[str]:
    """Why Megatron would refuse this split (empty when it builds); ``split`` holds Python scalars.
    ``mtp_layers`` (the model's) is checked against an explicit layout's ``m`` count when given."""
    if split.layout:
        return _layout_problems(split, mtp_layers)
    pp, vpp, first, last = int(split.pp), int(split.vpp), int(split.first), int(split.last)
    n = split.num_layers
    if first < 0 or last < 0:
        return ["first/last stage layers cannot be negative"]
    if (first or last) and pp <= 1:
        return ["uneven first/last stage layers need PP > 1"]
    if (first or last) and (split.embedding or split.loss):
        return ["first/last stage layers exclude accounting for the embedding/loss in the split"]
    out: list[str] = []
    n_mid, mid = int(split.middle_stages), int(split.middle_layers)
    if (n_mid > 0 and (mid <= 0 or mid % n_mid)) or (n_mid == 0 and mid != 0):
        if first or last:
            out.append(f"the {mid} layers left after the first/last stages do not divide over "
                       f"{n_mid} middle stage(s)")
        else:
            out.append(f"{mid} layers{' (with the embedding/loss)' if mid != n else ''} do not divide over PP {pp}")
    if vpp > 1 and first and last and pp == 2:
        # megatron-core 0.16.1 get_transformer_layer_offset divides by the middle stages: none here
        out.append("with VPP, first and last stage layers together need PP > 2")
    if vpp > 1 and not out:
        for name, count in (("first", first), ("last", last)):
            if count % vpp:
                out.append(f"{name} stage layers {count} are not divisible by VPP {vpp}")
        per = int(split.per_middle)
        if not out and per % vpp:
            out.append(f"{per} layers a stage do not divide over VPP {vpp}")
    if not out and any(layers < 0 for layers in chunk_sizes(split)):
        out.append("the embedding/loss leave a chunk with fewer than zero layers")
    return out


@functools.lru_cache(maxsize=4096)
def layout(split: Split, mtp_layers: int = 0) -> Layout:
    """Every chunk of a split Megatron accepts, in model order; ``ValueError`` with the reason otherwise.

    Cached: a search projects thousands of candidates that share a handful of splits."""
    why = problems(split, mtp_layers)
    if why:
        raise ValueError("; ".join(why))
    pp, vpp = int(split.pp), int(split.vpp)
    table = split.table
    chunks = sorted(
        (Chunk(s, c, int(split.chunk_start(s, c)), int(split.chunk_layers(s, c)),
               int(table.mtp[s, c]) if table is not None else 0) for s in range(pp) for c in range(vpp)),
        key=lambda ch: int(split.virtual(ch.stage, ch.chunk)),
    )
    if table is None:
        last = chunks[-1]
        chunks[-1] = Chunk(last.stage, last.chunk, last.start, last.layers, mtp_layers)
    return Layout(pp, vpp, tuple(chunks))
