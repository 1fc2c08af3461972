"""A launch script read as bash would run it, without running anything: the launch command's words.

Real recipes build their command line from variables and arrays (Megatron-LM's example scripts),
choose arguments in ``if`` and ``case`` on values the script itself sets, parse their own options in a
``while`` loop over ``$#``, and hand the command to ``bash -c`` inside an ``sbatch`` here-document.
This module evaluates that subset of bash statically: assignments (``export``, ``local``,
``declare``), ``+=``, arrays and their elements, every ``${...}`` form a recipe uses (defaults,
assignments, alternatives, lengths, elements, ``@``/``*``), ``$((...))`` arithmetic, word splitting of
unquoted expansions, quoting, comments, line continuations, here-documents, ``if``/``elif``/``else``,
``case``, ``while``/``until`` and ``for`` over known words, ``&&``/``||``/``!``, ``[ ]``/``[[ ]]``/``test``
on strings and numbers, functions, and the nested scripts of ``bash -c`` and ``sbatch <<EOF``.

What only a running shell knows (a command substitution, a file test, an environment variable the
script does not set and ``--set`` does not give) is an ``Unknown`` value, named with the variable or
the construct it came from: the reader of the launch line decides whether it matters.

The launch command is the last simple command that runs a ``.py`` training script (``pretrain_gpt.py``,
``run_recipe.py``, ``primus/cli/main.py``) or torchrun; every other command (``mkdir``, ``echo``,
``cd``) is ignored.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from attrs import define, evolve, field, frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_SHELL_SYNTAX
from primus_lang.ir.site import carried_env, credential
from primus_lang.ir.span import Span
from primus_lang.recipes.words import Launch, Why, Word, shown, slurm_options

MAX_STEPS = 200_000  # statements and loop turns: a recipe runs a few hundred
MAX_DEPTH = 16  # nested `bash -c` / functions
MAX_NESTING = 64  # compound commands inside each other (`if` in `if`, a body in a loop): each is a few Python frames
MAX_TEXT = 1 << 20  # one expanded value: a recipe's longest is its command line


# what a note says of a file the script sources, which the reading does not open
NOT_FOLLOWED = "was not followed"


class ShellError(Exception):
    """The script cannot be read statically; ``span`` is where, ``notes`` what the reading assumed on
    the way (a file it did not follow, the line the script exited at)."""

    def __init__(self, message: str, span: Span | None, help: str = "", notes: tuple[str, ...] = (),
                 primus: PrimusRun | None = None) -> None:
        super().__init__(message)
        self.message, self.span, self.help, self.notes = message, span, help, notes
        self.primus = primus  # the experiment the script runs through Primus's own launchers, where it does


@frozen
class PrimusRun:
    """A script whose training command is Primus's: its CLI (``primus-cli ... train pretrain --config FILE``)
    or an example launcher that reads the experiment from ``EXP`` (``bash examples/run_slurm_pretrain.sh``).
    The experiment file as the script names it, the words after it (Primus's command-line overrides of the
    experiment's settings), the environment the launcher sees, and what the reading assumed on the way."""

    config: Word
    overrides: tuple[Word, ...]
    via: str  # the command that runs it, as the script names it
    env: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    launcher: tuple[str, ...] = ()  # the CLI's own options before its `--`

    @property
    def cli(self) -> bool:
        return self.via.startswith(_PRIMUS_CLI)


@frozen
class Piece:
    """A run of characters of one expanded word: ``quoted`` pieces are not split."""

    text: str
    quoted: bool
    span: Span | None = field(default=None, eq=False)  # where the value was written
    unknown: tuple[Why, ...] = ()


# ---- tokens -------------------------------------------------------------------------------------

@frozen
class _Tok:
    kind: str  # word | op | newline | heredoc
    text: str  # a word's raw source (quotes kept), an operator
    line: int
    col: int
    end_line: int
    end_col: int
    body: str = ""  # a here-document's text
    body_expands: bool = True
    body_line: int = 0


_OPS = ("&&", "||", ";;", "<<<", "<<-", "<<", ">>", "&>", ">&", "2>", "(", ")", ";", "&", "|", "<", ">")
_RESERVED = {"if", "then", "elif", "else", "fi", "case", "esac", "while", "until", "for", "do", "done", "in",
             "function", "{", "}", "!", "[[", "]]", "select", "time"}


class _Lexer:
    def __init__(self, text: str, file: str, line: int = 1, col: int = 1) -> None:
        self.text, self.file = text, file
        self.i, self.line, self.col = 0, line, col
        self.pending: list[list[Any]] = []  # here-documents waiting for the next newline

    def _advance(self, n: int) -> None:
        for ch in self.text[self.i:self.i + n]:
            if ch == "\n":
                self.line, self.col = self.line + 1, 1
            else:
                self.col += 1
        self.i += n

    def span(self, line: int, col: int) -> Span:
        return Span(self.file, line, col, self.line, max(self.col, col + 1) if self.line == line else self.col)

    def tokens(self) -> list[_Tok]:
        out: list[_Tok] = []
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            if ch == "\\" and text[self.i + 1:self.i + 2] == "\n":
                self._advance(2)
                continue
            if ch in " \t\r":
                self._advance(1)
                continue
            if ch == "#":
                while self.i < n and text[self.i] != "\n":
                    self._advance(1)
                continue
            if ch == "\n":
                out.append(_Tok("newline", "\n", self.line, self.col, self.line, self.col + 1))
                self._advance(1)
                self._read_heredocs(out)
                continue
            op = next((o for o in _OPS if text.startswith(o, self.i)), None)
            if op is not None and not (op in ("<", ">") and text.startswith("(", self.i + 1)):
                line, col = self.line, self.col
                self._advance(len(op))
                if op in ("<<", "<<-"):
                    self._heredoc_word(out, line, col, strip=op == "<<-")
                    continue
                out.append(_Tok("op", op, line, col, self.line, self.col))
                continue
            line, col = self.line, self.col
            start = self.i
            self._word()
            out.append(_Tok("word", text[start:self.i], line, col, self.line, self.col))
        out.append(_Tok("newline", "\n", self.line, self.col, self.line, self.col))
        self._read_heredocs(out)
        return out

    def _word(self) -> None:
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            if ch in "<>" and text.startswith("(", self.i + 1):
                # a process substitution, `<(cmd)` or `>(cmd)`, is one word
                self._advance(1)
                self._balanced("(", ")")
                continue
            if ch in " \t\r\n;&|<>()":
                if ch == "(" and self.i > 0 and text[self.i - 1] == "=":
                    self._balanced("(", ")")  # an array assignment `A=( ... )` is one word
                    continue
                return
            if ch == "\\":
                self._advance(2)
            elif ch == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ShellError("an unclosed single quote", self.span(self.line, self.col))
                self._advance(end + 1 - self.i)
            elif ch == '"':
                self._double()
            elif ch == "`":
                end = self.i + 1
                while end < n and text[end] != "`":
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    raise ShellError("an unclosed backquote", self.span(self.line, self.col))
                self._advance(end + 1 - self.i)
            elif ch == "$" and text.startswith("((", self.i + 1):
                self._advance(1)
                self._balanced("(", ")")
            elif ch == "$" and text[self.i + 1:self.i + 2] in "({":
                self._advance(1)
                self._balanced(text[self.i], ")" if text[self.i] == "(" else "}")
            else:
                self._advance(1)

    def _double(self) -> None:
        line, col = self.line, self.col
        end = quote_end(self.text, self.i)
        if end < 0:
            raise ShellError("an unclosed double quote", self.span(line, col))
        self._advance(end - self.i)

    def _balanced(self, open_: str, close: str) -> None:
        line, col = self.line, self.col
        end = close_of(self.text, self.i, open_, close)
        if end < 0:
            raise ShellError(f"an unclosed `{open_}`", self.span(line, col))
        self._advance(end - self.i)

    def _heredoc_word(self, out: list[_Tok], line: int, col: int, strip: bool) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self._advance(1)
        start = self.i
        self._word()
        raw = self.text[start:self.i]
        quoted = any(q in raw for q in "'\"\\")
        delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
        tok = [delimiter, strip, not quoted, len(out), line, col]
        out.append(_Tok("heredoc", "<<", line, col, self.line, self.col))
        self.pending.append(tok)

    def _read_heredocs(self, out: list[_Tok]) -> None:
        for delimiter, strip, expands, index, _line, _col in self.pending:
            body_line = self.line
            lines: list[str] = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                row = self.text[self.i:end]
                self._advance(end - self.i + (1 if end < len(self.text) else 0))
                if (row.lstrip("\t") if strip else row) == delimiter:
                    break
                lines.append(row.lstrip("\t") if strip else row)
            old = out[index]
            out[index] = _Tok("heredoc", "<<", old.line, old.col, old.end_line, old.end_col,
                              body="\n".join(lines) + "\n", body_expands=expands, body_line=body_line)
        self.pending = []


# ---- the evaluator -----------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# bash takes most words as a function's name (`log::info`, `my-func`), not only a variable's
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:.\-]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_TRAINING = re.compile(r"\.py$")
_FIELD_BREAK = "\0"
_LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch")
_PRIMUS_CLI = "primus-cli"
# Primus's example launchers (examples/run_*_pretrain.sh), which run the experiment named by the exported
# `EXP` with the words they are given as its overrides (`primus/cli/main.py train pretrain --config $EXP $*`)
_PRIMUS_LAUNCHERS = ("run_pretrain.sh", "run_local_pretrain.sh", "run_slurm_pretrain.sh", "run_k8s_pretrain.sh")
# a launcher script that runs a training script of its own: Megatron-Bridge's scripts/training/train.sh,
# a launch when it names a recipe
_WRAPPERS = ("train.sh",)


@define
class _Var:
    """A variable: a scalar (one value) or an array (its elements), each value's pieces kept with the
    place it was written and what in it is unknown."""

    values: list[list[Piece] | None]  # an array's unset elements are None (bash arrays are sparse)
    array: bool = False
    exported: bool = False

    def set_values(self) -> list[list[Piece]]:
        return [v for v in self.values if v is not None]


