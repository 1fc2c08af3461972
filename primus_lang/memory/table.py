"""``primusc check --explain``: the account as a table a person can audit, and as JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from primus_lang.memory.explain import gib
from primus_lang.memory.result import MemoryAccount, RankAccount, usable_bytes


def _inputs(term_inputs: tuple[tuple[str, int | float], ...]) -> str:
    return ", ".join(f"{n}={v:,}" if isinstance(v, int) else f"{n}={v}" for n, v in term_inputs)


def rank_table(rank: RankAccount) -> Table:
    table = Table(title=f"{rank.name}: {rank.total:,} bytes ({gib(rank.total)})", title_justify="left")
    table.add_column("term")
    table.add_column("formula")
    table.add_column("inputs", overflow="fold")
    table.add_column("bytes", justify="right")
    table.add_column("GiB", justify="right")
    for t in sorted(rank.terms, key=lambda t: -t.bytes):
        table.add_row(t.name, t.formula, _inputs(t.inputs), f"{t.bytes:,}", f"{t.bytes / 2**30:.3f}")
    return table


def render_account(account: MemoryAccount, headroom: float) -> Group:
    """Every stage's terms (fullest first), then the verdict."""
    spare = account.spare(headroom)
    usable = usable_bytes(account.capacity, headroom)
    ranks = sorted(account.ranks, key=lambda r: -r.total)
    if spare >= 0:
        verdict = Text(f"fits: {account.peak.name} uses {account.peak.total:,} of {usable:,} usable bytes, "
                       f"{spare:,} bytes ({gib(spare)}) spare", style="green")
    else:
        verdict = Text(f"does not fit: {account.peak.name} exceeds {usable:,} usable bytes by {-spare:,} bytes "
                       f"({gib(-spare)})", style="bold red")
    notes = [Text(f"note: {n}", style="yellow") for n in account.not_counted]
    return Group(*[rank_table(r) for r in ranks], verdict, *notes)


def account_to_json(account: MemoryAccount, headroom: float) -> dict[str, Any]:
    return {
        "capacity": account.capacity,
        "headroom": headroom,
        "usable": usable_bytes(account.capacity, headroom),
        "fits": account.fits(headroom),
        "not_counted": list(account.not_counted),
        "spare": account.spare(headroom),
        "peak": {"name": account.peak.name, "stage": account.peak.stage, "total": account.peak.total},
        "ranks": [
            {
                "name": r.name,
                "stage": r.stage,
                "total": r.total,
                "terms": [
                    {"name": t.name, "formula": t.formula, "inputs": dict(t.inputs), "bytes": t.bytes}
                    for t in r.terms
                ],
            }
            for r in account.ranks
        ],
    }
