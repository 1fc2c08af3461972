from __future__ import annotations

import pytest

from primus_lang.bench.collectives import fit_link, interpolate_measured, measure_collectives, ring_terms
from primus_lang.bench.database import CollectiveRow, ProfileDB
from primus_lang.bench.oracle import BenchmarkOracle
from primus_lang.bench.runtime import DeviceInfo
from primus_lang.ir import Cluster, Gpu

ALPHA, BW = 20e-6, 5e9


def synthetic_rows() -> list[CollectiveRow]:
    rows = []
    for op in ("all_reduce", "all_gather", "all_to_all"):
        for n in (2, 4):
            for size in (1 << 12, 1 << 16, 1 << 20, 1 << 24):
                steps, factor = ring_terms(op, n)
                rows.append(CollectiveRow(op, n, size, ALPHA * steps + factor * size / BW))
    return rows


def test_fit_recovers_the_link_of_exact_alpha_beta_points() -> None:
    fit = fit_link(synthetic_rows())
    assert fit is not None
    assert fit.alpha == pytest.approx(ALPHA, rel=1e-6)
    assert fit.bandwidth == pytest.approx(BW, rel=1e-6)
    assert fit.max_ranks == 4 and fit.median_error < 1e-9


def test_fit_needs_two_points() -> None:
    assert fit_link(synthetic_rows()[:1]) is None


def test_in_scope_sizes_interpolate_between_measured_points() -> None:
    rows = synthetic_rows()
    exact = next(r for r in rows if r.op == "all_reduce" and r.ranks == 2 and r.bytes == 1 << 16)
    assert interpolate_measured(rows, "all_reduce", 2, 1 << 16) == exact.seconds
    mid = interpolate_measured(rows, "all_reduce", 2, 1 << 18)
    lo = interpolate_measured(rows, "all_reduce", 2, 1 << 16)
    hi = interpolate_measured(rows, "all_reduce", 2, 1 << 20)
    assert mid is not None and lo is not None and hi is not None and lo < mid < hi
    assert interpolate_measured(rows, "all_reduce", 8, 1 << 16) is None  # group size never measured
    assert interpolate_measured(rows, "all_reduce", 2, 1 << 30) is None  # beyond the measured sizes


GPU = Gpu(name="g", vendor="other", peak_bf16=1e14, hbm_capacity=2**34, hbm_bandwidth=1e12,
          scale_up_bandwidth=1e11, scale_up_domain=4, nic_bandwidth=1e10)


def test_oracle_measures_in_scope_and_restores_beyond(cpu: DeviceInfo) -> None:
    from primus_lang.project.ops import Collective, Group

    db = ProfileDB(":memory:")
    db.put_collectives(cpu.key, "gloo", synthetic_rows())
    cluster = Cluster(name="c", gpu=GPU, nodes=4, gpus_per_node=4)
    oracle = BenchmarkOracle(db, cpu, cluster, measure=False)
    inside = Collective("all_reduce", 1 << 20, Group(4, 4))
    t_in = oracle.collective(inside)
    assert oracle.sources[inside.key] == "measured"
    assert t_in == pytest.approx(ALPHA * 6 + 1.5 * (1 << 20) / BW)
    across = Collective("all_reduce", 1 << 20, Group(16, 4))
    t_across = oracle.collective(across)
    assert oracle.sources[across.key] == "restored"
    # hierarchical: two measured-link phases inside the domain plus the NIC phase on S/4
    nic = cluster.nic_bandwidth_per_gpu * GPU.efficiency.scale_out_bus
    inner = 3 * ALPHA + 0.75 * (1 << 20) / BW
    outer = 6 * GPU.nic_latency + 1.5 * (1 << 18) / nic
    assert t_across == pytest.approx(2 * inner + outer)


def test_gloo_collectives_are_measured_on_two_local_ranks(cpu: DeviceInfo) -> None:
    db = ProfileDB(":memory:")
    rows = measure_collectives(db, cpu, (2,), sizes=(1 << 12, 1 << 16), repeats=3)
    assert {r.op for r in rows} >= {"all_reduce", "all_gather"}
    assert all(r.ranks == 2 and r.seconds > 0 for r in rows)
    assert len(db.collectives(cpu.key, "gloo")) == len(rows)


def test_each_collective_kind_gets_its_own_link() -> None:
    from primus_lang.bench.collectives import fit_links

    rows = [CollectiveRow(r.op, r.ranks, r.bytes, r.seconds * (2.0 if r.op == "all_gather" else 1.0))
            for r in synthetic_rows()]
    fits = fit_links(rows)
    assert fits["all_reduce"].bandwidth == pytest.approx(BW, rel=1e-6)
    assert fits["all_gather"].bandwidth == pytest.approx(BW / 2, rel=1e-6)
    assert fits["all_gather"].alpha == pytest.approx(2 * ALPHA, rel=1e-6)
    assert "reduce_scatter" not in fits  # never measured
    assert "" in fits  # the fit over every point, for kinds without their own
