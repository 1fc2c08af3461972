"""The profile database: one SQLite file of measurements, keyed by who measured them and what.

Every row carries the device key (device name, runtime, driver and torch versions), so one file can
serve several machines and a driver upgrade never silently reuses stale numbers. Rows are shared by
every space and model whose operators have the same (op, shape, dtype).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from attrs import frozen

from primus_lang.bench.kernels import KernelSpec
from primus_lang.datafiles import DataCodes, loads_json
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import PROFILE_DB

SCHEMA_VERSION = "1"
DB_CODES = DataCodes(PROFILE_DB, PROFILE_DB, PROFILE_DB, PROFILE_DB, PROFILE_DB, PROFILE_DB)
DEFAULT_DB = Path("~/.cache/primusc/profile.sqlite")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kernels (
    device TEXT NOT NULL, op TEXT NOT NULL, shape TEXT NOT NULL, dtype TEXT NOT NULL,
    seconds REAL NOT NULL, minimum REAL NOT NULL, repeats INTEGER NOT NULL, measured_at REAL NOT NULL,
    PRIMARY KEY (device, op, shape, dtype));
CREATE TABLE IF NOT EXISTS collectives (
    device TEXT NOT NULL, backend TEXT NOT NULL, op TEXT NOT NULL, ranks INTEGER NOT NULL,
    bytes INTEGER NOT NULL, seconds REAL NOT NULL, measured_at REAL NOT NULL,
    PRIMARY KEY (device, backend, op, ranks, bytes));
CREATE TABLE IF NOT EXISTS blocks (
    device TEXT NOT NULL, key TEXT NOT NULL, timings TEXT NOT NULL, measured_at REAL NOT NULL,
    PRIMARY KEY (device, key));
CREATE TABLE IF NOT EXISTS provenance (
    device TEXT NOT NULL, fact TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (device, fact));
CREATE TABLE IF NOT EXISTS targets (target TEXT NOT NULL, device TEXT NOT NULL, PRIMARY KEY (target, device));
"""
# the tables a merge copies, with their columns in order (the primary keys decide what is new)
MEASUREMENT_TABLES: dict[str, tuple[str, ...]] = {
    "kernels": ("device", "op", "shape", "dtype", "seconds", "minimum", "repeats", "measured_at"),
    "collectives": ("device", "backend", "op", "ranks", "bytes", "seconds", "measured_at"),
    "blocks": ("device", "key", "timings", "measured_at"),
}


@frozen
class KernelRow:
    spec: KernelSpec
    seconds: float
    minimum: float
    repeats: int


@frozen
class CollectiveRow:
    op: str
    ranks: int
    bytes: int
    seconds: float


