"""A Primus experiment for a test: the MI355X Llama 2 70B fixture with the test's changes, in a folder
named for its GPU (which the importer reads the GPU from)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent / "fixtures"


def experiment(tmp_path: Path, overrides: dict[str, Any] | None = None, **module: Any) -> Path:
    """``overrides`` update the experiment's overrides; ``module`` its `modules.pre_trainer` keys."""
    source = yaml.safe_load((FIXTURES / "MI355X" / "llama2_70B-FP8-pretrain.yaml").read_text())
    pre = source["modules"]["pre_trainer"]
    pre["overrides"].update(overrides or {})
    pre.update(module)
    folder = tmp_path / "MI355X"
    folder.mkdir(exist_ok=True)
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(source, sort_keys=False))
    return path