def _launched() -> _Result:
    """A training command's status: the recipe is read as the run it describes, one that succeeds (a
    script that tests `$?` after it goes on as it would after a good run)."""
    return _Result(0)


class _Exit(Exception):
    def __init__(self, status: int, at: Span | None = None, because: tuple[str, int] | None = None) -> None:
        # because: the test of the innermost `if` whose branch ran the exit, and its line
        self.status, self.at, self.because = status, at, because


class _Return(Exception):
    pass


@define
class _Result:
    status: int | None  # None: unknown


class Shell:
    def __init__(self, file: str, given: Mapping[str, str], positional: tuple[str, ...] = ()) -> None:
        self.file = file
        self.vars: dict[str, _Var] = {}
        self.given = dict(given)
        for name, value in given.items():
            self.vars[name] = _Var([[Piece(value, True, None)]], exported=True)
        self.given_vars = dict(self.vars)
        self.given_read: set[str] = set()  # given names read while they still held the given value
        self.positional = list(positional)
        self.functions: dict[str, list[_Tok]] = {}
        self.launches: list[tuple[list[Word], dict[str, str]]] = []
        # at the last launch, the exported variables whose value only the running script knows
        self.unknown_at_launch: dict[str, tuple[Why, ...]] = {}
        self.notes: list[str] = []
        self.directives: list[tuple[str, str]] = []
        self.submitted: list[tuple[str, str]] = []  # sbatch's own options (among the directives, after its lines)
        self.steps = 0
        self.depth = 0  # nested scripts and function calls
        self.nesting = 0  # statement lists inside each other
        self.used_defaults: dict[str, str] = {}
        self.empty_in_tests: dict[str, None] = {}
        self.flag_lines: list[Word] = []
        self.frames: list[dict[str, _Var | None]] = []  # `local` variables' outer values, per function call
        self.status: int | None = 0  # the last command's (`$?`), None where unknown
        self.tests: list[tuple[str, int]] = []  # the tests of the `if` branches running now, and their lines
        self.kept: dict[str, Span] = {}  # given names the script assigns itself, where it first does
        # Primus's CLI (`primus-cli ... -- train pretrain --config FILE --key value ...`), which runs an
        # experiment file primusc reads on its own: the file and the overrides the script adds to it
        # the experiment a `primus-cli ... train` line runs, its overrides, and the launcher's own options
        self.primus_run: PrimusRun | None = None

    def keeps_given(self, name: str, at: Span) -> bool:
        """Whether ``name`` still holds its ``--set`` value, which then takes the place of what the script
        assigns it (``IMAGE=""``, a placeholder for its user to fill): said in a note."""
        if name in self.vars and self.vars[name] is self.given_vars.get(name):
            self.kept.setdefault(name, at)
            return True
        return False

    # -- values

    def span(self, tok: _Tok) -> Span:
        return Span(self.file, tok.line, tok.col, tok.end_line, tok.end_col)

    def lookup(self, name: str, at: Span | None) -> list[list[Piece] | None] | None:
        """A variable's values (None for an array's unset element), or None when the script has not set it."""
        if name.isdigit():
            i = int(name)
            if i == 0:
                return [[Piece(self.file, True, at)]]
            if i <= len(self.positional):
                return [[Piece(self.positional[i - 1], True, at)]]
            return None
        if name == "#":
            return [[Piece(str(len(self.positional)), True, at)]]
        if name in ("@", "*"):
            return [[Piece(p, True, at)] for p in self.positional]
        var = self.vars.get(name)
        if var is None:
            return None
        if var is self.given_vars.get(name):
            self.given_read.add(name)
        return var.values

    def unknown_var(self, name: str, at: Span | None, quoted: bool = False) -> list[Piece]:
        if name.isdigit():
            why = Why(f"the script's argument `${name}`, which only the command that runs it gives",
                      name, at, unset=True, quoted=quoted)
        else:
            why = Why(f"`{name}`, which the script reads from its environment", name, at, unset=True, quoted=quoted)
        return [Piece("${" + name + "}", True, at, (why,))]

    # -- expansion

    def expand_word(self, raw: str, span: Span, split: bool = True) -> list[list[Piece]]:
        """A word's fields after expansion and word splitting (a quoted empty word stays one field)."""
        pieces, had_quotes = self._pieces(raw, span)
        if not split:
            return [pieces]
        return _split(pieces, had_quotes)

    def expand_text(self, raw: str, span: Span) -> list[Piece]:
        """A word expanded to one value (an assignment's right side: no splitting)."""
        pieces, _ = self._pieces(raw, span)
        return pieces

    def _pieces(self, raw: str, span: Span, literal_quoted: bool = True,
                escape_quoted: bool = False) -> tuple[list[Piece], bool]:
        """``literal_quoted``: whether unquoted literal text is kept from splitting (a word's own text is;
        a ``${X:-a b}`` default outside quotes is not). ``escape_quoted``: quoted text has its glob
        characters escaped (a pattern's quoted part matches literally)."""
        out: list[Piece] = []
        lit = _escape_glob if escape_quoted else (lambda t: t)
        quoted = False
        i, n = 0, len(raw)
        if raw.startswith("~") and (n == 1 or raw[1] == "/"):
            out.extend(self._var_pieces("HOME", span, False))
            i = 1
        while i < n:
            ch = raw[i]
            if ch == "\\":
                out.append(Piece(lit(raw[i + 1:i + 2]), True, span))
                i += 2
            elif ch == "'":
                end = raw.index("'", i + 1)
                out.append(Piece(lit(raw[i + 1:end]), True, span))
                quoted = True
                i = end + 1
            elif ch == '"':
                quoted = True
                j = i + 1
                while raw[j] != '"':
                    if raw[j] == "\\" and raw[j + 1] in '"\\$`\n':
                        if raw[j + 1] != "\n":
                            out.append(Piece(lit(raw[j + 1]), True, span))
                        j += 2
                    elif raw[j] in "$`":
                        got, j = self._dollar(raw, j, span, True)
                        out.extend(Piece(lit(p.text), p.quoted, p.span, p.unknown) for p in got)
                    else:
                        # a backslash before any other character is itself (bash: `"a\n"` is a, \, n)
                        k = j + 1 if raw[j] == "\\" else j
                        while raw[k] not in '"\\$`':
                            k += 1
                        out.append(Piece(lit(raw[j:k]), True, span))
                        j = k
                i = j + 1
            elif ch in "$`":
                got, i = self._dollar(raw, i, span, False)
                out.extend(got)
            else:
                k = i
                while k < n and raw[k] not in "\\'\"$`":
                    k += 1
                out.append(Piece(raw[i:k], literal_quoted, span))  # a word's literal text is never split
                i = k
        return out, quoted

    def _dollar(self, raw: str, i: int, span: Span, quoted: bool) -> tuple[list[Piece], int]:
        if raw[i] == "`":
            end = raw.index("`", i + 1)
            return [self._substitution(raw[i:end + 1], span)], end + 1
        if raw.startswith("$((", i):
            end = _matching(raw, i + 1, "(", ")")
            return [self._arith_piece(raw[i + 3:end - 1], span)], end + 1
        if raw.startswith("$(", i):
            end = _matching(raw, i + 1, "(", ")")
            return [self._substitution(raw[i:end + 1], span)], end + 1
        if raw.startswith("${", i):
            end = _matching(raw, i + 1, "{", "}")
            return self._braced(raw[i + 2:end], span, quoted), end + 1
        m = _NAME.match(raw, i + 1)
        if m is not None:
            return self._var_pieces(m.group(0), span, quoted), m.end()
        nxt = raw[i + 1:i + 2]
        if nxt and (nxt.isdigit() or nxt in "#@*?$!-"):
            if nxt == "?" and self.status is not None:
                return [Piece(str(self.status), True, span)], i + 2
            if nxt in "?$!-":
                return [Piece("$" + nxt, True, span, (Why(f"`${nxt}`, which only the running shell knows"),))], i + 2
            return self._var_pieces(nxt, span, quoted), i + 2
        return [Piece("$", True, span)], i + 1

    def _substitution(self, text: str, span: Span) -> Piece:
        return Piece(text, True, span, (Why(f"a command substitution `{shown(text)}`, which primusc does not run",
                                            "", span),))

    def _var_pieces(self, name: str, span: Span, quoted: bool, element: str | None = None) -> list[Piece]:
        values = self.lookup(name, span)
        if values is None:
            return self.unknown_var(name, span, quoted)
        if element in ("@", "*") or (name in ("@", "*")):
            present = [v for v in values if v is not None]
            apart = quoted and "@" in (element, name)
            joined: list[Piece] = []
            for k, v in enumerate(present):
                if k:
                    # "${A[@]}" keeps its elements apart even when quoted (a field break the splitter
                    # honours); "${A[*]}" joins them with a blank; unquoted, the blank splits them
                    joined.append(Piece(_FIELD_BREAK if apart else " ", quoted and not apart, span))
                if apart:
                    joined.append(Piece("", True, span))  # an empty element is still a word
                joined.extend(_requote(v, quoted))
            if apart and not present:
                joined.append(Piece(_FIELD_BREAK, False, span))
            return joined
        if element is not None:
            picked = self._element(values, element, span)
            return _requote(picked, quoted) if picked is not None else []
        return _requote(values[0] or [] if values else [], quoted)

    def _element(self, values: list[list[Piece] | None], element: str, span: Span) -> list[Piece] | None:
        index = self.arith(element, span)
        if isinstance(index, Why):
            return None
        if index < 0:
            index += len(values)  # bash counts a negative index back from the highest one set + 1
        return values[index] if 0 <= index < len(values) else None

    def _braced(self, body: str, span: Span, quoted: bool) -> list[Piece]:
        if body.startswith("#") and len(body) > 1:
            name = body[1:]
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[([^\]]*)\]", name)
            if m is not None:
                values = self.lookup(m.group(1), span) or []
                if m.group(2) in ("@", "*"):
                    return [Piece(str(sum(v is not None for v in values)), True, span)]
                one = self._element(values, m.group(2), span)
                return [Piece(str(len(_join(one).text)) if one is not None else "0", True, span)]
            value = self.value_of(name, span)
            if value.unknown:
                return [Piece("", True, span, value.unknown)]
            return [Piece(str(len(value.text)), True, span)]
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#])(\[([^\]]*)\])?", body)
        if m is None:
            raise ShellError(f"`${{{body}}}` is a parameter expansion primusc cannot read", span)
        name, element = m.group(1), m.group(3)
        rest = body[m.end():]
        if not rest:
            return self._var_pieces(name, span, quoted, element)
        op = re.match(r":?[-=+?]", rest)
        if op is not None:
            word = rest[op.end():]
            found = self.lookup(name, span)
            current = self._var_pieces(name, span, quoted, element) if found is not None else None
            empty = found is None or (":" in op.group(0) and current is not None
                                       and "".join(p.text for p in current) == "" and not _unknown(current))
            kind = op.group(0)[-1]
            if kind == "+":
                return [] if empty else self._pieces(word, span, literal_quoted=quoted)[0]
            if not empty:
                assert current is not None
                return current
            if kind == "?":
                raise ShellError(f"`${{{body}}}` stops the script when `{name}` is unset", span)
            default, _ = self._pieces(word, span, literal_quoted=quoted)
            if kind == "=":
                self.vars[name] = _Var([default])
            if not name.isdigit() and name not in self.given:
                self.used_defaults.setdefault(name, "".join(p.text for p in default))
            return [Piece(p.text, p.quoted or quoted, p.span, p.unknown) for p in default]
        # pattern removal and substitution: on a known value, with shell patterns read as glob
        value = self.value_of(name, span)
        if value.unknown:
            return [Piece(value.text, True, span, value.unknown)]
        text = _pattern_op(value.text, rest, lambda w: self.pattern(w, span).text)
        if text is None:
            raise ShellError(f"`${{{body}}}` is a parameter expansion primusc cannot read", span)
        return [Piece(text, quoted, span)]

    def value_of(self, name: str, span: Span) -> Word:
        return _join(self._var_pieces(name, span, True))

    def value_of_raw(self, raw: str, span: Span) -> str:
        return _join(self._pieces(raw, span)[0]).text

    def pattern(self, raw: str, span: Span) -> Word:
        """A word used as a pattern (``case``, ``[[ == ]]``, ``${X#...}``): its quoted parts match literally."""
        return self.tested(self._pieces(raw, span, escape_quoted=True)[0])

    def _arith_piece(self, expr: str, span: Span) -> Piece:
        value = self.arith(expr, span)
        if isinstance(value, Why):
            return Piece("$((" + expr + "))", True, span, (value,))
        return Piece(str(value), False, span)

    def arith(self, expr: str, span: Span) -> int | Why:
        """``$((...))`` on integers the script knows (``+ - * / % **``, comparisons, parentheses)."""
        pieces, _ = self._pieces(expr, span)
        text = "".join(p.text for p in pieces)
        unknown = _unknown(pieces)
        if unknown:
            return unknown[0]

        def name_value(m: re.Match[str]) -> str:
            v = self.value_of(m.group(0), span)
            if v.unknown:
                raise _Unknown(v.unknown[0])
            return v.text.strip() or "0"

        # a hex constant (`0x2`) is a number, not the name `x2` after a 0
        text = re.sub(r"\b0[xX]([0-9a-fA-F]+)\b", lambda m: str(int(m.group(1), 16)), text)
        try:
            text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", name_value, text)
        except _Unknown as u:
            return u.why
        if not re.fullmatch(r"[0-9+\-*/%() <>=!&|]*", text):
            return Why(f"the arithmetic `$(({shown(expr)}))`, which primusc cannot evaluate", "", span)
        try:
            return _evaluate_int(text)
        except (ValueError, ZeroDivisionError, IndexError):
            return Why(f"the arithmetic `$(({shown(expr)}))`, which primusc cannot evaluate", "", span)

    # -- statements

    def run(self, toks: list[_Tok]) -> None:
        _Parser(self, toks).run_list(stop=())

    def step(self, span: Span | None) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ShellError(f"the script runs more than {MAX_STEPS:,} statements: a loop primusc cannot "
                             "bound statically", span)

    def nested(self, text: str, span: Span, origin: str) -> None:
        """A script inside the script (``bash -c TEXT``, an ``sbatch`` here-document)."""
        if self.depth >= MAX_DEPTH:
            raise ShellError("scripts nested too deep", span)
        self.depth += 1
        try:
            toks = _Lexer(text, self.file, span.line, span.column).tokens()
            # the nested text's positions are not the file's: report them at the construct
            toks = [_Tok(t.kind, t.text, span.line, span.column, span.end_line, span.end_column, t.body,
                         t.body_expands, t.body_line) for t in toks]
            self.notes.append(f"read the script {origin} runs")
            with contextlib.suppress(_Exit):
                self.run(toks)
        finally:
            self.depth -= 1

    def script_text(self, pieces: list[Piece]) -> str:
        """An expanded value as the text of a script to run: what is unknown in it becomes a reference to
        a variable holding that unknown value, so the nested script neither loses nor re-expands it."""
        out: list[str] = []
        for p in pieces:
            if p.unknown:
                name = f"__primusc_unknown_{len(self.vars)}"
                self.vars[name] = _Var([[Piece(p.text, True, p.span, p.unknown)]])
                out.append("${" + name + "}")
            else:
                out.append(" " if p.text == _FIELD_BREAK else p.text)
        return "".join(out)

    def launch(self, words: list[Word], env: dict[str, str]) -> None:
        self.launches.append((words, env))
        self.unknown_at_launch = self.unknown_exports()

    def tested(self, pieces: list[Piece]) -> Word:
        """A value a condition tests: a variable the script never sets reads as empty, as bash reads
        it when the environment lacks it (said in a note); anything else unknown stays unknown."""
        unset = [w for p in pieces for w in p.unknown if w.unset]
        if not unset or any(not w.unset for p in pieces for w in p.unknown):
            return _join(pieces)
        for why in unset:
            self.empty_in_tests.setdefault(why.variable, None)
        word = _join([Piece("" if p.unknown else p.text, p.quoted, p.span) for p in pieces])
        return word

    def exported(self) -> dict[str, str]:
        return {name: _join(var.values[0] or []).text for name, var in self.vars.items()
                if var.exported and not var.array and var.values and not _join(var.values[0] or []).unknown
                and name not in self.given}

    def unknown_exports(self) -> dict[str, tuple[Why, ...]]:
        """Exported variables whose value only the running script knows (``cache_$SLURM_NODEID``):
        ``exported`` leaves them out of the launch's environment."""
        out = {}
        for name, var in self.vars.items():
            if var.exported and not var.array and var.values and name not in self.given:
                unknown = _join(var.values[0] or []).unknown
                if unknown:
                    out[name] = unknown
        return out


