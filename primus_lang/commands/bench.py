"""``primusc bench FILE``: measure every distinct kernel of a space's candidates on this device.

Kernels already in the profile database (same device, driver, runtime, torch) are not measured
again; ``--check`` runs the measured-vs-projected acceptance check of the benchmark oracle.
``--job slurm|k8s --out DIR`` writes a benchmark campaign for the cluster instead (``_bench_campaign``),
and ``--merge FILE...`` folds the files such campaigns wrote into the local database.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import sys

from primus_lang.bench import DEFAULT_DB
from primus_lang.commands._options import natural


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="measure a space's kernels into the profile database (needs torch)")
    p.add_argument("file", nargs="?", help="a .prx file with a space (omit with --check)")
    p.add_argument("--space", help="which space of the file (default: the only one)")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cpu; a --job: cuda)")
    p.add_argument("--db", default=str(DEFAULT_DB), help=f"profile database (default: {DEFAULT_DB})")
    p.add_argument("--limit", type=natural, default=0, help="profile at most N legal candidates (0: all)")
    p.add_argument(
        "--blocks", action="store_true",
        help="also run each distinct layer shape of a dense model for real (downscale; slow on CPUs)",
    )
    p.add_argument("--check", action="store_true", help="run the measured-vs-projected check on a small GPT")
    from primus_lang.commands._bench_campaign import register_campaign

    register_campaign(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.bench import ProfileDB, describe
    from primus_lang.commands import _bench_campaign as bench_campaign

    if bench_campaign.wanted(args):
        return bench_campaign.run(args)
    device = describe(args.device or "cpu")
    db = ProfileDB(args.db)
    if args.check:
        return _check(db, device)
    if not args.file:
        print("primusc bench: give a .prx file, --check, --job, --kernels, --collectives or --merge",
              file=sys.stderr)
        return 1
    return _profile(args, db, device)


def _check(db: object, device: object) -> int:
    from primus_lang.bench import CPU_CONFIGS, TINY_GPT, DeviceInfo, ProfileDB, markdown, run_check

    assert isinstance(db, ProfileDB) and isinstance(device, DeviceInfo)
    configs = CPU_CONFIGS if device.kind == "cpu" else tuple(c for c in CPU_CONFIGS if c.world == 1)
    print(markdown(run_check(TINY_GPT, configs, db, device, kernel_level=True)))
    return 0


def _profile(args: argparse.Namespace, db: object, device: object) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from primus_lang.bench import DeviceInfo, KernelSpec, ProfileDB, collect_specs
    from primus_lang.lower import load_space

    # the checker enumerates legal candidates (docs/architecture.md: ``check.legal_points``)
    legal_points = importlib.import_module("primus_lang.check").legal_points

    assert isinstance(db, ProfileDB) and isinstance(device, DeviceInfo)
    space = load_space(args.file, args.space)
    from primus_lang.bench import backend_of, facts_of

    db.put_provenance(device.key, facts_of(device, backend_of(device)))
    points = legal_points(space)
    # the kernels each candidate runs as its target launches it (what the projection asks for)
    cands = [space.settings.as_launched(c) for c in
             (itertools.islice(points, min(args.limit, sys.maxsize)) if args.limit > 0 else points)]
    distinct, count, occurrences = collect_specs(space.model, space.cluster, cands)
    from primus_lang.bench import profile_kernels as profile

    print(f"{space.name}: {count} candidates, {occurrences} kernel ops, {len(distinct)} distinct shapes "
          f"to look up or measure on {device.name}", flush=True)
    counts = {"cached": 0, "measured": 0, "unsupported": 0}
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(), transient=False,
    ) as bar:
        task = bar.add_task("kernels", total=len(distinct), note="")

        def tick(spec: KernelSpec, status: str) -> None:
            counts[status] += 1
            note = f"{counts['cached']} cached, {counts['measured']} measured  {spec}"
            bar.update(task, advance=1, note=note)

        stats = profile(distinct, db, device, on_progress=tick)
    if args.blocks:
        from primus_lang.bench import BenchmarkOracle

        fresh = BenchmarkOracle(db, device, space.cluster).anchor(space.model, cands)
        print(f"layer blocks: {fresh} measured now, the rest from {db.path}", flush=True)
    print(
        f"{space.name}: {count} candidates, {occurrences} kernel ops, {stats.distinct} distinct shapes: "
        f"{stats.cached} cached, {stats.measured} measured, {len(stats.unsupported)} not measurable here "
        f"(simulated) on {device.name} -> {db.path}"
    )
    return 0
