from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from primus_lang.bench.database import KernelRow, ProfileDB
from primus_lang.bench.kernels import KernelSpec
from primus_lang.bench.profile import estimate, profile
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.bench.space import collect_specs, profile_candidates
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Candidate, Cluster, Gpu, Model

GPU = Gpu(name="g", vendor="other", peak_bf16=1e12, hbm_capacity=2**33, hbm_bandwidth=1e11, scale_up_bandwidth=1e10)


def cluster(n: int) -> Cluster:
    return Cluster(name=f"c{n}", gpu=GPU, nodes=1, gpus_per_node=n)


def test_profiling_twice_measures_nothing_the_second_time(micro_model: Model, cpu: DeviceInfo) -> None:
    db = ProfileDB(":memory:")
    cands = [Candidate(mbs=m, gbs=8, seq_len=64, tp=tp) for m in (1, 2) for tp in (1, 2)]
    first = profile_candidates(micro_model, cluster(2), cands, db, cpu, budget_s=0.002)
    assert first.stats.measured == first.stats.distinct > 0
    assert first.op_occurrences > first.stats.distinct  # candidates share kernels
    second = profile_candidates(micro_model, cluster(2), cands, db, cpu, budget_s=0.002)
    assert second.stats.measured == 0
    assert second.stats.cached == first.stats.distinct


def test_two_spaces_sharing_shapes_share_measurements(micro_model: Model, cpu: DeviceInfo, tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite"
    space_a = [Candidate(mbs=1, gbs=8, seq_len=64, tp=tp) for tp in (1, 2)]
    # another space: a deeper model on more GPUs, partly the same per-rank shapes
    deeper = micro_model.replace(name="deeper", num_layers=8)
    space_b = [Candidate(mbs=m, gbs=16, seq_len=64, tp=2, pp=2) for m in (1, 2)]
    specs_a, _, _ = collect_specs(micro_model, cluster(2), space_a)
    specs_b, _, _ = collect_specs(deeper, cluster(4), space_b)
    shared = specs_a & specs_b
    assert shared and specs_b - specs_a

    db = ProfileDB(path)
    profile_candidates(micro_model, cluster(2), space_a, db, cpu, budget_s=0.002)
    db.close()
    reopened = ProfileDB(path)  # the database outlives the process that filled it
    got = profile_candidates(deeper, cluster(4), space_b, reopened, cpu, budget_s=0.002)
    assert got.stats.cached == len(shared)
    assert got.stats.measured == len(specs_b - specs_a)


def test_rows_are_keyed_by_device(cpu: DeviceInfo) -> None:
    db = ProfileDB(":memory:")
    spec = KernelSpec("add", (1024,), "bf16")
    profile([spec], db, cpu, budget_s=0.002)
    other = DeviceInfo("cpu", "cpu", cpu.name, "cpu", cpu.driver, "0.0-other-torch")
    assert db.kernel(other.key, spec) is None
    assert profile([spec], db, other, budget_s=0.002).measured == 1


def test_estimate_says_where_a_number_came_from() -> None:
    db = ProfileDB(":memory:")
    dev = "dev"
    for m, seconds in ((256, 1.0e-3), (1024, 2.0e-3)):
        db.put_kernel(dev, KernelRow(KernelSpec("gemm", (m, 512, 512, 1), "bf16"), seconds, seconds, 5))
    measured = estimate(db, dev, KernelSpec("gemm", (256, 512, 512, 1), "bf16"))
    assert measured is not None and measured.source == "measured" and measured.seconds == 1.0e-3
    mid = estimate(db, dev, KernelSpec("gemm", (512, 512, 512, 1), "bf16"))
    assert mid is not None and mid.source == "interpolated"
    # rate 256 -> 1024 grows 2x; at the geometric midpoint it is sqrt(2)x the small one's
    small_rate = 2 * 256 * 512 * 512 / 1.0e-3
    assert mid.seconds == pytest.approx(2 * 512 * 512 * 512 / (small_rate * 2**0.5))
    above = estimate(db, dev, KernelSpec("gemm", (2048, 512, 512, 1), "bf16"))
    assert above is not None and above.seconds == pytest.approx(4.0e-3)  # the plateau rate carried over
    assert estimate(db, dev, KernelSpec("gemm", (256, 512, 512, 1), "fp8")) is None  # other dtype: no neighbour
    assert estimate(db, dev, KernelSpec("gemm", (8, 8, 8, 1), "bf16")) is None  # too far to trust


def test_a_foreign_file_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "not_a_db.sqlite"
    bad.write_text("hello, not sqlite")
    with pytest.raises(CompileError) as err:
        ProfileDB(bad)
    assert err.value.diagnostics[0].code.id == "P6803"


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite"
    ProfileDB(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema'")
    with pytest.raises(CompileError):
        ProfileDB(path)
