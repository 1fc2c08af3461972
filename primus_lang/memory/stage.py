"""One pipeline stage's activation-side terms, as dual arithmetic (exact account and pre-filter alike)."""

from __future__ import annotations

from attrs import frozen

from primus_lang.ir import Candidate, Model, Settings
from primus_lang.memory import activations as act
from primus_lang.memory.dual import Num, cdiv, logical_and, maximum, minimum, where
from primus_lang.memory.knobs import RECOMPUTE_CODES, Knobs, from_candidate
from primus_lang.memory.layout import head_stage, model_split, stage_dense_layers, stage_layers
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
    op: Num  # layers under op-level checkpointing (each keeps the op save list's outputs)
    attn: Num  # attention blocks kept whole (a transformer's every layer; a hybrid model's `*` layers)
    mamba: Num = 0  # a hybrid model's Mamba layers kept whole


HYBRID_KINDS = "M*-E"


def held(model: Model, k: Knobs, stage: Num) -> Held:
    """In-flight chunk-micro-batches times the stage's layers per chunk, split by what each layer keeps.

    Full recompute takes the first ``N`` layers of every chunk (block) or all of them in groups of
    ``N`` (uniform); recomputed layers are counted from the dense ones first, which lead the model.
    Counts are per stage over ``vpp`` chunks, rounded down. Op-level checkpointing (``op``) wraps
    every layer, so all of them count as ``op`` layers and none as whole ones.
    """
    if model.hybrid:
        return _hybrid_held(model, k, stage)
    n = stage_layers(model, k, stage)
    n_dense = stage_dense_layers(model, k, stage)
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
    op = k.recompute == RECOMPUTE_CODES["op"]
    # offloaded layers lead the model, like the dense ones (legality keeps offloading to PP 1, no recompute)
    away = offloaded(k)
    away_dense = minimum(away, n_dense - rc_dense)
    away_moe = minimum(away - away_dense, n_moe - rc_moe)
    dense = where(op, 0, chunks * (n_dense - rc_dense - away_dense) // v)
    moe = where(op, 0, chunks * (n_moe - rc_moe - away_moe) // v)
    return Held(
        chunks=chunks,
        dense=dense,
        moe=moe,
        checkpoints=chunks * checkpoints // v,
        recomputed=recomputed,
        op=where(op, chunks * n // v, 0),
        attn=dense + moe,
    )


def offloaded(k: Knobs) -> Num:
    """Layers of the stage whose saved activations are in host memory at its peak: Transformer Engine's
    offload context (``AsyncDoubleBufferGroupOffloadHandler``) copies the first N layers out in windows
    spread over the forward, each freed once its copy is waited for; the last as the last layer's
    forward ends, before the head runs. The backward brings them back one window ahead
    (``reloaded_bytes``)."""
    # legality keeps offloading to PP 1; elsewhere (a point being explained) nothing leaves the GPU
    return where(k.pp == 1, maximum(k.offload, 0), 0)


def reloaded_bytes(model: Model, k: Knobs, lt: LayerTotals) -> Num:
    """What the first reload adds to the stage's peak: the last offloaded layer comes back as the backward
    begins, when the head's activations (on this stage: legality keeps offloading to PP 1) are freed, so
    only what one layer holds beyond them. The largest layer kind stands for it."""
    if model.hybrid:  # legality refuses offloading there: a point being explained keeps everything
        return 0
    largest: Num = 0
    for now in lt.layer_now.values():
        largest = maximum(largest, now)
    return where(offloaded(k) > 0, maximum(largest - lt.head, 0), 0)


def _hybrid_held(model: Model, k: Knobs, stage: Num) -> Held:
    """``held`` for a hybrid model, whose layers are of four kinds in the order its pattern says:
    full recompute takes the first ``N`` layers of each chunk, whatever their kinds. Legality refuses
    op-level checkpointing and activation offloading for hybrid models."""
    split = model_split(model, k)
    v = k.vpp
    n = stage_layers(model, k, stage)
    chunks = inflight_chunks(k.pp, v, k.schedule, stage, k.microbatches)
    full = logical_and(k.recompute == RECOMPUTE_CODES["full"], k.recompute_layers > 0)
    kept: dict[str, Num] = {}
    recomputed: Num = 0
    for kind in HYBRID_KINDS:
        prefix = model.kind_prefix(kind)
        count = split.stage_kind_layers(prefix, stage)
        block = split.stage_kind_layers(prefix, stage, maximum(k.recompute_layers, 0))
        again = where(full, where(k.recompute_uniform, count, block), 0)
        recomputed = recomputed + again
        kept[kind] = chunks * (count - again) // v
    per_chunk = cdiv(n, v)
    group = maximum(k.recompute_layers, 1)
    checkpoints = where(full, where(k.recompute_uniform, v * cdiv(per_chunk, group), recomputed), 0)
    return Held(chunks=chunks, dense=kept["-"], moe=kept["E"], checkpoints=chunks * checkpoints // v,
                recomputed=recomputed, op=0, attn=kept["*"], mamba=kept["M"])


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


def _layer_items(model: Model, k: Knobs, settings: Settings, d: act.Dims) -> dict[str, list[act.Item]]:
    """The saved tensors of each part of a layer: the attention block (a transformer's with its
    pre-MLP norm and MLP input), the pre-MLP norm and input alone (a hybrid model's MLP layers),
    the dense MLP, the MoE and the Mamba mixer."""
    hybrid = model.hybrid
    return {
        "attn": act.attention_items(model, k, d, mlp_input=not hybrid),
        "mlp_in": act.mlp_input_items(model, k, d) if hybrid else [],
        "dense": act.dense_mlp_items(model, k, d),
        "moe": act.moe_mlp_items(model, k, d, settings) if model.moe is not None else [],
        "mamba": act.mamba_items(model, k, d) if model.mamba is not None else [],
    }


@frozen
class LayerItems:
    """The stage-independent half of ``activation_lines``: the saved tensors of each part of a layer,
    of a checkpoint, of op-level checkpointing, the embedding and the head, and their totals. An
    account computes it once and reads it for every stage."""

    d: act.Dims
    parts: dict[str, list[act.Item]]
    ckpt: list[act.Item]
    op: list[act.Item]
    emb: list[act.Item]
    head: list[act.Item]
    shared: list[act.Item]
    totals: LayerTotals


def layer_items(model: Model, k: Knobs, settings: Settings) -> LayerItems:
    d = act.dims(model, k)
    op_shared, op_extra = act.op_items(model, k, d)
    return LayerItems(d, _layer_items(model, k, settings, d), act.checkpoint_items(model, k, d), op_shared + op_extra,
                      act.embedding_items(model, k, d), act.head_items(model, k, d),
                      act.checkpoint_shared_items(model, k, d), layer_totals(model, k, settings))


def activation_lines(model: Model, k: Knobs, stage: Num, reserved: int, items: LayerItems) -> list[Line]:
    d, parts, ckpt, op, emb, head, shared = items.d, items.parts, items.ckpt, items.op, items.emb, items.head, items.shared
    hd = held(model, k, stage)
    attn, mlp_in, dense, moe, mamba = (parts[p] for p in ("attn", "mlp_in", "dense", "moe", "mamba"))
    first = where(stage == 0, 1, 0)
    last = where(stage == head_stage(k), 1, 0)
    emb_mb = first * cdiv(hd.chunks, k.vpp)

    lines = _lines("act: ", mamba, hd.mamba, "mamba layer-microbatches")
    lines += _lines("act: ", attn, hd.attn, "attention layer-microbatches" if model.hybrid else "layer-microbatches")
    lines += _lines("act: ", mlp_in, hd.dense + hd.moe, "mlp layer-microbatches")
    lines += _lines("act: ", dense, hd.dense, "dense layer-microbatches")
    lines += _lines("act: ", moe, hd.moe, "moe layer-microbatches")
    lines += _lines("act: ", ckpt, hd.checkpoints, "checkpoints")
    lines += _lines("act: ", op, hd.op, "op-checkpointed layer-microbatches")
    lines += _lines("act: ", emb, emb_mb, "embedding microbatches")
    with_ckpt = where(hd.checkpoints > 0, cdiv(hd.chunks, k.vpp), 0)
    lines += _lines("act: ", shared, with_ckpt, "microbatches with checkpoints")
    lines += _lines("act: ", head, last, "last stage")

    slack = (
        act.round_slack(mamba) * hd.mamba
        + act.round_slack(attn) * hd.attn
        + act.round_slack(mlp_in) * (hd.dense + hd.moe)
        + act.round_slack(dense) * hd.dense
        + act.round_slack(moe) * hd.moe
        + act.round_slack(ckpt) * hd.checkpoints
        + act.round_slack(op) * hd.op
        + act.round_slack(emb) * emb_mb
        + act.round_slack(shared) * with_ckpt
        + act.round_slack(head) * last
    )
    lines.append(Line("allocator rounding (activations)", "Σ (⌈tensor / 512⌉·512 − tensor)", (), slack))

    lt = items.totals
    recompute = recomputed_bytes(model, k, lt, stage, hd)
    inputs: tuple[tuple[str, Num], ...] = ()
    if _scalar(recompute) and _scalar(lt.biggest):
        inputs = (("recomputed bytes", recompute), ("largest saved tensor", lt.biggest))
    lines.append(Line("backward transient", "recomputed checkpoint + 2 × largest saved tensor", inputs,
                      recompute + 2 * lt.biggest))
    reload = reloaded_bytes(model, k, lt)
    if not _scalar(reload) or reload:
        lines.append(Line("offloaded layer reloaded", "largest layer − head activations (offload_layers > 0)",
                          (), reload))
    sp_buffer = where(k.sp, 2 * d.T * d.h, 0)
    lines.append(Line("sequence-parallel gather buffer", "2·T·h (when SP)",
                      (("T", d.T), ("h", d.h)) if _scalar(d.T) else (), sp_buffer))
    lines.append(Line("reserved (runtime, collective buffers)", "gpu.reserved_memory", (), reserved))
    return lines


def _fields(k: Knobs) -> dict[str, Num]:
    return {f.name: getattr(k, f.name) for f in Knobs.__attrs_attrs__}


def recomputed_bytes(model: Model, k: Knobs, lt: LayerTotals, stage: Num, hd: Held) -> Num:
    """Bytes one checkpoint's backward brings back: under full recompute every layer of the checkpoint
    (one under ``block``; a group of ``N`` under ``uniform``, which Megatron re-runs as one function,
    so all ``N`` layers' activations are alive before the first of them is freed), else what selective
    recomputation dropped from one layer. Layer bytes are the largest of the stage's layer kinds, an
    upper bound for a group that mixes kinds. A full-recompute checkpoint counts only what it adds over
    the bytes its own micro-batch has freed by then (the chunk's later whole layers, the smallest kind
    standing for each, and the head on the last stage): under ``block`` with fewer than all of a
    chunk's layers recomputed that is nothing, as megatron-core measures on CPU
    (tests/memory/test_ground_truth.py, the ``peak-`` cases). Under op-level checkpointing the backward
    re-runs the layer's forward: all it saves without recomputation comes back, less the op save
    list's outputs that are those same tensors (already held)."""
    n = stage_layers(model, k, stage)
    if model.hybrid:
        split = model_split(model, k)
        present = {kind: split.stage_kind_layers(model.kind_prefix(kind), stage) > 0 for kind in HYBRID_KINDS}
    else:
        n_moe = n - stage_dense_layers(model, k, stage)
        present = {"-": n - n_moe > 0, "E": n_moe > 0}
    largest: Num = 0
    smallest: Num = 0
    selective: Num = 0
    for kind, has in present.items():
        plain, now = lt.layer_plain[kind], lt.layer_now[kind]
        largest = maximum(largest, where(has, plain, 0))
        smallest = where(has, where(smallest > 0, minimum(smallest, plain), plain), smallest)
        selective = maximum(selective, where(has, plain - now, 0))
    per_chunk = cdiv(n, k.vpp)
    group = where(k.recompute_uniform, minimum(maximum(k.recompute_layers, 1), per_chunk), 1)
    op_layer = maximum(largest - lt.op_shared_raw, 0)
    not_full = where(k.recompute == RECOMPUTE_CODES["op"], op_layer, selective)
    # Autograd reaches a checkpoint only after the backward of everything its micro-batch ran later
    # has freed those saved tensors: the chunk's whole layers after the recomputed ones (block keeps
    # the last ``per_chunk - N`` of each chunk whole; uniform none) and, on the last stage, the head.
    # The recomputed layer adds to the stage's peak only where it outgrows what those held.
    whole_after = where(k.recompute_uniform, 0, maximum(per_chunk - maximum(k.recompute_layers, 0), 0))
    freed = whole_after * smallest + where(stage == head_stage(k), lt.head_raw, 0)
    return where(hd.recomputed > 0, maximum(group * largest - lt.ckpt_raw - freed, 0), not_full)


@frozen
class LayerTotals:
    """Per-layer and per-micro-batch sums of the items (stage-independent), rounding included;
    ``layer_plain``/``layer_now`` give one whole layer of each kind (``-`` dense, ``E`` MoE, and a
    hybrid model's ``M`` and ``*``) without selective recomputation and as configured (both without
    rounding)."""

    attn: Num
    dense: Num
    moe: Num
    ckpt: Num
    op: Num
    emb: Num
    shared: Num
    head: Num
    layer_plain: dict[str, Num]
    layer_now: dict[str, Num]
    ckpt_raw: Num
    head_raw: Num
    op_shared_raw: Num
    biggest: Num
    sp_buffer: Num
    mlp_in: Num = 0
    mamba: Num = 0


def layer_totals(model: Model, k: Knobs, settings: Settings) -> LayerTotals:
    d = act.dims(model, k)

    def rounded(items: list[act.Item]) -> Num:
        return act.total(items) + act.round_slack(items)

    def layers(parts: dict[str, list[act.Item]]) -> dict[str, Num]:
        t = {name: act.total(items) for name, items in parts.items()}
        out = {"-": t["attn"] + t["mlp_in"] + t["dense"],
               "E": t["attn"] + t["mlp_in"] + t["moe"] if parts["moe"] else 0}
        if model.hybrid:
            out = {"-": t["mlp_in"] + t["dense"], "E": t["mlp_in"] + t["moe"], "*": t["attn"], "M": t["mamba"]}
        return out

    parts = _layer_items(model, k, settings, d)
    plain_k = Knobs(**{**_fields(k), "recompute_modules": 0})
    plain = _layer_items(model, plain_k, settings, d)
    op_shared, op_extra = act.op_items(model, k, d)
    biggest = 0
    for items in plain.values():
        for it in items:
            biggest = maximum(biggest, it.bytes)
    return LayerTotals(
        attn=rounded(parts["attn"]),
        dense=rounded(parts["dense"]),
        moe=rounded(parts["moe"]),
        ckpt=rounded(act.checkpoint_items(model, k, d)),
        op=rounded(op_shared + op_extra),
        emb=rounded(act.embedding_items(model, k, d)),
        shared=rounded(act.checkpoint_shared_items(model, k, d)),
        head=rounded(act.head_items(model, k, d)),
        layer_plain=layers(plain),
        layer_now=layers(parts),
        ckpt_raw=act.total(act.checkpoint_items(model, k, d)),
        head_raw=act.total(act.head_items(model, k, d)),
        op_shared_raw=act.total(op_shared),
        biggest=biggest,
        sp_buffer=where(k.sp, 2 * d.T * d.h, 0),
        mlp_in=rounded(parts["mlp_in"]),
        mamba=rounded(parts["mamba"]),
    )


def stage_activation_total(model: Model, k: Knobs, lt: LayerTotals, stage: Num, reserved: int) -> Num:
    """The sum of ``activation_lines`` for one stage, from precomputed per-layer totals."""
    hd = held(model, k, stage)
    first = where(stage == 0, 1, 0)
    last = where(stage == head_stage(k), 1, 0)
    emb_mb = first * cdiv(hd.chunks, k.vpp)
    with_ckpt = where(hd.checkpoints > 0, cdiv(hd.chunks, k.vpp), 0)
    recompute = recomputed_bytes(model, k, lt, stage, hd)
    return (
        lt.mamba * hd.mamba
        + lt.attn * hd.attn
        + lt.mlp_in * (hd.dense + hd.moe)
        + lt.dense * hd.dense
        + lt.moe * hd.moe
        + lt.ckpt * hd.checkpoints
        + lt.op * hd.op
        + lt.emb * emb_mb
        + lt.shared * with_ckpt
        + lt.head * last
        + recompute
        + 2 * lt.biggest
        + reloaded_bytes(model, k, lt)
        + lt.sp_buffer
        + reserved
    )


def offload_bytes(model: Model, cand: Candidate, world: int, settings: Settings) -> int:
    """Bytes one micro-batch's forward copies to host memory, and its backward copies back: the saved
    activations of the first ``offload_layers`` decoder layers, whole (legality keeps recomputation off)."""
    n = cand.offload_layers
    if n <= 0:
        return 0
    k = from_candidate(cand, world)
    per_layer = layer_totals(model, k, settings).layer_now
    # a transformer's (legality refuses offloading on a hybrid model): its first n layers' MLPs
    dense = model.mlp_kinds[:n].count("-")
    counts = {"-": dense, "E": n - dense}
    return int(sum(int(per_layer.get(kind, 0)) * c for kind, c in counts.items() if c))
