"""Which legal values of a space its target cannot express, found before any search runs.

``emit`` refuses a candidate its target cannot express (P7001) and ``plan`` then launches the best
recipe it can; ``primusc check`` warns earlier, per axis value. Each value is probed on one legal
point that takes it, so the check costs a bounded walk over the legal points and at most one
``unsupported`` call per axis value, whatever the space's size.
"""

from __future__ import annotations

import attrs
from attrs import frozen

from primus_lang.check import legal_points
from primus_lang.emit.context import EmitContext
from primus_lang.emit.emitter import unsupported
from primus_lang.ir import Candidate, Space
from primus_lang.ir.candidate import format_value
from primus_lang.ir.space import Domain


@frozen
class Inexpressible:
    """A reason the target refuses legal points, and the axis values that bring it (empty: every
    legal point of the space, whatever its axes)."""

    reason: str
    values: tuple[str, ...]


# legal points walked once in space order before pinning axes one value at a time: a walk finds most
# values' first points at ~10 us a point; a pinned enumeration costs a chunk (~20 ms) per value
WALK = 20_000


def _probes(space: Space) -> dict[tuple[int, int], Candidate]:
    """One legal point per (axis, value index) that has a legal point at all."""
    axes = space.axes
    index = [{format_value(v): j for j, v in enumerate(a.domain.values)} for a in axes]
    wanted = sum(len(a.domain.values) for a in axes)
    found: dict[tuple[int, int], Candidate] = {}
    for walked, point in enumerate(legal_points(space)):
        for i, axis in enumerate(axes):
            j = index[i].get(format_value(getattr(point, axis.name)))
            if j is not None:
                found.setdefault((i, j), point)
        if len(found) == wanted or walked >= WALK:
            break
    for i, axis in enumerate(axes):
        for j, value in enumerate(axis.domain.values):
            if (i, j) not in found:
                pinned = attrs.evolve(axis, domain=Domain((value,)))
                probe = next(legal_points(attrs.evolve(space, axes=(*axes[:i], pinned, *axes[i + 1:]))), None)
                if probe is not None:
                    found[(i, j)] = probe
    return found


def inexpressible(space: Space, target: str | None = None) -> list[Inexpressible]:
    """What ``target`` (default: the space's) cannot express of the space's legal points. A reason
    every value of an axis brings is not that axis's doing (the probe point's other knobs are), so it
    is attributed to the values of the axes that do vary it; a value with no legal point is left to
    legality's own report."""
    target = target or space.settings.target
    context = EmitContext()
    probes = _probes(space)
    reasons: dict[Candidate, list[str]] = {}
    by_reason: dict[str, list[str]] = {}
    blamed: set[str] = set()
    for i, axis in enumerate(space.axes):
        seen: dict[str, list[str]] = {}
        points = [probes[(i, j)] for j in range(len(axis.domain.values)) if (i, j) in probes]
        for probe in points:
            if probe not in reasons:
                reasons[probe] = unsupported(space, probe, target, context)
            for why in reasons[probe]:
                seen.setdefault(why, []).append(f"{axis.name} = {format_value(getattr(probe, axis.name))}")
                by_reason.setdefault(why, [])
        for why, labels in seen.items():
            if len(labels) < len(points):
                blamed.add(why)
                by_reason[why] += labels
    return [Inexpressible(why, tuple(labels) if why in blamed else ()) for why, labels in by_reason.items()]
