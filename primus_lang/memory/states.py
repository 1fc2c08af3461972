"""Persistent per-rank bytes: parameters, gradient buffers, master weights, optimizer moments.

The DDP grad buffer (and, with the distributed optimizer, the param buffer the parameters are moved
into) follows megatron-core 0.16.1's ``_ParamAndGradBuffer``: parameters are laid out in reverse order;
with the distributed optimizer each parameter starts at a multiple of 64 elements and each bucket ends
at a multiple of lcm(DP, 128); buckets of max(4e7, 1e6·DP) elements are formed on stage 0 when
gradient reduction overlaps (other stages and non-overlapped runs use one bucket).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable

from attrs import frozen

from primus_lang.ir import Model
from primus_lang.ir.hardware import fp8_transposes
from primus_lang.memo import remembered
from primus_lang.memory.dual import Num, cdiv, round_up
from primus_lang.memory.knobs import FP8_RECIPE_CODES, SHARDING_CODES, Knobs
from primus_lang.memory.params import Tensor, layer_units, stage_tensors
from primus_lang.memory.result import Term

MIB = 2**20


def buffer_numel(numels: list[int], dp: int, dist_opt: bool, bucket_size: int | None) -> int:
    """Elements of one grad (and param) buffer holding ``numels`` (registration order)."""
    divisor = math.lcm(dp, 128)
    start = bucket_start = 0
    open_bucket = False
    end = 0
    for n in reversed(numels):
        if dist_opt:
            start = round_up(start, 64)
        end = start + n
        open_bucket = True
        if bucket_size is not None and end - bucket_start >= bucket_size:
            end = round_up(end, divisor) if dist_opt else end
            bucket_start = start = end
            open_bucket = False
        else:
            start = end
    if open_bucket and dist_opt:
        end = round_up(end, divisor)
    return end


def persistent_alloc(n: int) -> int:
    """A long-lived buffer of ``n`` bytes as the caching allocator hands it out (REFERENCE.md)."""
    if n <= 0:
        return 0
    if n < 10 * MIB:
        return int(round_up(n, 512))
    return int(round_up(n, 2 * MIB))


def _term(name: str, formula: str, inputs: dict[str, int | float], value: int) -> Term:
    return Term(name, formula, tuple(inputs.items()), int(value))


def state_terms(model: Model, k: Knobs, stage: int) -> list[Term]:
    """Persistent terms of pipeline stage ``stage`` for one candidate (``k`` holds Python scalars)."""
    key = tuple(int(getattr(k, f)) for f in _STATE_KNOBS)
    content, tensors = _stage_tensors(model, k, stage)
    # a stage's terms read its tensors, and its index only to know stage 0 (where buckets are formed):
    # the middle stages of a layout hold equal tensors and are computed once
    def make() -> tuple[Term, ...]:
        return tuple(_compute_state_terms(model, _scalar_knobs(key, k.layout), stage, content, tensors))

    terms = remembered(_terms, (model, key, content, stage == 0, k.layout), make, 4096)
    return list(terms)


# The knobs persistent bytes depend on; a search asks for the same few combinations again and again.
_STATE_KNOBS = ("world", "tp", "pp", "cp", "ep", "etp", "sharding", "grad_bytes", "state_bytes", "fp8",
                "fp4", "fp8_recipe", "fp8_param", "overlap_grad_reduce", "vpp", "first", "last", "embedding", "loss", "schedule",
                "fp8_any_layout", "torch_fsdp2")
_terms: dict[Hashable, tuple[Term, ...]] = {}


def _scalar_knobs(key: tuple[int, ...], layout: str) -> Knobs:
    values = dict(zip(_STATE_KNOBS, key, strict=True))
    return Knobs(
        world=values["world"], tp=values["tp"], pp=values["pp"], vpp=values["vpp"], first=values["first"],
        last=values["last"], embedding=bool(values["embedding"]), loss=bool(values["loss"]), cp=values["cp"],
        ep=values["ep"],
        etp=values["etp"], mbs=1, gbs=1, seq=1, fp8=bool(values["fp8"]), fp4=bool(values["fp4"]),
        fp8_recipe=values["fp8_recipe"], fp8_param=bool(values["fp8_param"]),
        recompute=0, recompute_layers=0, recompute_uniform=False, recompute_modules=0, offload=0,
        sharding=values["sharding"], schedule=values["schedule"], sp=False, flash=True,
        overlap_grad_reduce=bool(values["overlap_grad_reduce"]), grad_bytes=values["grad_bytes"],
        state_bytes=values["state_bytes"], layout=layout, fp8_any_layout=bool(values["fp8_any_layout"]),
        torch_fsdp2=bool(values["torch_fsdp2"]),
    )


# What a stage's parameter tensors depend on: the layout knobs, not the cluster or the sharding (a plan
# across clusters asks for the same stages on every node count).
_TENSOR_KNOBS = ("tp", "pp", "vpp", "ep", "etp", "first", "last", "embedding", "loss", "schedule")
_tensors: dict[Hashable, tuple[int, list[Tensor]]] = {}
# a number per distinct list of tensors, never reused (entries of ``_terms`` name them)
_contents: dict[tuple[Tensor, ...], int] = {}
_numbers = itertools.count()


def _stage_tensors(model: Model, k: Knobs, stage: int) -> tuple[int, list[Tensor]]:
    """The stage's parameter tensors and the number of their content (equal lists, one number)."""
    key = (model, stage, k.layout, *(int(getattr(k, f)) for f in _TENSOR_KNOBS))
    return remembered(_tensors, key, lambda: _numbered(stage_tensors(model, k, stage)), 4096)


