"""The issue's acceptance check on CPU: a real training step of a small GPT, measured for nine
configurations (micro-batch, sequence, recompute, layers, 1 and 2 gloo ranks), against the benchmark
oracle's projection from one measured layer per shape (downscale, measure, upscale)."""

from __future__ import annotations

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
def test_projection_matches_measured_training_steps(cpu: DeviceInfo) -> None:
    db = ProfileDB(":memory:")
    assert len(CPU_CONFIGS) >= 8 and {c.world for c in CPU_CONFIGS} == {1, 2}
    result = run_check(TINY_GPT, CPU_CONFIGS, db, cpu)
    table = markdown(result)
    assert result.median_abs_error <= 0.15, table
    assert result.spearman >= 0.9, table
    # every block shape is in the database now: projecting again measures nothing
    blocks = db.count_blocks(cpu.key)
    cfg = CPU_CONFIGS[-1]
    cluster = local_cluster(CPU_CORE, cfg.world)
    oracle = BenchmarkOracle(db, cpu, cluster)
    again = project_downscaled(TINY_GPT.replace(num_layers=cfg.layers), cluster, candidate(cfg), db, cpu, oracle)
    assert not again.measured_now
    assert db.count_blocks(cpu.key) == blocks
