"""The pygls wiring of ``primusc lsp``: documents in, diagnostics, hovers, completions out.

Every parse runs on one analysis thread (the parser's state is a module global); the memory proof
of a space's points runs on another (``slow.py``) and never delays an edit. Each result carries the
document version it was computed for and is dropped if the editor has moved on.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls import uris
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.lsp.server import LanguageServer

from primus_lang import __version__
from primus_lang.diagnostics import CompileError, Diagnostic, Severity
from primus_lang.lsp import complete, navigate
from primus_lang.lsp.analysis import Analysis, analyse, resolve
from primus_lang.lsp.context import imports
from primus_lang.lsp.fixes import quick_fix
from primus_lang.lsp.knowledge import code_markdown, resolved_markdown
from primus_lang.lsp.positions import from_client, lines, span_range
from primus_lang.lsp.protocol import PrimusProtocol
from primus_lang.lsp.slow import Cancelled, Fits, SlowWork, fitting_points
from primus_lang.syntax import MAX_BYTES, format_source

T = TypeVar("T")
EXPLAIN_SCHEME = "primusc-explain"  # codeDescription links: the VS Code extension opens them

_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
             Severity.NOTE: lsp.DiagnosticSeverity.Information}
_COMPLETION = {"keyword": lsp.CompletionItemKind.Keyword, "field": lsp.CompletionItemKind.Field,
               "value": lsp.CompletionItemKind.EnumMember, "module": lsp.CompletionItemKind.Module,
               "name": lsp.CompletionItemKind.Reference, "function": lsp.CompletionItemKind.Function,
               "variable": lsp.CompletionItemKind.Variable}
_SYMBOL = {"model": lsp.SymbolKind.Class, "gpu": lsp.SymbolKind.Struct, "cluster": lsp.SymbolKind.Struct,
           "space": lsp.SymbolKind.Module, "import": lsp.SymbolKind.Namespace, "field": lsp.SymbolKind.Field,
           "axis": lsp.SymbolKind.Enum}


class PrimusServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("primusc", __version__, protocol_cls=PrimusProtocol)
        self.parser_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="primusc-parse")
        # a hover's lookup runs beside the document's analysis, never queued behind it
        self.quick_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="primusc-quick")
        self.slow = SlowWork()
        self.versions: dict[str, int] = {}
        self.analyses: dict[str, Analysis] = {}
        self.fits: dict[str, dict[str, Fits]] = {}
        self.waiting: set[asyncio.Future[None]] = set()  # held so the loop does not drop them

    async def on_parser(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.parser_thread, fn)

    async def on_quick(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.quick_thread, fn)

    def units(self, text: str) -> int:
        return int(self.workspace.position_codec.client_num_units(text))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls shows every error outside a request's answer as an "Error in server" pop-up. A body it
        could not read is the client's: it gets JSON-RPC's answer. Anything else goes to the editor's
        log for the server, not in front of the user typing."""
        if source is FeatureRequestError:
            return  # the request's error response carries it
        if source is JsonRpcException:
            assert isinstance(self.protocol, PrimusProtocol)
            self.protocol.unreadable(error)
            return
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"primusc: {error}"[:2000]))


def _file_of(uri: str) -> str:
    path = uris.to_fs_path(uri)
    return path if path else f"<{uri}>"


def _base(file: str) -> Path | None:
    return None if file.startswith("<") else Path(file).parent


def _range(start: tuple[int, int], end: tuple[int, int]) -> lsp.Range:
    return lsp.Range(lsp.Position(*start), lsp.Position(*end))


def _whole(text: str, units: Callable[[str], int]) -> lsp.Range:
    last = text.rfind("\n")
    return _range((0, 0), (text.count("\n"), units(text[last + 1:])))


def _import_line(text_lines: list[str], text: str, file: str) -> int:
    """The line of the import through which a diagnostic in another file arrived."""
    for source, is_path, _ in imports(text):
        needle = Path(source).name if is_path else source.replace(".", "/") + ".prx"
        if needle in file:
            for row, src in enumerate(text_lines):
                if src.lstrip().startswith("import") and source in src:
                    return row
    return 0


