"""The pre-filter benchmark command stays runnable (its figures go in docs/memory.md, not in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "prefilter.py"


def test_prefilter_benchmark_runs_on_a_small_count() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "3000"], capture_output=True, text=True, check=True,
                         timeout=300).stdout
    assert "numpy core: 3,000 candidates" in out and "from Candidate objects: 3,000" in out
