"""Downscale, measure, upscale: run one real layer (and the embedding/head) at a candidate's exact
per-rank shapes, keep the timings in the profile database, and compose the full step from them.

A layer's forward/backward is timed as a whole, so everything between the kernels (launches,
framework overhead, the casts and copies no operator list names) is in the number; only the count
of layers, micro-batches, data-parallel ranks and pipeline stages is scaled analytically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

from primus_lang.bench.database import ProfileDB
from primus_lang.bench.gpt import build_gpt, build_layer, layer_params, outer_params
from primus_lang.bench.runtime import DeviceInfo, torch, torch_dtype
from primus_lang.bench.timing import cache_flusher, time_call
from primus_lang.ir import Model, derived

# The optimizer tail is measured on at most this many parameters and scaled linearly beyond.
TAIL_CAP = {"cpu": 1 << 25, "cuda": 1 << 31, "rocm": 1 << 31}


@frozen
class BlockShape:
    """What fixes a layer's per-rank kernels: the model's widths, TP, micro-batch and sequence."""

    model: Model
    tp: int
    mbs: int
    seq: int
    dtype: str = "bf16"

    @property
    def key(self) -> str:
        m = self.model
        return (
            f"layer h={m.hidden} f={m.ffn_hidden} a={m.heads} kv={m.kv_heads} d={m.head_dim} v={m.vocab} "
            f"{m.activation} {m.norm} {m.position} bias={int(m.bias)} tp={self.tp} b={self.mbs} "
            f"s={self.seq} {self.dtype}"
        )


@frozen
class BlockTimes:
    """Seconds for one micro-batch on one rank."""

    layer_f: float  # one layer's forward
    layer_fb: float  # forward + backward, no recompute
    layer_fb_selective: float  # attention core recomputed
    layer_fb_full: float  # the whole layer recomputed
    outer_f: float  # embedding, final norm, output layer, loss: forward
    outer_fb: float  # the same, forward + backward

    def layer(self, recompute: str) -> float:
        return {"none": self.layer_fb, "selective": self.layer_fb_selective, "full": self.layer_fb_full}[recompute]


def _fwd_bwd(net: Any, make_input: Callable[[], tuple[Any, ...]], grad_out: Any | None) -> Callable[[], None]:
    def run() -> None:
        out = net(*make_input())
        if grad_out is None:
            out.backward()
        else:
            out.backward(grad_out)

    return run


def _fwd(net: Any, make_input: Callable[[], tuple[Any, ...]]) -> Callable[[], None]:
    def run() -> None:
        net(*make_input())  # graph built and saved, as in training

    return run


def measure_block(
    shape: BlockShape, device: DeviceInfo, budget_s: float = 0.2, flush: bool | None = None
) -> BlockTimes:
    """Time the blocks; ``flush`` evicts the caches before every sample (see ``timing.cache_flusher``).
    By default GPUs flush their L2 (the usual cold-cache practice); on the CPU it made no measurable
    difference to the acceptance check (docs/benchmark.md) and triples the time, so it is off."""
    t = torch()
    flush = device.kind != "cpu" if flush is None else flush
    before = cache_flusher(device.device) if flush else None

    def time_it(fn: Callable[[], object]) -> float:
        return time_call(fn, dev, budget_s=budget_s, before=before).best(dev)

    # low-precision GEMMs quantize BF16 activations: the layers' tensors are BF16
    dtype, dev = torch_dtype(shape.dtype if shape.dtype not in ("fp8", "fp4") else "bf16"), device.device
    m = shape.model
    gen = t.Generator(device="cpu").manual_seed(2)
    x = t.randn(shape.mbs, shape.seq, m.hidden, generator=gen).to(device=dev, dtype=dtype)
    grad = t.randn(shape.mbs, shape.seq, m.hidden, generator=gen).to(device=dev, dtype=dtype)

    def layer_input() -> tuple[Any, ...]:
        return (x.detach().requires_grad_(True),)

    timings: dict[str, float] = {}
    for name, selective in (("plain", False), ("selective", True)):
        layer = build_layer(m, shape.tp, selective, dtype, dev)
        if name == "plain":
            timings["layer_f"] = time_it(_fwd(layer, layer_input))
        timings[name] = time_it(_fwd_bwd(layer, layer_input, grad))
        if name == "plain":

            def full(inp: Any, layer: Any = layer) -> Any:
                return t.utils.checkpoint.checkpoint(layer, inp, use_reentrant=False)

            timings["full"] = time_it(_fwd_bwd(full, layer_input, grad))
    outer = build_gpt(m, 0, dtype, dev, tp=shape.tp)
    # a vocabulary-parallel rank looks up and scores only its own rows of the padded vocabulary
    rows = derived.vocab_per_rank(m.vocab, shape.tp)
    ids = t.randint(0, rows, (shape.mbs, shape.seq), generator=gen).to(dev)
    labels = t.randint(0, rows, (shape.mbs, shape.seq), generator=gen).to(dev)
    outer_f = time_it(_fwd(outer, lambda: (ids, labels)))
    outer_fb = time_it(_fwd_bwd(outer, lambda: (ids, labels), None))
    return BlockTimes(timings["layer_f"], timings["plain"], timings["selective"], timings["full"], outer_f, outer_fb)


def block_times(shape: BlockShape, db: ProfileDB, device: DeviceInfo) -> tuple[BlockTimes, bool]:
    """The shape's timings from the database, measuring them first if absent; True when measured now."""
    found = db.block(device.key, shape.key)
    if found is not None:
        return BlockTimes(**found), False
    times = measure_block(shape, device)
    db.put_block(device.key, shape.key, _as_dict(times))
    return times, True


