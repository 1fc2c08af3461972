"""Hypothesis draws the same examples on every run: the tests must be deterministic (a failure
reproduces from the commit alone) and no example database is written into the checkout.

No deadline and no too-slow health check: both judge wall-clock time, which on a busy 2-core CI
machine says nothing about the code and would fail a run at random."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "deterministic", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("deterministic")
