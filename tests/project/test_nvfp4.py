"""NVFP4 (``precision = fp4``): GEMMs at the FP4 peak, NVFP4's own quantize cost, and the plateau's
place in calibration (a ratio to the FP8 one)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.ir import Candidate, Efficiency, Model, Recompute
from primus_lang.project import project, stage_ops
from primus_lang.project.build import FP8_CAST_BYTES, NVFP4_CAST_BYTES, cast_bytes
from primus_lang.project.ops import Gemm, GroupedGemm, MemoryOp, Task
from primus_lang.search.bound import step_time_floor
from primus_lang.validate.calibrate import _apply, _value, identifiable
from primus_lang.validate.runs import Run, load_runs, precision_of

from .fixtures import B200, LLAMA3_1_70B, MIXTRAL_8X7B, cluster

BASE = Candidate(tp=2, pp=1, mbs=1, gbs=128, seq_len=8192)


def _tasks(cand: Candidate, model: Model = LLAMA3_1_70B) -> list[Task]:
    return [t for st in stage_ops(model, cluster(B200), cand) for ch in st.chunks for b in ch for t in b.tasks]


def test_nvfp4_gemms_run_at_the_fp4_peak() -> None:
    blocks = [b for st in stage_ops(LLAMA3_1_70B, cluster(B200), BASE.replace(precision="fp4"))
              for ch in st.chunks for b in ch]
    dtypes = {b.name: {t.op.dtype for t in b.tasks if isinstance(t.op, Gemm)} for b in blocks}
    assert dtypes["dense_layer"] == {"fp4"}
    assert dtypes["output"] == {"bf16"}  # the output layer stays outside Megatron's FP4 context
    times = {p: project(LLAMA3_1_70B, cluster(B200), BASE.replace(precision=p)).step_time
             for p in ("bf16", "fp8", "fp4")}
    assert times["fp4"] < times["fp8"] < times["bf16"]


def test_nvfp4_quantizes_with_an_amax_pass_and_two_half_byte_copies() -> None:
    assert NVFP4_CAST_BYTES == 2 + 2 + 2 * (0.5 + 1 / 16)
    assert cast_bytes(BASE.replace(precision="fp4"), B200) == NVFP4_CAST_BYTES
    assert cast_bytes(BASE.replace(precision="fp8", fp8_recipe="mxfp8"), B200) == FP8_CAST_BYTES["mxfp8"]
    assert cast_bytes(BASE, B200) == 0.0
    names = {t.op.name for t in _tasks(BASE.replace(precision="fp4")) if isinstance(t.op, MemoryOp)}
    assert {"fp4_cast_input", "fp4_cast_grad"} <= names and not any(n.startswith("fp8_") for n in names)
    steps = {t.op.name for st in stage_ops(LLAMA3_1_70B, cluster(B200), BASE.replace(precision="fp4"))
             for t in st.step_tasks if isinstance(t.op, MemoryOp)}
    assert "fp4_weight_cast" in steps


def test_moe_experts_run_in_nvfp4_too() -> None:
    cand = Candidate(tp=1, ep=8, mbs=1, gbs=64, seq_len=4096, precision="fp4")
    grouped = [t.op for t in _tasks(cand, MIXTRAL_8X7B) if isinstance(t.op, GroupedGemm)]
    assert grouped and all(op.dtype == "fp4" for op in grouped)


def test_the_fp4_plateau_scales_the_step_as_the_peak_does() -> None:
    cand = BASE.replace(precision="fp4")
    slow = attrs.evolve(B200, efficiency=Efficiency(fp4_gemm_max=0.35))
    fast = attrs.evolve(B200, peak_fp4=B200.peak_fp4 * 2, efficiency=Efficiency(fp4_gemm_max=0.35))
    t_slow = project(LLAMA3_1_70B, cluster(slow), cand).step_time
    assert project(LLAMA3_1_70B, cluster(B200), cand).step_time < t_slow
    assert project(LLAMA3_1_70B, cluster(fast), cand).step_time < t_slow


def test_mfu_of_an_nvfp4_plan_is_over_the_fp4_peak() -> None:
    p = project(LLAMA3_1_70B, cluster(B200), BASE.replace(precision="fp4"))
    assert p.mfu == pytest.approx(p.tflops_per_gpu * 1e12 / B200.peak_fp4, rel=1e-12)


def test_the_fp4_plateau_is_calibrated_as_a_ratio_to_the_fp8_one() -> None:
    base = Efficiency(gemm_max=0.8, fp8_gemm_max=0.6, fp4_gemm_max=0.3)
    assert _value(base, "fp4_ratio") == pytest.approx(0.5)
    assert _value(base, "fp8_ratio") == pytest.approx(0.75)
    # a new BF16 plateau carries FP8 with it, and FP8 carries NVFP4
    moved = _apply(base, {"gemm_max": 0.4})
    assert moved.fp8_gemm_max == pytest.approx(0.3) and moved.fp4_gemm_max == pytest.approx(0.15)
    fitted = _apply(base, {"fp4_ratio": 0.9})
    assert fitted.fp8_gemm_max == pytest.approx(0.6) and fitted.fp4_gemm_max == pytest.approx(0.54)


def _run(precision: str) -> Run:
    return Run(id=precision, group=("m", "g", precision), measured=1.0, model=LLAMA3_1_70B, cluster=cluster(B200),
               cand=BASE.replace(precision=precision))


def test_the_fp4_ratio_moves_only_with_nvfp4_rows_beside_others() -> None:
    assert "fp4_ratio" not in identifiable([_run("fp4")])
    assert "fp4_ratio" not in identifiable([_run("fp8"), _run("bf16")])
    names = identifiable([_run("fp4"), _run("fp8")])
    assert "fp4_ratio" in names and "fp8_ratio" not in names
    names = identifiable([_run("fp4"), _run("fp8"), _run("bf16")])
    assert "fp4_ratio" in names and "fp8_ratio" not in names


@pytest.mark.parametrize(("label", "expected"), [
    ("NVFP4", ("fp4", "tensorwise")),
    ("nvfp4", ("fp4", "tensorwise")),
    ("MXFP4", "unsupported feature: precision `MXFP4` (only NVFP4 is modelled)"),
])
def test_published_fp4_labels(label: str, expected: object) -> None:
    assert precision_of(label, "gb200") == expected


@pytest.mark.parametrize("cand", [
    BASE.replace(precision="fp4"),
    Candidate(tp=4, pp=4, vpp=5, schedule="interleaved", mbs=1, gbs=256, seq_len=8192, precision="fp4"),
    Candidate(tp=1, pp=2, mbs=2, gbs=256, seq_len=8192, precision="fp4", recompute=Recompute("full", 2)),
], ids=lambda c: c.label())
def test_the_search_bound_stays_below_an_nvfp4_projection(cand: Candidate) -> None:
    floor = step_time_floor(LLAMA3_1_70B, cluster(B200), cand)
    assert 0 < floor <= project(LLAMA3_1_70B, cluster(B200), cand).step_time


def _row(rid: str, gpu: str, precision: str) -> dict[str, object]:
    return {"id": rid, "source": "NVIDIA Megatron-Bridge performance summary", "framework": "Megatron-Bridge",
            "task": "pretrain", "model_card": "llama3_70b", "seq_len": 8192, "precision": precision,
            "hardware": {"gpu": gpu}, "num_gpus": 64, "num_nodes": 16, "gpus_per_node": 4,
            "parallel": {"tp": 2, "pp": 4, "vp": 5, "cp": 1}, "mbs": 1, "gbs": 256, "recompute": None,
            "measured": {"tokens_per_sec_per_gpu": 4800}, "config_complete": True}


def test_published_nvfp4_rows_map_to_fp4_without_tp_overlap(tmp_path: Path) -> None:
    """Megatron-Bridge's NVFP4 Llama recipes turn TP overlap off (their FP8 ones keep it on); an
    NVFP4 row on a GPU without NVFP4 tensor cores is skipped, not projected at BF16 speed."""
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([_row("a", "GB200", "NVFP4"), _row("b", "GB200", "FP8-CS"),
                                    _row("c", "H100 SXM", "NVFP4")]))
    runs = {r.id: r for r in load_runs(path)}
    assert runs["a"].cand is not None and runs["b"].cand is not None
    assert runs["a"].cand.precision == "fp4" and not runs["a"].cand.tp_comm_overlap
    assert runs["b"].cand.precision == "fp8" and runs["b"].cand.tp_comm_overlap
    assert "no NVFP4 tensor cores" in runs["c"].skip
