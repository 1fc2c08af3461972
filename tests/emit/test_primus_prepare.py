"""A Primus launch builds Megatron's dataset helper where Primus's own launcher would (a new user's trial:
primus/cli/main.py run directly, without primus-cli's prepare hook, found no helpers_cpp and Primus patches
Megatron's own build at start away)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from primus_lang.emit import EmitContext, emit
from tests.emit.harness import all_cases

# what make was asked to build, recorded in the file BUILD_LOG names (make reads the environment)
MAKEFILE = "all:\n\techo built >> \"$$BUILD_LOG\"\n\ttouch helpers_cpp.cpython-311-x86_64-linux-gnu.so\n"


def _node(tmp_path: Path) -> Path:
    space, cand = all_cases()["llama70b_mi325x"]
    files = emit(space, cand, "primus+local", EmitContext())
    out = tmp_path / "launch"
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text)
    return out / "node.sh"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_helper_is_built_once_in_the_megatron_primus_loads(tmp_path: Path) -> None:
    node = _node(tmp_path)
    primus = tmp_path / "Primus"
    datasets = primus / "third_party" / "Megatron-LM" / "megatron" / "core" / "datasets"
    datasets.mkdir(parents=True)
    (datasets / "Makefile").write_text(MAKEFILE)
    log = tmp_path / "build.log"
    env = {"PATH": "/usr/bin:/bin", "PRIMUS_DIR": str(primus), "PRIMUSC_TORCHRUN": "true", "HOME": str(tmp_path),
           "BUILD_LOG": str(log)}
    for _ in range(2):
        run = subprocess.run(["bash", str(node)], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 0, run.stderr
    assert log.read_text() == "built\n"  # built the first time, found the second
    # BACKEND_PATH names another Megatron-LM, as Primus's backend adapter reads it
    other = tmp_path / "other" / "megatron" / "core" / "datasets"
    other.mkdir(parents=True)
    (other / "Makefile").write_text(MAKEFILE)
    run = subprocess.run(["bash", str(node)], capture_output=True, text=True, timeout=60,
                         env={**env, "BACKEND_PATH": str(tmp_path / "other")})
    assert run.returncode == 0, run.stderr
    assert log.read_text() == "built\nbuilt\n" and list(other.glob("helpers_cpp*.so"))
    # no Megatron-LM sources where Primus would look (an installed one's): nothing to build, the launch goes on
    (tmp_path / "bare").mkdir()
    run = subprocess.run(["bash", str(node)], capture_output=True, text=True, timeout=60,
                         env={**env, "PRIMUS_DIR": str(tmp_path / "bare")})
    assert run.returncode == 0 and "make" not in run.stderr, run.stderr
