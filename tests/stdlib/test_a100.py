"""The A100s: spec sheets without FP8, plain names on the NVIDIA pool, and a DGX A100 cluster that
plans a BF16 recipe and refuses an FP8 one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.check import legal_points, legality
from primus_lang.cli import main
from primus_lang.ir import Candidate, Gpu
from primus_lang.lower import load_program, loads_program
from primus_lang.project import project
from primus_lang.resources import data_dir

SPACE = """
import models.llama3 (llama3_1_8b)
import clusters.nvidia (a100_x8)

space s on a100_x8 {
  model = llama3_1_8b
  seq_len = 4096
  gbs = 512
  tp : 1 | 2
  precision : bf16 | fp8
  recompute : none | selective
}
"""


def _plain() -> dict[str, Gpu]:
    return {g.name: g for g in load_program(str(data_dir("stdlib") / "hardware" / "nvidia.prx")).gpus}


def test_the_parts_are_the_datasheets() -> None:
    gpus = _plain()
    big, small = gpus["a100_80gb"], gpus["a100_40gb"]
    assert big.peak_bf16 == 312e12 and big.peak_fp8 == 0 and small.peak_bf16 == big.peak_bf16
    assert (big.hbm_bandwidth, small.hbm_bandwidth) == pytest.approx((2.039e12, 1.555e12))
    assert (big.hbm_capacity, small.hbm_capacity) == (80 * 2**30, 40 * 2**30)
    assert gpus["a100"].efficiency == big.efficiency
    # no published A100 run: the profile is NVIDIA's pool, and says so
    assert big.provenance.basis == "pooled" and big.provenance.rows == 0


def test_a_dgx_a100_plans_bf16_and_refuses_fp8() -> None:
    space = loads_program(SPACE, "a100.prx").spaces[0]
    assert space.cluster.gpu.name == "a100_80gb_calibrated" and space.cluster.world == 64
    refused = {v.code for v in legality(space, Candidate(gbs=512, seq_len=4096, precision="fp8"))}
    assert "P4040" in refused
    points = list(legal_points(space))
    assert points and {c.precision for c in points} == {"bf16"}
    one = project(space.model, space.cluster, points[0], space.settings)
    # a BF16 Llama 3.1 8B step on 312 TFLOP/s parts: its MFU is a fraction, never above the peak
    assert 0.0 < one.mfu < 1.0 and one.tokens_per_gpu > 0


def test_explain_sets_no_fp8_twin_beside_a_bf16_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: explain printed FP8's projected gain on a GPU that P4040 refuses FP8 on
    path = tmp_path / "a100.prx"
    path.write_text(SPACE)
    assert main(["explain", str(path), "--point", "tp=2"]) == 0
    assert "has no FP8 tensor cores" in capsys.readouterr().out
    assert main(["explain", str(path), "--point", "tp=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["precision_gain"] is None
    assert main(["diff", str(path), "tp=1", "tp=2"]) == 0
    assert capsys.readouterr().out.count("has no FP8 tensor cores") == 2


def test_a_profile_pooled_from_other_architectures_carries_the_far_band() -> None:
    # a new user's trial: the A100's band (NVIDIA's pool, fitted on Hopper and Blackwell rows) was as
    # narrow as a fitted profile's; the far band is what runs of a kind no fit saw measured
    from primus_lang.validate import trust

    space = loads_program(SPACE, "a100.prx").spaces[0]
    gpu = space.cluster.gpu
    assert gpu.arch == "ampere" and "ampere" not in gpu.provenance.archs.split(",")
    cand = next(iter(legal_points(space)))
    b = trust.band(gpu, 1000.0, 1.0, cand, space.cluster.world, space.model, "megatron-core")
    assert (b.tokens_low, b.tokens_high) == pytest.approx((1000 * min(gpu.provenance.low, gpu.provenance.far_low),
                                                          1000 * max(gpu.provenance.high, gpu.provenance.far_high)))
    assert any("ampere architecture" in why for why in b.beyond)
    h100 = {g.name: g for g in load_program(str(data_dir("stdlib") / "hardware" / "nvidia.prx")).gpus}["h100"]
    assert not trust.beyond(h100.provenance, cand, 64, space.model, "megatron-core", h100.arch)


def test_check_says_fp8_is_never_legal_here(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a100.prx"
    path.write_text(SPACE)
    assert main(["check", str(path)]) == 0
    assert "never legal: precision = fp8 (every point with it breaks P4040" in capsys.readouterr().out


def test_a_recipe_file_named_for_the_40gb_part_is_planned_on_it(tmp_path: Path) -> None:
    # a reviewer's finding: `..._a100_40gb.sh` read as the 80 GB part (twice the memory)
    from primus_lang.lower import load_space
    from tests.recipes.test_bad_recipes import LLAMA8B

    script = tmp_path / "train_llama3_8b_a100_40gb.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(script), "--out", str(out)]) == 0
    assert load_space(out).cluster.gpu.hbm_capacity == 40 * 2**30
