"""The README's two commands are the project's promise to a new user: keep CI running the same one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_readme_has_exactly_two_commands_plan_and_tests() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert "primusc plan examples/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert _readme_commands()[1] in ci


def test_readme_plan_example_exists() -> None:
    match = re.search(r"primusc plan (\S+)", _readme_commands()[0])
    assert match is not None
    assert (ROOT / match.group(1)).is_file()


def test_torch_is_pinned_everywhere_it_is_installed() -> None:
    for path in [ROOT / "README.md", ROOT / ".ci" / "run", ROOT / "pyproject.toml"]:
        text = path.read_text()
        pins = re.findall(r"torch==([\d.]+)", text)
        assert pins, f"{path.name} installs no pinned torch"
        assert set(pins) == {"2.13.0"}, f"{path.name}: {pins}"
