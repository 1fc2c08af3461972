"""Each collective formula against its closed form (REFERENCE.md), and the topology rules."""

from __future__ import annotations

import pytest

from primus_lang.project.collectives import Links, collective_time, group_layout
from primus_lang.project.ops import Collective, Group

from .fixtures import H100, MI325X, cluster

S = 256 * 2**20
LINKS = Links(up_bandwidth=400e9, up_latency=2e-6, out_bandwidth=40e9, out_latency=10e-6, domain=8, mesh=False)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_intra_domain_ring_formulas(n: int) -> None:
    b, a = LINKS.up_bandwidth, LINKS.up_latency
    g = Group(n, n)
    assert collective_time(Collective("all_reduce", S, g), LINKS) == pytest.approx(2 * (n - 1) * a + 2 * (n - 1) / n * S / b)
    for kind in ("all_gather", "reduce_scatter", "all_to_all"):
        assert collective_time(Collective(kind, S, g), LINKS) == pytest.approx((n - 1) * a + (n - 1) / n * S / b)


def test_p2p_inside_and_across() -> None:
    assert collective_time(Collective("p2p", S, Group(2, 2)), LINKS) == pytest.approx(2e-6 + S / 400e9)
    assert collective_time(Collective("p2p", S, Group(2, 1)), LINKS) == pytest.approx(10e-6 + S / 40e9)


def test_hierarchical_all_reduce() -> None:
    # 4 domains of 8: reduce-scatter in the domain, all-reduce S/8 over 4 NICs, all-gather back
    g, m = 8, 4
    intra = (g - 1) * 2e-6 + (g - 1) / g * S / 400e9
    inter = 2 * (m - 1) * 10e-6 + 2 * (m - 1) / m * (S / g) / 40e9
    assert collective_time(Collective("all_reduce", S, Group(32, 8)), LINKS) == pytest.approx(2 * intra + inter)


def test_hierarchical_gather_and_one_rank_per_node() -> None:
    g, m = 8, 4
    expected = (g - 1) * 2e-6 + (g - 1) / g * S / 400e9 + (m - 1) * 10e-6 + (m - 1) / m * (S / g) / 40e9
    assert collective_time(Collective("all_gather", S, Group(32, 8)), LINKS) == pytest.approx(expected)
    # one rank per domain: a flat ring over the NICs
    flat = 3 * 10e-6 + 3 / 4 * S / 40e9
    assert collective_time(Collective("reduce_scatter", S, Group(4, 1)), LINKS) == pytest.approx(flat)


def test_all_to_all_across_nodes_is_bound_by_the_nic_share() -> None:
    n, g = 16, 8
    expected = (g - 1) * 2e-6 + (n - g) * 10e-6 + max((g - 1) / n * S / 400e9, (n - g) / n * S / 40e9)
    assert collective_time(Collective("all_to_all", S, Group(n, g)), LINKS) == pytest.approx(expected)


def test_mesh_gives_a_small_group_only_its_links() -> None:
    mesh = Links.of(cluster(MI325X))
    switch = Links.of(cluster(H100))
    assert mesh.up_for(2) == pytest.approx(mesh.up_bandwidth / 7)
    assert mesh.up_for(8) == pytest.approx(mesh.up_bandwidth)
    assert switch.up_for(2) == pytest.approx(switch.up_bandwidth)


def test_group_layout_follows_rank_order() -> None:
    assert group_layout(8, 1, 8) == Group(8, 8)  # TP 8 fills a node
    assert group_layout(4, 2, 8) == Group(4, 4)  # CP 4 over TP 2 stays in the node
    assert group_layout(8, 2, 8) == Group(8, 4)  # DP 8 over TP 2 spans two nodes
    assert group_layout(2, 32, 8) == Group(2, 1)  # PP neighbours on different nodes
    assert group_layout(16, 1, 72) == Group(16, 16)  # an NVL72 domain holds the group


def test_more_bandwidth_never_slows_a_collective() -> None:
    faster = Links(800e9, 2e-6, 80e9, 10e-6, 8, False)
    for kind in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"):
        for group in (Group(8, 8), Group(32, 8), Group(2, 1)):
            op = Collective(kind, S, group)
            assert collective_time(op, faster) <= collective_time(op, LINKS)
