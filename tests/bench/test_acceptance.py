"""The benchmark oracle's acceptance check on CPU runs end to end: a real training step of a small GPT,
measured for nine configurations (micro-batch, sequence, recompute, layers, 1 and 2 gloo ranks),
against the oracle's projection from one measured layer per shape (downscale, measure, upscale).

How close the projection comes (median error, Spearman) is a figure of CPU timings, which a busy
2-core machine moves at random: `primusc bench --check` measures it and docs/benchmark.md records
it. This test asserts only what does not depend on the clock."""

from __future__ import annotations

import math

import pytest

from primus_lang.bench.acceptance import (
    CPU_CONFIGS,
    CPU_CORE,
    TINY_GPT,
    candidate,
    local_cluster,
    markdown,
    run_check,
    spearman,
)
from primus_lang.bench.compose import project_downscaled
from primus_lang.bench.database import ProfileDB
from primus_lang.bench.oracle import BenchmarkOracle
from primus_lang.bench.runtime import DeviceInfo


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.slow
def test_acceptance_check_measures_projects_and_caches(cpu: DeviceInfo) -> None:
    db = ProfileDB(":memory:")
    assert len(CPU_CONFIGS) >= 8 and {c.world for c in CPU_CONFIGS} == {1, 2}
    result = run_check(TINY_GPT, CPU_CONFIGS, db, cpu)
    table = markdown(result)
    assert [r.config for r in result.rows] == list(CPU_CONFIGS), table
    assert all(math.isfinite(r.measured) and r.measured > 0 for r in result.rows), table
    assert all(math.isfinite(r.projected) and r.projected > 0 for r in result.rows), table
    assert -1.0 <= result.spearman <= 1.0 and "Median absolute error" in table
    # every block shape is in the database now: projecting again measures nothing
    blocks = db.count_blocks(cpu.key)
    cfg = CPU_CONFIGS[-1]
    cluster = local_cluster(CPU_CORE, cfg.world)
    oracle = BenchmarkOracle(db, cpu, cluster)
    again = project_downscaled(TINY_GPT.replace(num_layers=cfg.layers), cluster, candidate(cfg), db, cpu, oracle)
    assert not again.measured_now
    assert db.count_blocks(cpu.key) == blocks