def to_lsp(d: Diagnostic, analysis: Analysis, text_lines: list[str], units: Callable[[str], int],
           uri: str) -> lsp.Diagnostic:
    message = d.message
    if d.span is not None and d.span.file == analysis.file:
        rng = _range(*span_range(text_lines, d.span, units))
    else:
        row = _import_line(text_lines, analysis.text, d.span.file) if d.span is not None else 0
        rng = _range((row, 0), (row, units(text_lines[row]) if row < len(text_lines) else 0))
        if d.span is not None:
            message += f" (at {d.span})"
    if d.help:
        message += f"\nhelp: {d.help}"
    for note in d.notes:
        message += f"\nnote: {note}"
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri, rng), code_markdown(d.code))]
    for label in d.labels:
        if label.span.file == analysis.file:
            related.append(lsp.DiagnosticRelatedInformation(
                lsp.Location(uri, _range(*span_range(text_lines, label.span, units))), label.message))
    data: dict[str, Any] = {"explanation": code_markdown(d.code)}
    fix = quick_fix(d, text_lines) if d.span is not None and d.span.file == analysis.file else None
    if fix is not None:
        (l0, c0), (l1, c1) = span_range(text_lines, fix.span, units)
        data["fix"] = {"line": l0, "start": c0, "end_line": l1, "end": c1, "text": fix.text}
    return lsp.Diagnostic(
        range=rng, message=message, severity=_SEVERITY[d.severity], code=d.code.id, source="primusc",
        code_description=lsp.CodeDescription(href=f"{EXPLAIN_SCHEME}:{d.code.id}"),
        related_information=related, data=data,
    )


def _opened(ls: PrimusServer, uri: str) -> Any:
    """The document the client opened at ``uri``, or None: pygls's ``get_text_document`` would read an
    unopened URI from disk, where ``file:///dev/zero`` never ends and a FIFO blocks for ever."""
    return ls.workspace.text_documents.get(uri)


_Handler = Callable[..., Any]
_FEATURES: list[tuple[str, Any, _Handler]] = []  # (method, options, handler), registered by build()


def _feature(method: str, options: Any = None) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        _FEATURES.append((method, options, handler))
        return handler

    return register


def build() -> PrimusServer:
    server = PrimusServer()
    for method, options, handler in _FEATURES:
        server.feature(method, options)(handler)
    return server


async def _refresh(ls: PrimusServer, uri: str) -> None:
    doc = _opened(ls, uri)
    if doc is None:
        return
    version = doc.version or 0
    ls.versions[uri] = version
    text, file = doc.source, _file_of(uri)

    def job() -> Analysis | None:
        if ls.versions.get(uri) != version:
            return None  # typed over before its turn came: the next job has the text
        return analyse(text, file)

    analysis = await ls.on_parser(job)
    if analysis is None or ls.versions.get(uri) != version:
        return
    ls.analyses[uri] = analysis
    ls.fits[uri] = {}
    text_lines = lines(text)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
        uri, [to_lsp(d, analysis, text_lines, ls.units, uri) for d in analysis.diagnostics], version))
    jobs: list[Callable[[threading.Event], Fits]] = [partial(fitting_points, s) for s in analysis.spaces]
    for future in ls.slow.submit(uri, jobs):
        task = asyncio.ensure_future(_collect(ls, uri, version, future))
        ls.waiting.add(task)
        task.add_done_callback(ls.waiting.discard)


async def _collect(ls: PrimusServer, uri: str, version: int, future: Any) -> None:
    try:
        fits: Fits = await asyncio.wrap_future(future)
    except (Cancelled, asyncio.CancelledError):
        return
    except Exception:  # the lens then stays at "fitting …"; the diagnostics already said what they could
        return
    if ls.versions.get(uri) != version:
        return
    ls.fits.setdefault(uri, {})[fits.space] = fits
    caps = ls.client_capabilities.workspace
    if caps is not None and caps.code_lens is not None and caps.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


@_feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: PrimusServer, params: lsp.DidOpenTextDocumentParams) -> None:
    await _refresh(ls, params.text_document.uri)


@_feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: PrimusServer, params: lsp.DidChangeTextDocumentParams) -> None:
    await _refresh(ls, params.text_document.uri)


