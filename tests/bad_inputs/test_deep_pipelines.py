"""A pipeline too long to simulate is P4191 at check, and long ones are projected without replaying
every micro-batch (found by hand: PP up to 4096 over 131,072 nodes with GBS 2^24 made `project`
and `plan` run past 90 s at 6 GB with no output; PP 512 alone took 21 s and 1.6 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import summarize
from primus_lang.cli import main
from primus_lang.ir import derived
from primus_lang.lower import load_space

HEAD = (
    "import hardware.amd (mi325x)\n"
    "cluster c { gpu = mi325x; nodes = 131072; gpus_per_node = 8; scale_up_domain = 1048576 }\n"
    "model m { num_layers = 4096; hidden = 64; ffn_hidden = 64; heads = 4; vocab = 10; seq_len = 8 }\n"
)


def _write(tmp_path: Path, axes: str) -> Path:
    path = tmp_path / "deep.prx"
    path.write_text(HEAD + f"space s on c {{ model = m; gbs = 16777216; {axes}; fits memory }}\n")
    return path


def test_the_slot_count_is_what_the_projection_replays() -> None:
    assert derived.schedule_slots(256, 2, 8192) == 256 * 2 * 4 * 256 == derived.MAX_SCHEDULE_SLOTS
    assert derived.schedule_slots(8, 4, 3) == 8 * 4 * 3  # fewer micro-batches than four groups


def test_pp_past_the_limit_is_removed_by_its_own_rule(tmp_path: Path) -> None:
    space = load_space(_write(tmp_path, "pp : 1 .. 4096"))
    summary = summarize(space)
    removed = {r.code: r.removed for r in summary.rules if r.removed}
    assert removed["P4191"] > 0
    assert summary.legal == 9  # PP 1, 2, 4, ..., 256: 512 and up are past the limit


@pytest.mark.parametrize(("axes", "status"), [pytest.param("pp : 1 .. 4096", 0, marks=pytest.mark.slow), ("pp = 1024", 1)])
def test_deep_pipelines_project_or_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], axes: str, status: int
) -> None:
    assert main(["project", str(_write(tmp_path, axes)), "--top", "1", "--error-format", "short"]) == status
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "P9001" not in captured.err
    if status:
        assert "P8006" in captured.err or "P4191" in captured.err
