"""``primusc bench`` for the cluster: write a benchmark campaign, run its steps, merge what it measured.

- ``primusc bench space.prx --job slurm|k8s --out DIR [--var name=value] [--target NAME] [--force]``
  writes the job (``bench.campaign``).
- ``primusc bench --kernels kernels.json [--collectives local]`` and ``primusc bench --collectives
  net`` are the job's steps: the listed kernels and the collectives inside one node, and one rank of
  the collectives between nodes.
- ``primusc bench --merge FILE... [--db PATH]`` folds the campaign files into the local database.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import itertools
import os
import sys
from pathlib import Path
from typing import Any

from primus_lang.bench import DEFAULT_SIZES
from primus_lang.commands._options import positive_up_to, whole_between


def register_campaign(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("benchmark campaigns (docs/benchmark.md)")
    g.add_argument("--job", choices=("slurm", "k8s"), help="write a job that measures the space on the cluster")
    g.add_argument("--out", help="folder the job is written to (with --job)")
    g.add_argument("--force", action="store_true", help="replace job files already in --out")
    g.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="a job variable (repeatable)")
    g.add_argument("--target", help="the name the measurements are merged under (default: the space's gpu)")
    g.add_argument("--kernels", metavar="FILE", help="measure the kernels a job's kernels.json lists")
    g.add_argument("--collectives", choices=("local", "net"),
                   help="local: the collectives inside this node; net: one rank of those between nodes")
    g.add_argument("--ranks", help="group sizes of --collectives local, e.g. 2,4,8 (default: this node's)")
    # 16 GiB: nccl-tests' usual top size is 8 GiB; past a GPU's memory a message only fails to allocate
    g.add_argument("--max-bytes", type=whole_between(4096, 2**34), default=DEFAULT_SIZES[-1],
                   help="largest collective message (4096 to 2^34)")
    g.add_argument("--budget-s", type=positive_up_to(60.0), default=0.2, help="seconds of repeats per kernel (at most 60)")
    g.add_argument("--merge", nargs="+", metavar="FILE", help="fold campaign files into --db")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.job or args.kernels or args.collectives or args.merge)


def run(args: argparse.Namespace) -> int:
    if args.merge:
        return _merge(args)
    if args.job:
        return _write_job(args)
    if args.collectives == "net":
        return _net(args)
    return _node(args)


MAX_LOCAL_RANKS = 64  # processes one node's group spawns; no node holds more GPUs


def _ranks(text: str) -> tuple[int, ...]:
    """The group sizes of ``--ranks 2,4,8``: each is spawned as that many processes, so a word that is
    no count (`x`, `²`) is refused rather than dropped, and so is a size beyond one node's."""
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_names import BAD_ARGUMENT

    ranks: set[int] = set()
    for word in (w.strip() for w in text.split(",")):
        if not (word.isascii() and word.isdigit()) or not 2 <= int(word) <= MAX_LOCAL_RANKS:
            raise CompileError(Diagnostic(BAD_ARGUMENT, f"--ranks `{text}`: `{word}` is not a group size of 2 to "
                                          f"{MAX_LOCAL_RANKS} ranks", help="e.g. --ranks 2,4,8"))
        ranks.add(int(word))
    return tuple(sorted(ranks))


def _sizes(max_bytes: int) -> tuple[int, ...]:
    return tuple(size for size in (1 << p for p in range(12, 41, 2)) if size <= max(max_bytes, 4096))


def _write_job(args: argparse.Namespace) -> int:
    from primus_lang.bench import campaign_files, collect_specs, executable
    from primus_lang.lower import load_space
    from primus_lang.outputs import write_files

    if not args.out or not args.file:
        print("primusc bench --job: give the space's .prx file and --out DIR", flush=True)
        return 1
    variables = dict(_pair(text) for text in args.var)
    space = load_space(args.file, args.space)
    legal_points = importlib.import_module("primus_lang.check").legal_points
    points = legal_points(space)
    cands = [space.settings.as_launched(c) for c in
             (itertools.islice(points, min(args.limit, sys.maxsize)) if args.limit > 0 else points)]
    specs, count, _ = collect_specs(space.model, space.cluster, cands)
    gpu = space.cluster.gpu
    source = Path(args.file)
    files = campaign_files(
        args.job, specs, space=space.name, target=args.target or gpu.name, device=args.device or "cuda",
        vendor=gpu.vendor, gpus_per_node=space.cluster.gpus_per_node, variables=variables,
        source=f"{source.name} (sha256 {hashlib.sha256(source.read_bytes()).hexdigest()})",
    )
    written = write_files(Path(args.out), files, force=args.force, executable=executable)
    run_it = "sbatch bench.sbatch" if args.job == "slurm" else "kubectl apply -f bench-job.yaml"
    print(f"{space.name}: {count} candidates, {len(specs)} distinct kernels for target `{args.target or gpu.name}`; "
          f"wrote {', '.join(sorted(p.name for p in written))} to {args.out}; run `{run_it}` there, then "
          "`primusc bench --merge FILE` on the file it writes")
    return 0


