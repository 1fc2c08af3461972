"""The fuzzer at length: COUNT sources from tests/fuzz/strategies.py, each through ``check``, ``fmt``
and ``project --top 1`` (tests/fuzz/harness.py states the contract). Run it by hand, not in the test
suite (it takes minutes and has a time limit per source):

    python benchmarks/fuzz.py --count 20000 --seed 1 --jobs 2

Prints the exit codes per command, every breach of the contract (an exit 2, anything raised, a
traceback, ``fmt`` not idempotent or changing the meaning) and every hang (a source over
``--timeout`` seconds of CPU time), each with a reproducer written to ``--out``, and the workers' peak resident
memory. Exits 1 when anything was found. Each worker draws its share with its own seed, so a run is
repeatable from ``--seed`` and ``--jobs``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _worker(seed: int, count: int, limit: float, out: Any) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed

    from tests.fuzz.harness import TimeLimit, check_source
    from tests.fuzz.strategies import sources

    def alarm(signum: int, frame: Any) -> None:
        raise TimeLimit

    # CPU time, not wall time: on a machine shared with other jobs a source's wall time says little
    signal.signal(signal.SIGPROF, alarm)
    folder = Path(tempfile.mkdtemp(prefix="primusc-fuzz-"))
    projected: dict[str, int | None] = {}

    @with_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(sources())
    def one(data: bytes) -> None:
        out.put(("start", seed, data))
        began = time.perf_counter()
        signal.setitimer(signal.ITIMER_PROF, limit)
        try:
            codes, problems = check_source(data, folder, projected)
            hang = False
        except TimeLimit:
            codes, problems, hang = {}, [], True
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out.put(("done", seed, data, codes, problems, hang, time.perf_counter() - began, rss))

    one()
    out.put(("end", seed))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20_000, help="sources to run (default 20,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=mp.cpu_count(), help="worker processes")
    parser.add_argument("--timeout", type=float, default=60.0, help="CPU seconds one source may take")
    parser.add_argument("--out", default="fuzz-findings", help="folder for reproducers")
    args = parser.parse_args()
    found = Path(args.out)
    shares = [args.count // args.jobs + (i < args.count % args.jobs) for i in range(args.jobs)]
    messages: Any = mp.Queue()
    workers: dict[int, tuple[Any, int]] = {}  # seed -> (process, share)
    started: dict[int, tuple[float, bytes]] = {}
    done_per_seed: Counter[int] = Counter()
    exits: dict[str, Counter[str]] = {}
    seconds: list[float] = []
    slowest: list[tuple[float, bytes]] = []
    findings: list[tuple[str, bytes, list[str]]] = []
    peak = 0
    began = time.time()

    def keep(kind: str, data: bytes, problems: list[str]) -> None:
        # written at once, so a long run shows what it found while it goes on
        n = len(findings)
        findings.append((kind, data, problems))
        found.mkdir(parents=True, exist_ok=True)
        (found / f"{kind}_{n:04d}.prx").write_bytes(data)
        (found / f"{kind}_{n:04d}.txt").write_text("\n".join(problems) + "\n")

    def start(seed: int, share: int) -> None:
        proc = mp.Process(target=_worker, args=(seed, share, args.timeout, messages), daemon=True)
        proc.start()
        workers[seed] = (proc, share)

    for i, share in enumerate(shares):
        if share:
            start(args.seed * 1000 + i, share)
    restarts = 0
    while workers:
        try:
            msg = messages.get(timeout=5)
        except queue.Empty:
            msg = None
        now = time.time()
        if msg is not None and msg[0] == "start":
            started[msg[1]] = (now, msg[2])
        elif msg is not None and msg[0] == "done":
            _, seed, data, codes, problems, hang, took, rss = msg
            started.pop(seed, None)
            done_per_seed[seed] += 1
            peak = max(peak, rss)
            seconds.append(took)
            slowest = sorted([*slowest, (took, data)], key=lambda t: -t[0])[:5]
            for command, code in codes.items():
                exits.setdefault(command, Counter())[str(code)] += 1
            if hang:
                keep("hang", data, [f"over {args.timeout:g} s"])
            elif problems:
                keep("error", data, problems)
            total = sum(done_per_seed.values())
            if total % 1000 == 0:
                print(f"{total:,} sources, {len(findings)} findings, {time.time() - began:.0f} s", file=sys.stderr)
        elif msg is not None and msg[0] == "end":
            proc, _ = workers.pop(msg[1])
            proc.join()
        # a source the alarm could not stop (stuck outside the interpreter): kill its worker and go
        # on with a fresh seed for what was left of its share
        for seed, (at, data) in list(started.items()):
            if now - at > 5 * args.timeout + 60:
                proc, share = workers.pop(seed)
                proc.kill()
                started.pop(seed)
                keep("hang", data, [f"killed after {now - at:.0f} s"])
                restarts += 1
                left = share - done_per_seed[seed] - 1
                if left > 0:
                    start(seed + 100_000 * restarts, left)
        for seed, (proc, share) in list(workers.items()):
            if not proc.is_alive() and seed not in started and done_per_seed[seed] < share:
                proc.join()
                if proc.exitcode != 0:  # died (out of memory?) without a message
                    workers.pop(seed)
                    keep("died", b"", [f"worker {seed} exited {proc.exitcode}"])

    elapsed = time.time() - began
    total = sum(done_per_seed.values())
    print(f"fuzz: {total:,} sources (seed {args.seed}, {args.jobs} workers) in {elapsed:.0f} s")
    for command, counter in exits.items():
        print(f"  {command:8} " + ", ".join(f"exit {code}: {n:,}" for code, n in sorted(counter.items())))
    errors = [f for f in findings if f[0] != "hang"]
    hangs = [f for f in findings if f[0] == "hang"]
    seconds.sort()
    if seconds:
        print(f"  per source: median {seconds[len(seconds) // 2] * 1000:.0f} ms, slowest {seconds[-1]:.1f} s")
    print(f"  internal errors and broken contracts: {len(errors)}; hangs (over {args.timeout:g} s): {len(hangs)}")
    print(f"  peak resident memory of a worker: {peak / 1024:.0f} MiB")
    found.mkdir(parents=True, exist_ok=True)
    for n, (took, data) in enumerate(slowest):
        (found / f"slowest_{n}.prx").write_bytes(data)
        print(f"  slowest {n}: {took:.1f} s, {found / f'slowest_{n}.prx'}")
    for n, (kind, _, problems) in enumerate(findings):
        print(f"  {kind} {found / f'{kind}_{n:04d}.prx'}: {problems[0][:200]}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
