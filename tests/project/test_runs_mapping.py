"""Corpus rows the loader leaves out because their source says the measurement is not representative."""

from __future__ import annotations

from pathlib import Path

import yaml

from primus_lang.project.runs import load_runs

from .test_memory_verdicts import row


def test_a_degraded_measurement_is_skipped_with_the_reason(tmp_path: Path) -> None:
    note = ("Doc footnote: performance regression in this container is a known issue, to be fixed in the next "
            "release - treat as a degraded measurement.")
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([row("degraded", notes=[note]), row("plain", notes=["MoE benchmark"])]))
    runs = {r.id: r for r in load_runs(path)}
    assert runs["degraded"].skip.startswith("degraded measurement")
    assert runs["plain"].skip == ""
