"""The JSON-RPC protocol as pygls speaks it, with two answers it leaves out: a request whose params do
not fit the method's type gets the error JSON-RPC names for it (-32602) instead of silence, which left
an editor waiting for ever; and no error carries the server's Python traceback to the client."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)
INVALID_PARAMS = JsonRpcInvalidParams.CODE
_IGNORED = SimpleNamespace(jsonrpc="")  # what handle_message drops (a message of no known version)


class PrimusProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
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
