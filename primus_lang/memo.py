"""Memos: a bounded one for the caches a search fills with one entry per distinct shape, emptied whole
when full (a search revisits the same few shapes, so an LRU's bookkeeping buys nothing), and one that
reads a column of knob values once per distinct value."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

_V = TypeVar("_V")
_T = TypeVar("_T")


def remembered(cache: dict[Hashable, _V], key: Hashable, make: Callable[[], _V], limit: int) -> _V:
    """``cache[key]``, made by ``make()`` when missing; the cache is emptied first when it holds ``limit``."""
    hit = cache.get(key)
    if hit is None:
        if len(cache) > limit:
            cache.clear()
        hit = cache[key] = make()
    return hit


def by_distinct(values: list[_T], fn: Callable[[_T], _V]) -> list[_V]:
    """``[fn(v) for v in values]``, calling ``fn`` once per distinct value: a search's points hold a few
    distinct values per knob. Where the values are all of one type, equal values are one key (no
    ``True == 1`` to tell apart) and the points read a plain dict."""
    if len(set(map(type, values))) > 1:
        return [fn(v) for v in values]
    memo = {v: fn(v) for v in dict.fromkeys(values)}
    return list(map(memo.__getitem__, values))
