"""The closed loop the campaign tests drive: a plan's shortlist, logs from a hidden "true" GPU
profile, `primusc learn`, and a fresh plan on the learned profile.

The truth is the starting profile (`h200_calibrated`) with the GEMM plateau 20% higher and the
HBM efficiency 0.858 -> 0.6. What the learned profile must show, and why:
- `gemm_max` within 10% of the truth. It dominates a dense model's step and every shortlisted run
  measures it, but the fit is a posterior mode with the pooling prior (sigma 4 in logit space)
  toward the start: with 6 runs whose projections agree to 1%, the prior's pull leaves the
  plateau short of the truth by 5-9%, more the nearer the plateau sits to its bound (measured:
  0.519 for 0.545 from 0.454 on the profile of 1 Dec 2026; 0.727 for 0.794 from 0.662 on 2 Dec's).
- `hbm` left near the start. Memory-bound kernels are 2-5% of these runs' steps and scale with
  the same layouts as the GEMMs, so six runs of one space cannot tell a slower HBM from a slower
  GEMM: partial pooling keeps what the runs cannot identify where the corpus put it instead of
  inventing a value. (A campaign that must learn HBM needs runs that differ in their
  memory-bound share, e.g. BF16 against FP8 or very different micro-batches.)
- Every run's error drops from about 10-12% to under 3% (the prior's pull leaves 1-2.4%), and the measured ranking and a fresh plan
  on the learned profile both pick the truly fastest candidate of the whole space.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs

from primus_lang.check import legal_points
from primus_lang.cli import main
from primus_lang.ir import Candidate
from primus_lang.ir.serialize import from_data
from primus_lang.lower import load_space
from primus_lang.project import project

HERE = Path(__file__).parent
SPACE = HERE / "space.prx"
FAKE = HERE / "fake_torchrun.py"
# the start's plateau read from the profile, so a refit of the stdlib keeps the truth 20% above it
TRUE = {"gemm_max": load_space(SPACE).cluster.gpu.efficiency.gemm_max * 1.2, "hbm": 0.6}


def torchrun() -> str:
    return f"{sys.executable} {FAKE}"


def write_truth(tmp_path: Path, campaign: Path) -> Path:
    """Each job's step time on the true profile, projected here once, so the stand-in torchrun prints
    its log without loading primusc (each job of a Slurm array once spent 4 s doing so)."""
    manifest = json.loads((campaign / "manifest.json").read_text())
    space = load_space(campaign / manifest["source"]["path"], manifest["space"])
    gpu = space.cluster.gpu
    cluster = attrs.evolve(space.cluster, gpu=attrs.evolve(gpu, efficiency=attrs.evolve(gpu.efficiency, **TRUE)))
    steps = {str(job["index"]): project(space.model, cluster, from_data(job["candidate"], Candidate),
                                        space.settings).step_time for job in manifest["jobs"]}
    path = tmp_path / "truth.json"
    path.write_text(json.dumps({"campaign": str(campaign), "world": cluster.world, "steps": steps}))
    return path


def true_best() -> str:
    space = load_space(SPACE)
    gpu = space.cluster.gpu
    cluster = attrs.evolve(space.cluster, gpu=attrs.evolve(gpu, efficiency=attrs.evolve(gpu.efficiency, **TRUE)))
    best = max(legal_points(space), key=lambda c: project(space.model, cluster, c, space.settings).tokens_per_gpu)
    return best.label()


def learn_and_check(campaign: Path, capsys: object, extra: tuple[str, ...] = ()) -> dict[str, object]:
    capsys.readouterr()  # type: ignore[attr-defined]
    assert main(["learn", str(campaign), "--json", *extra]) == 0
    result = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    start, learned = result["start_efficiency"], result["efficiency"]
    assert abs(learned["gemm_max"] / TRUE["gemm_max"] - 1) < 0.10, (start["gemm_max"], learned["gemm_max"])
    assert abs(learned["hbm"] / start["hbm"] - 1) < 0.02  # not identifiable here: kept, not invented
    for run in result["runs"]:
        assert abs(run["error_before"]) > 0.08 and abs(run["error_after"]) < 0.03, run
    best = true_best()
    assert result["ranked"][0]["label"] == best and result["ranked"][0]["measured"]
    return result


def plan_on_learned(tmp_path: Path, site: Path, name: str, capsys: object) -> str:
    """The winner of a fresh plan of the space on the learned profile (imported, as a user would)."""
    text = SPACE.read_text().replace("import hardware.calibrated (h200_calibrated)", f'import "{site.resolve()}" ({name})')
    fresh = tmp_path / "fresh.prx"
    fresh.write_text(text.replace("gpu = h200_calibrated", f"gpu = {name}"))
    capsys.readouterr()  # type: ignore[attr-defined]
    assert main(["plan", str(fresh), "--out", str(tmp_path / "fresh"), "--no-emit", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert plan["gpu"] == name and plan["provenance"]["basis"] == "fitted"
    return str(plan["tied"][0] if plan["tied"] else plan["ranked"][0]["candidate"])
