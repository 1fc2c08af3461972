"""`primusc calibrate` on the bundled corpus writes the shipped stdlib/hardware/calibrated.prx byte for
byte, so anyone can audit the fit and refit it.

Two tests prove it:

- ``test_every_shipped_profile_is_refit_byte_for_byte`` (the default run, about a tenth of the whole
  refit): every profile's ``efficiency`` block, the values a projection reads, comes from one fit on
  all rows (``fit_all_rows``, the first step of ``calibrate``): each profile on its own rows, pulled
  toward its vendor's pool of all the vendor's rows; a GPU without rows takes that pool. The folds and
  the leave-one-GPU-out transfer only measure errors (the comment's CV MAPE, the ``provenance``
  bands, the header's figures), they move no efficiency. So this test refits every profile, fitted
  and pooled, NVIDIA and AMD, and compares each one's efficiency block and its comment's rows and
  in-sample MAPE byte for byte with the shipped file, and the profiles' names and order: a change to
  the projection, the corpus or the fit that moves any value the file ships fails it.
- ``test_calibrate_writes_the_shipped_file`` (marked ``refit``, left out of the default run; CI runs it
  once, ``python -m pytest -q -m refit``): the whole command in a fresh process with its own hash
  seed, as a user's run would, header and provenance bands included (one fold shuffle: the file does
  not depend on ``--repeats``). The bands' figures come only from the folds and the transfer, which
  make nine tenths of the refit; a profile's values are checked by the test above as well.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from primus_lang.resources import data_dir

SHIPPED = data_dir("stdlib") / "hardware" / "calibrated.prx"
REFIT = "`primusc calibrate --out stdlib/hardware/calibrated.prx --force`"
# a profile's comment line and its efficiency block, as to_prx writes them
_BLOCK = re.compile(r"^# (\w+): (.*)\n(gpu \1_calibrated = \w+ \{\n  efficiency \{\n.*?\n  \}\n)", re.M | re.S)


def _profiles(text: str) -> dict[str, tuple[str, str]]:
    """Each profile's (comment without its cross-validated figure, efficiency block), in file order."""
    return {m[1]: (re.sub(r", \d+-fold CV MAPE .*$", "", m[2]), m[3]) for m in _BLOCK.finditer(text)}


def _refit_text(shipped: str) -> str:
    """The profiles ``calibrate`` writes, from the fit on all rows alone (no folds: no bands)."""
    from primus_lang.commands._corpus import bundled_runs
    from primus_lang.validate.calibrate import POOL_SIGMA, fit_all_rows, to_prx, vendor_pools
    from primus_lang.validate.runs import GPU_NAMES, Run, gpu_key, load_runs, stdlib_definitions

    # calibrate's defaults: the bundled corpus, profiles of at least 3 rows, pooled with sigma 4
    by_gpu: dict[str, list[Run]] = {}
    for r in load_runs(str(bundled_runs()), False):
        if not r.skip:
            by_gpu.setdefault(gpu_key(r), []).append(r)
    kept = {g: rows for g, rows in by_gpu.items() if len(rows) >= 3}
    bases = {g: rows[0].cluster.gpu.efficiency for g, rows in kept.items() if rows[0].cluster}
    fits = fit_all_rows(kept, bases, POOL_SIGMA)
    gpus = stdlib_definitions()[1]
    others = {g: gpus[g] for g in sorted(set(GPU_NAMES.values())) if g in gpus and g not in {f.gpu for f in fits}}
    pooled = vendor_pools(kept, others)
    # each profile derives from the spec sheet the shipped file imports it from (a new one fails here)
    module_of = {name: module for module, names in re.findall(r"^import (\S+) \(([^)]*)\)", shipped, re.M)
                 for name in names.split(", ")}
    imports = {g: (module_of[f"{g}_spec"], f"{g}_spec") for g in [f.gpu for f in fits] + list(pooled)}
    return to_prx(fits, "", imports, pooled)


@pytest.mark.slow
def test_every_shipped_profile_is_refit_byte_for_byte() -> None:
    shipped = SHIPPED.read_text()
    want = _profiles(shipped)
    got = _profiles(_refit_text(shipped))
    # every profile of the file is compared, each block whole (13 parameters)
    assert len(want) == shipped.count("_calibrated = ") and len(want) >= 10
    assert all(block.count(" = ") == 14 for _, block in want.values())
    assert list(got) == list(want), f"the refit writes profiles {list(got)}, the shipped file {list(want)}"
    diff = "".join(line for name in want for line in difflib.unified_diff(
        [want[name][0] + "\n", *want[name][1].splitlines(True)], [got[name][0] + "\n", *got[name][1].splitlines(True)],
        f"shipped {name}", f"refit {name}", n=0))
    assert not diff, f"the fit on all rows differs from stdlib/hardware/calibrated.prx (if meant, {REFIT}):\n{diff}"


@pytest.mark.refit
@pytest.mark.slow
def test_calibrate_writes_the_shipped_file(tmp_path: Path) -> None:
    out = tmp_path / "x.prx"
    done = subprocess.run([sys.executable, "-m", "primus_lang.cli", "calibrate", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    shipped = SHIPPED.read_text()
    written = out.read_text()
    diff = "".join(difflib.unified_diff(shipped.splitlines(True), written.splitlines(True), "shipped", "refit", n=1))
    assert written == shipped, f"refit differs from stdlib/hardware/calibrated.prx (if meant, {REFIT}):\n{diff[:4000]}"
