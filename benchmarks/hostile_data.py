"""Peak memory and time of primusc on hostile data files (runs files, model cards, config.json,
training logs): each must end in a diagnostic (exit 1) well under 1 GB. Run it by hand, not in the
test suite (it times things):

    python benchmarks/hostile_data.py

Each case runs in its own process, which reports its peak resident set (``ru_maxrss``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "hfimport" / "fixtures"
LOG = ROOT / "tests" / "bench" / "logs" / "megatron_llama8b_tp2.log"

RUNNER = """
import resource, sys
from primus_lang.cli import main
code = main(sys.argv[1:])
print(f"maxrss_kib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
sys.exit(code)
"""

BOMB = "".join(f"- &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n" for i in range(9))
SPACE = """import models.llama3 (llama3_1_8b)
import hardware.amd (mi325x)
cluster c { gpu = mi325x; nodes = 1; gpus_per_node = 8 }
space s on c { model = llama3_1_8b; seq_len = 8192; gbs = 128 }
"""


def cases(tmp: Path) -> list[tuple[str, list[str]]]:
    def file(name: str, data: str | bytes) -> str:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
        return str(path)

    big = tmp / "big" / "runs.yaml"
    big.parent.mkdir()
    with big.open("wb") as f:
        f.truncate(16 * 2**20 + 1)
    llama = json.loads((FIXTURES / "llama3_1_70b.json").read_text())
    space = file("s.prx", SPACE)
    file("cards/model_cards.yaml", "c: " + "[" * 1000 + "]" * 1000)
    cards = file("cards/runs.yaml", "- id: x\n")
    start = {"event": "start", "format": 1, "space": "s", "strategy": "auto", "seed": 0, "legal_points": 1,
             "fitting_points": 1}
    candidate = {"tp": 1, "pp": 1, "mbs": 1, "gbs": 128, "seq_len": 8192, "precision": "bf16", "attention": "flash",
                 "recompute": {"kind": "none", "layers": 0, "method": "block", "modules": []}}
    figures = {"step_time": 1.0, "tokens_per_gpu": 8000.0, "tflops_per_gpu": 400.0, "mfu": 0.4, "bubble_fraction": 0.0,
               "exposed_comm": 0.1, "breakdown": [["compute", 0.9]]}
    trace = tmp / "trace.jsonl"
    with trace.open("w") as f:  # 250 MiB of proposals no gate reads, after one evaluated candidate
        f.write(json.dumps(start) + "\n")
        f.write(json.dumps({"event": "proposal", "n": 1, "source": "x", "candidate": candidate}) + "\n")
        f.write(json.dumps({"event": "gate", "n": 1, "verdict": "evaluated", "memory_peak": 1, "memory_limit": 2}) + "\n")
        f.write(json.dumps({"event": "evaluation", "n": 1, "candidate": candidate, "evaluation": figures,
                            "score": 8000.0}) + "\n")
        n = 2
        while f.tell() < 250 * 2**20:
            f.write("".join(json.dumps({"event": "proposal", "n": n + i, "source": "x", "hypothesis": "y" * 100,
                                        "candidate": candidate}) + "\n" for i in range(1000)))
            n += 1000
    return [
        ("trace: 250 MiB proposals (accepted)", ["report", str(trace), "--out", str(tmp / "r.html")]),
        ("runs: alias bomb", ["validate", "--runs", file("bomb/runs.yaml", BOMB)]),
        ("runs: list nested 1,000 deep", ["validate", "--runs", file("deep/runs.yaml", "- " + "[" * 1000 + "]" * 1000)]),
        ("runs: not UTF-8", ["validate", "--runs", file("latin1/runs.yaml", b"- id: caf\xe9\n")]),
        ("runs: 5,000-digit integer", ["validate", "--runs", file("digits/runs.yaml", "- gbs: " + "9" * 5000)]),
        ("runs: 16 MiB + 1 byte", ["validate", "--runs", str(big)]),
        ("runs: 260,000 values", ["validate", "--runs", file("wide/runs.yaml", "[" + ",".join(["{}"] * 260_000) + "]")]),
        ("runs: 249,000 values (accepted)", ["validate", "--runs", file("wide2/runs.yaml",
                                                                        "[" + ",".join(["x"] * 249_000) + "]")]),
        ("cards: list nested 1,000 deep", ["validate", "--runs", cards]),
        ("config: nested 2,000 deep", ["import-hf", file("d.json", '{"a": ' + "[" * 2000 + "]" * 2000 + "}")]),
        ("config: 5,000-digit integer", ["import-hf", file("n.json", '{"hidden_size": ' + "9" * 5000 + "}")]),
        ("config: rope_theta Infinity", ["import-hf", file("i.json", json.dumps(llama).replace(
            '"rope_theta": 500000.0', '"rope_theta": Infinity'))]),
        ("config: /dev/zero", ["import-hf", "/dev/zero"]),
        ("log: /dev/zero", ["calibrate-log", "/dev/zero", "--space", space]),
        ("log: tp=-4", ["calibrate-log", file("tp.log", LOG.read_text().replace(
            "tensor_model_parallel_size ...................... 2", "tensor_model_parallel_size ...................... -4")),
                        "--space", space]),
    ]


def main() -> int:
    worst = 0
    with tempfile.TemporaryDirectory() as folder:
        for name, argv in cases(Path(folder)):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", RUNNER, *argv], capture_output=True, text=True, cwd=ROOT, timeout=1800)
            seconds = time.perf_counter() - start
            rss = int(done.stderr.rsplit("maxrss_kib=", 1)[1]) // 1024 if "maxrss_kib=" in done.stderr else -1
            code = next((line.split("[", 1)[1].split("]")[0] for line in done.stderr.splitlines()
                         if line.startswith("error[")), "")
            worst = max(worst, rss)
            print(f"{name:36} exit {done.returncode}  {code:6} {rss:6,} MiB  {seconds:6.1f} s")
    print(f"worst peak: {worst:,} MiB")
    return 0 if worst < 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
