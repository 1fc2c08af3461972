"""``primusc plan`` on a space with cluster axes or a training-run objective: each cluster searched, the
clusters compared (a table with the front of days against cost), and the cluster the launch files are
for chosen. Kept apart from ``plan.py``, whose one-cluster path it leaves as it was."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import attrs
from rich.console import Console
from rich.table import Table

from primus_lang.commands._options import oracle_kind
from primus_lang.diagnostics import Diagnostic, render
from primus_lang.diagnostics.codes_search import NAMED_CLUSTER_SET_ASIDE
from primus_lang.ir import Gpu, Space, cluster_points, text, units
from primus_lang.ir.candidate import Candidate
from primus_lang.lower import select_cluster
from primus_lang.search import (
    CapacityPlan,
    ClusterPlan,
    Limits,
    Spread,
    available_cpus,
    beyond_kinds,
    days_text,
    figure,
    outside_line,
    plan_capacity,
    run_fails,
    run_of,
    unproven_line,
    whole_iterations,
)


def applies(space: Space) -> bool:
    return bool(space.cluster_axes) or space.capacity.objective is not None


def on_cluster(space: Space, args: argparse.Namespace) -> Space:
    """The space on the cluster ``--cluster`` names; without it, the first its cluster axes span (said on
    stderr: the command's figures are for that cluster)."""
    label = getattr(args, "cluster", None)
    if label:
        return select_cluster(space, label)[1]
    if space.cluster_axes:
        first = cluster_points(space)[0][0]
        print(f"note: space `{space.name}` has cluster axes: this is on the first cluster, {first} "
              "(--cluster names another)", file=sys.stderr)
    return space


def cluster_words(space: Space) -> str:
    """The cluster a command's figures are for, as its output names it: with cluster axes the first one is
    not what `plan` chose, so every figure says which it is."""
    c = space.cluster
    return f"{c.nodes:,} node{'' if c.nodes == 1 else 's'} x {c.gpus_per_node} {c.gpu.name} ({c.world:,} GPUs)"


def plan_clusters(args: argparse.Namespace, space: Space, limits: Limits,
                  oracle_for: Callable[[Space], Any], quiet: bool) -> tuple[CapacityPlan, tuple[str, Space] | None]:
    """The comparison of the clusters, and the one launch files are for with the space on it (None: no
    cluster meets the run's requirements)."""
    err = Console(stderr=True)

    def progress(c: ClusterPlan, done: int, total: int) -> None:
        found = f"{c.recipe} at {c.tokens_per_gpu.value:,.0f} tokens/s/GPU" if c.tokens_per_gpu else c.excluded
        err.print(f"[{done}/{total}] {c.label}: {found}", highlight=False)

    note = network_note(space)
    if note:
        print(f"note: {note}", file=sys.stderr)
    jobs = 1 if oracle_kind(args, space.settings) != "simulate" else args.jobs or available_cpus()
    cap = plan_capacity(space, args.strategy, limits, args.seed, oracle_for, None if quiet else progress, jobs)
    if not args.cluster:
        return cap, (select_cluster(space, cap.chosen) if cap.chosen else None)
    label, sub = select_cluster(space, args.cluster)
    if label != cap.chosen:
        named = cap.cluster(label)
        why = named.excluded if named is not None else ""
        state = why if why.startswith("fails") else f"is set aside: {why}" if why else "is not the objective's choice"
        choice = f"the run's objective chooses {cap.chosen}" if cap.chosen else "no cluster meets the run's requirements"
        said = Diagnostic(NAMED_CLUSTER_SET_ASIDE, f"--cluster {label} {state}; {choice}",
                          help="plan searches and launches the cluster named; drop --cluster for the choice")
        print(render([said], args.error_format), file=sys.stderr)
        cap = attrs.evolve(cap, chosen=label, named=True, best=cap.chosen)
    return cap, (label, sub)


def shape_note(space: Space) -> str:
    """Which GPUs of the cluster axes are planned on nodes of their own shape (``Gpu.node_gpus``), not the
    cluster's ("" when none is)."""
    base = space.cluster_declared or space.cluster
    declared = base.gpus_per_node
    points = [sub.cluster for _label, sub in cluster_points(space)]
    shaped = {c.gpu.name: c.gpus_per_node for c in points if c.gpu.node_gpus and c.gpus_per_node != declared}
    said = [f"`{g}` is planned on nodes of {n} GPUs (its node shape, `node_gpus`), not on the cluster's nodes "
            f"of {declared}" for g, n in shaped.items()]
    if base.gpu.node_gpus:
        # the declared nodes are its GPU's own shape (a GB200 tray): a GPU of no fixed shape takes them as they are
        taken = sorted({c.gpu.name for c in points if not c.gpu.node_gpus and c.gpu.name != base.gpu.name})
        said += [f"`{g}` is planned on the cluster's nodes of {declared} GPUs, the shape of `{base.gpu.name}`'s; "
                 "set `gpus_per_node` where its nodes hold another count" for g in taken]
    return "; ".join(said)


def network_note(space: Space) -> str:
    """What a `gpu` axis over a cluster that states its NICs keeps (a new user's trial: H100 planned on an
    A100 cluster's 200 Gb/s links, said nowhere): every GPU on the cluster's NICs, where a GPU's sheet says
    another; "" when none does or the NICs are an axis too."""
    axes = {a.name for a in space.cluster_axes}
    c = space.cluster
    if "gpu" not in axes or axes & {"nic_bandwidth", "nics_per_node"} or c.nic_bandwidth <= 0:
        return ""  # without a stated NIC bandwidth each GPU's own sheet gives it
    per_gpu = c.nic_bandwidth_per_gpu
    others = [g.name for a in space.cluster_axes if a.name == "gpu" for g in a.values
              if isinstance(g, Gpu) and g.nic_bandwidth != per_gpu]
    if not others:
        return ""
    return (f"every GPU of the `gpu` axis is planned on the cluster's own NICs, {per_gpu * 8 / 1e9:,.0f} Gb/s a GPU, "
            f"where {', '.join(f'`{n}`' for n in others)} {'has another on its sheet' if len(others) == 1 else 'have others on their sheets'}: state the cluster without "
            "`nic` to plan each GPU on its own sheet's, or make the NICs an axis (`nic_bandwidth : ...`)")


def _spread(s: Spread | None, scale: float = 1.0) -> str:
    """``2,609 (1,887–3,345)``: the figure and its band, three significant digits or whole units."""
    if s is None:
        return ""
    return f"{figure(s.value / scale)} ({figure(s.low / scale)}–{figure(s.high / scale)})"


def _days(s: Spread | None) -> str:
    return days_text(s.value, s.low, s.high) if s is not None else ""


def rate(tokens_per_gpu: float, band: tuple[float, float] | None) -> Spread:
    """A point's tokens/s/GPU with its band's ends, which its run's days and cost read (the figure
    alone where no band is given: an oracle timing another GPU, a profile without provenance)."""
    low, high = band if band is not None else (tokens_per_gpu, tokens_per_gpu)
    return Spread(tokens_per_gpu, low, high)


def point_rate(view: Any, runs: bool) -> Spread:
    """A projected point's tokens/s/GPU and band (a ``CandidateView``), which its run's days and cost read;
    a point that does not fit or that ``runs`` says cannot start has no run (its figures say what it would
    cost)."""
    return rate(view.tokens_per_gpu if view.fits and runs else 0.0,
                (view.tokens_low, view.tokens_high) if view.basis else None)


def run_columns(space: Space) -> list[str]:
    """The columns ``project`` adds for a space with ``train_tokens``: the run's days, and its cost where
    the GPU has a price (none without tokens: a rate alone says nothing of a run)."""
    if space.capacity.train_tokens <= 0:
        return []
    return ["days to train"] + (["cost"] if space.cluster.gpu.price_per_hour > 0 else [])


def run_cells(space: Space, tokens: Spread, cand: Candidate) -> list[str]:
    """``run_columns``' cells for a point at ``tokens`` tokens/s/GPU (its band, or the figure alone where
    no band is given)."""
    f = run_of(space, tokens, cand)
    return [_days(f.days), _money(f.cost)][: len(run_columns(space))]


def _money(s: Spread | None) -> str:
    """A cost and its band in three significant digits, as the band can tell them apart:
    ``6.24M (4.76M–7.19M)``."""
    if s is None:
        return ""
    short = [text.count(x) if x >= 1_000 else figure(x) for x in (s.value, s.low, s.high)]
    return f"{short[0]} ({short[1]}–{short[2]})"


def run_json(space: Space, tokens: Spread, cand: Candidate) -> dict[str, Any] | None:
    """A point's whole run as JSON (None without ``train_tokens``): ``days``, ``cost`` and
    ``tokens_per_dollar``, each ``{value, low, high}`` or null."""
    if space.capacity.train_tokens <= 0:
        return None
    from primus_lang.ir.serialize import to_data

    f = run_of(space, tokens, cand)
    # the days and cost are of whole iterations, the last one whole: these many
    return {"train_tokens": space.capacity.train_tokens, "iterations": whole_iterations(space.capacity.train_tokens, cand),
            "days": to_data(f.days), "cost": to_data(f.cost), "tokens_per_dollar": to_data(f.tokens_per_dollar)}


def run_rows(space: Space, tokens: Spread, cand: Candidate) -> list[tuple[str, str]]:
    """``explain``'s rows for a point's whole run, each figure with its band ([] without
    ``train_tokens``)."""
    f = run_of(space, tokens, cand)
    if f.days is None:
        return []
    n = space.capacity.train_tokens
    rows = [(f"days to train {text.count(n)} tokens ({whole_iterations(n, cand):,} iterations)", _days(f.days))]
    if f.cost is not None:
        rows.append((f"cost at {figure(space.cluster.gpu.price_per_hour)} a GPU-hour", _money(f.cost)))
    failed = run_fails(space, f)
    if failed:
        rows.append(("requirements on the run", failed))
    return rows


def requirement_warnings(space: Space, tokens: Spread, cand: Candidate, label: str | None) -> list[Diagnostic]:
    """W8015 where a launch's run (``cand`` at ``tokens`` on the space's cluster, which ``--cluster``
    names as ``label``) fails a ``require`` on the whole run: ``plan`` sets such a cluster aside, and a
    launch of it went unwarned (a new user's trial emitted 64 nodes past `require gpus <= 384`)."""
    failed = run_fails(space, run_of(space, tokens, cand))
    if not failed:
        return []
    named = f"--cluster {label}" if label else f"the cluster ({cluster_words(space)})"
    return [Diagnostic(NAMED_CLUSTER_SET_ASIDE, f"the launch's run on {named} {failed}",
                       help="plan sets aside a cluster that fails a requirement; drop --cluster, or name one that "
                            "meets them, to launch the comparison's choice")]


def print_table(cap: CapacityPlan, launched: str, files: bool = True) -> None:
    console = Console(highlight=False, width=max(Console().width, 160))
    tokens = f", {text.count(cap.train_tokens)} tokens" if cap.train_tokens > 0 else ""
    table = Table(title=f"clusters ({cap.objective}{tokens}; bands: the projection's, 80%)")
    millions = any(c.cost is not None and c.cost.value >= 1e6 for c in cap.clusters)
    per_price = cap.objective.endswith("tokens_per_dollar")
    columns = [("cluster", "left"), ("GPUs", "right"), ("best recipe", "left"), ("tokens/s/GPU", "right"),
               ("days to train", "right"), ("cost (millions)" if millions else "cost", "right")]
    columns += [("tokens per unit of price", "right")] if per_price else []
    priced = any(c.cost is not None for c in cap.clusters)
    columns += [("★", "center")] + ([("☆", "center")] if priced else [])
    for col, just in (*columns, ("note", "left")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for c in cap.clusters:
        tps = f"{c.tokens_per_gpu.value:,.0f}" if c.tokens_per_gpu is not None else ""
        wider = " †" if c.beyond else ""
        note = cap.note(c)
        row = [c.label.replace(",", "\n"), f"{c.gpus:,}", units.label_cell(c.recipe), tps + wider, _days(c.days),
               _spread(c.cost, 1e6 if millions else 1.0)]
        row += [_spread(c.tokens_per_dollar)] if per_price else []
        row += ["★" if c.front else ""] + (["☆" if c.front_gpus else ""] if priced else [])
        # a cluster the requirements exclude stays in the table (its trade-off is worth seeing), dimmed
        table.add_row(*row, note, style="dim" if c.excluded else None)
    console.print(table)
    unpriced = sorted({c.gpu for c in cap.clusters if c.days is not None and c.cost is None}) if priced else []
    console.print("★: no other cluster is both faster and cheaper (or, without prices, faster on fewer GPUs); ☆: none "
                  "is both faster and on fewer GPUs. Each "
                  "cluster's recipe is its own search's best: on one cluster a run's days and cost both fall as its "
                  "tokens/s/GPU rises. The front is drawn over every cluster; those the requirements exclude are dimmed, "
                  "with why in their note."
                  + ("" if cap.train_tokens else " Without tokens to train, faster is more tokens a second over all "
                     "of a cluster's GPUs (tokens/s/GPU times GPUs)."))
    if unpriced:
        # a cost and a GPU count are not compared: the front is on GPUs for all
        console.print(f"★ is on GPUs, as ☆ is: {', '.join(f'`{g}`' for g in unpriced)} has no `price_per_hour`, so its "
                      "clusters have no cost to compare")
    searched = [c for c in cap.clusters if c.evaluations]
    line = unproven_line(len(searched), sum(1 for c in searched if not c.proven))
    if line:
        console.print(line)
    outside = outside_line((c.label, c.days.value, c.days.low, c.days.high) for c in cap.clusters if c.days)
    if outside:
        console.print(outside)
    # one reason of each kind (its numbers aside: `2,048 GPUs beyond ...` and `4,096 GPUs beyond ...` are one)
    kinds = beyond_kinds(r for c in cap.clusters for r in c.beyond)
    if kinds:
        console.print("†: beyond the runs its GPU profile was fitted on, so its band is the wider one of runs no fit "
                      f"saw (`--json`: each cluster's `beyond`), e.g. {'; '.join(kinds)}")
    chosen = cap.cluster(launched)
    if chosen is not None:
        which = "the launch files below are for" if files else "the plan below is for (no launch files: --no-emit)"
        console.print(f"{which} {chosen.label}: {chosen.nodes} node{'s' if chosen.nodes != 1 else ''}, "
                      f"{chosen.gpus:,} {chosen.gpu} GPU{'s' if chosen.gpus != 1 else ''}")
        if cap.unbounded and not cap.named:
            console.print(f"note: {cap.unbounded}")
        if cap.unmeasured and not cap.named:
            console.print(f"note: {cap.unmeasured}")
    else:
        unmet = any(c.excluded.startswith("fails:") for c in cap.clusters)
        why = "meets the run's requirements" if unmet else "has a legal recipe that fits in memory"
        console.print(f"no cluster {why}: no launch files", style="yellow")
