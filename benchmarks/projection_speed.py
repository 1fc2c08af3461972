"""Candidate projections per second on one core for the Llama 3.1 70B example space.

Run: ``python benchmarks/projection_speed.py [FILE.prx]``. Enumerates the space's legal points
(not timed), then projects each of them once from cold caches and times it with the process CPU
clock (what one core spends, whatever else the machine runs), then once more with warm caches.
The garbage collector runs with the thresholds every ``primusc`` command sets (``gc_policy``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from primus_lang.check import legal_points
from primus_lang.gc_policy import use_bulk_thresholds
from primus_lang.lower import load_program, pick_space
from primus_lang.project import project
from primus_lang.resources import data_dir


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else data_dir("examples") / "llama3_1_70b_mi325x.prx"
    space = pick_space(load_program(str(path)))
    cands = list(legal_points(space))
    use_bulk_thresholds()
    for label in ("cold", "warm"):
        start = time.process_time()
        for c in cands:
            project(space.model, space.cluster, c, space.settings)
        spent = time.process_time() - start
        print(f"{label}: {len(cands)} candidates in {spent:.2f} s CPU = {len(cands) / spent:,.0f} projections/s "
              f"({spent / len(cands) * 1e6:.0f} us each)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
