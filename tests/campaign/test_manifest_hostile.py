"""A campaign manifest edited on its way back from the cluster: `primusc learn` refuses each field
that is not of the kind `plan --shortlist` writes as P8041 naming it, where each used to end in an
internal error (a KeyError, a ZeroDivisionError, cattrs' validation group) or, for the profile's
module name, in text spliced into the site profile's import line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from primus_lang.cli import main
from tests.campaign.test_log_pathologies import campaign, fill  # noqa: F401 -- the module fixture

EDITS: list[tuple[str, Any]] = [
    ("gpu", "x"), ("gpu", {}), ("gpu.peak_bf16", -1), ("gpu.peak_bf16", -0.0), ("gpu.peak_bf16", "1e15"),
    ("gpu.efficiency.gemm_max", float("nan")), ("gpu.vendor", "intel"),
    ("profile", {}), ("profile.name", None), ("profile.module", "hardware.calibrated (x)\nmodel evil"),
    ("jobs", None), ("jobs", []), ("jobs.0", {}), ("jobs.0.index", "x"), ("jobs.0.index", 1), ("jobs.0.log", None),
    ("jobs.0.candidate", {"a": 1}), ("jobs.0.candidate", "tp=2"), ("jobs.0.candidate.pp", -1),
    ("jobs.0.candidate.pp", 0), ("jobs.0.candidate.tp", True), ("jobs.0.candidate.cuda_graph", "x"),
    ("jobs.0.candidate.pipeline_layout", "x"), ("jobs.0.candidate.first_stage_layers", -1),
    ("jobs.0.candidate.recompute", {"kind": "most"}), ("jobs.0.candidate.mbs", 4.5),
    ("cluster.nodes", "1"), ("cluster", None), ("model", 1), ("source", "x"),
]


def _edit(data: dict[str, Any], where: str, value: Any) -> None:
    *outer, last = where.split(".")
    node: Any = data
    for key in outer:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize(("where", "value"), EDITS)
def test_an_edited_manifest_field_is_p8041(campaign: Path, tmp_path: Path, where: str, value: Any,  # noqa: F811
                                           capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {})
    manifest = copy / "manifest.json"
    data = json.loads(manifest.read_text())
    _edit(data, where, value)
    manifest.write_text(json.dumps(data))
    site = tmp_path / "site.prx"
    assert main(["learn", str(copy), "--out", str(site)]) == 1
    err = capsys.readouterr().err
    assert "P8041" in err and "P9001" not in err and "Traceback" not in err
    assert not site.exists()


def test_the_unedited_manifest_still_learns(campaign: Path, tmp_path: Path) -> None:  # noqa: F811
    assert main(["learn", str(fill(campaign, tmp_path, {})), "--out", str(tmp_path / "site.prx")]) == 0
