"""Snapshots of every emitted file, one snapshot file each (syrupy's single-file extension)."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tests.emit.harness import EXAMPLE_ERRORS, emissions, example_cases


class TextSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


PARAMS = [
    pytest.param(files[path], id=f"{case}-{target.replace('+', '_')}-{path}")
    for case, target, files in emissions()
    for path in files
]


@pytest.fixture
def text_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshot)


@pytest.mark.parametrize("text", PARAMS)
def test_emitted_file(text: str, text_snapshot: SnapshotAssertion) -> None:
    assert text == text_snapshot


def test_examples_load() -> None:
    example_cases()
    assert EXAMPLE_ERRORS == {}


def test_emission_is_deterministic() -> None:
    from primus_lang.emit import emit
    from tests.emit.harness import CONTEXT, all_cases, emission

    for case, (space, cand) in all_cases().items():
        # a case the target refuses (P7001) has nothing to compare; megatron takes what primus refuses
        target = "primus+k8s" if emission(case, "primus+k8s") is not None else "megatron+k8s"
        assert emit(space, cand, target, CONTEXT) == emit(space, cand, target, CONTEXT)