class _Unknown(Exception):
    def __init__(self, why: Why) -> None:
        self.why = why


class _Parser:
    """Recursive descent over the tokens, evaluating as it goes (the branch not taken is parsed and
    skipped)."""

    def __init__(self, shell: Shell, toks: list[_Tok]) -> None:
        self.sh, self.toks, self.i = shell, toks, 0
        self.herestring: _Tok | None = None  # the `<<< WORD` of the simple command being read

    def peek(self) -> _Tok:
        return self.toks[min(self.i, len(self.toks) - 1)]

    def at_word(self, *texts: str) -> bool:
        t = self.peek()
        return t.kind == "word" and t.text in texts

    def skip_newlines(self) -> None:
        while self.i < len(self.toks) and (self.peek().kind == "newline" or
                                           (self.peek().kind == "op" and self.peek().text == ";")):
            self.i += 1

    def expect_word(self, text: str) -> None:
        self.skip_newlines()
        if not self.at_word(text):
            t = self.peek()
            raise ShellError(f"expected `{text}` here, found `{t.text.strip() or 'the end'}`", self.sh.span(t))
        self.i += 1

    def run_list(self, stop: tuple[str, ...], execute: bool = True) -> _Result:
        """Statements until one of the ``stop`` words (not consumed) or the end."""
        if self.sh.nesting >= MAX_NESTING:
            raise ShellError(f"commands nested more than {MAX_NESTING} deep: no recipe is, and reading it would "
                             "exhaust Python's stack", self.sh.span(self.peek()) if self.i < len(self.toks) else None)
        self.sh.nesting += 1
        try:
            return self._statements(stop, execute)
        finally:
            self.sh.nesting -= 1

    def _statements(self, stop: tuple[str, ...], execute: bool) -> _Result:
        result = _Result(0)
        while True:
            self.skip_newlines()
            if self.i >= len(self.toks) or (self.peek().kind == "word" and self.peek().text in stop) \
                    or (self.peek().kind == "op" and self.peek().text in (")", ";;") and stop):
                return result
            start = self.i
            result = self.and_or(execute)
            if execute:
                self.sh.status = result.status
            if self.i == start:  # a token no statement can start with: bash stops on it too
                t = self.peek()
                raise ShellError(f"unexpected `{t.text}`", self.sh.span(t),
                                 "bash reads this line as a syntax error; a line of prose pasted with the "
                                 "commands is left out of the recipe, and parentheses in an argument are quoted")

    def and_or(self, execute: bool) -> _Result:
        result = self.pipeline(execute)
        while self.peek().kind == "op" and self.peek().text in ("&&", "||"):
            op = self.peek().text
            self.i += 1
            self.skip_newlines()
            if result.status is None:
                # an unknown left side: whether the right side runs is unknown too
                self.pipeline(False)
                result = _Result(None)
                continue
            runs = execute and ((result.status == 0) == (op == "&&"))
            right = self.pipeline(runs)
            if runs:
                result = right
        if self.peek().kind == "op" and self.peek().text in (";", "&"):
            self.i += 1
        return result

    def pipeline(self, execute: bool) -> _Result:
        negate = False
        if self.at_word("!"):
            negate = True
            self.i += 1
        if self.at_word("time"):
            self.i += 1
        result = self.command(execute)
        while self.peek().kind == "op" and self.peek().text == "|":
            self.i += 1
            self.skip_newlines()
            result = self.command(False)  # a filter after a pipe (`| tee log`) changes no variable
            result = _Result(None)
        if negate and result.status is not None:
            return _Result(0 if result.status else 1)
        return result

    def command(self, execute: bool) -> _Result:
        t = self.peek()
        if t.kind == "word":
            handler = {"if": self.if_, "while": self.while_, "until": self.while_, "for": self.for_,
                       "case": self.case_, "{": self.group_, "[[": self.test_, "function": self.function_}.get(t.text)
            if handler is not None:
                result: _Result = handler(execute)
                self.redirections()
                return result
            if self.toks[self.i + 1].kind == "op" and self.toks[self.i + 1].text == "(" and \
                    _FUNCTION_NAME.fullmatch(t.text) and self.toks[self.i + 2].text == ")":
                return self.function_(execute)
        if t.kind == "op" and t.text == "(":
            if self._adjacent(self.i, "("):
                return self.arithmetic(execute)
            self.i += 1
            # a subshell: what it sets, defines or exits stays inside it; a training command in it runs
            sh = self.sh
            saved = ({k: _Var(list(v.values), v.array, v.exported) for k, v in sh.vars.items()},
                     dict(sh.functions), list(sh.positional))
            try:
                result = self.run_list(stop=(")",), execute=execute)
            except _Exit as stop:
                result = _Result(stop.status)
                depth = 0
                while self.i < len(self.toks) and not (depth == 0 and self.peek().text == ")"):
                    depth += {"(": 1, ")": -1}.get(self.peek().text, 0) if self.peek().kind == "op" else 0
                    self.i += 1
            finally:
                sh.vars, sh.functions, sh.positional = saved
            if self.peek().text != ")":
                raise ShellError("an unclosed `(`", self.sh.span(t))
            self.i += 1
            return result
        return self.simple(execute)

    def _adjacent(self, k: int, text: str) -> bool:
        """Whether token ``k`` and the next are both ``text``, written with nothing between them (`((`)."""
        if k + 1 >= len(self.toks):
            return False
        a, b = self.toks[k], self.toks[k + 1]
        return a.kind == b.kind == "op" and a.text == b.text == text and b.line == a.end_line and b.col == a.end_col

    def arithmetic(self, execute: bool) -> _Result:
        """`(( expr ))`: true when the expression is not 0, evaluated as `$(( ))` is; unknown where the
        expression reads what the script does not know. One that assigns is refused: the variable would
        hold a value primusc does not compute."""
        start, depth, k = self.toks[self.i], 0, self.i
        while k < len(self.toks):
            tok = self.toks[k]
            if tok.kind == "op" and tok.text in ("(", ")"):
                depth += 1 if tok.text == "(" else -1
                if depth == 0:
                    break
            k += 1
        if k >= len(self.toks) or not self._adjacent(k - 1, ")"):
            raise ShellError("an unclosed `((`", self.sh.span(start))
        expr = " ".join(tok.text for tok in self.toks[self.i + 2:k - 1])
        self.i = k + 1
        span = self.sh.span(start)
        if re.search(r"\+\+|--|(?<![<>=!])=(?!=)", expr):
            raise ShellError(f"`(( {shown(expr)} ))` assigns a variable, which primusc does not evaluate", span,
                             "write the value the run used (`N=...`), or give it with `--set NAME=VALUE`")
        if not execute:
            return _Result(0)
        value = self.sh.arith(expr, span)
        return _Result(None if isinstance(value, Why) else int(value == 0))

    def redirections(self) -> list[_Tok]:
        heredocs = []
        while True:
            t = self.peek()
            if t.kind == "heredoc":
                heredocs.append(t)
                self.i += 1
                if self.peek().kind == "word":
                    pass
                continue
            if t.kind == "op" and t.text in ("<", ">", ">>", "&>", ">&", "2>", "<<<"):
                self.i += 1
                if self.peek().kind == "word":
                    target = self.peek()
                    if t.text == "<<<":
                        self.herestring = target
                    if target.text.startswith("-"):
                        # a README's placeholder (`--account <account> --gpu h100`): bash reads `<` and `>` as
                        # redirections, and the option after one as a file name
                        self.sh.notes.append(f"line {target.line}: `{t.text} {target.text}` is a redirection in "
                                             f"bash, so `{target.text}` is a file name, not an option: write "
                                             "placeholders such as `<account>` as values")
                    self.i += 1
                continue
            if t.kind == "word" and re.fullmatch(r"[0-9]*>&?[0-9-]*", t.text):
                self.i += 1
                continue
            return heredocs

    # -- compound commands

    def if_(self, execute: bool) -> _Result:
        start = self.peek()
        self.i += 1
        taken = False
        result = _Result(0)
        tested = self.i
        condition = self.run_list(stop=("then",), execute=execute)
        test = (" ".join(t.text for t in self.toks[tested:self.i] if t.kind == "word"), start.line)
        self.expect_word("then")
        branches: list[tuple[_Result, int]] = []
        while True:
            runs = execute and not taken and condition.status == 0
            if execute and not taken and condition.status is None:
                branches.append((condition, self.i))
                self.skip_branch(("elif", "else", "fi"))
            else:
                self.sh.tests.append(test)
                try:
                    body = self.run_list(stop=("elif", "else", "fi"), execute=runs)
                finally:
                    self.sh.tests.pop()
                if runs:
                    taken, result = True, body
            self.skip_newlines()
            if self.at_word("elif"):
                self.i += 1
                condition = self.run_list(stop=("then",), execute=execute and not taken and not branches)
                self.expect_word("then")
                if branches:
                    condition = _Result(None)
                continue
            if self.at_word("else"):
                self.i += 1
                runs = execute and not taken
                if branches:
                    branches.append((_Result(0), self.i))
                    self.skip_branch(("fi",))
                else:
                    body = self.run_list(stop=("fi",), execute=runs)
                    if runs:
                        taken, result = True, body
            self.expect_word("fi")
            break
        if branches:
            result = self._unknown_branches(start, branches)
        return result

    def skip_branch(self, stop: tuple[str, ...]) -> None:
        self.run_list(stop=stop, execute=False)

    def _unknown_branches(self, start: _Tok, branches: list[tuple[_Result, int]]) -> _Result:
        """An ``if`` whose condition only the running shell can tell: a branch that exits the script
        is taken to be the guard it is (the recipe runs the other); one that changes nothing primusc
        reads does not matter; otherwise primusc cannot choose and says so."""
        end = self.i
        exiting = [self._exits(pos) for _, pos in branches]
        live = [pos for (_, pos), ex in zip(branches, exiting, strict=True) if not ex]
        has_else = len(branches) > 1 and branches[-1][0].status == 0
        if not has_else and exiting and all(exiting):
            self.sh.notes.append(f"line {start.line}: took the `if` whose condition primusc cannot test to be "
                                 "false (its branch stops the script, and the recipe runs)")
            return _Result(0)
        if len(live) == 1 and (has_else or any(exiting)):
            self.i = live[0]
            self.run_list(stop=("elif", "else", "fi"), execute=True)
            self.i = end
            self.sh.notes.append(f"line {start.line}: took the branch of an `if` primusc cannot test that does "
                                 "not stop the script")
            return _Result(0)
        if all(not self._effects(pos) for pos in live):
            # a file a branch sources is not followed either way; said as an unconditional `source` is
            sourced = [t for pos in live for t in self._scan(pos) if t.kind == "word" and t.text in ("source", ".")]
            if sourced:
                self.sh.notes.append(f"line {sourced[0].line}: `{sourced[0].text}` in a branch of an `if` primusc "
                                     "cannot test was not followed: primusc reads the one file it is given")
            return _Result(0)
        raise ShellError("primusc cannot tell which branch of this `if` runs: its condition reads what only the "
                         "running shell knows", self.sh.span(start),
                         help="give the variables the condition reads with `--set NAME=VALUE`")

    def _scan(self, pos: int) -> Iterator[_Tok]:
        depth = 0
        for t in self.toks[pos:]:
            if t.kind == "word" and t.text in ("if", "case", "while", "until", "for"):
                depth += 1
            elif t.kind == "word" and t.text in ("fi", "esac", "done"):
                if depth == 0:
                    return
                depth -= 1
            elif depth == 0 and t.kind == "word" and t.text in ("elif", "else"):
                return
            yield t

    def _exits(self, pos: int) -> bool:
        return any(t.kind == "word" and t.text == "exit" for t in self._scan(pos))

    def _effects(self, pos: int) -> bool:
        for t in self._scan(pos):
            if t.kind == "word" and (_ASSIGN.match(t.text) or _TRAINING.search(t.text) or
                                     t.text.rsplit("/", 1)[-1] in _LAUNCHERS or t.text in ("export", "unset")):
                return True
        return False

    def while_(self, execute: bool) -> _Result:
        start = self.peek()
        until = start.text == "until"
        self.i += 1
        begin = self.i
        while True:
            self.i = begin
            condition = self.run_list(stop=("do",), execute=execute)
            self.expect_word("do")
            status = condition.status
            if status is not None and until:
                status = 0 if status else 1
            if execute and status is None:
                if self._effects(self.i):
                    raise ShellError("primusc cannot tell whether this loop runs: its condition reads what only "
                                     "the running shell knows", self.sh.span(start),
                                     help="give the variables the condition reads with `--set NAME=VALUE`")
                execute = False
            runs = execute and status == 0
            try:
                self.run_list(stop=("done",), execute=runs)
            except _Break:
                runs = False
            self.expect_word("done")
            if not runs:
                return _Result(0)
            self.sh.step(self.sh.span(start))

    def for_(self, execute: bool) -> _Result:
        start = self.peek()
        self.i += 1
        name = self.peek().text
        self.i += 1
        items: list[list[Piece]] = []
        self.skip_newlines_only()
        if self.at_word("in"):
            self.i += 1
            while self.peek().kind == "word" and self.peek().text != "do":
                t = self.peek()
                if execute:
                    items.extend(self.sh.expand_word(t.text, self.sh.span(t)))
                self.i += 1
        elif execute:
            items = [[Piece(p, True, None)] for p in self.sh.positional]
        self.skip_newlines()
        self.expect_word("do")
        begin = self.i
        if execute and any(_unknown(item) for item in items) and self._effects(begin):
            raise ShellError("primusc cannot tell what this loop runs over", self.sh.span(start),
                             help="give the variables it reads with `--set NAME=VALUE`")
        for item in items if execute else []:
            self.i = begin
            self.sh.vars[name] = _Var([item])
            try:
                self.run_list(stop=("done",), execute=True)
            except _Break:
                break
            self.sh.step(self.sh.span(start))
        self.i = begin
        self.run_list(stop=("done",), execute=False)
        self.expect_word("done")
        return _Result(0)

    def skip_newlines_only(self) -> None:
        while self.peek().kind == "newline":
            self.i += 1

    def case_(self, execute: bool) -> _Result:
        start = self.peek()
        self.i += 1
        t = self.peek()
        subject = _join(self.sh.expand_text(t.text, self.sh.span(t))) if execute else Word("")
        self.i += 1
        self.expect_word("in")
        taken = False
        while True:
            self.skip_newlines()
            if self.at_word("esac"):
                self.i += 1
                return _Result(0)
            if self.peek().kind == "op" and self.peek().text == "(":
                self.i += 1
            patterns: list[str] = []
            while not (self.peek().kind == "op" and self.peek().text == ")"):
                p = self.peek()
                if p.kind == "word":
                    patterns.append(self.sh.pattern(p.text, self.sh.span(p)).text if execute else p.text)
                elif p.text != "|":
                    raise ShellError("a `case` pattern primusc cannot read", self.sh.span(p))
                self.i += 1
            self.i += 1
            runs = False
            if execute and not taken:
                if subject.unknown:
                    if self._effects(self.i):
                        raise ShellError("primusc cannot tell which branch of this `case` runs", self.sh.span(start),
                                         help="give the variables it reads with `--set NAME=VALUE`")
                else:
                    runs = any(_glob(pattern, subject.text) for pattern in patterns)
            self.run_list(stop=("esac",), execute=runs)
            taken = taken or runs
            if self.peek().kind == "op" and self.peek().text == ";;":
                self.i += 1

    def group_(self, execute: bool) -> _Result:
        self.i += 1
        result = self.run_list(stop=("}",), execute=execute)
        self.expect_word("}")
        return result

    def function_(self, execute: bool) -> _Result:
        if self.at_word("function"):
            self.i += 1
        name = self.peek().text
        self.i += 1
        if self.peek().kind == "op" and self.peek().text == "(":
            self.i += 2
        self.skip_newlines()
        begin = self.i
        self.command(False)  # its body, run when it is called
        if execute:
            self.sh.functions[name] = [*self.toks[begin:self.i], _Tok("newline", "\n", 0, 0, 0, 0)]
        return _Result(0)

    def test_(self, execute: bool) -> _Result:
        start = self.peek()
        self.i += 1
        words: list[_Tok] = []
        while not self.at_word("]]"):
            t = self.peek()
            if t.kind == "newline" and self.i >= len(self.toks) - 1:
                raise ShellError("an unclosed `[[`", self.sh.span(start))
            words.append(t)
            self.i += 1
        self.i += 1
        if not execute:
            return _Result(0)
        return _Result(_Condition(self.sh, words, double=True).evaluate())

    # -- simple commands

    def simple(self, execute: bool) -> _Result:
        toks: list[_Tok] = []
        self.herestring = None
        while True:
            t = self.peek()
            if t.kind == "word" and not (not toks and t.text in _RESERVED and t.text not in ("{", "}")):
                if re.fullmatch(r"[0-9]*>&?[0-9-]*|[0-9]*<", t.text):
                    self.redirections()
                    continue
                toks.append(t)
                self.i += 1
                continue
            if t.kind == "word" and t.text in ("}",) and not toks:
                break
            if t.kind == "heredoc" or (t.kind == "op" and t.text in ("<", ">", ">>", "&>", ">&", "2>", "<<<")):
                heredocs = self.redirections()
                if heredocs and execute and toks:
                    self._heredoc_command(toks, heredocs)
                    toks = []
                continue
            break
        if toks and self.peek().kind == "op" and self.peek().text == "(":
            t = self.peek()
            raise ShellError(f"`(` after `{toks[-1].text}`", self.sh.span(t),
                             "bash reads this line as a syntax error; a line of prose pasted with the commands "
                             "is left out of the recipe, and parentheses in an argument are quoted "
                             "(`'...(...)'`)")
        if not toks:
            if self.i < len(self.toks) and self.peek().kind == "word" and self.peek().text in _RESERVED:
                t = self.peek()
                raise ShellError(f"`{t.text}` where a command was expected", self.sh.span(t))
            if self.peek().kind == "op" and self.peek().text not in (";", "&", "&&", "||", "|", ")", ";;"):
                t = self.peek()
                raise ShellError(f"`{t.text}` where a command was expected", self.sh.span(t))
            return _Result(0)
        if not execute:
            return _Result(0)
        self.sh.step(self.sh.span(toks[0]))
        return self.execute(toks)

    def _heredoc_command(self, toks: list[_Tok], heredocs: list[_Tok]) -> None:
        name = toks[0].text
        if name == "read":
            doc = heredocs[-1]
            span = Span(self.sh.file, doc.body_line, 1, doc.body_line, 2)
            text = _join(self.sh.expand_text(_heredoc_word(doc.body), span)) if doc.body_expands \
                else Word(doc.body, span)
            self._read([_join(f).text for t in toks[1:] for f in self.sh.expand_word(t.text, self.sh.span(t))],
                       {}, text)
            return
        # sbatch reads the script from its input when its words are options only (no script file)
        given = [_join(f).text for t in toks[1:] for f in self.sh.expand_word(t.text, self.sh.span(t))] \
            if name == "sbatch" else []
        options, end = slurm_options(given)
        if (name in ("bash", "sh") and len(toks) == 1) or (name == "sbatch" and end == len(given)):
            doc = heredocs[-1]
            span = Span(self.sh.file, doc.body_line, 1, doc.body_line, 2)
            body = doc.body
            if doc.body_expands:
                # expanded once, here, as bash does before the command reads it
                body = self.sh.script_text(self.sh.expand_text(_heredoc_word(body), span))
            if name == "sbatch":
                # sbatch's own options decide over the script's `#SBATCH` lines: read after them
                self.sh.directives += _directives(body) + options
                self.sh.submitted += options
            self.sh.nested(body, span, f"`{name}` reads from its here-document")

    def execute(self, toks: list[_Tok]) -> _Result:
        sh = self.sh
        # leading assignments: alone they set variables; before a command, its environment
        assigns: list[tuple[_Tok, re.Match[str]]] = []
        k = 0
        while k < len(toks) and (m := _ASSIGN.match(toks[k].text)) is not None:
            assigns.append((toks[k], m))
            k += 1
        if k == len(toks):
            for tok, m in assigns:
                self.assign(tok, m, exported=False)
            return _Result(0)
        first = toks[k].text
        if first in ("export", "declare", "typeset", "local", "readonly") and k == 0:
            exported = first == "export" or any(t.text.startswith("-") and "x" in t.text for t in toks[1:])
            for tok in toks[1:]:
                if tok.text.startswith("-"):
                    continue
                m = _ASSIGN.match(tok.text)
                if first in ("local", "declare", "typeset") and sh.frames:
                    # a function's local: the outer value comes back when the function returns
                    local = m.group(1) if m is not None else tok.text
                    if local not in sh.frames[-1]:
                        sh.frames[-1][local] = sh.vars.get(local)
                if m is not None:
                    self.assign(tok, m, exported)
                elif exported and tok.text in sh.vars:
                    sh.vars[tok.text].exported = True
                elif first != "export" and _NAME.fullmatch(tok.text):
                    sh.vars.setdefault(tok.text, _Var([[]]))
            return _Result(0)
        pieces: list[list[Piece]] = []
        for tok in toks[k:]:
            pieces.extend(sh.expand_word(tok.text, sh.span(tok)))
        env = {tok_m.group(1): _join(sh.expand_text(tok.text[tok_m.end():], sh.span(tok))).text
               for tok, tok_m in assigns}
        if first == "read" and self.herestring is not None:
            source = self.herestring
            return self._read([_join(a).text for a in pieces[1:]], env,
                              _join(sh.expand_text(source.text, sh.span(source))))
        return self.run_command(pieces, env, toks)

    def _read(self, args: list[str], env: dict[str, str], text: Word) -> _Result:
        """``read [-r] [-d DELIM] NAME...`` of ``text`` (a here-string's or a here-document's): its
        first line (all of it under ``-d ''``) split at ``IFS``, a field a name and the rest to the
        last. Scripts loop over layouts so (``IFS=',' read -r TP PP EP <<< "$CONFIG"``) and keep the
        script each rank runs in a variable (``read -r -d '' INNER <<'EOF'``)."""
        sh = self.sh
        names, whole, k = [], False, 0
        while k < len(args):
            if args[k] == "-d":
                whole, k = k + 1 < len(args) and args[k + 1] in ("", "''", '""'), k + 2
                continue
            if not args[k].startswith("-"):
                names.append(args[k])
            k += 1
        if text.unknown or not names or not all(_NAME.fullmatch(n) for n in names):
            return _Result(None)
        ifs = env.get("IFS")
        if ifs is None:
            held = sh.lookup("IFS", None)
            ifs = _join(held[0] or []).text if held else " \t\n"
        line = text.text if whole else text.text.split("\n", 1)[0]
        blanks = "".join(c for c in ifs if c in " \t\n")
        others = "".join(c for c in ifs if c not in blanks)
        line = line.strip(blanks) if blanks else line
        # IFS blanks run together; another IFS character is one separator, with the blanks around it
        around = f"[{re.escape(blanks)}]*" if blanks else ""
        separator = f"{around}[{re.escape(others)}]{around}" if others else f"[{re.escape(blanks)}]+"
        fields = [line] if len(names) == 1 or not ifs else re.split(separator, line, maxsplit=len(names) - 1)
        for n, name in enumerate(names):
            if sh.keeps_given(name, text.span or Span(sh.file, 1, 1, 1, 2)):
                continue
            sh.vars[name] = _Var([[Piece(fields[n] if n < len(fields) else "", True, text.span)]])
        return _Result(0)

    def assign(self, tok: _Tok, m: re.Match[str], exported: bool) -> None:
        sh = self.sh
        name, index, append = m.group(1), m.group(2), m.group(3) == "+"
        rest = tok.text[m.end():]
        span = sh.span(tok)
        if rest.startswith("(") and rest.endswith(")") and index is None:
            elements = self._array_words(rest[1:-1], tok)
            old = sh.vars.get(name)
            values: list[list[Piece] | None] = [*(old.values if old is not None and append else []), *elements]
            _bounded_words([len(p.text) for v in values if v is not None for p in v], len(values), span)
            sh.vars[name] = _Var(values, array=True, exported=exported or bool(old and old.exported))
            return
        value = _bounded(sh.expand_text(rest, span), span)
        old = sh.vars.get(name)
        if index is None and not append and not sh.frames and sh.keeps_given(name, span):
            return
        if index is not None:
            i = sh.arith(index[1:-1], span)
            var = old if old is not None else _Var([], array=True)
            if isinstance(i, Why):
                raise ShellError(f"`{tok.text}` sets an element primusc cannot number", span)
            if i < 0:
                i += len(var.values)
            while len(var.values) <= i:
                var.values.append(None)
            var.values[i] = _bounded((var.values[i] or []) + value, span) if append else value
            var.array = True
            sh.vars[name] = var
            return
        if append and old is not None:
            if old.array:
                old.values = [*old.values, value]
            else:
                old.values = [_bounded((old.values[0] or [] if old.values else []) + value, span)]
            old.exported = old.exported or exported
            return
        sh.vars[name] = _Var([value], exported=exported or bool(old and old.exported))

    def _array_words(self, text: str, tok: _Tok) -> list[list[Piece]]:
        line, col = tok.line, tok.col + tok.text.index("(") + 1
        inner = _Lexer(text, self.sh.file, line, col).tokens()
        out: list[list[Piece]] = []
        for t in inner:
            if t.kind == "word":
                out.extend(self.sh.expand_word(t.text, self.sh.span(t)))
            elif t.kind not in ("newline",):
                raise ShellError(f"`{t.text}` inside an array", self.sh.span(t))
        return out

    def call(self, name: str, fields: list[Word], toks: list[_Tok]) -> _Result:
        """A function of the script run with ``fields``' arguments, its locals undone when it returns."""
        sh = self.sh
        if sh.depth >= MAX_DEPTH:
            raise ShellError(f"functions call each other more than {MAX_DEPTH} deep (`{name}`): a recursion "
                             "primusc cannot bound statically", fields[0].span or sh.span(toks[0]))
        saved = sh.positional
        _bounded_words([len(f.text) for f in fields[1:]], len(fields) - 1, fields[0].span)
        sh.depth += 1
        sh.positional = [f.text for f in fields[1:]]
        sh.frames.append({})
        try:
            _Parser(sh, sh.functions[name]).run_list(stop=())
        except _Return:
            pass
        finally:
            sh.depth -= 1
            sh.positional = saved
            for local, outer in sh.frames.pop().items():
                if outer is None:
                    sh.vars.pop(local, None)
                else:
                    sh.vars[local] = outer
        return _Result(0)

    def run_command(self, pieces: list[list[Piece]], env: dict[str, str], toks: list[_Tok]) -> _Result:
        sh = self.sh
        fields = [_join(f) for f in pieces]
        if not fields:
            return _Result(0)
        name = fields[0].text
        if fields[0].unknown:
            if any(_TRAINING.search(f.text) for f in fields):
                sh.launch(fields, env)
                return _launched()
            return _Result(None)
        if name in sh.functions and name not in ("exit",):
            return self.call(name, fields, toks)
        if name in ("echo", "printf"):
            # prints its words, runs none: a script that echoes its command line (`echo $CMD`) before
            # running it launches once
            return _Result(0)
        if name == "exit":
            status = fields[1].text if len(fields) > 1 else "0"
            raise _Exit(int(status) if status.isdigit() else 1, fields[0].span, sh.tests[-1] if sh.tests else None)
        if name == "return":
            raise _Return()
        if name in ("break", "continue"):
            raise _Break()
        if name == "shift":
            n = int(fields[1].text) if len(fields) > 1 and fields[1].text.isdigit() else 1
            sh.positional = sh.positional[n:]
            return _Result(0)
        if name == "unset":
            for f in fields[1:]:
                if not f.text.startswith("-"):
                    sh.vars.pop(f.text, None)
            return _Result(0)
        if name == "set":
            if len(fields) > 1 and fields[1].text == "--":
                _bounded_words([len(f.text) for f in fields[2:]], len(fields) - 2, fields[0].span)
                sh.positional = [f.text for f in fields[2:]]
            return _Result(0)
        if name in ("true", ":"):
            return _Result(0)
        if name == "false":
            return _Result(1)
        if name in ("[", "test"):
            words = fields[1:-1] if name == "[" and fields[-1].text == "]" else fields[1:]
            words = [sh.tested([Piece(w.text, True, w.span, w.unknown)]) for w in words]
            return _Result(_Condition(sh, words, double=False).evaluate())
        if name in ("source", "."):
            sh.notes.append(f"`{name} {fields[1].text if len(fields) > 1 else ''}` {NOT_FOLLOWED}: primusc "
                            "reads the one file it is given")
            return _Result(0)
        inline = _inline_script(fields)
        if inline is not None:
            shell_at, at = inline
            launches = len(sh.launches)
            sh.nested(sh.script_text(pieces[at]), fields[at].span or sh.span(toks[0]), "`bash -c`")
            # what runs the shell (`srun --container-image=... bash -c`) runs the launch in it: its words
            # are the launch's launcher words, as they would be without the shell between
            sh.launches[launches:] = [([*fields[:shell_at], *words], env) for words, env in sh.launches[launches:]]
            return _launched() if len(sh.launches) > launches else _Result(None)
        if name.startswith("--"):
            # a file of flags alone (an arguments file, one flag a line) is one launch line
            sh.flag_lines.extend(fields)
            return _Result(None)
        # train.sh names its recipe whole (`--recipe NAME`) or by its model's stem (`--model gpt_oss_20b`)
        wrapper = name.rsplit("/", 1)[-1] in _WRAPPERS and any(f.text.partition("=")[0] in ("--recipe", "--model")
                                                               for f in fields)
        if any(_TRAINING.search(f.text) for f in fields) or name.rsplit("/", 1)[-1] in _LAUNCHERS or wrapper:
            sh.launch(fields, {**sh.exported(), **env})
            return _launched()
        # a command primusc does not run (`cd`, `mkdir`, `which`) is taken to succeed, as a script that
        # reaches its launch needs it to: `cd DIR && torchrun ...` launches
        sh.primus_run = _primus_run(sh, name, fields, env) or sh.primus_run
        return _Result(0)


