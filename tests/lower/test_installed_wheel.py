"""The built wheel works outside the checkout: grammar, stdlib, examples and the validation corpus
travel inside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source checkout")
def test_wheel_checks_examples_outside_the_checkout(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
     timeout=600)
    wheel = next(dist.glob("primusc-*.whl"))
    # PEP 561: a consumer's mypy reads primusc's own types, not `import-untyped`
    with zipfile.ZipFile(wheel) as z:
        assert "primus_lang/py.typed" in z.namelist()
    venv = tmp_path / "venv"
    # no pip of its own (ensurepip takes seconds): this interpreter's pip installs into it (`--python`)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=600)
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    py = bin_dir / "python"
    # Third-party dependencies come from this interpreter's site-packages (a bare path, so its .pth
    # files — including the editable install of this checkout — are not processed); primusc itself
    # comes only from the wheel.
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
     timeout=600).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)], check=True,
        capture_output=True, timeout=600)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [str(py), "-c", "from primus_lang.resources import data_dir; print(data_dir('examples'))"],
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
     timeout=600).stdout.strip()
    examples = sorted(Path(where).glob("*.prx"))
    assert examples and Path(where).is_relative_to(venv)
    for example in examples:
        shutil.copy(example, work / example.name)
    # one process checks each file it is given (as the pre-commit hook calls it): one start-up, not one per example
    done = subprocess.run([str(bin_dir / "primusc"), "check", *(e.name for e in examples)], cwd=work,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("legal points") == len(examples), done.stdout
    # the validation corpus travels too: validate and calibrate need no file of the user's
    primusc = str(bin_dir / "primusc")
    done = subprocess.run([primusc, "validate", "--summary"], cwd=work, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "the bundled validation corpus" in done.stdout and "| GPU | `gb200` |" in done.stdout
    runs = work / "runs.yaml"
    shutil.copy(ROOT / "tests" / "project" / "data" / "runs.yaml", runs)
    shutil.copy(ROOT / "tests" / "project" / "data" / "model_cards.yaml", work / "model_cards.yaml")
    done = subprocess.run([primusc, "calibrate", "--runs", runs.name, "--folds", "2", "--out", "x.prx"], cwd=work,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "gpu h100_sxm_site = h100_sxm_spec" in (work / "x.prx").read_text()  # a site's fit, named apart