def _numbered(tensors: list[Tensor]) -> tuple[int, list[Tensor]]:
    content = tuple(tensors)
    number = _contents.get(content)
    if number is None:
        if len(_contents) > 4096:
            _contents.clear()
        number = _contents[content] = next(_numbers)
    return number, tensors


def _compute_state_terms(model: Model, k: Knobs, stage: int, content: int, tensors: list[Tensor]) -> list[Term]:
    """The terms of stage ``stage``, whose tensors are ``tensors`` (numbered ``content``)."""
    sharding = int(k.sharding)
    dist_opt = sharding == SHARDING_CODES["dist_opt"]
    fsdp = sharding == SHARDING_CODES["fsdp"]
    terms: list[Term] = []
    rounding = 0
    # megatron-core moves expert weights to their own buffer (sharded over expert DP) only when EP > 1;
    # at EP = 1 they are ordinary data-parallel parameters.
    split_experts = int(k.ep) > 1
    for expert, group in enumerate(_buffers_of(content, tensors, split_experts)):
        if group is None:
            continue
        group_terms, group_rounding = _group_terms(k, stage, group, bool(expert), dist_opt, fsdp)
        terms += group_terms
        rounding += group_rounding
    if k.fp8 or k.fp4:
        terms.append(_quantized_weight_copies(model, k, tensors, fsdp))
    if fsdp:
        terms.append(_fsdp_gather_buffers(model, k, tensors))
    terms.append(_term("allocator rounding (buffers)", "buffers rounded to 2 MiB segments", {}, rounding))
    return terms


@frozen
class _Buffer:
    """The tensors of one grad buffer (the dense ones, or the experts) as the terms read them: their
    sizes in registration order, their sum and their GEMM weights' sum. Numbered by content, so stages
    and layouts of equal tensors share it and its padded sizes (``_padded``)."""

    content: tuple[int, bool, bool]  # the stage's tensors, whether experts have a buffer of their own, which buffer
    numels: tuple[int, ...]
    raw: int
    gemm: int


def _buffers_of(content: int, tensors: list[Tensor], split_experts: bool) -> tuple[_Buffer | None, _Buffer | None]:
    def make() -> tuple[_Buffer | None, _Buffer | None]:
        out: list[_Buffer | None] = []
        for expert in (False, True):
            group = [t for t in tensors if (t.expert and split_experts) == expert]
            out.append(_Buffer((content, split_experts, expert), tuple(t.numel for t in group), sum(t.numel for t in group),
                               sum(t.numel for t in group if t.gemm)) if group else None)
        return out[0], out[1]

    return remembered(_buffer_sets, (content, split_experts), make, 4096)


_buffer_sets: dict[Hashable, tuple[_Buffer | None, _Buffer | None]] = {}


def _padded(group: _Buffer, dp: int, dist_opt: bool, bucket_size: int | None) -> int:
    """``buffer_numel`` of ``group``, once per buffer, data-parallel size and bucketing."""
    return remembered(_paddings, (group.content, dp, dist_opt, bucket_size),
                      lambda: buffer_numel(list(group.numels), dp, dist_opt, bucket_size), 20_000)


_paddings: dict[Hashable, int] = {}