class _Break(Exception):
    pass


def _inline_script(fields: list[Word]) -> tuple[int, int] | None:
    """Where the shell and the script of a ``bash -c SCRIPT`` are, anywhere in a command (after ``srun`` and
    its options)."""
    for k, f in enumerate(fields):
        if f.text.rsplit("/", 1)[-1] not in ("bash", "sh", "zsh"):
            continue
        j = k + 1
        takes_script = False
        while j < len(fields) and fields[j].text.startswith("-"):
            takes_script = takes_script or (not fields[j].text.startswith("--") and "c" in fields[j].text)
            j += 1
        if takes_script and j < len(fields):
            return k, j
    return None


class _Condition:
    """``[ ... ]``, ``[[ ... ]]`` and ``test``: 0 true, 1 false, None unknown."""

    def __init__(self, sh: Shell, words: list[Any], double: bool) -> None:
        self.sh = sh
        self.double = double
        if double:
            self.words = [self._expand(t) for t in words]
            # the right side of `==` in `[[ ]]` is a pattern whose quoted parts match literally
            self.patterns: list[Word | None] = [
                sh.pattern(t.text, sh.span(t)) if t.kind == "word" else None for t in words]
        else:
            self.words = list(words)
            self.patterns = [None] * len(words)
        self.i = 0

    def _expand(self, t: _Tok) -> Word:
        if t.kind == "op":
            return Word(t.text, self.sh.span(t))
        return self.sh.tested(self.sh.expand_text(t.text, self.sh.span(t)))

    def evaluate(self) -> int | None:
        if not self.words:
            return 1
        try:
            value = self.or_()
        except IndexError:
            return None
        return None if value is None else (0 if value else 1)

    def take(self) -> Word:
        w: Word = self.words[self.i]
        self.i += 1
        return w

    def _chain(self, ops: tuple[str, str], operand: Callable[[], bool | None], absorbing: bool) -> bool | None:
        """Operands joined by ``ops`` in three-valued logic: ``absorbing`` (True for or, False for and)
        decides the chain whatever the others are; else an unknown (None) operand leaves it unknown."""
        left = operand()
        while self.i < len(self.words) and self.words[self.i].text in ops:
            self.i += 1
            right = operand()
            decided = left is absorbing or right is absorbing
            left = absorbing if decided else (None if None in (left, right) else not absorbing)
        return left

    def or_(self) -> bool | None:
        return self._chain(("||", "-o"), self.and_, True)

    def and_(self) -> bool | None:
        return self._chain(("&&", "-a"), self.not_, False)

    def not_(self) -> bool | None:
        if self.words[self.i].text == "!":
            self.i += 1
            v = self.not_()
            return None if v is None else not v
        if self.words[self.i].text == "(":
            self.i += 1
            v = self.or_()
            self.i += 1
            return v
        return self.primary()

    def primary(self) -> bool | None:
        first = self.take()
        if first.text in ("-z", "-n") and self.i < len(self.words) and self.words[self.i].text not in _BINARY:
            operand = self.take()
            if operand.unknown:
                return None
            return (operand.text == "") == (first.text == "-z")
        if first.text.startswith("-") and len(first.text) == 2 and first.text[1] in "fdeLrwxsSpbch" and \
                self.i < len(self.words) and self.words[self.i].text not in _BINARY:
            self.take()
            return None  # a file test: only the machine that runs the script can say
        if self.i < len(self.words) and self.words[self.i].text in _BINARY:
            op = self.take().text
            at = self.i
            right = self.take()
            pattern = self.patterns[at] if self.double and op in ("=", "==", "!=") else None
            if first.unknown or right.unknown or (pattern is not None and pattern.unknown):
                return None
            return _compare(first.text, op, pattern.text if pattern is not None else right.text,
                            glob=pattern is not None)
        if first.unknown:
            return None
        return first.text != ""


