"""Write the outputs of ``check``, ``project``, ``plan``, ``explain``, ``emit`` and ``validate`` on every
example (and the bundled validation corpus) under OUTDIR, so that two trees can be compared byte for byte.

    python benchmarks/golden_outputs.py OUTDIR [--repo PATH]

``--repo`` names the checkout whose ``primus_lang`` runs (default: this one); the commands run with
that checkout as their working directory, so ``python -m primus_lang.cli`` imports its package and
reads its examples, stdlib and corpus. A refactor that keeps behaviour is checked with::

    python benchmarks/golden_outputs.py "$TMPDIR/before" --repo "$TMPDIR/clone-before"
    python benchmarks/golden_outputs.py "$TMPDIR/after" --repo "$TMPDIR/clone-after"
    diff -r "$TMPDIR/before" "$TMPDIR/after"

Each command's stdout, stderr and exit status go to ``<example>/<command>.out`` (and the launch files
``emit`` and ``plan`` write, under ``<example>/<command>-files/``). What varies between two runs of
the same tree is taken out, and only that:
- wall-clock timings the commands print (``checked in 16 ms``, ``projected in 2.37 s``, ``in 0.1 s``,
  the ``"seconds"`` of ``project --json``), matched by ``TIMINGS`` below and replaced by ``<time>``;
  a line holding one loses its leading and trailing blanks too, since a table title is centred on
  its width;
- the temporary folder a command writes into, replaced by ``<out>``;
- ``plan``'s trace and HTML report, which record times throughout, are not kept (its ranked table,
  explanation and launch files are).
The plan runs with a small budget and a fixed seed, so it is deterministic.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Every timing the six commands print, as a unit-bearing number; nothing else in their outputs is a time.
TIMINGS = [
    (re.compile(r"\(checked in [0-9.,]+ (?:ms|s|µs)\)"), "(checked in <time>)"),
    (re.compile(r"projected in [0-9.,]+ (?:ms|s|min) "), "projected in <time> "),
    (re.compile(r"\) in [0-9.,]+ (?:ms|s|min)(;| )"), r") in <time>\1"),
    (re.compile(r'"seconds": [0-9.e+-]+'), '"seconds": <time>'),
]
# plan writes these beside the launch files; they record wall-clock times on every line
UNKEPT = {"trace.jsonl", "report.html"}
PLAN = ("--budget", "20", "--seed", "0", "--strategy", "evolutionary")


def examples(repo: Path) -> list[Path]:
    root = repo / "examples"
    return sorted([*root.glob("*.prx"), *(root / "sites").glob("*.prx")])


def scrub(text: str, scratch: Path) -> str:
    out = []
    for line in text.replace(str(scratch), "<out>").split("\n"):
        timed = line
        for pattern, replacement in TIMINGS:
            timed = pattern.sub(replacement, timed)
        out.append(timed.strip() if timed != line else line)
    return "\n".join(out)


class Runner:
    def __init__(self, repo: Path, out: Path, scratch: Path) -> None:
        self.repo, self.out, self.scratch = repo, out, scratch
        # a fixed terminal width and no colour: rich lays its tables out by these
        self.env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb",
                    "PYTHONPATH": str(repo), "PYTHONHASHSEED": "0"}

    def run(self, dest: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "primus_lang.cli", *args], cwd=self.repo, env=self.env,
                              capture_output=True, text=True, check=False, timeout=1800)
        path = self.out / f"{dest}.out"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = (f"$ primusc {' '.join(args)}\nexit {done.returncode}\n--- stdout\n{done.stdout}"
                f"--- stderr\n{done.stderr}")
        path.write_text(scrub(body, self.scratch), encoding="utf-8")
        return done

    def keep_files(self, folder: Path, dest: str) -> None:
        for f in sorted(folder.rglob("*")):
            if f.is_file() and f.name not in UNKEPT:
                target = self.out / dest / f.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(scrub(f.read_text(encoding="utf-8"), self.scratch), encoding="utf-8")


def winner(runner: Runner, rel: str) -> str | None:
    """The top projected point of the example, as the ``--point`` of ``explain`` and ``emit``."""
    import json

    done = subprocess.run([sys.executable, "-m", "primus_lang.cli", "project", rel, "--top", "1", "--json"],
                          cwd=runner.repo, env=runner.env, capture_output=True, text=True, check=False, timeout=1800)
    try:
        results = json.loads(done.stdout)["results"]
    except (ValueError, KeyError, TypeError):
        return None
    return str(results[0]["label"]) if results else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--repo", type=Path, default=HERE)
    a = parser.parse_args()
    repo, out = a.repo.resolve(), a.outdir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        scratch = Path(tmp)
        r = Runner(repo, out, scratch)
        for path in examples(repo):
            rel = str(path.relative_to(repo))
            name = rel.removeprefix("examples/").removesuffix(".prx")
            r.run(f"{name}/check", "check", rel)
            r.run(f"{name}/check-json", "check", rel, "--json")
            r.run(f"{name}/project", "project", rel, "--top", "10")
            r.run(f"{name}/project-json", "project", rel, "--top", "5", "--json")
            r.run(f"{name}/explain", "explain", rel)
            plan_out = scratch / name.replace("/", "_") / "plan"
            r.run(f"{name}/plan", "plan", rel, *PLAN, "--out", str(plan_out))
            if plan_out.exists():
                r.keep_files(plan_out, f"{name}/plan-files")
            point = winner(r, rel)
            if point is None:
                continue
            r.run(f"{name}/explain-point", "explain", rel, "--point", point)
            emit_out = scratch / name.replace("/", "_") / "emit"
            r.run(f"{name}/emit", "emit", rel, "--point", point, "--out", str(emit_out))
            if emit_out.exists():
                r.keep_files(emit_out, f"{name}/emit-files")
        r.run("validate/runs", "validate")
        r.run("validate/runs-calibrated", "validate", "--calibrated")
        r.run("validate/runs-json", "validate", "--json")
        r.run("validate/sweeps", "validate", "--sweeps", "validation/sweeps.yaml")
    shutil.rmtree(out / "__pycache__", ignore_errors=True)
    print(f"wrote {sum(1 for f in out.rglob('*') if f.is_file())} files to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
