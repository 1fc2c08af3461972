"""Every registered diagnostic code is produced by the test suite: seen made, not only named.

While the whole of tests/ runs unfiltered, ``start`` points ``PRIMUSC_RECORD_CODES`` at a fresh folder
before any xdist worker starts (pytest_configure of the controller, or of the one process of a serial
run). Every process under it inherits it, the workers and the ``primusc`` subprocesses tests start,
and appends the id of each code it makes a ``Diagnostic`` or a legality ``Violation`` with to a file
of its own there (``record_code`` in primus_lang/diagnostics/core.py). At the session's end ``finish``
reads the folder: a registered code that no process produced, and that ``NOT_YET_PRODUCED`` does not
list with a reason, fails the run. A run without an optional package is not asked for the codes only
the tests that need it produce (``NEEDS``).

A filtered run (paths, ``-k``, ``-m``, ``--deselect``, ``--lf``, ...) or one that stopped early checks
nothing. To see what a part of the suite produces, set ``PRIMUSC_RECORD_CODES`` to a folder yourself:
the run then records into it and checks nothing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from primus_lang.diagnostics import all_codes
from primus_lang.diagnostics.core import RECORD_CODES

TESTS = Path(__file__).resolve().parent

# Codes no test produces yet, each with the reason (none today: keep it so). A new code comes with a
# test that produces it; a code leaves this list once one does.
NOT_YET_PRODUCED: dict[str, str] = {}

# Codes only tests that need an optional package produce, by package: a run where it is missing skips
# those tests and is not asked for their codes. tests/bench needs torch whole (tests/bench/conftest.py),
# its log, merge and job tests too; measured on the whole suite with and without those tests.
NEEDS: dict[str, frozenset[str]] = {
    "torch": frozenset({"P6013", "P6801", "P6802", "P6805", "P6807", "P6808", "P6809", "P6810", "P6811",
                        "P6812", "P6813", "P6814", "P6815", "P6816"}),
}

_FOLDER = pytest.StashKey[Path]()
_MISSING = pytest.StashKey[list[str]]()


def _whole_suite(config: pytest.Config) -> bool:
    opt = config.option
    if getattr(opt, "keyword", "") or getattr(opt, "markexpr", "") or getattr(opt, "deselect", None):
        return False
    if any(getattr(opt, name, None) for name in ("lf", "failedfirst", "stepwise", "collectonly", "ignore",
                                                 "ignore_glob")):
        return False
    base = config.rootpath if config.args_source is pytest.Config.ArgsSource.TESTPATHS else config.invocation_params.dir
    return bool(config.args) and all((base / arg).resolve() == TESTS for arg in config.args)


def start(config: pytest.Config) -> None:
    """In the controller of a whole-suite run (before the workers start): record into a fresh folder."""
    if hasattr(config, "workerinput") or os.environ.get(RECORD_CODES) or not _whole_suite(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="primusc-codes-"))
    os.environ[RECORD_CODES] = str(folder)
    config.stash[_FOLDER] = folder


def produced(folder: Path) -> set[str]:
    """The codes the processes recording into ``folder`` made."""
    return {line.strip() for path in folder.glob("codes-*.txt") for line in path.read_text().splitlines() if line.strip()}


def finish(session: pytest.Session) -> None:
    """At the end of a whole-suite run that ran to its end: fail it if a code was never produced."""
    folder = session.config.stash.get(_FOLDER, None)
    if folder is None:
        return
    os.environ.pop(RECORD_CODES, None)
    try:
        ran = session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and session.testscollected
        if not ran or session.shouldstop or session.shouldfail:
            return
        registered = {c.id for c in all_codes()}
        excused = {code for package, codes in NEEDS.items() if importlib.util.find_spec(package) is None
                   for code in codes}
        missing = sorted(registered - produced(folder) - set(NOT_YET_PRODUCED) - excused)
        stale = sorted(set(NOT_YET_PRODUCED) - registered)
        if missing or stale:
            session.config.stash[_MISSING] = ([f"never produced by any test: {', '.join(missing)}"] if missing else []) \
                + ([f"NOT_YET_PRODUCED lists codes no longer registered: {', '.join(stale)}"] if stale else [])
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = terminalreporter.config.stash.get(_MISSING, None)
    if lines:
        terminalreporter.section("diagnostic codes (tests/codes_seen.py)", red=True)
        for line in lines:
            terminalreporter.line(line, red=True)
        terminalreporter.line("a new code needs a test that produces it (tests/test_codes_produced.py has small "
                              "producers), or an entry in NOT_YET_PRODUCED with the reason")
