"""The fuzzers of tests/fuzz/kinds.py at length: sources spliced across files, import graphs, hostile
data files, hand-edited traces and language-server requests, each case held to the contract of
tests/fuzz/test_kinds.py. Run it by hand, not in the test suite (it times things):

    python benchmarks/fuzz_kinds.py --count 200 --seed 1

Prints, per kind, the cases run, the exit codes, every breach (an exit 2, anything raised, a
traceback, a request unanswered) and every case over ``--timeout`` seconds, and the peak resident
memory of this process. Exits 1 when anything was found.
"""

from __future__ import annotations

import argparse
import json
import random
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

from primus_lang.cli import main  # noqa: E402
from tests.fuzz import kinds  # noqa: E402
from tests.fuzz.harness import TimeLimit, run_cli  # noqa: E402


def _alarm(signum: int, frame: Any) -> None:
    raise TimeLimit


def _case(argv: list[str], limit: float, found: list[str], codes: Counter[str]) -> None:
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        code, out, err, escaped = run_cli(argv)
    except TimeLimit:
        found.append(f"over {limit:g} s of CPU: {' '.join(argv)[:200]}")
        return
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    codes[str(code)] += 1
    if escaped or code not in (0, 1) or "Traceback" in out + err or "P9001" in out + err:
        found.append(f"exit {code} {escaped} {err[-300:]!r}: {' '.join(argv)[:200]}")


def run(count: int, seed: int, limit: float) -> int:
    signal.signal(signal.SIGPROF, _alarm)
    work = Path(tempfile.mkdtemp(prefix="fuzz-kinds-"))
    found: list[str] = []
    codes: dict[str, Counter[str]] = {k: Counter() for k in ("spliced", "imports", "data", "traces", "lsp")}
    space = work / "s.prx"
    space.write_text((ROOT / "examples" / "llama3_1_8b_mi325x.prx").read_text())
    assert main(["plan", str(space), "--budget", "4", "--out", str(work / "o"), "--no-emit"]) == 0
    events = [json.loads(line) for line in (work / "o" / "trace.jsonl").read_text().splitlines()]
    start = time.perf_counter()
    for i in range(count):
        rng, case = random.Random(seed * 1_000_003 + i), work / f"c{i}"
        case.mkdir()
        source = case / "spliced.prx"
        source.write_text(kinds.spliced(rng))
        for command in ("check", "fmt"):
            _case([command, str(source)], limit, found, codes["spliced"])
        _case(["check", str(kinds.import_graph(rng, case / "g"))], limit, found, codes["imports"])
        kind, path = kinds.data_file(rng, case / "d")
        argv = {"primus": ["import-recipe", str(path), "--gpu", "mi300x", "--out", str(case / "s.prx")],
                "runs": ["validate", "--runs", str(path)], "json": ["import-hf", str(path)]}[kind]
        _case(argv, limit, found, codes["data"])
        trace = case / "t.jsonl"
        trace.write_text(kinds.edited_trace(rng, events))
        _case(["report", str(trace), "--space", str(space), "--out", str(case / "r.html")], limit, found,
              codes["traces"])
    lsp = _lsp(count * 5, seed, found, codes["lsp"])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for kind, counter in codes.items():
        print(f"{kind:8} {sum(counter.values()):6,} cases  exits {dict(sorted(counter.items()))}")
    print(f"{lsp:,} language-server requests; {seconds:.0f} s; peak resident {peak:.0f} MiB (this process; the "
          "server's is printed above)")
    for line in found:
        print("FOUND", line)
    print(f"{len(found)} breaches")
    return 1 if found else 0


def _lsp(count: int, seed: int, found: list[str], codes: Counter[str]) -> int:
    from pygls import uris

    from tests.lsp.raw import RawClient

    client = RawClient()
    try:
        client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        opened = []
        for path in kinds.EXAMPLES:
            uri = uris.from_fs_path(str(path))
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "primus", "version": 1, "text": path.read_text()}}})
            opened.append(uri)
        rng = random.Random(seed)
        slowest = 0.0
        for _ in range(count):
            method, params = kinds.lsp_request(rng, [*opened, "file:///dev/zero"])
            sent = time.perf_counter()
            try:
                answer = client.request(method, params)
            except Exception as exc:  # the guard: no answer in time
                found.append(f"no answer to {method} {json.dumps(params)[:200]}: {exc!r}")
                break
            slowest = max(slowest, time.perf_counter() - sent)
            codes["error" if "error" in answer else "result"] += 1
            if "Traceback" in json.dumps(answer):
                found.append(f"a traceback in the answer to {method}")
        status = Path(f"/proc/{client.proc.pid}/status")
        peak = next((line.split(":")[1].strip() for line in status.read_text().splitlines()
                     if line.startswith("VmHWM")), "?") if status.exists() else "?"
        print(f"slowest language-server answer {slowest * 1000:.0f} ms; the server's peak resident memory {peak}")
    finally:
        client.close()
    return count


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    return run(args.count, args.seed, args.timeout)


if __name__ == "__main__":
    sys.exit(main_())
