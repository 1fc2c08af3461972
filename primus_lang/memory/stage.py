"""One pipeline stage's activation-side terms, as dual arithmetic (exact account and pre-filter alike)."""

from __future__ import annotations

from attrs import frozen

from primus_lang.ir import Model, Settings
from primus_lang.memory import activations as act
from primus_lang.memory.dual import Num, cdiv, logical_and, maximum, minimum, where
from primus_lang.memory.knobs import RECOMPUTE_CODES, Knobs
from primus_lang.memory.layout import stage_dense_layers, stage_layers
from primus_lang.memory.schedule import inflight_chunks


@frozen
class Line:
    name: str
    formula: str
    inputs: tuple[tuple[str, Num], ...]
    bytes: Num


@frozen
class Held:
    """Layer-micro-batches whose activations are alive at the stage's peak."""

    chunks: Num  # in-flight model-chunk micro-batches
    dense: Num  # dense layers kept whole
    moe: Num  # MoE layers kept whole
    checkpoints: Num  # recompute checkpoints (layer inputs)
    recomputed: Num  # layers per stage that are recomputed


def held(model: Model, k: Knobs, stage: Num) -> Held:
    n = stage_layers(model.num_layers, k.pp, stage)
    n_dense = stage_dense_layers(model, k.pp, stage)
    n_moe = n - n_dense
    v = k.vpp
    chunks = inflight_chunks(k.pp, v, k.schedule, stage, k.microbatches)
    per_chunk = cdiv(n, v)
    full = logical_and(k.recompute == RECOMPUTE_CODES["full"], k.recompute_layers > 0)
    group = maximum(k.recompute_layers, 1)
    block_rc = minimum(minimum(k.recompute_layers, per_chunk) * v, n)
    recomputed = where(full, where(k.recompute_uniform, n, block_rc), 0)
    checkpoints = where(full, where(k.recompute_uniform, v * cdiv(per_chunk, group), block_rc), 0)
    rc_dense = minimum(recomputed, n_dense)
    rc_moe = recomputed - rc_dense
    return Held(
        chunks=chunks,
        dense=chunks * (n_dense - rc_dense) // v,
        moe=chunks * (n_moe - rc_moe) // v,
        checkpoints=chunks * checkpoints // v,
        recomputed=recomputed,
    )


def _scalar(x: Num) -> bool:
    return isinstance(x, int | bool)


def _lines(prefix: str, items: list[act.Item], times: Num, times_name: str) -> list[Line]:
    out = []
    for it in items:
        value = it.bytes * it.count * times
        inputs: tuple[tuple[str, Num], ...] = ()
        if _scalar(it.bytes) and _scalar(times):
            inputs = (("tensor bytes", it.bytes), ("tensors", it.count), (times_name, times))
        out.append(Line(f"{prefix}{it.name}", f"{it.formula} × {times_name}", inputs, value))
    return out


def activation_lines(model: Model, k: Knobs, settings: Settings, stage: Num, reserved: int) -> list[Line]:
    d = act.dims(model, k)
    hd = held(model, k, stage)
    attn = act.attention_items(model, k, d)
    dense = act.dense_mlp_items(model, k, d)
    moe = act.moe_mlp_items(model, k, d, settings) if model.moe is not None else []
    ckpt = act.checkpoint_items(model, k, d)
    emb = act.embedding_items(model, k, d)
    head = act.head_items(model, k, d)
    first = where(stage == 0, 1, 0)
    last = where(stage == k.pp - 1, 1, 0)
    emb_mb = first * cdiv(hd.chunks, k.vpp)

    lines = _lines("act: ", attn, hd.dense + hd.moe, "layer-microbatches")
    lines += _lines("act: ", dense, hd.dense, "dense layer-microbatches")
    lines += _lines("act: ", moe, hd.moe, "moe layer-microbatches")
    lines += _lines("act: ", ckpt, hd.checkpoints, "checkpoints")
    lines += _lines("act: ", emb, emb_mb, "embedding microbatches")
    shared = act.checkpoint_shared_items(model, k, d)
    with_ckpt = where(hd.checkpoints > 0, cdiv(hd.chunks, k.vpp), 0)
    lines += _lines("act: ", shared, with_ckpt, "microbatches with checkpoints")
    lines += _lines("act: ", head, last, "last stage")

    slack = (
        act.round_slack(attn) * (hd.dense + hd.moe)
        + act.round_slack(dense) * hd.dense
        + act.round_slack(moe) * hd.moe
        + act.round_slack(ckpt) * hd.checkpoints
        + act.round_slack(emb) * emb_mb
        + act.round_slack(shared) * with_ckpt
        + act.round_slack(head) * last
    )
    lines.append(Line("allocator rounding (activations)", "Σ (⌈tensor / 512⌉·512 − tensor)", (), slack))

    # Backward of one layer: its recomputed activations come back, and the gradients of its two
    # largest saved tensors (incoming and outgoing) are alive at once.
    n = stage_layers(model.num_layers, k.pp, stage)
    n_moe = n - stage_dense_layers(model, k.pp, stage)
    plain_k = Knobs(**{**_fields(k), "recompute": where(k.recompute == RECOMPUTE_CODES["selective"], 0, k.recompute)})
    attn_plain = act.total(act.attention_items(model, plain_k, d))
    layer_dense = attn_plain + act.total(dense)
    layer_moe = attn_plain + act.total(moe) if moe else 0
    largest_layer = maximum(where(n - n_moe > 0, layer_dense, 0), where(n_moe > 0, layer_moe, 0))
    recompute = where(
        hd.recomputed > 0,
        largest_layer - act.total(ckpt),
        attn_plain - act.total(attn),
    )
    biggest = 0
    for it in attn + dense + moe:
        biggest = maximum(biggest, it.bytes)
    inputs: tuple[tuple[str, Num], ...] = ()
    if _scalar(recompute) and _scalar(biggest):
        inputs = (("recomputed bytes", recompute), ("largest saved tensor", biggest))
    lines.append(Line("backward transient", "recomputed layer + 2 × largest saved tensor", inputs,
                      recompute + 2 * biggest))
    sp_buffer = where(k.sp, 2 * d.T * d.h, 0)
    lines.append(Line("sequence-parallel gather buffer", "2·T·h (when SP)",
                      (("T", d.T), ("h", d.h)) if _scalar(d.T) else (), sp_buffer))
    lines.append(Line("reserved (runtime, collective buffers)", "gpu.reserved_memory", (), reserved))
    return lines


