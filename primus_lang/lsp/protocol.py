"""The JSON-RPC protocol as pygls speaks it, with the answers it leaves out: a request whose params do
not fit the method's type gets the error JSON-RPC names for it (-32602) instead of silence, which left
an editor waiting for ever; a body that is no JSON, or no JSON-RPC message, gets JSON-RPC's parse error
(-32700) or invalid request (-32600) with a null id, not an "Error in server" pop-up; a change to a
document the client never opened is logged and dropped (pygls raised KeyError into a pop-up); and no
error carries the server's Python traceback to the client."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol, lsp_method

logger = logging.getLogger(__name__)
INVALID_PARAMS = JsonRpcInvalidParams.CODE
PARSE_ERROR = JsonRpcParseError.CODE
INVALID_REQUEST = JsonRpcInvalidRequest.CODE
_IGNORED = SimpleNamespace(jsonrpc="")  # what handle_message drops (a message of no known version)


class PrimusProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        if "method" in data and "id" in data and (data.get("jsonrpc") != "2.0"
                                                  or not isinstance(data["id"], int | str)):
            # a request of another JSON-RPC version, or whose id is no number or string: pygls dropped it
            # unanswered and the client waited; JSON-RPC 2.0's answer is an invalid request
            shown = data["id"] if isinstance(data["id"], int | str) else None
            self._answer_error(shown, INVALID_REQUEST, "a request must be JSON-RPC 2.0 with a number or string id")
            return _IGNORED
        try:
            return super().structure_message(data)
        except Exception:
            if "jsonrpc" in data and "method" in data and isinstance(data.get("id"), int | str):
                self._send_data(ResponseErrorMessage(id=data["id"], error=ResponseError(
                    INVALID_PARAMS, f"the params of `{str(data['method'])[:80]}` do not fit the method")))
            return _IGNORED  # a notification that does not fit has no one to answer

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        if error is not None and error.data is not None:
            error = ResponseError(error.code, error.message)  # pygls attaches the traceback as data
        super()._send_response(msg_id, result, error)

    def unreadable(self, error: Exception) -> None:
        """Answer a body pygls could not read as a message: JSON-RPC 2.0 has the server reply with a
        null id when it cannot tell which request the body was."""
        code, what = ((PARSE_ERROR, "is not JSON") if isinstance(error, ValueError)
                      else (INVALID_REQUEST, "is not a JSON-RPC message"))
        logger.warning("a message that %s: %s", what, error)
        self._answer_error(None, code, f"the message {what}")

    def _answer_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        # as a plain dict: lsprotocol's converter leaves a None id out, and JSON-RPC asks for `"id": null`
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:  # pygls keys documents unquoted
            logger.warning("a change to %s, which was never opened: ignored", uri[:200])
            return None
        return (yield from super().lsp_text_document__did_change(params))
