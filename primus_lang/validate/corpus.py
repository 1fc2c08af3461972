"""The validation corpus bundled with primusc (``validation/`` in a checkout, inside the wheel once
installed): published runs, their model cards and the hardware they ran on, each row with its source.

``validate`` and ``calibrate`` read it when no ``--runs`` is given, so anyone can check the
projection's evidence and refit the shipped profiles without a file of their own. Its manifest gives
a version and a digest per file, so a calibrated profile can name exactly what it was fitted on.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from attrs import frozen

from primus_lang.datafiles import load_yaml
from primus_lang.resources import data_dir

RUNS = "published_runs.yaml"
MANIFEST = "manifest.yaml"


@frozen
class Corpus:
    version: str
    digests: tuple[tuple[str, str], ...]  # (file name, sha256) for every file the manifest lists

    @property
    def label(self) -> str:
        """How a report or a calibrated profile names it."""
        return f"the bundled validation corpus {self.version}"


def folder() -> Path:
    return data_dir("validation")


def runs_file() -> Path:
    return folder() / RUNS


@functools.lru_cache(maxsize=1)
def manifest() -> Corpus:
    from primus_lang.validate.runs import RUNS_CODES

    data = load_yaml(folder() / MANIFEST, RUNS_CODES, "the corpus manifest")
    files = data["files"]
    return Corpus(str(data["version"]), tuple((str(name), str(files[name])) for name in sorted(files)))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
