"""Pre-filter 10^6 candidates of a Llama-3.1-70B space on 64 MI325X and report the time (one core).

    python benchmarks/prefilter.py [N]

Two timings: the numpy core on knob columns (what a search over a space uses), and the whole call
from a list of ``Candidate`` objects (building the columns included).
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from primus_lang.ir import Candidate, Cluster, Gpu, Model, Recompute, Settings
from primus_lang.memory.knobs import Knobs
from primus_lang.memory.prefilter import knob_columns, prefilter_columns

MODEL = Model(name="llama3_1_70b", num_layers=80, hidden=8192, ffn_hidden=28672, heads=64, kv_heads=8,
              head_dim=128, vocab=128256, seq_len=8192, max_position_embeddings=131072)
GPU = Gpu(name="mi325x", vendor="amd", peak_bf16=1.3074e15, hbm_capacity=256 * 10**9, hbm_bandwidth=6e12,
          scale_up_bandwidth=448e9, reserved_memory=4 * 2**30)
CLUSTER = Cluster(name="mi325x_x8", gpu=GPU, nodes=8, gpus_per_node=8)


def space() -> list[Candidate]:
    out = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            for vpp in (1, 2, 4) if pp > 1 else (1,):
                for cp in (1, 2):
                    for mbs in (1, 2, 4, 8):
                        for rc in [Recompute(), Recompute("selective")] + [Recompute("full", n) for n in range(0, 81, 4)]:
                            for prec in ("bf16", "fp8"):
                                for sharding in ("dist_opt", "fsdp"):
                                    out.append(Candidate(tp=tp, pp=pp, vpp=vpp, cp=cp, mbs=mbs, gbs=256, seq_len=8192,
                                                         recompute=rc, precision=prec, sharding=sharding,
                                                         schedule="interleaved" if vpp > 1 else "1f1b"))
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    base = space()
    cols = knob_columns(base, CLUSTER.world)
    reps = -(-n // len(base))
    big = Knobs(world=CLUSTER.world, layout=cols.layout,
                **{f: np.tile(getattr(cols, f), reps)[:n]
                   for f in (a.name for a in Knobs.__attrs_attrs__) if f not in ("world", "layout")})
    t0 = time.perf_counter()
    peaks = prefilter_columns(MODEL, CLUSTER, big, Settings())
    core = time.perf_counter() - t0
    fits = int((peaks <= GPU.hbm_capacity * 95 // 100).sum())
    print(f"numpy core: {n:,} candidates in {core:.2f} s ({n / core:,.0f}/s); {fits:,} fit with 5% headroom")
    objs = (base * reps)[:n]
    t0 = time.perf_counter()
    prefilter_columns(MODEL, CLUSTER, knob_columns(objs, CLUSTER.world), Settings())
    whole = time.perf_counter() - t0
    print(f"from Candidate objects: {n:,} in {whole:.2f} s")


if __name__ == "__main__":
    main()
