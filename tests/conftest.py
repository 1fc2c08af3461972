"""Hypothesis draws the same examples on every run: the tests must be deterministic (a failure
reproduces from the commit alone) and no example database is written into the checkout.

No deadline and no too-slow health check: both judge wall-clock time, which on a busy 2-core CI
machine says nothing about the code and would fail a run at random.

A whole-suite run also checks that every registered diagnostic code was produced (tests/codes_seen.py).
Tests marked ``refit`` (the whole calibrate refit, minutes) are left out unless ``-m`` names the
marker: ``python -m pytest -q -m refit`` runs them (CI does, once, after the README's command).

Under xdist (``-n 2``) each worker takes whole modules (``loadscope``), the modules with a ``slow`` test
first, so a run ends on short modules instead of one worker waiting for another's long one. A module's
fixtures are set up once: with tests dealt or stolen one by one, both workers built the megatron-core
ground truth and started the same module's Slurm daemons (237 s against 262 s for the suite on two
cores). Only the order changes: every test runs, and none depends on another's having run."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests import codes_seen

settings.register_profile(
    "deterministic", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("deterministic")


def pytest_configure(config: pytest.Config) -> None:
    codes_seen.start(config)
    # `-n N` alone schedules with xdist's `load`, which splits a module over workers; an explicit
    # `--dist` is kept
    if getattr(config.option, "dist", "no") == "load" and not any(
            arg.startswith("--dist") or arg.startswith("-d") for arg in config.invocation_params.args):
        config.option.dist = "loadscope"
        # xdist would deal the modules with the most tests first; ours come slow modules first
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "refit" not in (config.option.markexpr or ""):
        left = [item for item in items if item.get_closest_marker("refit")]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if not item.get_closest_marker("refit")]
    # whole modules keep their order (a module's fixtures are set up once); every worker sorts alike
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


def pytest_sessionfinish(session: pytest.Session) -> None:
    codes_seen.finish(session)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    codes_seen.summary(terminalreporter)
