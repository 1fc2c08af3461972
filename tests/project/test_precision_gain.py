"""A recipe in BF16 beside its low precision: where FP8's gain comes from, and the corpus's pairs."""

from __future__ import annotations

import json

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.ir import Candidate
from primus_lang.project import project
from primus_lang.project.precision import precision_gain, twins
from primus_lang.validate.precision_pairs import pairs_summary, precision_pairs, twin_key
from primus_lang.validate.runs import Run

from .fixtures import B200, H100, LLAMA3_1_70B, MIXTRAL_8X7B, cluster

BASE = Candidate(tp=4, pp=2, mbs=1, gbs=64, seq_len=8192)


@pytest.mark.parametrize("cand", [BASE, BASE.replace(precision="fp8", fp8_recipe="delayed", fp8_param_gather=True)])
def test_only_the_gemms_and_their_quantize_kernels_change(cand: Candidate) -> None:
    c = cluster(H100, nodes=2)
    gain = precision_gain(LLAMA3_1_70B, c, cand)
    parts = {p: (a, b) for p, a, b in gain.parts}
    assert parts["GEMMs"][1] < parts["GEMMs"][0]
    assert parts["quantize kernels"][0] == 0 < parts["quantize kernels"][1]
    assert parts["attention"][0] == parts["attention"][1] > 0
    assert parts["other kernels"][0] == parts["other kernels"][1] > 0
    bf16, low = twins(cand)
    assert low.precision == "fp8" and bf16.precision == "bf16" and not bf16.fp8_param_gather
    assert gain.low_tokens == project(LLAMA3_1_70B, c, low).tokens_per_gpu
    assert gain.ratio == pytest.approx(gain.low_tokens / project(LLAMA3_1_70B, c, bf16).tokens_per_gpu, rel=1e-12)
    assert gain.label == f"fp8 ({low.fp8_recipe})"


def test_an_nvfp4_recipe_is_set_beside_bf16() -> None:
    gain = precision_gain(MIXTRAL_8X7B, cluster(B200), Candidate(tp=2, ep=4, mbs=1, gbs=64, seq_len=4096,
                                                                  precision="fp4"))
    assert gain.label == "fp4" and gain.ratio > 1


def test_the_fp8_gemm_speedup_is_the_kernels_not_three_times() -> None:
    """On a large dense model the GEMMs alone may gain at most the peak ratio times the kernel ratio:
    a corpus-fitted plateau once had them three times as fast on the same GPU (issue 30)."""
    c = cluster(H100, nodes=2)
    gain = precision_gain(LLAMA3_1_70B, c, BASE)
    gemm = {p: (a, b) for p, a, b in gain.parts}["GEMMs"]
    eff = H100.efficiency
    ceiling = H100.peak_fp8 * eff.fp8_gemm_max / (H100.peak_bf16 * eff.gemm_max)
    assert gemm[0] / gemm[1] <= ceiling


def _run(rid: str, precision: str, measured: float, **knobs: object) -> Run:
    cand = BASE.replace(precision=precision, **knobs)
    return Run(id=rid, group=("m", "h100", precision), measured=measured, model=LLAMA3_1_70B,
               cluster=cluster(H100, nodes=2), cand=cand, source="s", release="r")


def test_pairs_are_one_recipe_in_two_precisions() -> None:
    runs = [_run("b", "bf16", 100.0), _run("f", "fp8", 130.0, fp8_recipe="delayed", fp8_param_gather=True),
            _run("other_layout", "fp8", 150.0, tp=8), attrs.evolve(_run("other_release", "fp8", 140.0), release="r2")]
    assert twin_key(runs[0].cand) == twin_key(runs[1].cand) != twin_key(runs[2].cand)  # type: ignore[arg-type]
    pairs = precision_pairs(runs, {"b": 10.0, "f": 14.3, "other_layout": 20.0, "other_release": 12.0})
    assert [(p.bf16_id, p.low_id, p.low) for p in pairs] == [("b", "f", "fp8 (delayed)")]
    [p] = pairs
    assert p.measured == pytest.approx(1.3) and p.projected == pytest.approx(1.43) and p.error == pytest.approx(0.1)
    assert pairs_summary(pairs) == {"pairs": 1, "mean_abs_error": pytest.approx(0.1),
                                    "mean_error": pytest.approx(0.1), "over": 1}
    assert pairs_summary([])["pairs"] == 0


@pytest.mark.slow
def test_validate_pairs_on_the_bundled_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--calibrated", "--pairs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ids = {(p["bf16"], p["low"]) for p in data["pairs"]}
    assert ("torchao_llama3_8b_mi300x_float8/bf16", "torchao_llama3_8b_mi300x_float8/fp8_tensorwise") in ids
    assert ("tt2412_llama3_8b_8gpu_float8/fsdp_compile", "tt2412_llama3_8b_8gpu_float8/fsdp_compile_float8") in ids
    assert data["summary"]["pairs"] == len(data["pairs"]) >= 10
    for p in data["pairs"]:
        assert p["error"] == pytest.approx(p["projected"] / p["measured"] - 1)
