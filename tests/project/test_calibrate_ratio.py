"""Calibration fits the BF16 GEMM plateau; the FP8 one follows it through the kernels' FP8/BF16 ratio."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from primus_lang.ir import Efficiency
from primus_lang.ir.hardware import FP8_GEMM_RATIO
from primus_lang.validate.calibrate import fit_efficiency, identifiable
from primus_lang.validate.runs import load_runs

RUNS = Path(__file__).parent / "data" / "runs.yaml"


def test_the_fp8_ratio_is_fitted_only_where_no_kernel_measured_it() -> None:
    runs = [r for r in load_runs(RUNS) if not r.skip]
    bf16 = [r for r in runs if r.cand and r.cand.precision == "bf16"]
    fp8 = [r for r in runs if r.cand and r.cand.precision == "fp8"]
    assert bf16 and fp8 and all(r.cluster and r.cluster.gpu.vendor == "nvidia" for r in bf16 + fp8)
    for rows in (bf16 + fp8, bf16, fp8):
        assert "fp8_ratio" not in identifiable(rows)  # NVIDIA's is cuBLAS's, measured
    assert "gemm_max" in identifiable(fp8)  # FP8 rows move the BF16 plateau through the ratio
    amd = [attrs.evolve(r, cluster=attrs.evolve(r.cluster, gpu=attrs.evolve(r.cluster.gpu, vendor="amd")))
           for r in bf16 + fp8 if r.cluster]
    assert "fp8_ratio" in identifiable(amd)
    assert "fp8_ratio" not in identifiable([r for r in amd if r.cand and r.cand.precision == "fp8"])


def test_the_default_ratio_is_the_kernels() -> None:
    base = Efficiency()
    assert base.fp8_gemm_max / base.gemm_max == pytest.approx(FP8_GEMM_RATIO, rel=1e-12)


def test_one_dtype_keeps_the_base_ratio() -> None:
    fp8 = [r for r in load_runs(RUNS) if not r.skip and r.cand and r.cand.precision == "fp8"]
    base = Efficiency()
    fit = fit_efficiency(fp8, base, iterations=3)
    assert fit.gemm_max != pytest.approx(base.gemm_max, abs=1e-6)  # the rows did move the plateau
    assert fit.fp8_gemm_max / fit.gemm_max == pytest.approx(base.fp8_gemm_max / base.gemm_max, rel=1e-9)