def _fields(k: Knobs) -> dict[str, Num]:
    return {f.name: getattr(k, f.name) for f in Knobs.__attrs_attrs__}


@frozen
class LayerTotals:
    """Per-layer and per-micro-batch sums of the items (stage-independent), rounding included."""

    attn: Num
    dense: Num
    moe: Num
    ckpt: Num
    emb: Num
    shared: Num
    head: Num
    attn_plain: Num
    attn_raw: Num
    layer_dense_plain: Num
    layer_moe_plain: Num
    ckpt_raw: Num
    biggest: Num
    sp_buffer: Num


def layer_totals(model: Model, k: Knobs, settings: Settings) -> LayerTotals:
    d = act.dims(model, k)

    def rounded(items: list[act.Item]) -> Num:
        return act.total(items) + act.round_slack(items)

    attn = act.attention_items(model, k, d)
    dense = act.dense_mlp_items(model, k, d)
    moe = act.moe_mlp_items(model, k, d, settings) if model.moe is not None else []
    plain_k = Knobs(**{**_fields(k), "recompute": where(k.recompute == RECOMPUTE_CODES["selective"], 0, k.recompute)})
    biggest = 0
    for it in attn + dense + moe:
        biggest = maximum(biggest, it.bytes)
    attn_plain = act.total(act.attention_items(model, plain_k, d))
    return LayerTotals(
        attn=rounded(attn),
        dense=rounded(dense),
        moe=rounded(moe),
        ckpt=rounded(act.checkpoint_items(model, k, d)),
        emb=rounded(act.embedding_items(model, k, d)),
        shared=rounded(act.checkpoint_shared_items(model, k, d)),
        head=rounded(act.head_items(model, k, d)),
        attn_plain=attn_plain,
        attn_raw=act.total(attn),
        layer_dense_plain=attn_plain + act.total(dense),
        layer_moe_plain=attn_plain + act.total(moe) if moe else 0,
        ckpt_raw=act.total(act.checkpoint_items(model, k, d)),
        biggest=biggest,
        sp_buffer=where(k.sp, 2 * d.T * d.h, 0),
    )


def stage_activation_total(model: Model, k: Knobs, lt: LayerTotals, stage: Num, reserved: int) -> Num:
    """The sum of ``activation_lines`` for one stage, from precomputed per-layer totals."""
    hd = held(model, k, stage)
    first = where(stage == 0, 1, 0)
    last = where(stage == k.pp - 1, 1, 0)
    emb_mb = first * cdiv(hd.chunks, k.vpp)
    with_ckpt = where(hd.checkpoints > 0, cdiv(hd.chunks, k.vpp), 0)
    n = stage_layers(model.num_layers, k.pp, stage)
    n_moe = n - stage_dense_layers(model, k.pp, stage)
    largest_layer = maximum(where(n - n_moe > 0, lt.layer_dense_plain, 0), where(n_moe > 0, lt.layer_moe_plain, 0))
    recompute = where(hd.recomputed > 0, largest_layer - lt.ckpt_raw, lt.attn_plain - lt.attn_raw)
    return (
        lt.attn * (hd.dense + hd.moe)
        + lt.dense * hd.dense
        + lt.moe * hd.moe
        + lt.ckpt * hd.checkpoints
        + lt.emb * emb_mb
        + lt.shared * with_ckpt
        + lt.head * last
        + recompute
        + 2 * lt.biggest
        + lt.sp_buffer
        + reserved
    )