_BINARY = {"=", "==", "!=", "-eq", "-ne", "-gt", "-ge", "-lt", "-le", "=~", "<", ">"}


def _compare(a: str, op: str, b: str, glob: bool) -> bool | None:
    if op in ("=", "=="):
        return _glob(b, a) if glob else a == b
    if op == "!=":
        return not (_glob(b, a) if glob else a == b)
    if op == "=~":
        try:
            return re.search(b, a) is not None
        except re.error:
            return None
    if op in ("<", ">"):
        return a < b if op == "<" else a > b
    try:
        x, y = int(a.strip() or "0"), int(b.strip() or "0")
    except ValueError:
        return None
    return {"-eq": x == y, "-ne": x != y, "-gt": x > y, "-ge": x >= y, "-lt": x < y, "-le": x <= y}[op]


def _glob(pattern: str, text: str) -> bool:
    return re.fullmatch(_glob_to_regex(pattern), text, re.DOTALL) is not None


def _escape_glob(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _glob_to_regex(pattern: str) -> str:
    """A shell pattern as a regular expression: ``*``, ``?``, ``[...]`` (``[!...]`` negated) and
    backslash escapes."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                out.append("[" + pattern[i + 1:end].replace("!", "^", 1) + "]")
                i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _pattern_op(value: str, rest: str, expand: Callable[[str], str]) -> str | None:
    """``#pat``, ``##pat``, ``%pat``, ``%%pat``, ``/pat/rep``, ``//pat/rep``, ``:offset:length``, ``^``/``,``."""
    for op in ("##", "#", "%%", "%"):
        if rest.startswith(op):
            pattern = expand(rest[len(op):])
            cuts = range(len(value) + 1)
            if op.startswith("#"):
                hits = [k for k in cuts if _glob(pattern, value[:k])]
                if not hits:
                    return value
                return value[(max(hits) if op == "##" else min(hits)):]
            hits = [k for k in cuts if _glob(pattern, value[k:])]
            if not hits:
                return value
            return value[:(min(hits) if op == "%%" else max(hits))]
    if rest.startswith("/"):
        whole = rest.startswith("//")
        body = rest[2:] if whole else rest[1:]
        pattern, _, replacement = body.partition("/")
        pattern, replacement = expand(pattern), expand(replacement)
        regex = _glob_to_regex(pattern) or "(?!)"
        return re.sub(regex, lambda _: replacement, value, count=0 if whole else 1, flags=re.DOTALL)
    m = re.fullmatch(r":\s*(-?\d+)(?::\s*(-?\d+))?", rest)
    if m is not None:
        start = int(m.group(1))
        if m.group(2) is None:
            return value[start:]
        length = int(m.group(2))
        return value[start:start + length] if length >= 0 else value[start:length]
    if rest in ("^^", "^"):
        return value.upper() if rest == "^^" else value[:1].upper() + value[1:]
    if rest in (",,", ","):
        return value.lower() if rest == ",," else value[:1].lower() + value[1:]
    return None


def _directives(script: str) -> list[tuple[str, str]]:
    """``#SBATCH`` options as sbatch reads them: comment lines before the script's first command, every
    option of a line (``#SBATCH -N 2 -p batch``), quotes removed, up to a comment."""
    out: list[tuple[str, str]] = []
    for line in script.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if not re.match(r"#SBATCH\s", stripped):
            continue
        try:
            words = shlex.split(stripped[len("#SBATCH"):], comments=True)
        except ValueError:  # an unbalanced quote: sbatch would refuse the line too
            continue
        out += slurm_options(words)[0]
    return out


def _heredoc_word(body: str) -> str:
    """A here-document's text as a double-quoted word, so expansion treats it as one."""
    return '"' + body.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\$", "\\$").replace("\\\\`", "\\`") + '"'


def close_of(text: str, i: int, open_: str, close: str) -> int:
    """Just past the `close` that balances the `open_` at i, skipping escapes, quotes and nested pairs; -1
    where it is never closed. The lexer and the word expander both scan with it, so they agree."""
    depth, j, n = 0, i, len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == "'" and open_ == "(":
            end = text.find("'", j + 1)
            j = (end if end >= 0 else n - 1) + 1
        elif ch == '"':
            j = quote_end(text, j)
            if j < 0:
                return -1
        else:
            depth += (ch == open_) - (ch == close)
            j += 1
            if ch == close and depth == 0:
                return j
    return -1


def quote_end(text: str, i: int) -> int:
    """Just past the double quote that closes the one at i (substitutions inside skipped whole); -1 where
    it is never closed."""
    j, n = i + 1, len(text)
    while j < n and text[j] != '"':
        if text[j] == "\\":
            j += 2
        elif text[j] == "$" and text[j + 1:j + 2] in "({":
            j = close_of(text, j + 1, text[j + 1], ")" if text[j + 1] == "(" else "}")
            if j < 0:
                return -1
        elif text[j] == "`":
            end = text.find("`", j + 1)
            j = (end if end > 0 else n) + 1
        else:
            j += 1
    return j + 1 if j < n else -1


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """The index of the `close` balancing the `open_` at i in a word the lexer has already read whole."""
    end = close_of(text, i, open_, close)
    if end < 0:
        raise ShellError(f"an unclosed `{open_}`", None)
    return end - 1


def _requote(pieces: list[Piece], quoted: bool) -> list[Piece]:
    """A variable's value as it lands in a word: split (unquoted) or kept whole (quoted)."""
    return [Piece(p.text, quoted, p.span, p.unknown) for p in pieces]


def _split(pieces: list[Piece], had_quotes: bool) -> list[list[Piece]]:
    """Word splitting: unquoted pieces split on blanks; a field break (between the elements of
    "${A[@]}") always ends a field."""
    fields: list[list[Piece]] = []
    cur: list[Piece] = []
    started = False
    for p in pieces:
        if p.text == _FIELD_BREAK and not p.quoted:
            if cur or started:
                fields.append(cur)
            cur, started = [], False
            continue
        if p.quoted or p.unknown:
            cur.append(p)
            started = True
            continue
        parts = re.split(r"[ \t\n]+", p.text)
        for k, part in enumerate(parts):
            if k > 0 and (cur or started):
                fields.append(cur)
                cur, started = [], False
            if part:
                cur.append(Piece(part, True, p.span, p.unknown))
                started = True
    if cur or started:
        fields.append(cur)
    if not fields and had_quotes and not any(p.text == _FIELD_BREAK for p in pieces):
        fields.append([])  # "" is one empty word; "${EMPTY[@]}" is none
    return fields


MAX_PIECES = 1 << 16  # the runs of characters one value holds: a recipe's longest command line has hundreds


def _bounded(pieces: list[Piece], span: Span | None) -> list[Piece]:
    """``pieces`` as a variable may hold them: within ``MAX_TEXT`` characters and ``MAX_PIECES`` runs. Checked as
    each value is stored, not only where one is used: `A="$A$A"` doubles what is stored on each line, and 24 such
    lines held gigabytes before any use measured them."""
    if len(pieces) > MAX_PIECES or sum(len(p.text) for p in pieces) > MAX_TEXT:
        raise ShellError(f"a value longer than {MAX_TEXT:,} characters", span)
    return pieces


MAX_WORDS = 4096  # the elements of an array or the arguments of a call: a recipe's have hundreds


def _bounded_words(lengths: list[int], count: int, span: Span | None) -> None:
    """An array's elements or a call's arguments as the script may hold them: ``MAX_WORDS`` of them within
    ``MAX_TEXT`` characters (`A=("${A[@]}" "${A[@]}")` doubles them on each line, as `A="$A$A"` its text)."""
    if count > MAX_WORDS or sum(lengths) > MAX_TEXT:
        raise ShellError(f"more than {MAX_WORDS:,} words or {MAX_TEXT:,} characters in one array or argument list",
                         span)


def _join(pieces: list[Piece]) -> Word:
    # unsplit ("${A[@]}" inside a longer string, or assigned), elements are joined by a blank
    text = "".join(" " if p.text == _FIELD_BREAK else p.text for p in pieces)
    if len(text) > MAX_TEXT:
        raise ShellError(f"a value longer than {MAX_TEXT:,} characters", pieces[0].span if pieces else None)
    unknown = _unknown(pieces)
    # where the value was written: its first character's piece (an empty marker piece says nothing)
    span = next((p.span for p in pieces if p.span is not None and p.text),
                next((p.span for p in pieces if p.span is not None), None))
    return Word(text, span, unknown)


def _unknown(pieces: list[Piece]) -> tuple[Why, ...]:
    out: list[Why] = []
    for p in pieces:
        for why in p.unknown:
            if why not in out:
                out.append(why)
    return tuple(out)


def _evaluate_int(text: str) -> int:
    """Integer arithmetic with bash's operators, by precedence climbing (no ``eval``)."""
    tokens: list[str] = re.findall(r"\d+|\*\*|<=|>=|==|!=|&&|\|\||[-+*/%()<>!]", text)
    pos = 0

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    levels = [("||",), ("&&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%")]

    def binary(level: int) -> int:
        if level == len(levels):
            return power()
        left = binary(level + 1)
        while peek() in levels[level]:
            op = take()
            right = binary(level + 1)
            left = _apply(op, left, right)
        return left

    def power() -> int:
        base = unary()
        if peek() == "**":
            take()
            exponent = power()
            if exponent > 64:
                raise ValueError("too large")
            return int(base**exponent)
        return base

    def unary() -> int:
        if peek() in ("-", "+", "!"):
            op = take()
            v = unary()
            return -v if op == "-" else v if op == "+" else int(not v)
        if peek() == "(":
            take()
            v = binary(0)
            if take() != ")":
                raise ValueError("unbalanced")
            return v
        token = take()
        if not token.isdigit():
            raise ValueError(token)
        # bash reads a constant with a leading 0 as octal (`$((010))` is 8) and stops on `08`
        return int(token, 8) if len(token) > 1 and token.startswith("0") else int(token)

    value = binary(0)
    if pos != len(tokens):
        raise ValueError("trailing")
    return value


def _apply(op: str, a: int, b: int) -> int:
    if op == "/":
        if b == 0:
            raise ZeroDivisionError
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if op == "%":
        if b == 0:
            raise ZeroDivisionError
        return a - b * _apply("/", a, b)
    return {"+": a + b, "-": a - b, "*": a * b, "<": int(a < b), ">": int(a > b), "<=": int(a <= b),
            ">=": int(a >= b), "==": int(a == b), "!=": int(a != b), "&&": int(bool(a and b)),
            "||": int(bool(a or b))}[op]


def read_launch(text: str, file: str, given: Mapping[str, str], positional: tuple[str, ...] = ()) -> Launch:
    """The launch command of a script, its words expanded; ShellError when it cannot be read."""
    sh = Shell(file, given, positional)
    toks = _Lexer(text, file).tokens()
    sh.directives += _directives(text)
    exited: Span | None = None
    because: tuple[str, int] | None = None
    try:
        sh.run(toks)
    except _Exit as e:
        exited, because = e.at, e.because
    except (_Return, _Break):
        pass
    if not sh.launches and sh.flag_lines:
        sh.launches.append((list(sh.flag_lines), {}))
    if not sh.launches:
        # what the reading took on the way is what a user needs to see here: the exit it reached, the
        # file it did not follow, the variables it read as empty
        exits = (f"the script exits at {exited.line}:{exited.column} before any training command"
                 + (f", where `if {because[0]}` (line {because[1]}) held" if because is not None else ""),) \
            if exited is not None else ()
        tested = _tested_names(because[0]) if because is not None else []
        said, later = tuple(dict.fromkeys(sh.notes)), _empty_note(sh) + _kept_note(sh)
        cli = sh.primus_run if sh.primus_run is not None and sh.primus_run.cli else None
        raise ShellError("the script runs no training command (`torchrun`, `python ... pretrain_gpt.py`, "
                         "`run_recipe.py`)", Span(file, 1, 1, 1, 2),
                         help=f"`--set {tested[0]}=VALUE` gives the value it tests" if tested
                         else _primus_cli_help(cli) if cli is not None
                         else "pass the script that launches training, or its command line",
                         notes=exits + said + later + _primus_cli_note(cli),
                         primus=evolve(sh.primus_run, notes=said + _defaults_note(sh) + later)
                         if sh.primus_run is not None else None)
    words, env = sh.launches[-1]
    notes = [*dict.fromkeys(sh.notes), *_defaults_note(sh), *_empty_note(sh)]
    for name, whys in sh.unknown_at_launch.items():
        if not carried_env(name):
            continue  # the launch files set it, or it is a credential: never carried in any case
        settable = [w.variable for w in whys if w.variable]
        notes.append(f"`{name}` is not carried to the launch's environment: its value reads "
                     f"{', '.join(dict.fromkeys(w.what for w in whys))}, known only when the script runs"
                     + (f" (`--set {settable[0]}=VALUE` gives it)" if settable else ""))
    notes += _kept_note(sh)
    unread = [n for n in given if n not in sh.given_read]
    if unread:
        notes.append(f"{', '.join(f'`--set {n}=...`' for n in unread)} changed nothing: the script never reads "
                     f"{'it' if len(unread) == 1 else 'them'}, or sets {'it' if len(unread) == 1 else 'them'} "
                     "itself first (check the name)")
    if len(sh.launches) > 1:
        notes.append(f"the script runs {len(sh.launches)} training commands; read the last")
    return Launch(tuple(words), tuple(sorted(env.items())), tuple(notes), tuple(sh.directives), tuple(sh.submitted),
                  tuple(sh.used_defaults.items()))


def _tested_names(test: str) -> list[str]:
    """The variables a test reads (``[ -z "$IMAGE" ]``: ``IMAGE``)."""
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in _VARIABLE_READ.finditer(test)))


