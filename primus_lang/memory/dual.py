"""Arithmetic that runs unchanged on Python integers (the exact account) and on numpy int64 arrays
(the pre-filter), so both give the same bytes by construction.

Only integer operations appear in memory formulas: ``+ - * //`` and the helpers below.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# An integer or a numpy int64/bool array of candidates.
Num = Any


def where(cond: Num, a: Num, b: Num) -> Num:
    if isinstance(cond, bool | np.bool_):
        return a if cond else b
    return np.where(cond, a, b)


def maximum(a: Num, b: Num) -> Num:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return np.maximum(a, b)


def minimum(a: Num, b: Num) -> Num:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return np.minimum(a, b)


def cdiv(a: Num, b: Num) -> Num:
    """Ceiling division of non-negative integers."""
    return -(-a // b)


def round_up(a: Num, multiple: Num) -> Num:
    return cdiv(a, multiple) * multiple


def logical_and(a: Num, b: Num) -> Num:
    if isinstance(a, bool | np.bool_) and isinstance(b, bool | np.bool_):
        return bool(a and b)
    return np.logical_and(a, b)


def logical_not(a: Num) -> Num:
    if isinstance(a, bool | np.bool_):
        return not a
    return np.logical_not(a)
