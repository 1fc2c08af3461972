"""Candidate projections per second on one core for the Llama 3.1 70B example space.

Run: ``python benchmarks/projection_speed.py [FILE.prx] [--path scalar|batch]``. Enumerates the
space's legal points (not timed), then projects each of them once from cold caches and times it with
the process CPU clock (what one core spends, whatever else the machine runs), then once more with
warm caches. ``scalar`` calls ``project`` per candidate; ``batch`` calls ``project_many`` on them all
(the candidates projected as arrays, ``project/batch.py``). Without ``--path`` each
path runs in a fresh process of its own, so that both start cold.
The garbage collector runs with the thresholds every ``primusc`` command sets (``gc_policy``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from primus_lang.check import legal_points
from primus_lang.gc_policy import use_bulk_thresholds
from primus_lang.lower import load_program, pick_space
from primus_lang.project import project, project_many
from primus_lang.resources import data_dir

PATHS = ("scalar", "batch")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(data_dir("examples") / "llama3_1_70b_mi325x.prx"))
    parser.add_argument("--path", choices=PATHS)
    args = parser.parse_args(argv)
    if args.path is None:
        for path in PATHS:
            subprocess.run([sys.executable, __file__, args.file, "--path", path], check=True, timeout=3600)
        return 0
    space = pick_space(load_program(str(Path(args.file))))
    cands = list(legal_points(space))
    use_bulk_thresholds()
    for label in ("cold", "warm"):
        start = time.process_time()
        if args.path == "batch":
            project_many(space.model, space.cluster, cands, space.settings)
        else:
            for c in cands:
                project(space.model, space.cluster, c, space.settings)
        spent = time.process_time() - start
        print(f"{args.path} {label}: {len(cands)} candidates in {spent:.2f} s CPU = "
              f"{len(cands) / spent:,.0f} projections/s ({spent / len(cands) * 1e6:.0f} us each)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
