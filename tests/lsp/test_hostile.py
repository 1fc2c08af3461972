"""The language server against hostile documents and requests (issue 34): imports of a device, a FIFO
or a file importing itself many times; requests on URIs never opened; params that do not deserialize.
Each is answered (a result or a JSON-RPC error) and the server keeps answering.

Waits are hang guards only: each ends on what the server sent, never on elapsed time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is in the `test` extra")
pytest.importorskip("pygls", reason="pygls is in the `lsp` extra")

from lsprotocol import types as lsp  # noqa: E402
from pygls import uris  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from tests.lsp.raw import GUARD, RawClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llama3_1_8b_mi325x.prx"


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "primus_lang.cli", "lsp"]))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=uris.from_fs_path(str(ROOT))))
    yield
    await lsp_client.shutdown_session()


pytestmark = pytest.mark.asyncio(loop_scope="module")


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = uris.from_fs_path(str(path))
    assert uri is not None
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "primus", 1, text)))
    return uri


async def _complete(client: LanguageClient, uri: str, line: int, character: int) -> Any:
    return await asyncio.wait_for(client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(line, character))), GUARD)


async def _alive(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE, text)
    hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(text.splitlines().index(
            next(line for line in text.splitlines() if line.strip().startswith("tp"))), 3))), GUARD)
    assert hover is not None


async def test_imports_of_a_device_a_fifo_and_a_file_importing_itself(client: LanguageClient, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("imports")
    (folder / "zero.prx").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.prx")
    (folder / "self.prx").write_text('import "./self.prx" (*)\n' * 6 + "model m = x { }\n")
    text = ('import "./zero.prx" (*)\nimport "./pipe.prx" (*)\nimport "./self.prx" (*)\n'
            "space s on c {\n  model = \n}\n")
    uri = _open(client, folder / "doc.prx", text)
    items = await _complete(client, uri, 4, 10)
    assert items is not None and any(item.label == "m" for item in items.items)
    await _alive(client)


async def test_requests_on_a_uri_never_opened_read_nothing(client: LanguageClient) -> None:
    for uri in ("file:///dev/zero", "file:///nonexistent/x.prx"):
        hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0))), GUARD)
        assert hover is None
        items = await _complete(client, uri, 0, 0)
        assert items is not None and not items.items
    await _alive(client)


@pytest.fixture(scope="module")
def raw() -> Iterator[RawClient]:
    client = RawClient()
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.send({"method": "initialized", "params": {}})
    uri = uris.from_fs_path(str(EXAMPLE))
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "primus", "version": 1, "text": EXAMPLE.read_text()}}})
    yield client
    client.close()


HOVER_AT_TP = {"line": 13, "character": 3}


@pytest.mark.parametrize("params", [
    {"position": {"line": -1, "character": 0}}, {"position": {"line": 2**31, "character": 0}},
    {"position": {"line": "x", "character": 0}}, {"position": None}, {}, None, [], "text",
    {"textDocument": 5, "position": HOVER_AT_TP},
])
def test_params_that_do_not_deserialize_get_a_json_rpc_error(raw: RawClient, params: Any) -> None:
    if isinstance(params, dict) and "textDocument" not in params:
        params = {"textDocument": {"uri": uris.from_fs_path(str(EXAMPLE))}, **params}
    answer = raw.request("textDocument/hover", params)
    assert answer.get("error", {}).get("code") == -32602, answer
    assert "Traceback" not in json.dumps(answer)
    good = raw.request("textDocument/hover", {"textDocument": {"uri": uris.from_fs_path(str(EXAMPLE))},
                                              "position": HOVER_AT_TP})
    assert "result" in good


def test_bodies_that_are_no_message_get_json_rpc_errors_and_no_pop_up(raw: RawClient) -> None:
    """A body that is no JSON, a JSON object that is no JSON-RPC message and a change to a document never
    opened each put pygls's "Error in server" pop-up in front of the user. The first two are answered as
    JSON-RPC 2.0 says (parse error, invalid request, with a null id); the change is dropped; and the
    server answers the next request."""
    raw.others.clear()
    raw.send_body(b"{bad}")
    raw.send_body(b"{}")
    raw.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": "file:///never/opened.prx", "version": 2},
        "contentChanges": [{"text": "space s on c { }\n"}]}})
    good = raw.request("textDocument/hover", {"textDocument": {"uri": uris.from_fs_path(str(EXAMPLE))},
                                              "position": HOVER_AT_TP})
    assert "result" in good
    errors = [m["error"]["code"] for m in raw.others if "error" in m and m.get("id", "absent") is None]
    assert errors == [-32700, -32600], raw.others
    # requests of another JSON-RPC version, or with an id of no kind JSON-RPC takes, went unanswered
    raw.others.clear()
    raw.send_body(b'{"jsonrpc":"1.0","id":77,"method":"textDocument/hover","params":{}}')
    raw.send({"id": {"a": 1}, "method": "textDocument/hover", "params": {}})
    assert "result" in raw.request("textDocument/hover", {"textDocument": {"uri": uris.from_fs_path(str(EXAMPLE))},
                                                          "position": HOVER_AT_TP})
    assert [(m.get("id"), m["error"]["code"]) for m in raw.others if "error" in m] == [(77, -32600), (None, -32600)]
    assert not [m for m in raw.others if m.get("method") == "window/showMessage"], raw.others


@pytest.mark.parametrize("framing", [b"Content-Length: 5\r\n\r\n{\"a\":1}", b"Content-Length: 2\n\n{}"])
def test_a_stream_out_of_step_finds_the_next_header(framing: bytes) -> None:
    """A body longer than its Content-Length, or headers ended by a bare newline, left bytes glued before
    the next header, and the server read no message after them."""
    client = RawClient()
    try:
        client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert client.proc.stdin is not None
        client.proc.stdin.write(framing)
        client.proc.stdin.flush()
        for _ in range(2):
            answer = client.request("textDocument/hover", {"textDocument": {"uri": "file:///never/opened.prx"},
                                                           "position": {"line": 0, "character": 0}})
            assert "result" in answer, answer
    finally:
        client.close()
