"""Build real megatron-core 0.16.1 modules on CPU and measure their bytes (ground truth).

megatron-core assumes CUDA in a few places; the patches below point those at the CPU without changing
what is computed or saved for backward:
- ``torch.cuda.current_device`` returns ``"cpu"`` (buffers are allocated with it as the device);
- the CUDA RNG tracker forks become no-ops and checkpointing saves only the CPU RNG state;
- dropout goes through ``torch.native_dropout`` so the mask is a 1-byte bool tensor, as on GPU (the CPU
  ``F.dropout`` keeps a mask in the activation's dtype).
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


def _layer_norm(x: torch.Tensor, shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    return _GpuLayerNorm.apply(x, list(shape), weight, bias, eps)


def _rms_norm(x: torch.Tensor, shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    return _GpuRmsNorm.apply(x, list(shape), weight, 1e-6 if eps is None else eps)


def patch_for_cpu() -> None:
    import megatron.core.tensor_parallel as tp_pkg
    import megatron.core.tensor_parallel.random as rnd

    torch.cuda.current_device = lambda: "cpu"  # type: ignore[assignment,return-value]
    rnd.get_cuda_rng_tracker = lambda *a, **k: _TRACKER  # type: ignore[assignment]
    tp_pkg.get_cuda_rng_tracker = rnd.get_cuda_rng_tracker  # type: ignore[attr-defined]
    rnd._get_all_rng_states = lambda: (torch.get_rng_state(), None, {})  # type: ignore[assignment]
    rnd._set_all_rng_states = lambda cpu, cuda, tracker: torch.set_rng_state(cpu)  # type: ignore[assignment]
    torch.nn.functional.dropout = _native_dropout  # type: ignore[assignment]
    torch.nn.functional.layer_norm = _layer_norm  # type: ignore[assignment]
    torch.nn.functional.rms_norm = _rms_norm  # type: ignore[assignment]


def init_distributed(rank: int, world: int, port: int, tp: int = 1, pp: int = 1, ep: int = 1, etp: int | None = None,
                     cp: int = 1) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    patch_for_cpu()
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


class SavedMeter:
    """Bytes autograd keeps for backward, one count per storage, parameters excluded."""

    def __init__(self, exclude: Iterator[torch.Tensor] | list[torch.Tensor] = ()) -> None:
        self.excluded = {p.untyped_storage().data_ptr() for p in exclude}
        self.storages: dict[int, int] = {}
        self.shapes: dict[int, tuple[tuple[int, ...], str]] = {}

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        st = t.untyped_storage()
        ptr = st.data_ptr()
        if ptr not in self.excluded and not isinstance(t, torch.nn.Parameter):
            self.storages[ptr] = st.nbytes()
            self.shapes[ptr] = (tuple(t.shape), str(t.dtype).replace("torch.", ""))
        return t

    @contextlib.contextmanager
    def measure(self) -> Iterator[SavedMeter]:
        with torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t):
            yield self

    @property
    def total(self) -> int:
        return sum(self.storages.values())


def run_spawned(fn: Callable[..., None], world: int, *args: Any) -> None:
    import torch.multiprocessing as mp

    port = free_port()
    mp.spawn(fn, args=(world, port, *args), nprocs=world, join=True)
