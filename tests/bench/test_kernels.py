from __future__ import annotations

import pytest

from primus_lang.bench.kernels import CATALOGUE, KernelSpec, fp8_supported, prepare, work
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.bench.timing import time_call
from primus_lang.diagnostics import CompileError

SMALL = {
    "gemm": (8, 16, 32, 1),
    "grouped_gemm": (2, 8, 16, 32),
    "attention": (1, 2, 16, 16, 8, 8, 1, 0),
    "attention_bwd": (1, 2, 16, 16, 8, 8, 1, 4),
    "embedding": (16, 50, 8),
    "embedding_bwd": (16, 50, 8),
}


def small_shape(op: str) -> tuple[int, ...]:
    if op in SMALL:
        return SMALL[op]
    return {1: (64,), 2: (4, 16)}[len(CATALOGUE[op])]


@pytest.mark.parametrize("op", sorted(CATALOGUE))
def test_every_catalogue_kernel_runs_and_times(op: str, cpu: DeviceInfo) -> None:
    spec = KernelSpec(op, small_shape(op), "bf16")
    timing = time_call(prepare(spec, "cpu"), "cpu", warmup=1, repeats=3)
    assert timing.repeats == 3
    assert 0 < timing.minimum <= timing.median
    assert work(spec) > 0


def test_batched_gemm_counts_every_matrix() -> None:
    assert work(KernelSpec("gemm", (8, 16, 32, 3), "bf16")) == 3 * work(KernelSpec("gemm", (8, 16, 32, 1), "bf16"))


def test_causal_and_window_attention_work() -> None:
    full = work(KernelSpec("attention", (1, 1, 64, 64, 8, 8, 0, 0), "bf16"))
    causal = work(KernelSpec("attention", (1, 1, 64, 64, 8, 8, 1, 0), "bf16"))
    window = work(KernelSpec("attention", (1, 1, 64, 64, 8, 8, 1, 16), "bf16"))
    backward = work(KernelSpec("attention_bwd", (1, 1, 64, 64, 8, 8, 1, 0), "bf16"))
    assert causal == full / 2
    assert window == full / 4
    assert backward == 2.5 * causal


@pytest.mark.parametrize(("op", "shape"), [("conv2d", (1, 2)), ("gemm", (8, 16)), ("gemm", (0, 1, 1, 1))])
def test_bad_specs_are_user_errors(op: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(CompileError) as err:
        KernelSpec(op, shape, "bf16")
    assert err.value.diagnostics[0].code.id == "P6805"


def test_nvfp4_gemms_are_never_measured() -> None:
    for device in ("cpu", "cuda"):
        with pytest.raises(NotImplementedError, match="NVFP4"):
            prepare(KernelSpec("gemm", (16, 16, 16, 1), "fp4"), device)


def test_fp8_is_not_claimed_on_cpu() -> None:
    # torch's CPU _scaled_mm is a slow reference path, not FP8 hardware
    assert not fp8_supported("cpu")
    with pytest.raises(NotImplementedError):
        prepare(KernelSpec("gemm", (16, 16, 16, 1), "fp8"), "cpu")