def _pair(text: str) -> tuple[str, str]:
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_bench import BAD_JOB_VARIABLE

    name, sep, value = text.partition("=")
    if not sep:
        raise CompileError(Diagnostic(BAD_JOB_VARIABLE, f"`--var {text}` is not NAME=VALUE"))
    return name.strip(), value


def _record(db: Any, device: Any, backend: str, target: str | None) -> None:
    from primus_lang.bench import facts_of

    db.put_provenance(device.key, facts_of(device, backend))
    if target:
        db.add_target(target, device.key)


def _node(args: argparse.Namespace) -> int:
    from primus_lang.bench import ProfileDB, backend_of, describe, measure_collectives, torch
    from primus_lang.bench import profile_kernels as profile

    device = describe(args.device or "cpu")
    db = ProfileDB(args.db)
    _record(db, device, backend_of(device), args.target)
    if args.kernels:
        specs = read_kernels(args.kernels)
        stats = profile(specs, db, device, budget_s=args.budget_s)
        print(f"kernels: {stats.distinct} listed, {stats.cached} cached, {stats.measured} measured, "
              f"{len(stats.unsupported)} not measurable here on {device.name} -> {db.path}", flush=True)
    if args.collectives == "local":
        if args.ranks:
            ranks = _ranks(args.ranks)
        else:
            gpus = torch().cuda.device_count() if device.kind != "cpu" else 2
            ranks = tuple(n for n in (2, 4, 8, 16) if n <= gpus) or (2,)
        rows = measure_collectives(db, device, ranks, _sizes(args.max_bytes))
        print(f"collectives inside the node: {len(rows)} points on {', '.join(map(str, ranks))} ranks "
              f"({backend_of(device)}) -> {db.path}", flush=True)
    return 0


def _net(args: argparse.Namespace) -> int:
    from primus_lang.bench import ProfileDB, run_net_rank

    device, backend, rows = run_net_rank(args.device or "cpu", os.environ, _sizes(args.max_bytes))
    if rows is None:
        return 0
    db = ProfileDB(args.db)
    _record(db, device, backend.removesuffix("+net"), args.target)
    db.put_collectives(device.key, backend, rows)
    ranks = rows[0].ranks if rows else 0
    print(f"collectives between nodes: {len(rows)} points on {ranks} ranks ({backend}) -> {db.path}", flush=True)
    return 0


def read_kernels(path: str) -> list[Any]:
    from primus_lang.bench import KernelSpec
    from primus_lang.datafiles import DataCodes, loads_json, read_text
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_bench import KERNELS_FILE

    codes = DataCodes(KERNELS_FILE, KERNELS_FILE, KERNELS_FILE, KERNELS_FILE, KERNELS_FILE, KERNELS_FILE)
    what = "a benchmark job's kernels.json"
    data = loads_json(read_text(path, codes, what), path, codes, what)
    listed = data.get("kernels") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        raise CompileError(Diagnostic(KERNELS_FILE, f"`{path}` has no list `kernels`"))
    specs = []
    for i, item in enumerate(listed):
        try:
            op, shape, dtype = item["op"], item["shape"], item["dtype"]
            if not (isinstance(op, str) and isinstance(dtype, str) and isinstance(shape, list)
                    and all(type(d) is int for d in shape)):
                raise TypeError
            specs.append(KernelSpec(op, tuple(shape), dtype))
        except (TypeError, KeyError, CompileError) as exc:
            note = exc.diagnostics[0].message if isinstance(exc, CompileError) else "needs op, shape and dtype"
            raise CompileError(Diagnostic(KERNELS_FILE, f"`{path}`: kernel {i} cannot be measured",
                                          notes=(note,))) from None
    return specs


def _merge(args: argparse.Namespace) -> int:
    from primus_lang.bench import ProfileDB
    from primus_lang.bench import merge_campaigns as merge
    from primus_lang.outputs import refuse_collisions

    refuse_collisions({"--db": Path(args.db).expanduser()}, {f"--merge {p}": Path(p) for p in args.merge})
    db = ProfileDB(args.db)
    for done in merge(db, list(args.merge)):
        added = ", ".join(f"{n} {t}" for t, n in done.added.items())
        present = sum(done.present.values())
        print(f"{done.path}: added {added} ({present} already present) for "
              f"{', '.join(f'`{d}`' for d in done.devices) or 'no device'} -> {db.path}")
    return 0