class ProfileDB:
    """A thin, typed wrapper over the SQLite file (``:memory:`` for tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path) if str(path) == ":memory:" else str(Path(path).expanduser())
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path)
            self._conn.executescript(_SCHEMA)
            found = self._conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if found is None:
                self._conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                self._conn.commit()
            elif found[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"schema version {found[0]}, this primusc reads {SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as exc:
            raise CompileError(
                Diagnostic(PROFILE_DB, f"cannot use `{self.path}` as a profile database", notes=(str(exc),))
            ) from exc

    def close(self) -> None:
        self._conn.close()

    # kernels -------------------------------------------------------------------------------------
    def kernel(self, device: str, spec: KernelSpec) -> KernelRow | None:
        row = self._conn.execute(
            "SELECT seconds, minimum, repeats FROM kernels WHERE device=? AND op=? AND shape=? AND dtype=?",
            (device, spec.op, spec.shape_text, spec.dtype),
        ).fetchone()
        return None if row is None else KernelRow(spec, row[0], row[1], row[2])

    def put_kernel(self, device: str, row: KernelRow) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO kernels VALUES (?,?,?,?,?,?,?,?)",
            (device, row.spec.op, row.spec.shape_text, row.spec.dtype, row.seconds, row.minimum, row.repeats,
             time.time()),
        )
        self._conn.commit()

    def kernels(self, device: str, op: str, dtype: str) -> Iterator[KernelRow]:
        """Every measured shape of one operator and dtype: the neighbours interpolation draws on."""
        for shape, seconds, minimum, repeats in self._conn.execute(
            "SELECT shape, seconds, minimum, repeats FROM kernels WHERE device=? AND op=? AND dtype=?",
            (device, op, dtype),
        ):
            dims = tuple(int(d) for d in shape.split("x"))
            yield KernelRow(KernelSpec(op, dims, dtype), seconds, minimum, repeats)

    def count_kernels(self, device: str | None = None) -> int:
        if device is None:
            return int(self._conn.execute("SELECT COUNT(*) FROM kernels").fetchone()[0])
        return int(self._conn.execute("SELECT COUNT(*) FROM kernels WHERE device=?", (device,)).fetchone()[0])

    # collectives ---------------------------------------------------------------------------------
    def put_collectives(self, device: str, backend: str, rows: Iterable[CollectiveRow]) -> None:
        now = time.time()
        self._conn.executemany(
            "INSERT OR REPLACE INTO collectives VALUES (?,?,?,?,?,?,?)",
            [(device, backend, r.op, r.ranks, r.bytes, r.seconds, now) for r in rows],
        )
        self._conn.commit()

    def collectives(self, device: str, backend: str) -> list[CollectiveRow]:
        return [
            CollectiveRow(op, ranks, size, seconds)
            for op, ranks, size, seconds in self._conn.execute(
                "SELECT op, ranks, bytes, seconds FROM collectives WHERE device=? AND backend=? "
                "ORDER BY op, ranks, bytes",
                (device, backend),
            )
        ]

    # measured blocks (a reduced model's layer, its embedding and head) ----------------------------
    def block(self, device: str, key: str) -> dict[str, float] | None:
        row = self._conn.execute("SELECT timings FROM blocks WHERE device=? AND key=?", (device, key)).fetchone()
        if row is None:
            return None
        # the file may come from elsewhere (`bench --merge`, a copy): its JSON is held to the data
        # files' limits, and anything but timings is a database primusc did not write
        data = loads_json(str(row[0]), self.path, DB_CODES, "a profile database")
        if not isinstance(data, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()
        ):
            raise CompileError(Diagnostic(PROFILE_DB, f"`{self.path}` holds timings that are not numbers "
                                                      f"(block `{key[:80]}`)",
                                          help="measure into a fresh --db, or delete this one"))
        return {str(k): float(v) for k, v in data.items()}

    def count_blocks(self, device: str) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM blocks WHERE device=?", (device,)).fetchone()[0])

    def put_block(self, device: str, key: str, timings: dict[str, float]) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO blocks VALUES (?,?,?,?)", (device, key, json.dumps(timings, sort_keys=True),
                                                             time.time())
        )
        self._conn.commit()

    # provenance: who measured, under which software, and for which target GPU --------------------
    def put_provenance(self, device: str, facts: dict[str, str]) -> None:
        """The facts of ``device`` as measured here now (a re-run on newer software restates them)."""
        self._conn.executemany("INSERT OR REPLACE INTO provenance VALUES (?,?,?)",
                               [(device, k, v) for k, v in sorted(facts.items())])
        self._conn.commit()

    def provenance(self, device: str) -> dict[str, str]:
        rows = self._conn.execute("SELECT fact, value FROM provenance WHERE device=? ORDER BY fact", (device,))
        return {str(k): str(v) for k, v in rows}

    def add_target(self, target: str, device: str) -> None:
        self._conn.execute("INSERT OR IGNORE INTO targets VALUES (?,?)", (target, device))
        self._conn.commit()

    def targets(self) -> list[tuple[str, str]]:
        """(target, device key) pairs: the names a measured device is reached by."""
        return [(str(t), str(d)) for t, d in self._conn.execute("SELECT target, device FROM targets ORDER BY 1, 2")]

    def devices(self) -> list[str]:
        """Every device key that has measurements or provenance here."""
        found = self._conn.execute(
            "SELECT device FROM kernels UNION SELECT device FROM collectives UNION SELECT device FROM blocks "
            "UNION SELECT device FROM provenance ORDER BY 1")
        return [str(d) for (d,) in found]

    def absorb(self, rows: dict[str, list[tuple[object, ...]]], facts: dict[str, dict[str, str]],
               targets: Iterable[tuple[str, str]]) -> dict[str, int]:
        """Add the measured rows another database holds (table -> rows in ``MEASUREMENT_TABLES``
        order), keeping every row already here (its primary key decides), with their devices'
        provenance and target names, all in one transaction; returns how many rows of each table
        were new. Merging the same rows again adds none."""
        added: dict[str, int] = {}
        with self._conn:
            for table, columns in MEASUREMENT_TABLES.items():
                before = self._conn.total_changes
                self._conn.executemany(
                    f"INSERT OR IGNORE INTO {table} VALUES ({','.join('?' * len(columns))})", rows.get(table, []))
                added[table] = self._conn.total_changes - before
            for device, known in facts.items():
                self._conn.executemany("INSERT OR IGNORE INTO provenance VALUES (?,?,?)",
                                       [(device, k, v) for k, v in sorted(known.items())])
            self._conn.executemany("INSERT OR IGNORE INTO targets VALUES (?,?)", list(targets))
        return added
