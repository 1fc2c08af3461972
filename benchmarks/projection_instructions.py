"""Instructions ``project_many`` executes on an example space, cold and warm, counted by valgrind.

Run: ``python benchmarks/projection_instructions.py [FILE.prx]`` (needs ``valgrind`` on the PATH; about
20 times slower than the projection itself: a minute and a half for the Llama 3.1 70B example).

CPU time on a shared or virtual machine moves by half from one hour to the next; an instruction count
does not, so this is what compares two versions of the projection code on the same machine
(``benchmarks/projection_speed.py`` gives the CPU time). It runs the space three times under
cachegrind, projecting its legal points zero, one and two times, with ``PYTHONHASHSEED=0``, and
reports the differences: the first projection (cold caches) and the second (warm).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from primus_lang.resources import data_dir

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(data_dir("examples") / "llama3_1_70b_mi325x.prx"))
    parser.add_argument("--runs", type=int, help=argparse.SUPPRESS)  # the child: project this many times
    args = parser.parse_args(argv)
    if args.runs is not None:
        return _child(args.file, args.runs)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH (apt-get install valgrind)", file=sys.stderr)
        return 1
    counts = [_instructions(args.file, runs) for runs in (0, 1, 2)]
    cold, warm = counts[1] - counts[0], counts[2] - counts[1]
    print(f"{Path(args.file).name}: cold {cold / 1e6:,.0f} M instructions, warm {warm / 1e6:,.0f} M")
    return 0


def _instructions(file: str, runs: int) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, __file__, file, "--runs", str(runs)],
        capture_output=True, text=True, env=env, timeout=3600, check=True)
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"cachegrind printed no instruction count:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def _child(file: str, runs: int) -> int:
    from primus_lang.check import legal_points
    from primus_lang.gc_policy import use_bulk_thresholds
    from primus_lang.lower import load_program, pick_space
    from primus_lang.project import project_many

    space = pick_space(load_program(file))
    cands = list(legal_points(space))
    use_bulk_thresholds()
    for _ in range(runs):
        project_many(space.model, space.cluster, cands, space.settings)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
