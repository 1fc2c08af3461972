"""The one loader for the YAML and JSON data files primusc is given (runs files, model cards,
Hugging Face configs, search traces, LLM cassettes, the JSON in a profile database), so every such
file is held to the same limits.

A data file is hostile until read. It may be endless (``/dev/zero``), not UTF-8, nested thousands
deep (Python's parsers recurse), a YAML alias bomb (nine lines of ``&a``/``*a`` name 10^9 nodes:
the loaded object shares them, but any code that walks or prints it pays for every one), or hold an
integer longer than Python converts. Each is refused with a diagnostic before it costs memory or a
traceback: at most ``MAX_BYTES`` + 1 bytes are read, YAML nesting and the node count with every
alias expanded are counted while the document is composed, JSON nesting is checked on the parsed
value, and so is each line of a JSON-lines file (``read_json_lines``: a search trace). Training
logs are not parsed here but read through ``read_lines``: line by line, bounded in
total. The caller names the diagnostic codes (``DataCodes``), since each command has its own family.
"""

from __future__ import annotations

import codecs
import errno
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import yaml
from attrs import frozen

from primus_lang.diagnostics import Code, CompileError, Diagnostic
from primus_lang.ir.span import Span
from primus_lang.sources import SOURCES

MAX_BYTES = 16 * 2**20  # 35x the published-runs corpus; a config.json is a few KiB
MAX_DEPTH = 64  # the corpus nests 4 deep, a config.json 3
MAX_NODES = 250_000  # with aliases expanded: 9x the corpus's 27,000; PyYAML holds about 1 KiB a node
MAX_DIGITS = 100  # an integer literal; Python refuses to convert more than 4,300 digits
# A training log is read line by line, not whole: a million logged iterations fit
MAX_LOG_BYTES = 256 * 2**20
MAX_LINE = 64 * 2**10  # a longer line comes in pieces, none of which is a line Megatron prints


@frozen
class DataCodes:
    """The codes a command reports its data files' problems with."""

    unreadable: Code  # cannot be opened, or is not valid YAML/JSON
    encoding: Code  # not UTF-8
    too_large: Code  # more than MAX_BYTES
    too_deep: Code  # nested more than MAX_DEPTH
    too_many_nodes: Code  # more than MAX_NODES nodes once aliases are expanded, or an alias inside itself
    number: Code  # an integer of more than MAX_DIGITS digits


