"""`primusc calibrate` on the bundled corpus writes the shipped stdlib/hardware/calibrated.prx byte for
byte, so anyone can audit the fit and refit it. The whole fit runs (one fold shuffle: the file does
not depend on `--repeats`), in a fresh process with its own hash seed, as a user's run would."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from primus_lang.resources import data_dir


@pytest.mark.slow
def test_calibrate_writes_the_shipped_profiles(tmp_path: Path) -> None:
    out = tmp_path / "x.prx"
    done = subprocess.run([sys.executable, "-m", "primus_lang.cli", "calibrate", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    shipped = (data_dir("stdlib") / "hardware" / "calibrated.prx").read_text()
    written = out.read_text()
    diff = "".join(difflib.unified_diff(shipped.splitlines(True), written.splitlines(True), "shipped", "refit", n=1))
    assert written == shipped, ("refit differs from stdlib/hardware/calibrated.prx (if the change is meant, "
                                "`primusc calibrate --out stdlib/hardware/calibrated.prx --force`):\n" + diff[:4000])
