"""A launch command as words with where each value was written (``shell`` reads a script into them).

A word whose value only the running shell knows (``$PWD``, ``$(hostname)``, a script argument that
was not given) keeps the reason in ``unknown``: the reader of the flags decides whether it matters."""

from __future__ import annotations

import re
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
    submitted: tuple[tuple[str, str], ...] = ()  # of the directives, those sbatch's own options give
    defaults: tuple[tuple[str, str], ...] = ()  # environment variables read at the script's default (name, default)


def quote(word: str) -> str:
    """A word as a shell reads it back."""
    return shlex.quote(word)


def shown(text: str, limit: int = 60) -> str:
    """A value as a note or a message quotes it: on one line, control characters escaped (a newline in a
    script's value would end the comment a written space holds its notes in), at most ``limit`` characters."""
    flat = "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(text.split()))
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


# sbatch's and srun's short options that take no value (sbatch(1), srun(1)): any other short option takes
# one, attached (`-pbatch`) or as the next word
_SHORT_SWITCHES = frozenset("HOQsvWhlukEXZI")
# their long options that take none, so the next word is not read as a value
_LONG_SWITCHES = frozenset({"--exclusive", "--oversubscribe", "--hold", "--wait", "--requeue", "--no-requeue",
                            "--overcommit", "--contiguous", "--spread-job", "--use-min-nodes", "--parsable",
                            "--test-only", "--quiet", "--verbose", "--no-kill", "--kill-on-bad-exit",
                            "--ignore-pbs", "--unbuffered", "--label", "--exact", "--overlap"})
_SHORT = re.compile(r"-([A-Za-z])(.*)", re.S)


def slurm_options(words: list[str]) -> tuple[list[tuple[str, str]], int]:
    """sbatch's or srun's options as (option, value), in the forms both take: ``--name=value``,
    ``--name value``, ``-X value``, ``-Xvalue``; a switch has the value "". A word that is not an option ends
    them (the program srun runs, the script sbatch submits): the second value is its index."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else None
        if w.startswith("--"):
            name, eq, value = w.partition("=")
            if eq or name in _LONG_SWITCHES or nxt is None:
                out.append((name, value))
            else:
                out.append((name, nxt))
                i += 1
        elif (m := _SHORT.fullmatch(w)) is not None:
            flag, rest = f"-{m.group(1)}", m.group(2)
            if rest or m.group(1) in _SHORT_SWITCHES or nxt is None:
                out.append((flag, rest))
            else:
                out.append((flag, nxt))
                i += 1
        else:
            break
        i += 1
    return out, i
