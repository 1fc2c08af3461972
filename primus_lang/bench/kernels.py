"""The operators the harness can run, at exact shapes and dtypes, and how to run each one.

A ``KernelSpec`` is the profile database's key: ``(op, shape, dtype)``. The catalogue below is the
data (dimension names and the work measure used to interpolate between shapes); ``prepare`` builds
the tensors once and returns the closure that is timed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from attrs import frozen

from primus_lang.bench.runtime import torch, torch_dtype
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import UNSUPPORTED_OP

# op -> names of its shape dimensions. "_bwd" ops time the backward pass alone.
CATALOGUE: dict[str, tuple[str, ...]] = {
    "gemm": ("m", "n", "k", "batch"),
    "grouped_gemm": ("groups", "m", "n", "k"),  # m tokens per group
    # causal 0/1; window 0 = unlimited. GQA does not change the work of a flash kernel.
    "attention": ("batch", "heads", "seq_q", "seq_kv", "head_dim", "v_head_dim", "causal", "window"),
    "attention_bwd": ("batch", "heads", "seq_q", "seq_kv", "head_dim", "v_head_dim", "causal", "window"),
    "layernorm": ("tokens", "hidden"),
    "layernorm_bwd": ("tokens", "hidden"),
    "rmsnorm": ("tokens", "hidden"),
    "rmsnorm_bwd": ("tokens", "hidden"),
    "gelu": ("tokens", "width"),
    "gelu_bwd": ("tokens", "width"),
    "swiglu": ("tokens", "width"),  # width of one of the two halves
    "swiglu_bwd": ("tokens", "width"),
    "add": ("numel",),
    "dropout": ("numel",),
    "softmax": ("rows", "cols"),
    "softmax_bwd": ("rows", "cols"),
    "cross_entropy": ("tokens", "vocab"),
    "cross_entropy_bwd": ("tokens", "vocab"),
    "embedding": ("tokens", "vocab", "hidden"),
    "embedding_bwd": ("tokens", "vocab", "hidden"),
    "optimizer": ("numel",),  # Adam over FP32 master weights
    "stream": ("bytes",),  # a memory-bound kernel moving ``bytes`` (half read, half written)
}
# dimensions that may be 0 (flags and "unlimited")
_ZERO_OK = {"causal", "window"}

COMPUTE_BOUND = ("gemm", "grouped_gemm", "attention", "attention_bwd")


@frozen(order=True)
class KernelSpec:
    op: str
    shape: tuple[int, ...]
    dtype: str  # bf16 | fp16 | fp32 | fp8 | fp4 (NVFP4: not measured, the simulate oracle times it)

    def __attrs_post_init__(self) -> None:
        dims = CATALOGUE.get(self.op)
        if dims is None:
            raise CompileError(
                Diagnostic(UNSUPPORTED_OP, f"the harness has no kernel `{self.op}`", notes=(f"shape {self.shape}",))
            )
        if len(dims) != len(self.shape) or any(
            v < (0 if d in _ZERO_OK else 1) for d, v in zip(dims, self.shape, strict=False)
        ):
            raise CompileError(
                Diagnostic(UNSUPPORTED_OP, f"`{self.op}` takes shape ({', '.join(dims)}), got {self.shape}")
            )

    @property
    def shape_text(self) -> str:
        return "x".join(str(d) for d in self.shape)

    def __str__(self) -> str:
        return f"{self.op}[{self.shape_text}] {self.dtype}"


def work(spec: KernelSpec) -> float:
    """FLOPs for compute-bound kernels, elements touched otherwise: the axis interpolation runs on."""
    s = spec.shape
    if spec.op == "gemm":
        return 2.0 * s[0] * s[1] * s[2] * s[3]
    if spec.op == "grouped_gemm":
        return 2.0 * s[0] * s[1] * s[2] * s[3]
    if spec.op.startswith("attention"):
        b, h, sq, skv, d, dv, causal, window = s
        pairs = sq * window if 0 < window < skv else sq * skv * (0.5 if causal else 1.0)
        forward = 2.0 * b * h * pairs * (d + dv)
        return forward * (2.5 if spec.op.endswith("_bwd") else 1.0)
    if spec.op.startswith("embedding"):
        return float(s[0] * s[2])
    return float(math.prod(s))


def prepare(spec: KernelSpec, device: str) -> Callable[[], object]:
    """Allocate inputs on ``device`` and return the closure that runs the kernel once."""
    t = torch()
    if spec.dtype == "fp4":
        raise NotImplementedError("NVFP4 GEMMs need Transformer Engine's quantized kernels; not measured")
    dtype = t.bfloat16 if spec.dtype == "fp8" else torch_dtype(spec.dtype)
    # drawn on the device itself: a 16384^2 operand drawn on the host would take seconds
    gen = t.Generator(device=device).manual_seed(0)

    def randn(*shape: int, dt: Any = dtype, grad: bool = False) -> Any:
        x = t.randn(*shape, generator=gen, dtype=t.float32, device=device).to(dtype=dt)
        return x.requires_grad_(grad)

    op, s = spec.op, spec.shape
    with t.no_grad():
        if op == "gemm":
            m, n, k, batch = s
            if spec.dtype == "fp8":
                if batch != 1 or device == "cpu":
                    raise NotImplementedError("FP8 GEMM is measured on GPUs, one matrix at a time")
                return _fp8_gemm(t, randn(m, k), randn(n, k), device)
            if batch > 1:
                ab, bb = randn(batch, m, k), randn(batch, k, n)
                return lambda: t.bmm(ab, bb)
            a, b = randn(m, k), randn(k, n)
            return lambda: t.mm(a, b)
        if op == "grouped_gemm":
            g, m, n, k = s
            x, w = randn(g * m, k), randn(g, k, n)
            return _grouped(t, x, w, g, m, device)
    if op.startswith("attention"):
        b, h, sq, skv, d, dv, causal, window = s
        q = randn(b, h, sq, d, grad=True)
        kk, v = randn(b, h, skv, d, grad=True), randn(b, h, skv, dv, grad=True)
        mask = None
        if 0 < window < skv:  # a band: each query sees the ``window`` keys up to itself
            qi = t.arange(sq, device=device)[:, None] + (skv - sq)
            ki = t.arange(skv, device=device)[None, :]
            mask = (ki <= qi) & (ki > qi - window)

        def attn() -> Any:
            f = t.nn.functional.scaled_dot_product_attention
            if mask is not None:
                return f(q, kk, v, attn_mask=mask)
            return f(q, kk, v, is_causal=bool(causal) and sq == skv)

        return _forward_or_backward(t, op, attn, (q, kk, v))
    if op.startswith(("layernorm", "rmsnorm")):
        tokens, hidden = s
        x, w = randn(tokens, hidden, grad=True), randn(hidden, grad=True)
        norm = t.nn.functional.layer_norm if op.startswith("layernorm") else t.nn.functional.rms_norm
        return _forward_or_backward(t, op, lambda: norm(x, (hidden,), w), (x, w))
    if op.startswith("gelu"):
        x = randn(*s, grad=True)
        return _forward_or_backward(t, op, lambda: t.nn.functional.gelu(x, approximate="tanh"), (x,))
    if op.startswith("swiglu"):
        tokens, width = s
        x = randn(tokens, 2 * width, grad=True)

        def swiglu() -> Any:
            gate, up = x.chunk(2, dim=-1)
            return t.nn.functional.silu(gate) * up

        return _forward_or_backward(t, op, swiglu, (x,))
    if op == "add":
        a, b = randn(s[0]), randn(s[0])
        return lambda: a.add_(b)
    if op == "dropout":
        x = randn(s[0])
        return lambda: t.native_dropout(x, 0.1, True)
    if op.startswith("softmax"):
        x = randn(*s, grad=True)
        return _forward_or_backward(t, op, lambda: t.softmax(x.float(), dim=-1), (x,))
    if op.startswith("cross_entropy"):
        tokens, vocab = s
        logits = randn(tokens, vocab, grad=True)
        target = t.randint(0, vocab, (tokens,), generator=gen, device=device)

        def ce() -> Any:
            return t.nn.functional.cross_entropy(logits.float(), target)

        return _forward_or_backward(t, op, ce, (logits,))
    if op.startswith("embedding"):
        tokens, vocab, hidden = s
        table = randn(vocab, hidden, grad=True)
        ids = t.randint(0, vocab, (tokens,), generator=gen, device=device)
        return _forward_or_backward(t, op, lambda: t.nn.functional.embedding(ids, table), (table,))
    if op == "optimizer":
        return _adam(t, s[0], device)
    if op == "stream":
        src = t.empty(max(1, s[0] // 2), dtype=t.uint8, device=device)
        dst = t.empty_like(src)
        return lambda: dst.copy_(src)
    raise AssertionError(f"catalogue entry without a runner: {op}")


def _forward_or_backward(t: Any, op: str, forward: Callable[[], Any], inputs: tuple[Any, ...]) -> Callable[[], object]:
    if not op.endswith("_bwd"):
        def run() -> object:
            with t.no_grad():
                return forward()

        return run
    out = forward()
    grad_out = t.ones_like(out)
    return lambda: t.autograd.grad(out, inputs, grad_out, retain_graph=True)


def _fp8_gemm(t: Any, a: Any, b: Any, device: str) -> Callable[[], object]:
    """FP8 E4M3 with per-tensor scales through ``torch._scaled_mm`` (B column-major, as it requires)."""
    fp8 = t.float8_e4m3fn
    a8, b8 = a.to(fp8), b.to(fp8).t()
    one = t.tensor(1.0, device=device)
    return lambda: t._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=t.bfloat16)


def _grouped(t: Any, x: Any, w: Any, groups: int, m: int, device: str) -> Callable[[], object]:
    """One grouped kernel where torch has it (``torch._grouped_mm``), else a loop of GEMMs."""
    offs = t.arange(1, groups + 1, device=device, dtype=t.int32) * m
    grouped = getattr(t, "_grouped_mm", None)
    if grouped is not None:
        try:
            grouped(x, w, offs=offs)
            return lambda: grouped(x, w, offs=offs)
        except (RuntimeError, NotImplementedError):
            pass
    chunks = x.split(m)
    return lambda: [t.mm(c, w[i]) for i, c in enumerate(chunks)]


def _adam(t: Any, numel: int, device: str) -> Callable[[], object]:
    # Megatron keeps FP32 master weights, FP32 moments and an FP32 main gradient per parameter.
    param = t.zeros(numel, device=device, dtype=t.float32, requires_grad=True)
    param.grad = t.full_like(param, 1e-3)
    opt = t.optim.Adam([param], lr=1e-4, foreach=True)
    return opt.step  # type: ignore[no-any-return]


def fp8_supported(device: str) -> bool:
    """Whether ``torch._scaled_mm`` runs natively here (Hopper/Ada/MI300-class GPUs). CPU builds
    have a reference path that is thousands of times slower than BF16: not a measurement of FP8."""
    t = torch()
    if device == "cpu":
        return False
    try:
        run = _fp8_gemm(t, t.ones(16, 16, device=device), t.ones(16, 16, device=device), device)
        run()
        return True
    except (RuntimeError, TypeError, AttributeError):
        return False