def _as_dict(times: BlockTimes) -> dict[str, float]:
    import attrs

    return {k: float(v) for k, v in attrs.asdict(times).items()}


def measure_tail(model: Model, layers: int, tp: int, device: DeviceInfo, budget_s: float = 0.3) -> float:
    """Gradients into one FP32 buffer, Adam on the FP32 master, master back into BF16 weights:
    the once-per-step work of the reference step, timed on the real tensor shapes (capped)."""
    t = torch()
    dev = device.device
    per_layer, outer = layer_params(model, tp), outer_params(model, tp)
    cap = TAIL_CAP.get(device.kind, TAIL_CAP["cpu"])
    measured_layers = max(0, min(layers, (cap - outer) // max(1, per_layer)))
    net = build_gpt(model, measured_layers, t.bfloat16, dev, tp=tp)
    params = [p for p in net.parameters()]
    for p in params:
        p.grad = t.zeros_like(p)
    master = t.cat([p.detach().reshape(-1).float() for p in params]).requires_grad_(True)
    opt = t.optim.Adam([master], lr=1e-4, foreach=True)

    def tail() -> None:
        master.grad = t.cat([p.grad.reshape(-1).float() for p in params])
        opt.step()
        offset = 0
        with t.no_grad():
            for p in params:
                n = p.numel()
                p.copy_(master[offset : offset + n].view_as(p))
                offset += n

    seconds = time_call(tail, dev, budget_s=budget_s, warmup=1).best(dev)
    full = layers * per_layer + outer
    done = measured_layers * per_layer + outer
    return seconds * full / done


def tail_key(model: Model, layers: int, tp: int) -> str:
    """The tail's cost is fixed by the tensors it walks: the parameter counts of a layer and of the rest."""
    return f"tail layer={layer_params(model, tp)} outer={outer_params(model, tp)} L={layers} tp={tp}"


def tail_time(model: Model, layers: int, tp: int, db: ProfileDB, device: DeviceInfo) -> float:
    key = tail_key(model, layers, tp)
    found = db.block(device.key, key)
    if found is not None:
        return found["seconds"]
    seconds = measure_tail(model, layers, tp, device)
    db.put_block(device.key, key, {"seconds": seconds})
    return seconds
