"""Build real megatron-core 0.16.1 modules on CPU and measure their bytes (ground truth).

megatron-core assumes CUDA in a few places; the patches below point those at the CPU without changing
what is computed or saved for backward:
- ``torch.cuda.current_device`` returns ``"cpu"`` (buffers are allocated with it as the device);
- the CUDA RNG tracker forks become no-ops and checkpointing saves only the CPU RNG state;
- dropout goes through ``torch.native_dropout`` so the mask is a 1-byte bool tensor, as on GPU (the CPU
  ``F.dropout`` keeps a mask in the activation's dtype);
- megatron's fused scale-mask-softmax CUDA extensions (``scaled_upper_triang_masked_softmax_cuda``,
  ``scaled_masked_softmax_cuda``, ``scaled_softmax_cuda``) are stood in for by CPU modules that return
  what the kernels return (the softmax in the input's 16-bit dtype) and the kernels' own
  ``get_batch_per_block``; megatron-core's autograd functions around them run unchanged, so what
  they save for backward is what they save on a GPU.
The meter records every tensor autograd saves (``saved_tensors_hooks``), deduplicated by storage, and
leaves out parameters: exactly what stays alive between forward and backward.
"""

from __future__ import annotations

import contextlib
import os
import socket
import warnings
from collections.abc import Callable, Iterator
from typing import Any

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _NoRngTracker:
    def fork(self, name: str = "") -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def get_states(self) -> dict[str, Any]:
        return {}

    def set_states(self, states: dict[str, Any]) -> None:
        pass

    def add(self, name: str, seed: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def is_initialized(self) -> bool:
        return True


_TRACKER = _NoRngTracker()


def _native_dropout(
    input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> torch.Tensor:
    if not training or p == 0.0:
        return input
    out, _mask = torch.native_dropout(input, p, True)
    return out


class _GpuLayerNorm(torch.autograd.Function):
    """``native_layer_norm`` keeping FP32 mean/rstd for backward, as the CUDA kernel does for 16-bit input."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, shape: list[int], w: torch.Tensor | None, b: torch.Tensor | None,
                eps: float) -> torch.Tensor:
        out, mean, rstd = torch.native_layer_norm(x, shape, w, b, eps)
        ctx.shape = shape
        ctx.save_for_backward(x, w, b, mean.float(), rstd.float())
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, w, b, mean, rstd = ctx.saved_tensors
        gx, gw, gb = torch.ops.aten.native_layer_norm_backward(
            grad, x, ctx.shape, mean.to(x.dtype), rstd.to(x.dtype), w, b, [True, w is not None, b is not None]
        )
        return gx, None, gw, gb, None


class _GpuRmsNorm(torch.autograd.Function):
    """RMSNorm saving its input and an FP32 rstd per token, as the fused CUDA kernels do."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, shape: list[int], w: torch.Tensor | None, eps: float) -> torch.Tensor:
        dims = tuple(range(-len(shape), 0))
        rstd = torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + eps)
        ctx.save_for_backward(x, w, rstd)
        ctx.dims = dims
        y = (x.float() * rstd).to(x.dtype)
        return y * w if w is not None else y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, w, rstd = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_(True)
            wd = w.detach().requires_grad_(True) if w is not None else None
            y = (xd.float() * rstd).to(x.dtype)
            y = y * wd if wd is not None else y
            inputs = [xd] + ([wd] if wd is not None else [])
            grads = torch.autograd.grad(y, inputs, grad)
        return grads[0], None, grads[1] if w is not None else None, None


# Storages of the 1-element scale tensors megatron's fused softmax functions save: ``torch.tensor([scale])``
# lives in host memory on a GPU too, so the meter leaves it out. The tensors are kept alive beside
# their addresses: a freed scale's address is handed to the next small tensor the allocator makes,
# which the meter would then leave out too (the account and the meter disagreed by 8 bytes at random).
HOST_STORAGES: set[int] = set()
_HOST_TENSORS: list[torch.Tensor] = []


def _causal_fill(x: torch.Tensor) -> torch.Tensor:
    sq, sk = x.shape[-2], x.shape[-1]
    upper = torch.ones(sq, sk, dtype=torch.bool).triu(1)
    return x.masked_fill(upper, float("-inf"))


def _softmax_forward(x: torch.Tensor, scale: torch.Tensor, mask: torch.Tensor | None = None,
                     causal: bool = False) -> torch.Tensor:
    HOST_STORAGES.add(scale.untyped_storage().data_ptr())
    _HOST_TENSORS.append(scale)
    y = x.float() * float(scale)
    if causal:
        y = _causal_fill(y)
    if mask is not None:
        y = y.masked_fill(mask, -10000.0)
    return torch.softmax(y, dim=-1).to(x.dtype)


def _softmax_backward(grad: torch.Tensor, probs: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    g, p = grad.float(), probs.float()
    return (float(scale) * p * (g - (g * p).sum(-1, keepdim=True))).to(grad.dtype)


def _batch_per_block(sq: int, sk: int, b: int, np: int) -> int:
    # the extension's rule (megatron/core/fusions/csrc scaled_masked_softmax.h): warps of up to 32
    # threads, two rows a warp up to 128 keys, 128 threads a block
    pow2 = 1 << max(sk - 1, 0).bit_length()
    warp = min(pow2, 32)
    return (128 // warp) * (2 if pow2 <= 128 else 1)


def _install_softmax_extensions() -> None:
    import sys
    import types

    upper = types.ModuleType("scaled_upper_triang_masked_softmax_cuda")
    upper.forward = lambda x, scale: _softmax_forward(x, scale, causal=True)  # type: ignore[attr-defined]
    upper.backward = _softmax_backward  # type: ignore[attr-defined]
    masked = types.ModuleType("scaled_masked_softmax_cuda")
    masked.forward = lambda x, mask, scale: _softmax_forward(x, scale, mask=mask)  # type: ignore[attr-defined]
    masked.backward = _softmax_backward  # type: ignore[attr-defined]
    masked.get_batch_per_block = _batch_per_block  # type: ignore[attr-defined]
    plain = types.ModuleType("scaled_softmax_cuda")
    plain.forward = lambda x, scale: _softmax_forward(x, scale)  # type: ignore[attr-defined]
    plain.backward = _softmax_backward  # type: ignore[attr-defined]
    for module in (upper, masked, plain):
        sys.modules[module.__name__] = module


def _layer_norm(x: torch.Tensor, shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    return _GpuLayerNorm.apply(x, list(shape), weight, bias, eps)  # type: ignore[no-untyped-call]


def _rms_norm(x: torch.Tensor, shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    return _GpuRmsNorm.apply(x, list(shape), weight, 1e-6 if eps is None else eps)  # type: ignore[no-untyped-call]


class _NoStream:
    """Stands in for ``torch.cuda.Stream``: on CPU everything runs on one stream anyway."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait_stream(self, other: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def record_event(self, event: Any = None) -> _NoStream:
        return self

    def wait_event(self, event: Any) -> None:
        pass

    def query(self) -> bool:
        return True

    def __enter__(self) -> _NoStream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _patch_torch_norm_for_sp() -> None:
    # megatron-core's torch norm refuses SP only because it cannot mark its weights for the SP
    # gradient all-reduce; the forward (and what it saves) is the same, so build it with SP off.
    import megatron.core.transformer.torch_norm as tn

    original = tn.WrappedTorchNorm.__new__

    def new(cls: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
        sp = config.sequence_parallel
        config.sequence_parallel = False
        try:
            return original(cls, config, *args, **kwargs)
        finally:
            config.sequence_parallel = sp

    _set(tn.WrappedTorchNorm, "__new__", new)


def _set(owner: Any, name: str, value: Any) -> None:
    """Monkey-patch ``owner.name`` (through setattr: the patched objects' declared types do not fit)."""
    setattr(owner, name, value)


def patch_for_cpu() -> None:
    import megatron.core.tensor_parallel as tp_pkg
    import megatron.core.tensor_parallel.random as rnd

    _set(torch.cuda, "current_device", lambda: "cpu")
    _set(torch.cuda, "Stream", _NoStream)
    _set(torch.cuda, "current_stream", lambda *a, **k: _NoStream())
    _set(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    _set(torch.cuda, "Event", _NoStream)
    _set(rnd, "get_cuda_rng_tracker", lambda *a, **k: _TRACKER)
    _set(tp_pkg, "get_cuda_rng_tracker", rnd.get_cuda_rng_tracker)
    _set(rnd, "_get_all_rng_states", lambda: (torch.get_rng_state(), None, {}))
    _set(rnd, "_set_all_rng_states", lambda cpu, cuda, tracker: torch.set_rng_state(cpu))
    _set(torch.nn.functional, "dropout", _native_dropout)
    _patch_torch_norm_for_sp()
    import megatron.core.transformer.moe.moe_utils as moe_utils

    # Without TransformerEngine the router's GEMM falls back to torch, as the module intends.
    _set(moe_utils, "te_general_gemm", None)
    _set(torch.nn.functional, "layer_norm", _layer_norm)
    _set(torch.nn.functional, "rms_norm", _rms_norm)
    _install_softmax_extensions()


def init_distributed(rank: int, world: int, port: int, tp: int = 1, pp: int = 1, ep: int = 1, etp: int | None = None,
                     cp: int = 1) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    patch_for_cpu()
    patch_gloo_collectives()
    from megatron.core import parallel_state as ps

    ps.initialize_model_parallel(
        tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp,
        context_parallel_size=cp,
        expert_model_parallel_size=ep,
        expert_tensor_parallel_size=etp,
    )


def shutdown() -> None:
    from megatron.core import parallel_state as ps

    ps.destroy_model_parallel()
    dist.destroy_process_group()


class _Held:
    """What the pack hook hands autograd: alive exactly as long as autograd keeps the saved tensor."""

    __slots__ = ("meter", "ptr", "t")

    def __init__(self, meter: SavedMeter, ptr: int, t: torch.Tensor) -> None:
        self.meter, self.ptr, self.t = meter, ptr, t

    def __del__(self) -> None:
        self.meter._release(self.ptr)


class SavedMeter:
    """Bytes autograd keeps for backward, one count per storage, parameters and host tensors excluded.

    ``total`` is every storage saved while measuring (the forward pass: all of it is alive when the
    forward ends). ``peak`` is the most bytes alive at once when the step's backward runs inside
    ``measure`` too: a saved tensor stops counting when autograd drops it, after its node's backward,
    and recomputation in backward (activation checkpointing) saves tensors again."""

    def __init__(self, exclude: list[torch.Tensor] | None = None) -> None:
        self.excluded = {p.untyped_storage().data_ptr() for p in exclude or []}
        self.storages: dict[int, int] = {}
        self.shapes: dict[int, tuple[tuple[int, ...], str]] = {}
        self.refs: dict[int, int] = {}
        self.live = 0
        self.peak = 0

    def _counted(self, t: torch.Tensor) -> int | None:
        ptr = t.untyped_storage().data_ptr()
        if ptr in self.excluded or isinstance(t, torch.nn.Parameter):
            return None
        if ptr in HOST_STORAGES and t.numel() == 1:
            return None
        return ptr

    def _pack(self, t: torch.Tensor) -> Any:
        ptr = self._counted(t)
        if ptr is None:
            return t
        st = t.untyped_storage()
        self.storages[ptr] = st.nbytes()
        self.shapes[ptr] = (tuple(t.shape), str(t.dtype).replace("torch.", ""))
        if self.refs.get(ptr, 0) == 0:
            self.live += st.nbytes()
            self.peak = max(self.peak, self.live)
        self.refs[ptr] = self.refs.get(ptr, 0) + 1
        return _Held(self, ptr, t)

    def _release(self, ptr: int) -> None:
        self.refs[ptr] -= 1
        if self.refs[ptr] == 0:
            self.live -= self.storages[ptr]

    @staticmethod
    def _unpack(packed: Any) -> torch.Tensor:
        return packed.t if isinstance(packed, _Held) else packed

    @contextlib.contextmanager
    def measure(self) -> Iterator[SavedMeter]:
        with torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack):
            yield self

    @property
    def total(self) -> int:
        return sum(self.storages.values())


def run_spawned(fn: Callable[..., None], world: int, *args: Any) -> None:
    from torch.multiprocessing.spawn import spawn

    port = free_port()
    spawn(fn, args=(world, port, *args), nprocs=world, join=True)  # type: ignore[no-untyped-call]


# The unfused attention primusc's launch files select (``--attention-backend unfused``: Transformer
# Engine's UnfusedDotProductAttention) runs the fused scale-mask-softmax kernel where its shape rule
# allows and an FP32 torch softmax otherwise; megatron-core's local DotProductAttention does the same
# with these two settings (TransformerConfig's own default leaves the fusion off).
SOFTMAX_AS_TE = {"masked_softmax_fusion": True, "attention_softmax_in_fp32": True}


def transformer_config(model: Any, cand: Any, **overrides: Any) -> Any:
    """A megatron-core TransformerConfig for a primusc ``Model`` and ``Candidate``; ``overrides`` are
    TransformerConfig fields set last."""
    import torch.nn.functional as F
    from megatron.core.transformer.transformer_config import TransformerConfig

    kw: dict[str, Any] = dict(
        num_layers=model.num_layers,
        hidden_size=model.hidden,
        ffn_hidden_size=model.ffn_hidden,
        num_attention_heads=model.heads,
        num_query_groups=model.kv_heads,
        kv_channels=model.head_dim,
        normalization="RMSNorm" if model.norm == "rmsnorm" else "LayerNorm",
        add_bias_linear=model.bias,
        gated_linear_unit=model.activation == "swiglu",
        activation_func=F.silu if model.activation == "swiglu" else F.gelu,
        bias_activation_fusion=model.activation == "swiglu",
        qk_layernorm=model.qk_layernorm,
        hidden_dropout=model.dropout,
        attention_dropout=model.attention_dropout,
        use_cpu_initialization=True,
        bf16=True,
        params_dtype=torch.bfloat16,
        pipeline_dtype=torch.bfloat16,
        tensor_model_parallel_size=cand.tp,
        pipeline_model_parallel_size=cand.pp,
        expert_model_parallel_size=cand.ep,
        expert_tensor_parallel_size=cand.expert_tp,
        sequence_parallel=cand.sp,
        **SOFTMAX_AS_TE,
    )
    if model.moe is not None:
        moe = model.moe
        kw.update(
            num_moe_experts=moe.num_experts,
            moe_router_topk=moe.top_k,
            moe_ffn_hidden_size=moe.ffn_hidden,
            moe_token_dispatcher_type="alltoall",
            moe_router_load_balancing_type="none",
        )
        if moe.shared_experts:
            kw["moe_shared_expert_intermediate_size"] = moe.shared_experts * (moe.shared_ffn_hidden or moe.ffn_hidden)
        if "-" in model.mlp_kinds:
            # dense layers first or among the MoE ones: megatron-core's per-layer list (--moe-layer-freq)
            kw["moe_layer_freq"] = [1 if kind == "E" else 0 for kind in model.mlp_kinds]
    kind = cand.recompute.kind
    if kind == "selective":
        kw["recompute_granularity"] = "selective"
        if cand.recompute.modules:
            kw["recompute_modules"] = list(cand.recompute.modules)
    elif kind == "full":
        kw.update(recompute_granularity="full", recompute_method=cand.recompute.method,
                  recompute_num_layers=cand.recompute.layers)
    kw.update(overrides)
    return TransformerConfig(**kw)


def build_gpt(model: Any, cand: Any, **overrides: Any) -> tuple[Any, Any]:
    """A bf16 GPTModel (wrapped in Float16Module as in training) built with the local layer spec."""
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.transformer.module import Float16Module

    from primus_lang.ir.derived import padded_vocab

    cfg = transformer_config(model, cand, **overrides)
    spec: Any
    if model.moe is not None and "-" in model.mlp_kinds:
        # each layer's spec from the config's moe_layer_freq: a dense MLP or the experts
        from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec

        spec = get_gpt_decoder_block_spec(cfg, use_transformer_engine=False, normalization=cfg.normalization)
    else:
        spec = get_gpt_layer_local_spec(
            num_experts=model.moe.num_experts if model.moe else None,
            qk_layernorm=model.qk_layernorm,
            normalization=cfg.normalization,
        )
    gpt = GPTModel(
        cfg,
        spec,
        vocab_size=padded_vocab(model.vocab, cand.tp),
        max_sequence_length=model.max_position_embeddings,
        position_embedding_type="rope" if model.position == "rope" else "learned_absolute",
        share_embeddings_and_output_weights=model.tied_embeddings,
    )
    return cfg, Float16Module(cfg, gpt)


def param_bytes(module: Any) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())


def saved_bytes_of_step(wrapped: Any, model: Any, cand: Any, seed: int = 0, backward: bool = False) -> SavedMeter:
    """Saved-for-backward bytes of one micro-batch through the whole model and its loss; with
    ``backward`` the backward runs inside the meter too, so its ``peak`` covers recomputation."""
    from megatron.core import parallel_state as ps

    g = torch.Generator().manual_seed(seed)
    s, b = cand.seq_len, cand.mbs
    from primus_lang.ir.derived import padded_vocab

    vocab = padded_vocab(model.vocab, cand.tp)
    ids = torch.randint(0, vocab, (b, s), generator=g)
    labels = torch.randint(0, vocab, (b, s), generator=g)
    pos = torch.arange(s).unsqueeze(0).expand(b, s).contiguous()
    mask = torch.triu(torch.ones(1, 1, s, s, dtype=torch.bool), 1)
    del ps
    meter = SavedMeter([*wrapped.parameters(), ids, labels, pos, mask])
    with meter.measure():
        loss = wrapped(ids, pos, mask, labels=labels)
        if backward:
            loss.float().sum().backward()
    if not backward:
        loss.float().sum().backward()
    return meter


def _all_gather_into_tensor(output: torch.Tensor, input: torch.Tensor, group: Any = None,
                            async_op: bool = False) -> Any:
    chunks = list(output.chunk(dist.get_world_size(group)))
    parts = [torch.empty_like(input) for _ in chunks]
    dist.all_gather(parts, input.contiguous(), group=group)
    for dst, src in zip(chunks, parts, strict=True):
        dst.copy_(src.view_as(dst))
    return None


def _reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor, op: Any = dist.ReduceOp.SUM,
                           group: Any = None, async_op: bool = False) -> Any:
    full = input.clone()
    dist.all_reduce(full, op=op, group=group)
    output.copy_(full.chunk(dist.get_world_size(group))[dist.get_rank(group)].view_as(output))
    return None


def patch_gloo_collectives() -> None:
    """gloo has neither all-gather-into-tensor nor reduce-scatter-tensor; build them from what it has."""
    _set(dist, "all_gather_into_tensor", _all_gather_into_tensor)
    _set(dist, "_all_gather_base", _all_gather_into_tensor)
    _set(dist, "reduce_scatter_tensor", _reduce_scatter_tensor)
    _set(dist, "_reduce_scatter_base", _reduce_scatter_tensor)