_VARIABLE_READ = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)|\$([A-Za-z_][A-Za-z0-9_]*)")


def _primus_run(sh: Shell, name: str, fields: list[Word], env: dict[str, str]) -> PrimusRun | None:
    """The experiment and overrides of a command that runs Primus's CLI or one of its example launchers
    (``bash examples/run_slurm_pretrain.sh --micro_batch_size 4``, ``EXP`` exported or given before it);
    None for any other command, or a launcher without an experiment."""
    # `bash ./primus-cli ...` runs the same as `./primus-cli ...` (AMD's start_training_*.sh scripts)
    script = 1 if name.rsplit("/", 1)[-1] in ("bash", "sh") and len(fields) > 1 else 0
    texts = [f.text for f in fields]
    if fields[script].text.rsplit("/", 1)[-1] == _PRIMUS_CLI and "train" in texts and "--config" in texts[:-1]:
        at = texts.index("--config")
        # the CLI's own options before its `--` (`slurm srun -N 2 -p X -t 01:00:00`)
        launcher = tuple(texts[script + 1:texts.index("--")]) if "--" in texts[:at] else ()
        return PrimusRun(fields[at + 1], tuple(fields[at + 2:]), f"{_PRIMUS_CLI} train pretrain",
                         tuple(sorted({**sh.exported(), **env}.items())), launcher=launcher)
    if fields[script].text.rsplit("/", 1)[-1] not in _PRIMUS_LAUNCHERS:
        return None
    seen = {**sh.exported(), **env}
    var = sh.vars.get("EXP")
    if "EXP" in seen:
        config = Word(seen["EXP"], fields[script].span)
    elif var is not None and var.exported and var.values:
        config = _join(var.values[0] or [])  # exported, its value known only when the script runs
    else:
        return None
    launched = {k: v for k, v in seen.items() if k != "EXP"}
    return PrimusRun(config, tuple(fields[script + 1:]), fields[script].text, tuple(sorted(launched.items())))


