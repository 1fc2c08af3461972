"""Judge the published runs' memory: every run that really ran without CPU offload should fit.

    python tests/memory/corpus_check.py [--runs PATH] [--assume-recompute] [--show N]

Rows come through ``primus_lang.validate.runs.load_runs`` (the same mapping ``primusc validate`` uses).
A row whose recipe enables CPU activation offloading is left out. ``--assume-recompute`` judges rows
that publish no recompute setting under full recompute (the least activation memory Megatron offers):
such a run may have used it, so judging it without is no evidence of a false OOM.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import attrs
import yaml

from primus_lang.ir import Settings
from primus_lang.ir.candidate import RECOMPUTE_MODULES
from primus_lang.memory.unpublished import least_memory
from primus_lang.validate.corpus import runs_file
from primus_lang.validate.runs import load_runs

DEFAULT = runs_file()  # the bundled corpus


def recompute_published(row: dict[str, Any]) -> bool:
    rec = row.get("recompute")
    return isinstance(rec, dict) and bool(rec.get("recompute_granularity") or rec.get("activation_checkpointing"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default=str(DEFAULT))
    ap.add_argument("--assume-recompute", action="store_true")
    ap.add_argument("--unpublished-dtypes", action="store_true",
                    help="also try BF16 main grads and BF16 Adam moments (no row publishes them)")
    ap.add_argument("--show", type=int, default=15)
    args = ap.parse_args()
    rows = {r["id"]: r for r in yaml.safe_load(Path(args.runs).read_text())}
    runs = [r for r in load_runs(args.runs) if not r.skip]
    judged = []
    for run in runs:
        row = rows[run.id]
        assert run.model is not None and run.cluster is not None and run.cand is not None
        cand = run.cand
        modules = (row.get("recompute") or {}).get("recompute_modules") if isinstance(row.get("recompute"), dict) else None
        if cand.recompute.kind == "selective" and modules:
            known = tuple(m for m in modules if m in RECOMPUTE_MODULES)
            cand = cand.replace(recompute=attrs.evolve(cand.recompute, modules=known))
        free = []
        # megatron-core refuses recomputation beside offloading: an offloading row ran without it
        if args.assume_recompute and not recompute_published(row) and cand.recompute.kind == "none" \
                and not cand.offload_layers:
            free.append("recompute")
        if args.unpublished_dtypes:
            free += ["main_grad_dtype", "optimizer_dtype"]
        acc, cand = least_memory(run.model, run.cluster, cand, Settings(), free)
        judged.append((acc.spare(0) / acc.capacity, run, acc, cand))
    judged.sort(key=lambda x: x[0])
    over = [j for j in judged if j[0] < 0]
    print(f"resolved rows {len(runs)}, judged {len(judged)}, "
          f"judged not to fit (false OOMs) {len(over)}")
    for frac, run, acc, cand in judged[: args.show]:
        print(f"{run.id:28s} {run.group[0]:16s} {run.group[1]:10s} margin {frac:+7.1%}  "
              f"peak {acc.peak.total / 2**30:7.1f} GiB of {acc.capacity / 2**30:6.1f}  {cand.label()}")


if __name__ == "__main__":
    main()
