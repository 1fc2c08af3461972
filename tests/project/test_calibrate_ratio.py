"""Calibration fits the FP8 GEMM plateau as a ratio to the BF16 one."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.ir import Efficiency
from primus_lang.project.calibrate import fit_efficiency, identifiable
from primus_lang.project.runs import load_runs

RUNS = Path(__file__).parent / "data" / "runs.yaml"


def test_the_ratio_is_fitted_only_with_rows_of_both_dtypes() -> None:
    runs = [r for r in load_runs(RUNS) if not r.skip]
    bf16 = [r for r in runs if r.cand and r.cand.precision == "bf16"]
    fp8 = [r for r in runs if r.cand and r.cand.precision == "fp8"]
    assert bf16 and fp8
    assert "fp8_ratio" in identifiable(bf16 + fp8)
    assert "fp8_ratio" not in identifiable(bf16) and "fp8_ratio" not in identifiable(fp8)
    assert "gemm_max" in identifiable(fp8)  # FP8 rows move the BF16 plateau through the ratio


def test_one_dtype_keeps_the_base_ratio() -> None:
    fp8 = [r for r in load_runs(RUNS) if not r.skip and r.cand and r.cand.precision == "fp8"]
    base = Efficiency()
    fit = fit_efficiency(fp8, base, iterations=3)
    assert fit.gemm_max != pytest.approx(base.gemm_max, abs=1e-6)  # the rows did move the plateau
    assert fit.fp8_gemm_max / fit.gemm_max == pytest.approx(base.fp8_gemm_max / base.gemm_max, rel=1e-9)
