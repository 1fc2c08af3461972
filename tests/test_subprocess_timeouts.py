"""Every child process the tests or primusc start has a time limit: a hung `bash`, `shellcheck`,
`sbatch` or `pip` would otherwise hold a CI job until its own limit, with no test named."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WAITING = ("run", "check_output", "call", "check_call")  # calls that wait for the child


def _untimed(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WAITING
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess"
            and not any(k.arg == "timeout" for k in node.keywords)]


@pytest.mark.parametrize("folder", ["tests", "primus_lang", "benchmarks", "tools"])
def test_every_waited_subprocess_has_a_timeout(folder: str) -> None:
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((ROOT / folder).rglob("*.py")) for line in _untimed(p)]
    assert not found, "subprocess calls without timeout=: " + ", ".join(found)


def test_the_scan_sees_a_call_without_a_timeout(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import subprocess\nsubprocess.run(['true'])\nsubprocess.run(['true'], timeout=5)\n")
    assert _untimed(sample) == [2]
