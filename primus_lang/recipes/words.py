"""A launch command as words with where each value was written (``shell`` reads a script into them).

A word whose value only the running shell knows (``$PWD``, ``$(hostname)``, a script argument that
was not given) keeps the reason in ``unknown``: the reader of the flags decides whether it matters."""

from __future__ import annotations

import shlex

from attrs import field, frozen

from primus_lang.ir.span import Span


@frozen
class Why:
    """Why a value is unknown until the script runs."""

    what: str  # "`PWD`, which the script reads from its environment", "a command substitution `$(pwd)`"
    variable: str = ""  # the variable `--set` would give, when one would
    span: Span | None = field(default=None, eq=False)
    unset: bool = False  # a variable the script reads but never sets: empty, unless the environment has it
    quoted: bool = False  # read inside double quotes: an unset one is one empty word, not none


@frozen
class Word:
    text: str
    span: Span | None = field(default=None, eq=False)
    unknown: tuple[Why, ...] = ()


@frozen
class Launch:
    """The launch command of a script: its words, the environment the script exports to it, what the
    reading assumed (notes), and ``#SBATCH`` directives (option, value)."""

    words: tuple[Word, ...]
    env: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    directives: tuple[tuple[str, str], ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()  # environment variables read at the script's default (name, default)


def quote(word: str) -> str:
    """A word as a shell reads it back."""
    return shlex.quote(word)
