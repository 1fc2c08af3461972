"""The loop on the local target with Primus-format logs: plan --shortlist, run, learn, plan again."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.campaign.loop import SPACE, learn_and_check, plan_on_learned, torchrun, true_best, write_truth


@pytest.mark.slow
def test_primus_logs_teach_a_profile_that_picks_the_true_best(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "primus+local", "--shortlist", "6",
                 "--var", f"primus_dir={tmp_path}"]) == 0
    campaign = out / "campaign"
    env = {**os.environ, "PRIMUSC_TORCHRUN": torchrun(), "FAKE_TRUTH": str(write_truth(tmp_path, campaign))}
    run = subprocess.run(["bash", str(campaign / "campaign.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr + (campaign / "job-0" / "train.log").read_text(errors="replace")
    assert "tokens per GPU (tokens/s/GPU)" in (campaign / "job-0" / "train.log").read_text()  # Primus's format
    result = learn_and_check(campaign, capsys)
    site = campaign / "site.prx"
    text = site.read_text()
    assert "gpu h200_calibrated_site = h200_calibrated {" in text and "basis = fitted" in text
    assert "band kept from h200_calibrated" in text and "primusc learn" in text
    assert plan_on_learned(tmp_path, site, str(result["name"]), capsys) == true_best()
