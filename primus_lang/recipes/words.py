"""A command line as words with positions, read by the shell's quoting rules and nothing more.

``shlex`` gives the words but not where they are, and diagnostics point at a flag; so the scan is
done here with the same rules (POSIX quoting, backslash escapes, ``#`` comments), and every piece of
syntax whose value only a running shell knows (``$``, backquotes, pipes, redirections, ``;``, ``&``)
is reported where it stands instead of being evaluated.
"""

from __future__ import annotations

import shlex

from attrs import frozen

from primus_lang.diagnostics import Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_SHELL_SYNTAX
from primus_lang.ir.span import Span

_OPERATORS = {"|": "a pipe", ";": "a command separator `;`", "&": "`&`", "<": "a redirection",
              ">": "a redirection", "(": "a shell array or subshell `(`", ")": "a shell array or subshell `)`"}


@frozen
class Word:
    text: str
    span: Span


def split_words(text: str, file: str) -> tuple[list[Word], list[Diagnostic]]:
    """The words of ``text`` and a diagnostic for each piece of shell syntax left unevaluated."""
    words: list[Word] = []
    problems: list[Diagnostic] = []
    line, col = 1, 1
    i, n = 0, len(text)
    cur: list[str] = []
    start: tuple[int, int] | None = None
    depth = 0  # inside $( ... )

    def end_word(at_line: int, at_col: int) -> None:
        nonlocal cur, start
        if start is not None:
            words.append(Word("".join(cur), Span(file, start[0], start[1], at_line, at_col)))
        cur, start = [], None

    def shell(what: str, length: int = 1) -> None:
        problems.append(Diagnostic(RECIPE_SHELL_SYNTAX, f"{what} needs a shell to evaluate; primusc runs nothing",
                                   span=Span(file, line, col, line, col + length),
                                   help="write the value the run used in its place"))

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] == "\n":  # a line continuation reads as a space
            end_word(line, col)
            i, line, col = i + 2, line + 1, 1
            continue
        if ch in " \t\r\n":
            end_word(line, col)
            if ch == "\n":
                line, col = line + 1, 1
            else:
                col += 1
            i += 1
            continue
        if ch == "#" and start is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if start is None:
            start = (line, col)
        if ch == "'":
            close = text.find("'", i + 1)
            if close < 0:
                shell("an unclosed single quote", 1)
                close = n
            piece = text[i + 1:close]
            cur.append(piece)
            line, col = _advance(line, col, text[i:close + 1])
            i = close + 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    if text[j + 1] in '"\\$`':
                        cur.append(text[j + 1])
                    elif text[j + 1] != "\n":
                        cur.append(text[j:j + 2])
                    j += 2
                    continue
                if text[j] in "$`":
                    sl, sc = _advance(line, col, text[i:j])
                    problems.append(_expansion(file, sl, sc, text, j))
                cur.append(text[j])
                j += 1
            if j >= n:
                shell("an unclosed double quote", 1)
            line, col = _advance(line, col, text[i:j + 1])
            i = j + 1
            continue
        if ch == "\\" and i + 1 < n:
            cur.append(text[i + 1])
            i, col = i + 2, col + 2
            continue
        if ch in "$`":
            problems.append(_expansion(file, line, col, text, i))
            if ch == "$" and text[i + 1:i + 2] == "(":
                depth += 1  # its parentheses are the substitution's, already reported
                cur.append("$(")
                i, col = i + 2, col + 2
                continue
        elif ch == ")" and depth:
            depth -= 1
        elif ch in _OPERATORS and not (depth and ch not in ")("):
            shell(_OPERATORS[ch])
        cur.append(ch)
        i, col = i + 1, col + 1
    end_word(line, col)
    return words, problems


def _expansion(file: str, line: int, col: int, text: str, i: int) -> Diagnostic:
    ch = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch == "`" or nxt == "(":
        what = "a command substitution"
    elif nxt.isalnum() or nxt in "_{@*#?!-":
        what = "a variable reference"
    else:
        what = "a `$`"
    return Diagnostic(RECIPE_SHELL_SYNTAX, f"{what} needs a shell to evaluate; primusc runs nothing",
                      span=Span(file, line, col, line, col + 1),
                      help="write the value the run used in its place")


def _advance(line: int, col: int, piece: str) -> tuple[int, int]:
    newlines = piece.count("\n")
    if newlines:
        return line + newlines, len(piece) - piece.rfind("\n")
    return line, col + len(piece)


def quote(word: str) -> str:
    """A word as a shell reads it back."""
    return shlex.quote(word)
