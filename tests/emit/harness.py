"""Shared helpers: every (case, target) the tests emit, from Python IR and from examples/*.prx."""

from __future__ import annotations

import functools
import importlib
import itertools
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from primus_lang.diagnostics import CompileError
from primus_lang.emit import TARGETS, EmitContext, emit, unsupported
from primus_lang.ir import Candidate, Space
from primus_lang.resources import data_dir
from tests.emit.ir_cases import CASES

IMAGE = "registry.example/train:1"
BASE_VARS = {"container_image": IMAGE}
CONTEXT = EmitContext(primusc_version="test", source_name="case.prx", source_sha256="0" * 64, variables=BASE_VARS)

SHELLCHECK = shutil.which("shellcheck")


def context(**variables: str) -> EmitContext:
    return EmitContext(
        primusc_version="test", source_name="case.prx", source_sha256="0" * 64,
        variables={**BASE_VARS, **variables},
    )


def _front_end() -> tuple[object, object] | None:
    try:
        lower = importlib.import_module("primus_lang.lower")
        check = importlib.import_module("primus_lang.check")
    except ModuleNotFoundError:
        return None
    load, points = getattr(lower, "load_space", None), getattr(check, "legal_points", None)
    return (load, points) if load is not None and points is not None else None


def richest(points: Iterator[Candidate], limit: int = 50_000,
            usable: Callable[[Candidate], bool] = lambda cand: True) -> Candidate | None:
    """The first legal point that sets the most knobs away from their defaults, among those
    ``usable`` keeps: it exercises the most flags, and stays legal whatever the checker's rules become."""
    def score(cand: Candidate) -> int:
        return 0 if cand.label() == "defaults" else len(cand.label().split(","))

    ranked = sorted(itertools.islice(points, limit), key=score, reverse=True)  # stable: first among equals
    return next((cand for cand in ranked if usable(cand)), None)


def expressible(space: Space) -> Callable[[Candidate], bool]:
    """Whether some target can emit the candidate (a case no target can emit tests nothing)."""
    return lambda cand: any(not unsupported(space, cand, target) for target in TARGETS)


@functools.cache
def example_cases() -> dict[str, tuple[Space, Candidate]]:
    """The richest legal point of each example (empty until the front end lands)."""
    front = _front_end()
    if front is None:
        return {}
    load, points = front
    out: dict[str, tuple[Space, Candidate]] = {}
    for path in sorted(data_dir("examples").glob("*.prx")):
        try:
            space = load(path)  # type: ignore[operator]
            point = richest(iter(points(space)), usable=expressible(space))  # type: ignore[operator]
        except Exception as err:  # reported by test_examples_load, so one bad file hides no other test
            EXAMPLE_ERRORS[path.name] = f"{type(err).__name__}: {err}"
            continue
        if point is not None:
            out[f"example_{path.stem}"] = (space, point)
    return out


EXAMPLE_ERRORS: dict[str, str] = {}


def all_cases() -> dict[str, tuple[Space, Candidate]]:
    return {**CASES, **example_cases()}


@functools.cache
def emission(case: str, target: str) -> dict[str, str] | None:
    """The files of one case and target, or None where the target refuses the candidate (P7001)."""
    space, cand = all_cases()[case]
    try:
        return emit(space, cand, target, CONTEXT)
    except CompileError as err:
        if all(d.code.id == "P7001" for d in err.diagnostics):
            return None
        raise


def emissions() -> Iterator[tuple[str, str, dict[str, str]]]:
    for case in all_cases():
        for target in TARGETS:
            files = emission(case, target)
            if files is not None:
                yield case, target, files


def write(files: dict[str, str], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return folder
