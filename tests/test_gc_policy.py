"""The commands raise the garbage collector's thresholds, and never lower one."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from primus_lang.cli import main
from primus_lang.gc_policy import BULK_THRESHOLDS, use_bulk_thresholds


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_a_command_runs_with_the_bulk_thresholds(capsys: pytest.CaptureFixture[str]) -> None:
    gc.set_threshold(700, 10, 10)
    assert main(["explain", "P4035"]) == 0
    assert "NVFP4" in capsys.readouterr().out
    assert gc.get_threshold() == BULK_THRESHOLDS


def test_higher_thresholds_are_kept() -> None:
    gc.set_threshold(10**6, 5, 100)
    use_bulk_thresholds()
    assert gc.get_threshold() == (10**6, BULK_THRESHOLDS[1], 100)