def _primus_cli_help(run: PrimusRun) -> str:
    """What to import for a script that runs Primus's CLI: the experiment file, with the script's overrides."""
    config = run.config.text + (" (its value only the running script knows)" if run.config.unknown else "")
    given = "; primusc does not apply the overrides the script adds (the note lists them): write them into the experiment's " \
            "`overrides` first" if run.overrides else ""
    return (f"the script runs Primus's CLI on the experiment `{config}`: import that file (`primusc import-recipe "
            f"{config}`, from the Primus checkout the script runs in){given}")


def _primus_cli_note(run: PrimusRun | None) -> tuple[str, ...]:
    if run is None:
        return ()
    overrides, launcher = [w.text for w in run.overrides], run.launcher
    out: tuple[str, ...] = (f"the script's overrides of the experiment: {' '.join(overrides)}",) if overrides else ()
    if launcher[:1] == ("slurm",) and any(w.startswith("-") for w in launcher):
        # where the job runs is the CLI's, which importing the experiment does not read
        out += (f"the CLI's own launcher options, `{shown(' '.join(launcher), 200)}`, are not read with the experiment: "
                "a site in the imported space gives them (`partition`, `account`, `reservation`, `time_limit`, `image`; "
                "docs/language.md)",)
    return out


def _defaults_note(sh: Shell) -> tuple[str, ...]:
    if not sh.used_defaults:
        return ()
    taken = ", ".join(f"`{n}`=`{'(a credential: not shown)' if credential(n) else shown(d)}`"
                      for n, d in sh.used_defaults.items())
    return (f"took the script's defaults for what its environment would set: {taken} "
            "(`--set NAME=VALUE` gives another)",)