def _group_terms(k: Knobs, stage: int, group: _Buffer, expert: bool, dist_opt: bool,
                 fsdp: bool) -> tuple[list[Term], Num]:
    """Parameters, gradients, master weights and Adam moments of the parameters of one grad buffer (the
    dense ones, or the experts), and the bytes the allocator's rounding adds to the first two."""
    tag = " (experts)" if expert else ""
    shard = int(k.edp if expert else k.dp_cp)
    shard_name = "edp" if expert else "dp·cp"
    raw = group.raw
    # FP8 primary weights (--fp8-param-gather): Transformer Engine keeps each GEMM weight itself in FP8,
    # one byte; the other parameters (embeddings, norms, router) stay BF16
    fp8_gemm = group.gemm if k.fp8_param else 0
    if fsdp:
        terms, rounding, opt_numel = _fsdp_shards(k, raw, shard, shard_name, fp8_gemm, tag)
    else:
        bucket = None
        if k.overlap_grad_reduce and stage == 0:
            bucket = max(40_000_000, 1_000_000 * shard)
        numel = _padded(group, shard, dist_opt, bucket)
        terms, rounding, opt_numel = _ddp_buffers(k, raw, numel, shard, dist_opt, fp8_gemm, tag)
    where = f"buffer / {shard_name}" if dist_opt else (f"⌈params / {shard_name}⌉" if fsdp else "params")
    terms.append(_term(f"master weights fp32{tag}", f"4 × {where}", {"elements": opt_numel}, 4 * opt_numel))
    terms.append(_term(f"adam moments{tag}", f"2 × state_bytes × {where}",
                       {"state_bytes": k.state_bytes, "elements": opt_numel},
                       2 * int(k.state_bytes) * opt_numel))
    return terms, rounding


def _fsdp_shards(k: Knobs, raw: int, shard: int, shard_name: str, fp8_gemm: int,
                 tag: str) -> tuple[list[Term], Num, Num]:
    """FSDP: each rank holds its shard of the parameters and gradients. (terms, allocator rounding,
    optimizer elements)"""
    local = cdiv(raw, shard)
    p_bytes, g_bytes = 2 * local - cdiv(fp8_gemm, shard), int(k.grad_bytes) * local
    terms = [
        _term(f"parameters{' (fp8 gemm weights)' if fp8_gemm else ' bf16'}{tag}",
              f"2 × ⌈params / {shard_name}⌉ (FSDP shard)"
              + (" − ⌈fp8 gemm weights / " + shard_name + "⌉" if fp8_gemm else ""),
              {"params": raw, shard_name: shard, **({"fp8 gemm weights": fp8_gemm} if fp8_gemm else {})},
              p_bytes),
        _term(f"gradients{tag}", f"grad_bytes × ⌈params / {shard_name}⌉ (FSDP shard)" + _TORCH_FSDP2_GRADS * bool(k.torch_fsdp2),
              {"grad_bytes": k.grad_bytes, "params": raw, shard_name: shard}, g_bytes),
    ]
    return terms, _rounding(p_bytes, g_bytes), local


# what the account reads for a torch FSDP2 launch, said where its gradient bytes are shown
_TORCH_FSDP2_GRADS = "; torch FSDP2 keeps them in the parameters' BF16 whatever main_grad_dtype says"


def _ddp_buffers(k: Knobs, raw: int, numel: int, shard: int, dist_opt: bool, fp8_gemm: int,
                 tag: str) -> tuple[list[Term], Num, Num]:
    """Megatron's DDP: the whole grad buffer of ``numel`` elements on every rank, and the parameters
    moved into a param buffer as large with the distributed optimizer. (terms, allocator rounding,
    optimizer elements)"""
    p_numel = numel if dist_opt else raw
    p_bytes = 2 * p_numel - fp8_gemm
    g_bytes = int(k.grad_bytes) * numel
    what = "param buffer (padded)" if dist_opt else "params"
    terms = [
        _term(f"parameters{' (fp8 gemm weights)' if fp8_gemm else ' bf16'}{tag}",
              f"2 × {what}" + (" − fp8 gemm weights" if fp8_gemm else ""),
              {what: p_numel, **({"fp8 gemm weights": fp8_gemm} if fp8_gemm else {})}, p_bytes),
        _term(f"gradients{tag}", "grad_bytes × grad buffer (padded)",
              {"grad_bytes": k.grad_bytes, "grad buffer": numel}, g_bytes),
    ]
    return terms, _rounding(p_bytes, g_bytes), numel // shard if dist_opt else raw


