from __future__ import annotations

import importlib
from typing import Any

import pytest

from primus_lang.bench import runtime
from primus_lang.bench.database import ProfileDB
from primus_lang.bench.oracle import BenchmarkOracle, make_oracle, spec_of
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Candidate, Cluster, Gpu, Model, Settings

GPU = Gpu(name="g", vendor="other", peak_bf16=1e12, hbm_capacity=2**33, hbm_bandwidth=2e10, scale_up_bandwidth=2e9)
CLUSTER = Cluster(name="c", gpu=GPU, nodes=1, gpus_per_node=1)
CAND = Candidate(mbs=1, gbs=2, seq_len=64, sharding="none", overlap_grad_reduce=False, overlap_param_gather=False)


def test_benchmark_oracle_drives_project_with_measured_kernels(micro_model: Model, cpu: DeviceInfo) -> None:
    from primus_lang.project import Oracle, project

    db = ProfileDB(":memory:")
    oracle = BenchmarkOracle(db, cpu, CLUSTER, budget_s=0.002)
    assert isinstance(oracle, Oracle)
    proj = project(micro_model, CLUSTER, CAND, Settings(), oracle=oracle)
    assert proj.step_time > 0
    assert set(oracle.source_counts()) == {"measured"}
    rows = db.count_kernels(cpu.key)
    assert rows == oracle.source_counts()["measured"]
    # hybrid reads the same database and measures nothing new
    again = BenchmarkOracle(db, cpu, CLUSTER, measure=False)
    project(micro_model, CLUSTER, CAND, Settings(), oracle=again)
    assert db.count_kernels(cpu.key) == rows
    assert set(again.source_counts()) == {"measured"}


def test_hybrid_on_an_empty_database_falls_back_to_simulate(micro_model: Model, cpu: DeviceInfo) -> None:
    from primus_lang.project import SimulateOracle, project

    db = ProfileDB(":memory:")
    hybrid = BenchmarkOracle(db, cpu, CLUSTER, measure=False)
    got = project(micro_model, CLUSTER, CAND, Settings(), oracle=hybrid)
    simulated = project(micro_model, CLUSTER, CAND, Settings(), oracle=SimulateOracle(CLUSTER))
    assert set(hybrid.source_counts()) == {"simulated"}
    assert got.step_time == pytest.approx(simulated.step_time)
    assert db.count_kernels() == 0


def test_every_compute_op_of_a_candidate_maps_to_a_kernel(micro_model: Model) -> None:
    from primus_lang.project import stage_ops
    from primus_lang.project.ops import Collective

    for stage in stage_ops(micro_model, CLUSTER, CAND.replace(precision="fp8")):
        tasks = [t for chunk in stage.chunks for block in chunk for t in block.tasks] + list(stage.step_tasks)
        for task in tasks:
            assert (spec_of(task.op) is None) == isinstance(task.op, Collective)


def test_make_oracle(tmp_path: Any) -> None:
    from primus_lang.project import SimulateOracle

    assert isinstance(make_oracle("simulate", cluster=CLUSTER), SimulateOracle)
    bench = make_oracle("benchmark", "cpu", str(tmp_path / "p.sqlite"), cluster=CLUSTER)
    assert isinstance(bench, BenchmarkOracle) and bench.measure
    hybrid = make_oracle("hybrid", "cpu", str(tmp_path / "p.sqlite"), cluster=CLUSTER)
    assert isinstance(hybrid, BenchmarkOracle) and not hybrid.measure
    with pytest.raises(ValueError):
        make_oracle("psychic", cluster=CLUSTER)


def test_missing_torch_is_a_diagnostic(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def no_torch(name: str, *args: Any) -> Any:
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real(name, *args)

    monkeypatch.setattr(runtime.importlib, "import_module", no_torch)
    with pytest.raises(CompileError) as err:
        runtime.describe("cpu")
    diag = err.value.diagnostics[0]
    assert diag.code.id == "P6801" and "primusc[bench]" in diag.help


@pytest.mark.parametrize("device", ["tpu", "cuda:99"])
def test_bad_devices_are_diagnostics(device: str) -> None:
    with pytest.raises(CompileError) as err:
        runtime.describe(device)
    assert err.value.diagnostics[0].code.id == "P6802"


@pytest.mark.slow
def test_anchoring_puts_measured_layers_into_project(cpu: DeviceInfo) -> None:
    """``project()`` with an anchored oracle reproduces the downscaled composition of the same
    measurements; hybrid anchoring measures nothing."""
    from primus_lang.bench.acceptance import CPU_CORE, TINY_GPT, candidate, local_cluster
    from primus_lang.bench.compose import project_downscaled
    from primus_lang.bench.reference import RefConfig
    from primus_lang.project import project

    db = ProfileDB(":memory:")
    cfg = RefConfig(layers=2, mbs=1, seq=128, microbatches=2)
    model, cluster, cand = TINY_GPT.replace(num_layers=2), local_cluster(CPU_CORE, 1), candidate(cfg)
    empty = BenchmarkOracle(db, cpu, cluster, measure=False)
    assert empty.anchor(model, [cand]) == 0 and not empty.scale
    kernel_level = BenchmarkOracle(db, cpu, cluster, budget_s=0.002)
    plain = project(model, cluster, cand, Settings(), oracle=kernel_level).step_time
    anchored = BenchmarkOracle(db, cpu, cluster, budget_s=0.002)
    assert anchored.anchor(model, [cand, cand.replace(gbs=4)]) == 1  # one layer shape, measured once
    got = project(model, cluster, cand, Settings(), oracle=anchored).step_time
    want = project_downscaled(model, cluster, cand, db, cpu, anchored).step_time
    assert got == pytest.approx(want, rel=0.02)
    # the anchor rescaled the kernel-level sum (by how much is a matter of CPU timings, not asserted)
    assert anchored.scale and any(f != 1.0 for f in anchored.scale.values()) and got != plain
    hybrid = BenchmarkOracle(db, cpu, cluster, measure=False)
    assert hybrid.anchor(model, [cand]) == 0 and hybrid.scale == anchored.scale


def test_nvfp4_gemms_are_simulated_while_the_rest_is_measured(micro_model: Model, cpu: DeviceInfo) -> None:
    """NVFP4 GEMMs need Transformer Engine's quantized kernels, which the harness does not drive: the
    benchmark oracle times them with the simulate oracle and measures the rest of the step."""
    from primus_lang.project import SimulateOracle, project
    from primus_lang.project.ops import Gemm

    db = ProfileDB(":memory:")
    oracle = BenchmarkOracle(db, cpu, CLUSTER, budget_s=0.002)
    proj = project(micro_model, CLUSTER, CAND.replace(precision="fp4"), Settings(), oracle=oracle)
    assert proj.step_time > 0
    assert set(oracle.source_counts()) == {"measured", "simulated"}
    gemm = Gemm(64, 64, 64, "fp4")
    assert oracle.compute(gemm) == SimulateOracle(CLUSTER).compute(gemm)
