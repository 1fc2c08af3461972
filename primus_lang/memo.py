"""A bounded memo: the caches a search fills with one entry per distinct shape, emptied whole when full
(a search revisits the same few shapes, so an LRU's bookkeeping buys nothing)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

_V = TypeVar("_V")


def remembered(cache: dict[Hashable, _V], key: Hashable, make: Callable[[], _V], limit: int) -> _V:
    """``cache[key]``, made by ``make()`` when missing; the cache is emptied first when it holds ``limit``."""
    hit = cache.get(key)
    if hit is None:
        if len(cache) > limit:
            cache.clear()
        hit = cache[key] = make()
    return hit