def _rounding(p_bytes: Num, g_bytes: Num) -> Num:
    """What the caching allocator adds to the parameter and gradient buffers."""
    return persistent_alloc(p_bytes) - p_bytes + persistent_alloc(g_bytes) - g_bytes


def _quantized_weight_copies(model: Model, k: Knobs, tensors: list[Tensor], fsdp: bool) -> Term:
    gemm = sum(t.numel for t in tensors if t.gemm)
    if fsdp:
        # FSDP gathers one unit at a time, so TE's quantized weight copies exist for the units in
        # flight (the one computing and the one prefetched), not for the whole stage.
        units = layer_units(model, int(k.tp), int(k.ep), int(k.etp))
        gemm = 2 * max(sum(t.numel for t in u if t.gemm) for u in units)
    # Row-wise and column-wise (transposed) copies of each weight with their scales: NVFP4 half a
    # byte per value and an E4M3 scale per 16; FP8 a byte, MXFP8 adding an E8M0 scale per 32
    # values, blockwise an FP32 scale per 128×128 block.
    # A part that reads per-tensor FP8 transposed in place keeps no column-wise copy (Gpu.fp8_transposes).
    in_place = not fp8_transposes(_RECIPES[int(k.fp8_recipe)], "any" if k.fp8_any_layout else "tn")
    if k.fp4:
        name, formula, copies, scales = ("nvfp4 weight copies", "2 × ⌈gemm weights / 2⌉ + scales",
                                         2 * cdiv(gemm, 2), 2 * cdiv(gemm, 16))
    elif in_place and k.fp8_param:
        name, formula, copies, scales = "fp8 weight transposes", "none (read transposed in place)", 0, 0
    elif in_place:
        name, formula, copies, scales = "fp8 weight copies", "gemm weights (read transposed in place)", gemm, 0
    elif k.fp8_param:
        # the row-wise FP8 weight is the parameter itself (counted above): only the transposed copy
        name, formula, copies, scales = "fp8 weight transposes", "gemm weights + scales", gemm, _fp8_scales(k, gemm)
    else:
        name, formula, copies, scales = "fp8 weight copies", "2 × gemm weights + scales", 2 * gemm, _fp8_scales(k, gemm)
    return _term(name, formula, {"gemm weights": gemm, "scales": scales}, copies + scales)


_RECIPES = {code: name for name, code in FP8_RECIPE_CODES.items()}


def _fp8_scales(k: Knobs, gemm: int) -> Num:
    """The scales of an FP8 weight's two copies (tensor-wise and delayed scaling: one per tensor, not counted)."""
    recipe = int(k.fp8_recipe)
    if recipe == FP8_RECIPE_CODES["mxfp8"]:
        return 2 * cdiv(gemm, 32)
    if recipe == FP8_RECIPE_CODES["blockwise"]:
        return 2 * 4 * cdiv(gemm, 128 * 128)
    return 0


def _fsdp_gather_buffers(model: Model, k: Knobs, tensors: list[Tensor]) -> Term:
    """FSDP's buffers for the largest unit gathered: its BF16 parameters, twice, and its gradients."""
    units = layer_units(model, int(k.tp), int(k.ep), int(k.etp))
    unit = max(sum(t.numel for t in u if not t.expert) + sum(t.numel for t in u if t.expert) for u in units)
    # Megatron-FSDP's units are the decoder layers, and what is left (embedding, output layer) is gathered
    # as one group (fsdp/mcore_fsdp_adapter.py); Megatron's torch FSDP2 wrapper makes the embedding and
    # the output layer units of their own (torch_fully_sharded_data_parallel.py)
    heads = [sum(t.numel for t in tensors if t.name.startswith(p)) for p in ("embedding.", "output_layer")]
    unit = max(unit, *heads) if k.torch_fsdp2 else max(unit, sum(heads))
    return _term("fsdp gather buffers", "2 × 2 × largest unit + grad_bytes × largest unit",
                 {"largest unit": unit, "grad_bytes": k.grad_bytes},
                 4 * unit + int(k.grad_bytes) * unit)


def stage_param_count(model: Model, k: Knobs, stage: int) -> int:
    return sum(t.numel for t in stage_tensors(model, k, stage))


__all__ = ["Tensor", "buffer_numel", "stage_param_count", "state_terms"]
