"""The pre-commit hook definitions run `primusc check` and `primusc fmt --check` on `.prx` files
exactly as pre-commit would: the entry, then the matching files as arguments."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())


def run_hook(hook_id: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    [hook] = [h for h in HOOKS if h["id"] == hook_id]
    assert {"id", "name", "entry", "language", "files"} <= set(hook)
    matched = [str(f) for f in files if re.search(hook["files"], str(f))]
    entry = shlex.split(hook["entry"])
    primusc = shutil.which("primusc") or ""
    command = [primusc, *entry[1:]] if primusc else [sys.executable, "-m", "primus_lang.cli", *entry[1:]]
    return subprocess.run([*command, *matched], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_hooks_pass_on_the_examples_and_fail_on_a_bad_file(tmp_path: Path) -> None:
    assert {h["id"] for h in HOOKS} == {"primusc-check", "primusc-fmt"}
    assert all(h["entry"].split()[0] == "primusc" and h["language"] == "python" for h in HOOKS)
    examples = [*sorted((ROOT / "examples").glob("*.prx"))[:3], ROOT / "README.md"]
    assert run_hook("primusc-check", examples).returncode == 0
    assert run_hook("primusc-fmt", examples).returncode == 0
    bad = tmp_path / "bad.prx"
    bad.write_text("space s on c {\n  tp : 1|2\n}\n")
    done = run_hook("primusc-check", [*examples, bad])
    assert done.returncode == 1 and "bad.prx" in done.stderr
    done = run_hook("primusc-fmt", [*examples, bad])
    assert done.returncode == 1 and "would reformat" in done.stderr


def test_the_ci_example_runs_the_plan_diff_and_posts_it() -> None:
    flow = yaml.safe_load((ROOT / "examples" / "ci" / "primusc-plan-diff.yml").read_text())
    steps = flow["jobs"]["plan-diff"]["steps"]
    script = "\n".join(s.get("run", "") for s in steps)
    assert "primusc diff --rev" in script and "--markdown" in script and "gh pr comment" in script
    assert steps[0]["with"]["fetch-depth"] == 0
    # file names with spaces or non-ASCII letters: split at NULs and line ends, never at blanks
    assert "core.quotePath=false diff -z" in script and "xargs primusc" not in script
    assert flow[True]["pull_request"]["paths"] == ["**/*.prx"]  # YAML 1.1 reads `on` as true


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_check_hook_reaches_the_spaces_that_import_a_changed_library(tmp_path: Path) -> None:
    """A cluster library with `gpus_per_node = 3` passed the hook while the space built on it had no
    legal point left: the hook checked the changed file alone."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    lib = tmp_path / "lib" / "clusters.prx"
    lib.parent.mkdir()
    lib.write_text("import hardware.amd (mi325x)\n\ncluster ours { gpu = mi325x; nodes = 2; gpus_per_node = 8 }\n")
    space = tmp_path / "spaces" / "s.prx"
    space.parent.mkdir()
    space.write_text('import models.llama3 (llama3_1_8b)\nimport "../lib/clusters.prx" (ours)\n\n'
                     "space s on ours {\n  model = llama3_1_8b\n  gbs = 64\n  tp : 2 | 4 | 8\n}\n")
    assert run_hook("primusc-check", [lib]).returncode == 0
    lib.write_text(lib.read_text().replace("gpus_per_node = 8", "gpus_per_node = 3"))
    done = run_hook("primusc-check", [lib])
    assert done.returncode == 1 and "s.prx" in done.stderr and "P4" in done.stderr
    listed = subprocess.run([sys.executable, "-m", "primus_lang.cli", "check", "--importers", "--list", str(lib)],
                            capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert listed.stdout.split() == [str(lib), "spaces/s.prx"]


def test_the_importers_search_reads_past_pipes_devices_and_link_loops(tmp_path: Path) -> None:
    """A trial's named pipe in the repository hung the hook, a link to /dev/zero stopped it with an internal error
    and a loop of links with an unrelated file's error: each is a file no space imports, read past."""
    import os

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    lib = tmp_path / "lib.prx"
    lib.write_text("import hardware.amd (mi325x)\n\ncluster ours { gpu = mi325x; nodes = 2; gpus_per_node = 8 }\n")
    (tmp_path / "s.prx").write_text('import models.llama3 (llama3_1_8b)\nimport "./lib.prx" (ours)\n\n'
                                    "space s on ours {\n  model = llama3_1_8b\n  gbs = 64\n}\n")
    os.mkfifo(tmp_path / "fifo.prx")
    (tmp_path / "zero.prx").symlink_to("/dev/zero")
    (tmp_path / "loopa.prx").symlink_to(tmp_path / "loopb.prx")
    (tmp_path / "loopb.prx").symlink_to(tmp_path / "loopa.prx")
    listed = subprocess.run([sys.executable, "-m", "primus_lang.cli", "check", "--importers", "--list", str(lib)],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.split() == [str(lib), "s.prx"], listed.stderr