@_feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: PrimusServer, params: lsp.DidSaveTextDocumentParams) -> None:
    await _refresh(ls, params.text_document.uri)  # an imported file may have changed on disk


@_feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PrimusServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.slow.cancel(uri)
    for table in (ls.versions, ls.analyses, ls.fits):
        table.pop(uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))


def _cursor(ls: PrimusServer, uri: str, pos: lsp.Position) -> tuple[str, str, list[str], int, int] | None:
    doc = _opened(ls, uri)
    if doc is None:
        return None
    text = doc.source
    if len(text) > MAX_BYTES:
        return None  # the document is refused anyway (P1010); scanning it would stall the server
    text_lines = lines(text)
    line, index = from_client(text_lines, pos.line, pos.character, ls.units)
    return text, _file_of(uri), text_lines, line, index


@_feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: PrimusServer, params: lsp.HoverParams) -> lsp.Hover | None:
    uri = params.text_document.uri
    at = _cursor(ls, uri, params.position)
    if at is None:
        return None
    text, file, text_lines, line, index = at
    facts = navigate.hover(ls.analyses.get(uri), text, _base(file), text_lines, line, index,
                           ls.fits.get(uri, {}))
    if facts is None:
        return None
    parts = list(facts.parts)
    origin = facts.resolve
    if origin is not None:
        found = await ls.on_quick(lambda: resolve(text, file, origin.name, origin.file))
        if found is not None:
            parts.append(resolved_markdown(*found))
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))


@_feature(lsp.TEXT_DOCUMENT_COMPLETION,
          lsp.CompletionOptions(trigger_characters=[" ", "(", "|", ",", "=", ":"]))
def completion(ls: PrimusServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    at = _cursor(ls, params.text_document.uri, params.position)
    if at is None:
        return lsp.CompletionList(is_incomplete=False, items=[])
    text, file, text_lines, line, index = at
    items = [
        lsp.CompletionItem(label, kind=_COMPLETION[kind], detail=detail or None,
                           documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, doc) if doc else None)
        for label, kind, detail, doc in complete.complete(text, _base(file), text_lines, line, index)
    ]
    return lsp.CompletionList(is_incomplete=False, items=items)


@_feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: PrimusServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    uri = params.text_document.uri
    at = _cursor(ls, uri, params.position)
    if at is None:
        return None
    text, file, text_lines, line, index = at
    found = navigate.definition(text, _base(file), text_lines, line, index)
    if found is None:
        return None
    path, row, col = found
    target = uri if path is None else uris.from_fs_path(str(path.resolve())) or str(path)
    return lsp.Location(target, _range((row, col), (row, col)))


