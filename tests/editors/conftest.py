"""The editor packages' tests run node tools from editors/vscode/node_modules (installed by
`npm ci`, which .ci/run does). Without node they skip; CI sets PRIMUSC_EDITOR_TESTS=required so a
missing tool there fails instead of skipping."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

VSCODE = Path(__file__).resolve().parents[2] / "editors" / "vscode"


@pytest.fixture(scope="session")
def node() -> str:
    required = os.environ.get("PRIMUSC_EDITOR_TESTS") == "required"
    found = shutil.which("node")
    if found is None:
        if required:
            pytest.fail("node is not on the PATH, and PRIMUSC_EDITOR_TESTS=required")
        pytest.skip("node is not installed: the TextMate engine and vsce run under node")
    if not (VSCODE / "node_modules" / "vscode-textmate").is_dir():
        if required:
            pytest.fail("editors/vscode/node_modules is missing: `npm ci` in editors/vscode")
        pytest.skip("the editor tooling is not installed: run `npm ci` in editors/vscode (.ci/run does)")
    return found
