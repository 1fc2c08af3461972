"""Hierarchical alpha-beta cost of collectives over a cluster's two link classes.

A group of ``n`` ranks with ``g`` of them per scale-up domain (NVLink/NVSwitch, xGMI) spans
``m = n / g`` domains. Ring costs (REFERENCE.md): all-reduce ``2(n-1)a + 2(n-1)/n S/B``;
reduce-scatter, all-gather and all-to-all ``(n-1)a + (n-1)/n S/B``; p2p ``a + S/B``.
Across domains the collective is hierarchical: reduce-scatter inside the domain, the cross-domain
phase on ``S/g`` over the NICs (every GPU drives its own NIC share), all-gather inside again.
On a full mesh (xGMI) a group that uses ``g`` of the ``D`` GPUs of a node reaches only ``g-1`` of
its ``D-1`` links, so its bandwidth is ``B (g-1)/(D-1)``; a switch gives every group the full ``B``.
"""

from __future__ import annotations

from attrs import frozen

from primus_lang.ir import Cluster
from primus_lang.project.ops import Collective, Group


@frozen
class Links:
    """The two link classes a collective can use, with bus efficiency already applied."""

    up_bandwidth: float  # bytes/s per GPU, one direction, inside the scale-up domain
    up_latency: float
    out_bandwidth: float  # bytes/s per GPU across NICs
    out_latency: float
    domain: int
    mesh: bool

    @staticmethod
    def of(cluster: Cluster, up_bus: float | None = None, out_bus: float | None = None) -> Links:
        gpu = cluster.gpu
        eff = gpu.efficiency
        return Links(
            up_bandwidth=gpu.scale_up_bandwidth * (eff.scale_up_bus if up_bus is None else up_bus),
            up_latency=gpu.scale_up_latency,
            out_bandwidth=cluster.nic_bandwidth_per_gpu * (eff.scale_out_bus if out_bus is None else out_bus),
            out_latency=gpu.nic_latency,
            domain=cluster.domain,
            mesh=gpu.scale_up_topology == "mesh",
        )

    def up_for(self, members: int) -> float:
        """Bandwidth a group with ``members`` ranks in one domain gets on the scale-up fabric."""
        if self.mesh and self.domain > 1:
            return self.up_bandwidth * max(1, members - 1) / (self.domain - 1)
        return self.up_bandwidth


def group_layout(size: int, stride: int, domain: int) -> Group:
    """The group of ``size`` ranks spaced ``stride`` apart (Megatron orders TP innermost, then CP,
    then DP, then PP); ``domain`` consecutive ranks share a scale-up fabric."""
    if size <= 1:
        return Group(1, 1)
    if stride >= domain:
        return Group(size, 1)
    per = min(size, max(1, domain // stride))
    while size % per:
        per -= 1
    return Group(size, per)


def _ring(n: int, nbytes: float, bandwidth: float, latency: float, all_reduce: bool) -> float:
    if n <= 1 or nbytes <= 0:
        return 0.0
    steps = 2 * (n - 1) if all_reduce else n - 1
    return steps * latency + (steps / n) * nbytes / bandwidth


def collective_time(op: Collective, links: Links) -> float:
    """Seconds one rank spends in ``op`` (all ranks of the group finish together)."""
    n, g, m = op.group.size, op.group.per_domain, op.group.domains
    s = float(op.bytes)
    if s <= 0 or n <= 1:
        return 0.0
    up = links.up_for(g)
    if op.kind == "p2p":
        if g > 1:
            # one peer: a mesh reaches it over a single link
            bw = links.up_bandwidth / (links.domain - 1) if links.mesh and links.domain > 1 else links.up_bandwidth
            return links.up_latency + s / bw
        return links.out_latency + s / links.out_bandwidth
    if op.kind == "all_to_all":
        inside = (g - 1) / n * s / up if g > 1 else 0.0
        remote = op.remote_bytes if op.remote_bytes >= 0 else (n - g) / n * s
        outside = remote / links.out_bandwidth
        return (g - 1) * links.up_latency + (n - g) * links.out_latency + max(inside, outside)
    if op.kind == "all_reduce":
        if m == 1:
            return _ring(n, s, up, links.up_latency, all_reduce=True)
        return (
            2 * _ring(g, s, up, links.up_latency, all_reduce=False)
            + _ring(m, s / g, links.out_bandwidth, links.out_latency, all_reduce=True)
        )
    if op.kind in ("all_gather", "reduce_scatter"):
        if m == 1:
            return _ring(n, s, up, links.up_latency, all_reduce=False)
        return _ring(g, s, up, links.up_latency, all_reduce=False) + _ring(
            m, s / g, links.out_bandwidth, links.out_latency, all_reduce=False
        )
    raise ValueError(f"unknown collective {op.kind!r}")
