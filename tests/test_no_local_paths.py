"""No tracked file names a path outside the repository: comments and docs cite their sources by name
or URL, so a reader of the installed package (or of a fresh clone) can follow every one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a home or scratch folder of the machine a file was written on, or a folder beside the checkout; a
# cluster's own paths (a site profile's `/mnt/nvme` or `/lustre`) are the user's, not this machine's
OUTSIDE = re.compile(r"(?<![\w.])/(work|root|home|Users|tmp)/|\.\./shared/")
RELATIVE = re.compile(r"(?:\.\./)+[\w.-]+")


def _escapes(name: str, line: str) -> bool:
    """Whether a relative path on ``line`` of file ``name`` climbs out of the repository."""
    here = (ROOT / name).parent
    return any(not (here / m.group(0)).resolve().is_relative_to(ROOT) for m in RELATIVE.finditer(line))


@pytest.mark.skipif(not (ROOT / ".git").exists() or shutil.which("git") is None, reason="needs the git checkout")
def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, timeout=600).stdout
    found = []
    for name in names.decode().split("\0"):
        path = ROOT / name
        if not name or name == "tests/test_no_local_paths.py" or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # binary: no comment to read
        found += [f"{name}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                  if OUTSIDE.search(line) or _escapes(name, line)]
    assert not found, "paths outside the repository:\n" + "\n".join(found[:20])


def test_the_check_tells_a_path_inside_from_one_outside() -> None:
    assert OUTSIDE.search("data_path = /work/main/x") and OUTSIDE.search("see ../shared/validation")
    assert not OUTSIDE.search('scratch { host = "/mnt/nvme"; path = "/scratch" }')
    assert not _escapes("editors/vscode/package.json", "node test/tokenize.js ../../examples/a.prx")
    assert _escapes("docs/stdlib.md", "copied from ../../elsewhere/cards.yaml")
