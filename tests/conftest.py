"""Hypothesis draws the same examples on every run: the tests must be deterministic (a failure
reproduces from the commit alone) and no example database is written into the checkout."""

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")
