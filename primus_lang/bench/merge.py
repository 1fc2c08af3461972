"""Fold campaign files (profile databases measured elsewhere) into the local one.

Every file is read and judged before anything is written, so a refusal leaves the local database
as it was. A file is refused whole when one of its devices lacks provenance, when the provenance does
not describe the key its rows are stored under, or when a device it measured for a target clashes
with one already recorded for that target (here, or in an earlier file of the same merge): another
device model, runtime major or torch release. Rows already present are kept, so merging a file twice
adds nothing.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from attrs import frozen

from primus_lang.bench.database import MEASUREMENT_TABLES, SCHEMA_VERSION, ProfileDB
from primus_lang.bench.provenance import clash, key_of
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import (
    CAMPAIGN_FILE,
    MERGE_OTHER_DEVICE,
    MERGE_RUNTIME_MISMATCH,
    NO_PROVENANCE,
    PROVENANCE_MISMATCH,
)
from primus_lang.ir.ranges import MAX_WORLD

_ORDER = {"kernels": "device, op, shape, dtype", "collectives": "device, backend, op, ranks, bytes",
          "blocks": "device, key"}
_POSITIVE = {"kernels": ("seconds", "minimum"), "collectives": ("seconds",)}
# counts a row holds, with the range a measurement can have: a collective's ranks are GPUs of one run, its
# bytes at most a petabyte (what the benchmark job sweeps is megabytes to gigabytes)
_COUNTS = {"kernels": (("repeats", 1, 10**9),), "collectives": (("ranks", 1, MAX_WORLD), ("bytes", 1, 2**50))}


@frozen
class Campaign:
    path: str
    rows: dict[str, list[tuple[object, ...]]]
    facts: dict[str, dict[str, str]]  # device key -> provenance
    targets: tuple[tuple[str, str], ...]  # (target, device key)


@frozen
class Merged:
    path: str
    devices: tuple[str, ...]
    added: dict[str, int]  # table -> new rows
    present: dict[str, int]  # table -> rows the database already held


def _refuse(path: str, message: str, note: str = "") -> CompileError:
    return CompileError(Diagnostic(
        CAMPAIGN_FILE, f"`{path}` is not a primusc profile database: {message}",
        help="copy the whole file the benchmark job wrote (`--db` of its steps) once the job has finished",
        notes=(note,) if note else ()))


def read_campaign(path: str | Path) -> Campaign:
    """Read a campaign file without writing to it (opened read-only: it may be the user's only copy)."""
    name = str(path)
    where = Path(path).expanduser()
    if not where.is_file():
        raise _refuse(name, "no such file")
    try:
        conn = sqlite3.connect(where.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise _refuse(name, "it cannot be opened", str(exc)) from exc
    try:
        schema = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if schema is None or schema[0] != SCHEMA_VERSION:
            raise _refuse(name, f"schema version {schema[0] if schema else 'missing'}, this primusc reads "
                          f"{SCHEMA_VERSION}")
        rows: dict[str, list[tuple[object, ...]]] = {}
        for table, columns in MEASUREMENT_TABLES.items():
            rows[table] = [tuple(r) for r in conn.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY {_ORDER[table]}")]
            for column in _POSITIVE.get(table, ()):
                at = columns.index(column)
                bad = next((r for r in rows[table] if not _positive(r[at])), None)
                if bad is not None:
                    raise _refuse(name, f"a {table} row has {column} {bad[at]!r}, not a positive finite time",
                                  f"row {bad[:at]}")
            for column, low, high in _COUNTS.get(table, ()):
                at = columns.index(column)
                bad = next((r for r in rows[table] if not _whole_in(r[at], low, high)), None)
                if bad is not None:
                    raise _refuse(name, f"a {table} row has {column} {bad[at]!r}, not a whole number from {low} to "
                                  f"{high:,}", f"row {bad[:at]}")
        facts: dict[str, dict[str, str]] = {}
        for device, fact, value in conn.execute("SELECT device, fact, value FROM provenance ORDER BY 1, 2"):
            facts.setdefault(str(device), {})[str(fact)] = str(value)
        targets = tuple((str(t), str(d)) for t, d in conn.execute("SELECT target, device FROM targets ORDER BY 1, 2"))
    except sqlite3.Error as exc:
        raise _refuse(name, "its tables cannot be read", str(exc)) from exc
    finally:
        conn.close()
    return Campaign(name, rows, facts, targets)


def _whole_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _check_own(campaign: Campaign) -> None:
    measured = sorted({str(r[0]) for rows in campaign.rows.values() for r in rows}
                      | {d for _, d in campaign.targets})
    for device in measured:
        if device not in campaign.facts:
            raise CompileError(Diagnostic(
                NO_PROVENANCE, f"`{campaign.path}` holds measurements of `{device}` but no provenance for it",
                help="re-run the campaign with a primusc that records provenance (`primusc bench --job ...`)"))
    for device, facts in campaign.facts.items():
        if key_of(facts) != device:
            raise CompileError(Diagnostic(
                PROVENANCE_MISMATCH,
                f"`{campaign.path}`: the provenance of `{device}` describes `{key_of(facts) or 'an incomplete key'}`",
                help="the file was edited or assembled by hand; re-run the campaign"))


def _check_against(campaign: Campaign, known: dict[str, list[tuple[str, str, dict[str, str]]]]) -> None:
    """``known``: target -> (where, device key, facts) already recorded for it."""
    for target, device in campaign.targets:
        theirs = campaign.facts[device]
        for where, other, ours in known.get(target, []):
            if other == device:
                continue
            found = clash(ours, theirs)
            if found is None:
                continue
            code = MERGE_OTHER_DEVICE if found.kind == "device" else MERGE_RUNTIME_MISMATCH
            what = "on another device" if found.kind == "device" else f"under another {found.fact}"
            raise CompileError(Diagnostic(
                code, f"`{campaign.path}` measured target `{target}` {what} than {where}",
                notes=(f"{where}: {found.fact} `{found.ours}` (device `{other}`)",
                       f"`{campaign.path}`: {found.fact} `{found.theirs}` (device `{device}`)"),
                help="merge it into a database of its own (`--db OTHER`), or re-run the campaign to match"))


def merge(db: ProfileDB, paths: list[str]) -> list[Merged]:
    campaigns = [read_campaign(p) for p in paths]
    known: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for target, device in db.targets():
        known.setdefault(target, []).append((f"the database `{db.path}`", device, db.provenance(device)))
    for campaign in campaigns:
        _check_own(campaign)
        _check_against(campaign, known)
        for target, device in campaign.targets:
            known.setdefault(target, []).append((f"`{campaign.path}`", device, campaign.facts[device]))
    merged = []
    for campaign in campaigns:
        added = db.absorb(campaign.rows, campaign.facts, campaign.targets)
        present = {t: len(campaign.rows[t]) - n for t, n in added.items()}
        merged.append(Merged(campaign.path, tuple(sorted(campaign.facts)), added, present))
    return merged
