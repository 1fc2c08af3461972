"""A JSON-RPC client over the language server's stdio with no client library between: params are sent
as written, so a request can carry what no typed client would build (tests/lsp/test_hostile.py, the
protocol fuzzer in tests/fuzz/test_kinds.py)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

GUARD = 60.0  # seconds before a request is declared unanswered (never reached by a working server)


class RawClient:
    """JSON-RPC over the server's stdio with no client library between: params are sent as written, so
    a request can carry what no typed client would build."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "primus_lang.cli", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.others: list[dict[str, Any]] = []  # what arrived while a request waited for its answer

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (header := out.readline()) not in (b"\r\n", b""):
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if not header:
                return
            self.inbox.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        self.send_body(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def send_body(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:  # the guard turns a request never answered into a failure
            message = self.inbox.get(timeout=GUARD)
            if message.get("id") == self.next_id:
                return message
            self.others.append(message)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
