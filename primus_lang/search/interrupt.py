"""A Ctrl-C that cannot be lost.

Python raises KeyboardInterrupt wherever the main thread is when it handles the signal. Inside a
finalizer (a generator closed as it is freed, a ``__del__``) that exception is reported as
unraisable and dropped, and a long search then ran on to its budget as if the user had not asked it
to stop. While ``watched`` is active the handler also records the request, and the loops that write a
resumable trace call ``check`` between evaluations, so a dropped interrupt stops them there.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_requested = False


def _handler(signum: int, frame: FrameType | None) -> None:
    global _requested
    _requested = True
    raise KeyboardInterrupt


@contextmanager
def watched() -> Iterator[None]:
    """Record Ctrl-C for ``check`` while the block runs; Python's own handling is restored after."""
    global _requested
    # a signal handler can be set from the main thread only, and one a caller set (or SIG_IGN, as a
    # shell gives background jobs) is theirs to keep
    if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    _requested = False
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _requested = False


def check() -> None:
    """Raise the KeyboardInterrupt a finalizer dropped, if Ctrl-C came while ``watched`` was active."""
    if _requested:
        raise KeyboardInterrupt
