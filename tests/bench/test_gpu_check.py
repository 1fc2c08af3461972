"""The prepared GPU script must not fail on the GPU for a reason a CPU could have caught."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"


@pytest.mark.slow
def test_gpu_check_smoke_run_on_cpu(tmp_path: Path) -> None:
    env = {**os.environ, "OUT": str(tmp_path)}
    done = subprocess.run(
        # the budget makes the script skip work when time runs out: unbounded here, so how busy the
        # machine is cannot change what the smoke run does (the timeout is a hang guard)
        [sys.executable, str(SCRIPT), "--device", "cpu", "--smoke", "--budget-s", "1e9"],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "gpu_check.json").read_text())
    assert result["errors"] == []
    assert {g["dtype"] for g in result["gemm"]} == {"bf16"}  # no FP8 claimed on a CPU
    assert len(result["check"]) == 2
    assert set(result["summary"]["downscaled_s"]) == {"median_abs_error", "spearman"}
    assert "Measured vs projected" in (tmp_path / "gpu_check.md").read_text()
