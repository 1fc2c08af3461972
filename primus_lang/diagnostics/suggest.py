"""Did-you-mean suggestions, bounded: one unknown name is compared with a few dozen names at most,
however many a file defines, so a file of thousands of unknown names costs thousands of small
searches, not thousands of scans of every name (``difflib`` compares each pair character by character).
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable

SCAN = 256  # a list this short is searched whole: every suggestion it gave before stays
_NEAR = 16  # otherwise: this many neighbours each side, in order by spelling and by spelling backwards
_CUTOFF = 0.6  # difflib's default


class NameIndex:
    """The names of a scope in order by spelling and by spelling backwards. A typo keeps either the
    start or the end of a name, so the name meant sorts next to it one way or the other: the names
    searched are its neighbours in both orders, found by bisection."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(set(names))
        backwards = sorted((n[::-1], n) for n in self.names) if len(self.names) > SCAN else []
        self._keys = [k for k, _ in backwards]
        self._backwards = [n for _, n in backwards]

    def closest(self, word: str, cutoff: float = _CUTOFF) -> str | None:
        pool = self.names
        if len(pool) > SCAN:
            i = bisect.bisect(self.names, word)
            j = bisect.bisect(self._keys, word[::-1])
            pool = sorted({*self.names[max(0, i - _NEAR):i + _NEAR], *self._backwards[max(0, j - _NEAR):j + _NEAR]})
        found = difflib.get_close_matches(word, pool, n=1, cutoff=cutoff)
        return found[0] if found else None


# words a spelled-out parallelism name carries that its short name leaves out (`tensor_model_parallel_size`)
_FILLER = ("model", "size", "degree")
# words that say a name is a count (`num_gpus` is `gpus`)
_COUNTING = ("num", "n", "number", "of", "total")
# what another tool's word is called here, where the scope has no name of that spelling
_SYNONYMS = {"gpus": "world"}
_PARALLELISMS = ("tensor", "pipeline", "context", "expert", "data")


def spelled_out(word: str, names: Iterable[str]) -> str | None:
    """The short name of ``names`` that ``word`` spells out: `tensor_parallel` and Megatron's
    `tensor_model_parallel_size` are `tp`, `pipeline` is `pp`, `micro_batch_size` and `micro_batch` are `mbs`, `num_gpus`
    is `gpus` (or `world`), `dp_size` is `dp`. Spelling
    distance finds none of these (`tensor_parallel` is nearest `sequence_parallel`)."""
    parts = [p for p in word.lower().replace("-", "_").split("_") if p]
    if len(parts) == 1 and parts[0] in _PARALLELISMS:  # `pipeline`: the parallelism it names
        parts.append("parallel")
    known = set(names)
    for drop in ((), _FILLER[1:], _FILLER, _FILLER + _COUNTING):
        kept = [p for p in parts if p not in drop]
        # a size the word leaves unsaid: `micro_batch` is `mbs`
        for short in ("".join(p[0] for p in kept), "_".join(kept), "".join(p[0] for p in kept) + "s"):
            short = short if short in known else _SYNONYMS.get(short, short)
            if short in known and short != word:
                return short
    return None


def near_name(word: str, names: Iterable[str], cutoff: float = _CUTOFF) -> str | None:
    """The name meant by ``word``: the one it spells out, else the nearest by spelling."""
    listed = list(names)
    return spelled_out(word, listed) or closest(word, listed, cutoff)


def closest(word: str, names: Iterable[str], cutoff: float = _CUTOFF) -> str | None:
    """The name of ``names`` nearest ``word``, or None; for a one-off search (a scope searched for many
    words keeps its ``NameIndex``)."""
    return NameIndex(names).closest(word, cutoff)
