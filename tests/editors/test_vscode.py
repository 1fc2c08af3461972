"""The VS Code extension builds into a .vsix from the committed sources with @vscode/vsce, and the
built extension's activate() starts a language client running `primusc lsp`."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

from tests.editors.conftest import VSCODE


def test_the_vsix_builds_and_its_extension_activates(node: str, tmp_path: Path) -> None:
    vsix = tmp_path / "primusc.vsix"
    subprocess.run([node, "node_modules/@vscode/vsce/vsce", "package", "--skip-license", "--allow-missing-repository",
                    "--out", str(vsix)], cwd=VSCODE, capture_output=True, text=True, timeout=600, check=True)
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        z.extractall(tmp_path / "unpacked")
    assert {"extension/package.json", "extension/extension.js", "extension/syntaxes/primus.tmLanguage.json",
            "extension/language-configuration.json"} <= names
    assert any(n.startswith("extension/node_modules/vscode-languageclient/") for n in names)
    assert not any(n.startswith("extension/test/") or "/vsce/" in n for n in names)
    done = subprocess.run([node, "test/activate.js", str(tmp_path / "unpacked")], cwd=VSCODE,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
