"""Whether a space's legal points fit in memory, and on how many nodes one would: what `check` reports
and what `plan` suggests when nothing fits, from one walk (so the two never disagree)."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from primus_lang.ir.ranges import MAX_WORLD
from primus_lang.ir.space import Space

_CHUNK = 512  # points whose memory is computed at once while looking for one that fits
MORE_NODES = 6  # doublings of the cluster tried when nothing fits (up to 64 times the nodes)


def usable_bytes_of(space: Space) -> int:
    from primus_lang.memory import usable_bytes

    return usable_bytes(space.cluster.gpu.hbm_capacity, space.headroom)


def least_peak(space: Space) -> tuple[int, int, bool]:
    """(legal points, the least per-GPU peak among them, whether one fits). The points most spread
    over GPUs come first, and the walk stops at the first chunk with a fit: a space where most
    points fit costs one chunk, not the account of every point."""
    from primus_lang.check import legal_list
    from primus_lang.memory import prefilter

    points = sorted(legal_list(space), key=lambda c: (-c.tp * c.pp * c.cp * c.ep, c.mbs))
    limit = usable_bytes_of(space)
    least = -1
    for start in range(0, len(points), _CHUNK):
        peaks = prefilter(space.model, space.cluster, points[start:start + _CHUNK], space.settings)
        low = int(peaks.min())
        least = low if least < 0 else min(least, low)
        if low <= limit:
            return len(points), least, True
    return len(points), least, False


def doublings(space: Space) -> Iterator[tuple[int, Space]]:
    """The space on its cluster's node count doubled, up to ``MORE_NODES`` times and the largest world
    primusc takes: (the count, the space on it)."""
    nodes = space.cluster.nodes
    for _ in range(MORE_NODES):
        nodes *= 2
        if nodes * space.cluster.gpus_per_node > MAX_WORLD:
            return
        yield nodes, attrs.evolve(space, cluster=attrs.evolve(space.cluster, nodes=nodes))


def fewest_nodes(space: Space) -> tuple[int, int, int]:
    """Doubling the space's nodes (``doublings``): (the first count on which a legal point fits, 0 when
    none does; its legal points; the last count tried)."""
    tried = space.cluster.nodes
    for nodes, wider in doublings(space):
        tried = nodes
        legal, _, fits = least_peak(wider)
        if fits:
            return nodes, legal, nodes
    return 0, 0, tried