@_feature(lsp.TEXT_DOCUMENT_FORMATTING)
async def formatting(ls: PrimusServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
    uri = params.text_document.uri
    doc = _opened(ls, uri)
    if doc is None:
        return None
    text, file = doc.source, _file_of(uri)

    def job() -> str | None:
        try:
            return format_source(text, file)
        except CompileError:
            return None  # the diagnostics already show why it does not parse

    out = await ls.on_parser(job)
    if out is None or out == text:
        return [] if out is not None else None
    return [lsp.TextEdit(_whole(text, ls.units), out)]


@_feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbol(ls: PrimusServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    uri = params.text_document.uri
    analysis = ls.analyses.get(uri)
    if analysis is None or analysis.module is None:
        return []
    text_lines = lines(analysis.text)

    def convert(s: navigate.Symbol) -> lsp.DocumentSymbol:
        return lsp.DocumentSymbol(
            name=s.name, kind=_SYMBOL.get(s.kind, lsp.SymbolKind.Field),
            range=_range(*span_range(text_lines, s.span, ls.units)),
            selection_range=_range(*span_range(text_lines, s.selection, ls.units)),
            children=[convert(c) for c in s.children])

    return [convert(s) for s in navigate.symbols(analysis.module)]


@_feature(lsp.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: PrimusServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    uri = params.text_document.uri
    analysis = ls.analyses.get(uri)
    if analysis is None:
        return []
    text_lines = lines(analysis.text)
    out = []
    for counts in analysis.counts:
        if counts.span is None:
            continue
        row = counts.span.line - 1
        title = navigate.counts_title(counts, ls.fits.get(uri, {}).get(counts.name))
        out.append(lsp.CodeLens(_range((row, 0), (row, ls.units(text_lines[row]) if row < len(text_lines) else 0)),
                                lsp.Command(title, "")))
    return out


@_feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
          lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: PrimusServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The quick fixes of the diagnostics the client sends back (``fixes.py``): each the edit its
    "did you mean" names, on the word its message names."""
    uri = params.text_document.uri
    out = []
    for diag in params.context.diagnostics:
        fix = diag.data.get("fix") if isinstance(diag.data, dict) else None
        if not isinstance(fix, dict) or not isinstance(fix.get("text"), str):
            continue
        try:
            rng = _range((int(fix["line"]), int(fix["start"])), (int(fix["end_line"]), int(fix["end"])))
        except (KeyError, TypeError, ValueError):  # data a client rewrote: no edit rather than a wrong one
            continue
        edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(rng, fix["text"])]})
        out.append(lsp.CodeAction(f"Change to `{fix['text']}`", kind=lsp.CodeActionKind.QuickFix,
                                  diagnostics=[diag], edit=edit, is_preferred=True))
    return out


@_feature(lsp.SHUTDOWN)
def shutdown(ls: PrimusServer, params: None) -> None:
    ls.slow.shutdown()


MAX_MESSAGE = 16 * MAX_BYTES  # a JSON-RPC body: a whole source escaped, with room to spare
_HEADER = b"Content-Length:"
MAX_HEADER = 4096  # a header line (`Content-Length: N`); a longer one is read in pieces, none a header


class BoundedStdin:
    """The server's stdin as pygls reads it, bounded: pygls reads a body with one ``read(N)`` of the
    length the client claims (``Content-Length: 10**15`` allocated it at once: a MemoryError that
    ended the server) and a header with an unbounded ``readline`` (an endless line without a
    newline). A body over ``MAX_MESSAGE`` is read and dropped in pieces, and pygls is handed
    ``null`` in its place, which it reports as a message it cannot handle, and reads on.

    Header lines are also where a stream out of step finds its way back. pygls takes a header only as
    ``Content-Length: N\r\n`` from a line's start: a client that ended lines with ``\n`` alone, or
    claimed a length shorter than its body, left the rest glued before the next header
    (``1}Content-Length: 59``), and from then on no message was read. A line ending ``\n`` ends
    ``\r\n`` here, and a line with a header after other bytes starts at the header."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def readline(self) -> bytes:
        line = bytes(self.raw.readline(MAX_HEADER))
        at = line.find(_HEADER)
        if at > 0:
            line = line[at:]
        if line.endswith(b"\n") and not line.endswith(b"\r\n"):
            line = line[:-1] + b"\r\n"
        return line

    def read(self, n: int) -> bytes:
        if n <= MAX_MESSAGE:
            return bytes(self.raw.read(n))
        left = n
        while left > 0:
            chunk = self.raw.read(min(left, 2**20))
            if not chunk:
                return b""  # the client closed the stream inside the body: the end, as for any short read
            left -= len(chunk)
        return b"null"


class _OneLine(logging.Formatter):
    """pygls logs a message it cannot handle with its traceback (as ``exc_info`` or pasted into the
    message); an editor's log gets one line: the message's first and the exception's."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        head, _, rest = message.partition("\n")
        last = ""
        if record.exc_info and record.exc_info[1] is not None:
            last = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        elif "Traceback (most recent call last)" in rest:
            lines = [ln.strip().lstrip("|").strip() for ln in rest.splitlines()]
            last = next((ln for ln in reversed(lines) if ln and not ln.startswith("+")), "")
        if last or rest:
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None,
                                            "msg": f"{head}: {last}" if last else head, "args": ()})
        return super().format(record)


def serve() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("%(levelname)s %(name)s: %(message)s"))
    for name in ("pygls", "asyncio"):  # asyncio: a handler cancelled when the editor closes the stream
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.propagate = False
    build().start_io(BoundedStdin(sys.stdin.buffer))  # type: ignore[arg-type]  # read and readline are all it calls
