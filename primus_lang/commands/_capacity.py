"""``primusc plan`` on a space with cluster axes or a training-run objective: each cluster searched, the
clusters compared (a table with the front of days against cost), and the cluster the launch files are
for chosen. Kept apart from ``plan.py``, whose one-cluster path it leaves as it was."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.ir import Space, cluster_points
from primus_lang.search import CapacityPlan, Limits, Spread, plan_capacity


def applies(space: Space) -> bool:
    return bool(space.cluster_axes) or space.capacity.objective is not None


def _parts(label: str) -> tuple[str, ...]:
    return tuple(sorted(part.strip() for part in label.split(",")))


def on_cluster(space: Space, args: argparse.Namespace) -> Space:
    """The space on the cluster ``--cluster`` names; unchanged without it."""
    label = getattr(args, "cluster", None)
    return select(space, label)[1] if label else space


def select(space: Space, label: str) -> tuple[str, Space]:
    """The cluster ``label`` names (``gpu=...,nodes=...``, in any order) as the table names it, and the
    space on it."""
    points = dict(cluster_points(space))
    for known, sub in points.items():
        if _parts(known) == _parts(label):
            return known, sub
    raise CompileError(Diagnostic(N.UNKNOWN_NAME, f"`{label}` is not a cluster of space `{space.name}`",
                                  help="one of: " + "; ".join(list(points)[:8])
                                  + (f" (and {len(points) - 8} more)" if len(points) > 8 else "")))


def plan_clusters(args: argparse.Namespace, space: Space, limits: Limits,
                  oracle_for: Callable[[Space], Any], quiet: bool) -> tuple[CapacityPlan, tuple[str, Space] | None]:
    """The comparison of the clusters, and the one launch files are for with the space on it (None: no
    cluster meets the run's requirements)."""
    err = Console(stderr=True)
    progress = None if quiet else (lambda label: err.print(f"searching the recipes on {label}"))
    cap = plan_capacity(space, args.strategy, limits, args.seed, oracle_for, progress)
    label = args.cluster or cap.chosen
    return cap, (select(space, label) if label else None)


def _spread(s: Spread | None, scale: float = 1.0, suffix: str = "") -> str:
    """``2,609 (1,887–3,345)``: the figure and its band, three significant digits or whole units."""
    if s is None:
        return ""
    def fmt(x: float) -> str:
        x /= scale
        return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"
    return f"{fmt(s.value)}{suffix} ({fmt(s.low)}–{fmt(s.high)})"


def print_table(cap: CapacityPlan, launched: str) -> None:
    console = Console(highlight=False, width=max(Console().width, 160))
    tokens = f", {cap.train_tokens:.3g} tokens" if cap.train_tokens > 0 else ""
    table = Table(title=f"clusters ({cap.objective}{tokens}; band: the profile's, 80%)")
    millions = any(c.cost is not None and c.cost.value >= 1e6 for c in cap.clusters)
    for col, just in (("cluster", "left"), ("GPUs", "right"), ("best recipe", "left"), ("tokens/s/GPU", "right"),
                      ("days to train", "right"), ("cost (millions)" if millions else "cost", "right"),
                      ("front", "center"), ("", "left")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for c in cap.clusters:
        tps = f"{c.tokens_per_gpu.value:,.0f}" if c.tokens_per_gpu is not None else ""
        mark = "chosen" if c.label == cap.chosen else ""
        wider = "wider band: beyond the runs its profile was fitted on" if c.beyond else ""
        note = "; ".join(x for x in (mark, c.excluded, wider) if x)
        table.add_row(c.label.replace(",", ", "), f"{c.gpus:,}", c.recipe, tps, _spread(c.days),
                      _spread(c.cost, 1e6 if millions else 1.0), "★" if c.front else "", note)
    console.print(table)
    console.print("★: no other cluster is both faster and cheaper (or, without prices, faster on fewer GPUs). Each "
                  "cluster's recipe is its own search's best: on one cluster a run's days and cost both fall as its "
                  "tokens/s/GPU rises.")
    chosen = cap.cluster(launched)
    if chosen is not None:
        console.print(f"the launch files below are for {chosen.label}: {chosen.nodes} nodes, {chosen.gpus:,} "
                      f"{chosen.gpu} GPUs")
    else:
        console.print("no cluster meets the run's requirements: no launch files", style="yellow")
