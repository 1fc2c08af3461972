"""Time and peak memory of an exhaustive plan across clusters (issue 32's scale check).

Run: ``python benchmarks/capacity_speed.py [--large] [--jobs N] [--gpus A,B]``. Without ``--large``
it plans ``examples/capacity_llama3_70b.prx`` exhaustively (28 clusters, 5,376 raw points); with it,
the same space with eight more recipe axes (cp, schedule, vpp, tp_comm_overlap, overlap_grad_reduce,
overlap_param_gather, fp8_recipe, more mbs and recomputation values: 573,440 raw points a cluster,
16.1M in all). ``--jobs`` is how many clusters are searched at a time (default: the CPUs this process
may use), as ``primusc plan --jobs``; ``--gpus`` keeps only those alternatives of the ``gpu`` axis.
It prints the raw and legal points, the projections made, the wall and CPU seconds (the parent's and
its workers'), and the peak resident memory of the parent and of its largest worker (the figures
docs/search.md quotes).
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from primus_lang.check import summarize
from primus_lang.gc_policy import use_bulk_thresholds
from primus_lang.ir import cluster_points
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from primus_lang.search import available_cpus, limits_of, plan_capacity

# the extra recipe axes of the large space, each replacing one line of the example
LARGE = {
    "  mbs : 1 | 2\n": "  mbs : 1 | 2 | 4 | 8\n  cp : 1 | 2 | 4 | 8\n  schedule : 1f1b | interleaved\n"
                       "  vpp : 1 | 2 | 4 | 5 | 10\n  tp_comm_overlap : true | false\n"
                       "  overlap_grad_reduce : true | false\n  overlap_param_gather : true | false\n"
                       "  fp8_recipe : tensorwise | delayed\n",
    "  recompute : none | selective | full(layers: 1)\n":
        "  recompute : none | selective | full(layers: 1 | 2 | 4 | 5 | 10)\n",
}


def main(argv: list[str]) -> int:
    text = (data_dir("examples") / "capacity_llama3_70b.prx").read_text()
    if "--large" in argv:
        for old, new in LARGE.items():
            assert old in text, old
            text = text.replace(old, new)
    if "--gpus" in argv:  # keep only these alternatives of the `gpu` axis (a smaller space)
        keep = argv[argv.index("--gpus") + 1].split(",")
        line = next(x for x in text.splitlines() if x.strip().startswith("gpu :"))
        head, alternatives = line.split(" : ", 1)
        kept = [a for a in alternatives.split(" | ") if a.split()[0] in keep]
        text = text.replace(line, f"{head} : {' | '.join(kept)}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "space.prx"
        path.write_text(text)
        space = load_space(path)
    points = cluster_points(space)
    counts = [summarize(sub) for _, sub in points]
    print(f"{len(points)} clusters: {sum(c.raw for c in counts):,} raw points, {sum(c.legal for c in counts):,} legal")
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else available_cpus()
    use_bulk_thresholds()
    wall, cpu = time.perf_counter(), _cpu()
    cap = plan_capacity(space, "exhaustive", limits_of(space, 10**9), None, jobs=jobs)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    projected = sum(c.evaluations for c in cap.clusters)
    print(f"{projected:,} projections")
    print(f"chosen {cap.chosen}: {wall:.1f} s wall on {jobs} job(s), {cpu:.1f} s CPU, peak {own:.2f} GiB resident "
          f"(largest worker {worker:.2f} GiB)")
    return 0


def _cpu() -> float:
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