class _Refusal(Exception):
    """A limit hit while loading; ``kind`` names the field of ``DataCodes`` to report it with."""

    def __init__(self, kind: str, message: str, line: int = 0, column: int = 0, *, help: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.line, self.column, self.help = kind, message, line, column, help


def open_input(path: str | Path) -> IO[bytes]:
    """``path`` opened to read, never blocking: a named pipe or a socket is refused with an
    ``OSError`` (as a folder is) before anything is read, since the open of a pipe waits for a writer
    and its read for data that may never come. Devices are opened: every reader here reads a bounded
    number of bytes, so ``/dev/zero`` ends in a size diagnostic. Callers turn the ``OSError`` into
    their own "cannot read" diagnostic."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            kind = "a named pipe" if stat.S_ISFIFO(mode) else "a socket"
            raise OSError(errno.EINVAL, f"it is {kind}, not a file (primusc reads files only)", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str | Path, codes: DataCodes, what: str) -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped), refused beyond ``MAX_BYTES``
    without reading further."""
    name = str(path)
    try:
        with open_input(path) as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                # `/dev/zero` read to the size limit said "larger than 16 MiB": it is no file at all
                raise CompileError(Diagnostic(codes.unreadable, f"`{name}` is a device, not a file",
                                              help=f"pass the path of {what}"))
            raw = f.read(MAX_BYTES + 1)
    except OSError as err:
        raise CompileError(Diagnostic(codes.unreadable, f"cannot read `{name}`: {err.strerror or err}",
                                      help=f"pass the path of {what}")) from None
    if len(raw) > MAX_BYTES:
        raise CompileError(Diagnostic(codes.too_large, f"`{name}` is larger than {MAX_BYTES // 2**20} MiB",
                                      help=f"{what} this large is not one primusc reads; check the path"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise CompileError(Diagnostic(codes.encoding, f"`{name}` is not UTF-8 text (byte {err.start})",
                                      span=Span(name, line, 1, line, 2),
                                      help=f"save {what} as UTF-8")) from None
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write; JSON refuses one
    SOURCES.add(name, text)
    return text


def _encoding(raw: IO[bytes]) -> str:
    """How a log's bytes are text: UTF-16 where it starts with that byte-order mark (Windows PowerShell's
    `kubectl logs ... > train.log` writes UTF-16LE with one), else UTF-8, a byte-order mark of its own
    dropped."""
    peek = getattr(raw, "peek", None)
    head = peek(64)[:64] if peek is not None else b""
    for bom, high in ((codecs.BOM_UTF16_LE, 1), (codecs.BOM_UTF16_BE, 0)):
        body = head[len(bom):]
        # a log's text is mostly ASCII, whose high bytes are 0 in UTF-16: two bytes of garbage that happen to
        # be a byte-order mark (a hostile test's) are not taken for one
        highs = body[high::2]
        if head.startswith(bom) and highs and highs.count(0) * 2 >= len(highs):
            return "utf-16"
    return "utf-8-sig"


def read_lines(path: str | Path, unreadable: Code, too_large: Code, what: str) -> Iterator[str]:
    """The lines of a text file as they are read (undecodable bytes replaced), with their line ends,
    so a reader can tell a last line cut off mid-write; refused past ``MAX_LOG_BYTES``, so
    ``/dev/zero`` ends in a diagnostic instead of never."""
    name, read = str(path), 0
    try:
        with open_input(path) as raw, io.TextIOWrapper(raw, encoding=_encoding(raw), errors="replace") as f:
            while line := f.readline(MAX_LINE):
                read += len(line)
                if read > MAX_LOG_BYTES:
                    raise CompileError(Diagnostic(too_large, f"`{name}` is longer than {MAX_LOG_BYTES // 2**20} MiB",
                                                  help=f"pass a shorter {what}: the arguments block and the "
                                                       "iteration lines are all primusc reads"))
                yield line
    except OSError as err:
        raise CompileError(Diagnostic(unreadable, f"cannot read `{name}`: {err.strerror or err}",
                                      help=f"pass the path of {what}")) from None


def _refused(name: str, codes: DataCodes, refusal: _Refusal) -> CompileError:
    span = Span(name, refusal.line, refusal.column, refusal.line, refusal.column + 1) if refusal.line else None
    code: Code = getattr(codes, refusal.kind)
    return CompileError(Diagnostic(code, f"`{name}` {refusal.message}", span=span, help=refusal.help))


# --- YAML -------------------------------------------------------------------------------------------


def _where(mark: Any) -> tuple[int, int]:
    """(line, column) from 1 of a PyYAML mark; (0, 0) when there is none."""
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _int_refusal(mark: Any) -> _Refusal:
    return _Refusal("number", f"holds an integer of more than {MAX_DIGITS} digits", *_where(mark),
                    help="no field of a data file needs a number this long")


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting depth and expanded nodes as it composes. A node's expanded
    size is the running count at its end minus the count at its start, so an alias adds its
    anchor's whole size in O(1) and the bomb is refused after reading a few lines of it."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._total = 0
        self._sizes: dict[str, int] = {}

    def _add(self, count: int, mark: Any) -> None:
        self._total += count
        if self._total > MAX_NODES:
            raise _Refusal("too_many_nodes", f"holds more than {MAX_NODES:,} values (each alias counted as all it names)",
                           *_where(mark), help="write the values out, or use fewer aliases of large nodes")

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            size = self._sizes.get(event.anchor) if event.anchor is not None else None
            if size is None and event.anchor in self.anchors:
                raise _Refusal("too_many_nodes", f"has the alias `*{event.anchor}` inside its own anchor",
                               *_where(event.start_mark), help="a data file's values are finite: refer to a finished node")
            node = super().compose_node(parent, index)
            self._add(size or 0, event.start_mark)
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refusal("too_deep", f"nests more than {MAX_DEPTH} levels deep", *_where(event.start_mark),
                           help="a data file nests a few levels; check how it was generated")
        start = self._total
        self._add(1, event.start_mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._sizes[anchor] = self._total - start
        return node

    unique_keys = False  # refuse a key written twice in one mapping (YAML keeps the last silently)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if self.unique_keys:
            seen: dict[object, int] = {}
            for key, _value in node.value:
                if key.tag == "tag:yaml.org,2002:merge" or not isinstance(key, yaml.ScalarNode):
                    continue
                if key.value in seen:
                    raise _Refusal("unreadable", f"holds the key `{str(key.value)[:40]}` twice in one mapping (line "
                                   f"{seen[key.value]} and here), and YAML would keep the last silently",
                                   *_where(key.start_mark), help="keep one of them")
                seen[key.value] = key.start_mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:
            # a date like 2024-13-45, or an integer Python will not convert
            raise _Refusal("unreadable", f"holds a value that cannot be read, `{str(node.value)[:40]}`: {exc}",
                           *_where(node.start_mark), help="fix the value") from None


def _construct_int(loader: _BoundedLoader, node: yaml.ScalarNode) -> Any:
    if sum(c.isdigit() for c in str(node.value)) > MAX_DIGITS:
        raise _int_refusal(node.start_mark)
    return loader.construct_yaml_int(node)


def _refuse_binary(loader: _BoundedLoader, node: yaml.ScalarNode) -> Any:
    # PyYAML's safe loader gives bytes, which were carried on as their Python repr (`b'...'`)
    raise _Refusal("unreadable", "holds a `!!binary` value, which no setting of a recipe or field of a data "
                   "file takes", *_where(node.start_mark), help="write the value as text")


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:binary", _refuse_binary)


def load_yaml(path: str | Path, codes: DataCodes, what: str, unique_keys: bool = False) -> Any:
    """One YAML document of ``path`` (None when empty), within the limits above (``unique_keys``: a key
    written twice in a mapping is refused, for files of primusc's own schema)."""
    return loads_yaml(read_text(path, codes, what), str(path), codes, what, unique_keys)


def loads_yaml(text: str, name: str, codes: DataCodes, what: str, unique_keys: bool = False) -> Any:
    """``text`` (already read by ``read_text``, or a value taken from such a file) as one YAML
    document, within the limits above."""
    try:
        loader = _BoundedLoader(text)  # PyYAML's reader checks every character here, before parsing
        loader.unique_keys = unique_keys
    except yaml.reader.ReaderError as err:
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        raise CompileError(Diagnostic(codes.unreadable, f"`{name}` holds the control character U+{err.character:04X}, "
                                      "which YAML does not allow (even in a comment)",
                                      span=Span(name, line, column, line, column + 1),
                                      help=f"remove it: {what} is plain text")) from None
    try:
        return loader.get_single_data()
    except _Refusal as refusal:
        raise _refused(name, codes, refusal) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        span = Span(name, line, column, line, column + 1) if line else None
        problem = getattr(err, "problem", None) or str(err)
        raise CompileError(Diagnostic(codes.unreadable, f"`{name}` is not valid YAML: {problem}", span=span,
                                      help=f"{what} is a YAML file")) from None
    finally:
        loader.dispose()


# --- numbers ----------------------------------------------------------------------------------------

COUNT_DIGITS = 18  # a count on a command line or in a log: 10^18 of anything is no count primusc meets


def read_count(text: str, digits: int = COUNT_DIGITS) -> int:
    """A whole number of 0 or more written in ASCII digits, at most ``digits`` of them: the one reader of
    counts from command lines, logs and data, since ``int`` takes ``-1``, ``²`` and ``1_000`` and spends
    quadratic time on, or refuses past 4,300 digits with a ``ValueError`` no caller expects, a long one.
    ``ValueError`` with a sentence to show otherwise."""
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()):
        raise ValueError(f"`{text[:40]}` is not a whole number of 0 or more")
    if len(stripped) > digits:
        raise ValueError(f"`{text[:20]}...` has {len(stripped):,} digits; a count here has at most {digits}")
    return int(stripped)


def parse_json(text: str) -> Any:
    """``text`` as JSON with the limits of a data file (integers of at most ``MAX_DIGITS`` digits, nesting
    of at most ``MAX_DEPTH``), for JSON that comes from elsewhere than a file (an LLM's reply, a tool
    call's arguments). ``ValueError`` (``json.JSONDecodeError`` among them) when it is not that."""
    try:
        return _parse_json(text)
    except _Refusal as refusal:
        raise ValueError(refusal.message) from None


# --- JSON -------------------------------------------------------------------------------------------

_LONG_INT = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _int_refusal(None)
    return int(text)


def _depth(value: Any) -> int:
    """How deep ``value`` nests, without recursion (the point is to refuse what recursion cannot take)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _parse_json(text: str) -> Any:
    """``text`` as JSON; ``_Refusal`` for a long integer or a value nested past ``MAX_DEPTH``,
    ``json.JSONDecodeError`` for text that is not JSON."""
    try:
        value = json.loads(text, parse_int=_json_int)
    except RecursionError:
        value, deep = None, True  # deeper than the parser's recursion: refused like any too-deep value
    else:
        deep = _depth(value) > MAX_DEPTH
    if deep:
        raise _Refusal("too_deep", f"nests more than {MAX_DEPTH} levels deep")
    return value


def loads_json(text: str, name: str, codes: DataCodes, what: str) -> Any:
    """``text`` (already read by ``read_text``) as JSON, within the limits above."""
    try:
        return _parse_json(text)
    except _Refusal as refusal:
        if refusal.kind == "too_deep":
            raise CompileError(Diagnostic(codes.too_deep, f"`{name}` {refusal.message}",
                                          help=f"{what} nests a few levels; check how the file was generated")) from None
        where = _LONG_INT.search(text)
        if where is not None:
            refusal.line = text.count("\n", 0, where.start()) + 1
            refusal.column = where.start() - (text.rfind("\n", 0, where.start()) + 1) + 1
        raise _refused(name, codes, refusal) from None
    except json.JSONDecodeError as err:
        raise CompileError(Diagnostic(codes.unreadable, f"`{name}` is not valid JSON: {err.msg}",
                                      span=Span(name, err.lineno, err.colno, err.lineno, err.colno + 1),
                                      help=f"{what} is one JSON object")) from None


def read_json_lines(path: str | Path, codes: DataCodes, what: str) -> Iterator[tuple[int, Any]]:
    """Each non-empty line of a JSON-lines file as (line number, value), the value None for a line
    that is not JSON (one torn by a kill while it was written). Read as it goes, bounded like a log
    in total (``MAX_LOG_BYTES``) and like a data file per line (``MAX_BYTES``); a line within those
    but not UTF-8, nested too deep or holding too long an integer refuses the whole file."""
    name, read = str(path), 0
    try:
        handle = open_input(path)  # closed below; a generator cannot `with` across its yields and the open's error
    except OSError as err:
        raise CompileError(Diagnostic(codes.unreadable, f"cannot read `{name}`: {err.strerror or err}",
                                      help=f"pass the path of {what}")) from None
    with handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_BYTES + 1), b""), start=1):
            read += len(raw)
            if read > MAX_LOG_BYTES or len(raw.rstrip(b"\r\n")) > MAX_BYTES:
                longer = f"line {number} is longer than {MAX_BYTES // 2**20} MiB" if read <= MAX_LOG_BYTES \
                    else f"is longer than {MAX_LOG_BYTES // 2**20} MiB"
                raise CompileError(Diagnostic(codes.too_large, f"`{name}` {longer}",
                                              help=f"{what} this large is not one primusc wrote; check the path"))
            try:
                text = raw.decode("utf-8").strip()
                if number == 1:
                    text = text.removeprefix("\ufeff")  # as read_text: an editor's byte-order mark
            except UnicodeDecodeError as err:
                raise CompileError(Diagnostic(codes.encoding, f"`{name}` is not UTF-8 text (line {number}, byte {err.start})",
                                              span=Span(name, number, err.start + 1, number, err.start + 2),
                                              help=f"{what} is UTF-8 JSON, one value a line")) from None
            if not text:
                continue
            try:
                value = _parse_json(text)
            except _Refusal as refusal:
                refusal.line, refusal.column = number, 1
                raise _refused(name, codes, refusal) from None
            except json.JSONDecodeError:
                value = None
            yield number, value