def _kept_note(sh: Shell) -> tuple[str, ...]:
    if not sh.kept:
        return ()
    return (", ".join(f"`--set {n}`" for n in sh.kept) + " kept over the script's own assignment ("
            + ", ".join(f"line {at.line}" for at in sh.kept.values()) + ")",)


def _empty_note(sh: Shell) -> tuple[str, ...]:
    if not sh.empty_in_tests:
        return ()
    names = ", ".join(f"`{n}`" if not n.isdigit() else f"`${n}`" for n in sh.empty_in_tests)
    return (f"tested as empty, as bash reads a variable nobody set: {names} (`--set NAME=VALUE` gives one)",)


def launch_of(text: str, file: str, given: Mapping[str, str] | None = None) -> Launch:
    """``read_launch`` with its failure as a diagnostic."""
    out = _launch(text, file, given, primus=False)
    assert isinstance(out, Launch)
    return out


def launch_or_primus(text: str, file: str, given: Mapping[str, str] | None = None) -> Launch | PrimusRun:
    """``launch_of``, or the Primus experiment the script runs where its training command is Primus's CLI
    or one of Primus's example launchers (and the script names the experiment)."""
    return _launch(text, file, given, primus=True)


def _launch(text: str, file: str, given: Mapping[str, str] | None, primus: bool) -> Launch | PrimusRun:
    given = dict(given or {})
    # `--set 1=VALUE` gives the script's first argument: the arguments are those given from $1 on, in order
    positional: list[str] = []
    while str(len(positional) + 1) in given:
        positional.append(given.pop(str(len(positional) + 1)))
    try:
        return read_launch(text, file, given, tuple(positional))
    except ShellError as err:
        if primus and err.primus is not None and not err.primus.config.unknown:
            return err.primus
        raise CompileError(Diagnostic(RECIPE_SHELL_SYNTAX, err.message, span=err.span, notes=err.notes,
                                      help=err.help or "primusc reads a script as bash would, without running it; "
                                      "write the value the run used, or give it with `--set NAME=VALUE`")) from None
