"""A training log's lines as `learn` and `calibrate-log` read them: streamed, keeping what says how the
job ended (``bench.ENDINGS``), its first error and its last line.

The leading underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from primus_lang.diagnostics.codes_projection import LOG_TOO_LARGE

ENDINGS_KEPT = 64  # the lines naming an end a log's reader keeps, the last ones


@functools.cache
def rank_of_end(how: str) -> int:
    """How telling an end is, ``bench.ENDINGS``' order: the device's or the host's memory, a time limit, a
    cancel, a bare crash."""
    from primus_lang.bench import ENDINGS

    return [name for name, _ in ENDINGS].index(how)


class LogLines:
    """A log's lines as they are read, keeping what says how a job ended: the last line that holds
    anything, the first error line, and the first way of ending it names (out of memory, timed out,
    cancelled); the log is streamed, never held whole."""

    def __init__(self, path: Path) -> None:
        from primus_lang.datafiles import read_lines
        from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE

        self.path = path
        self.lines, self.last = read_lines(path, LOG_UNREADABLE, LOG_TOO_LARGE, "training log"), ""
        self.first_error, self.ended, self.ending_line = "", "", ""
        self.exited = False  # Megatron-LM said it stops where its settings told it to (bench.planned_exit)
        # (line number, how, text) of the last lines naming an end: the first after the last iteration is
        # among them unless a flood of such lines follows it
        self.endings: deque[tuple[int, str, str]] = deque(maxlen=ENDINGS_KEPT)

    def __iter__(self) -> Iterator[str]:
        from primus_lang.bench import better_error, ending, error_line, planned_exit

        for number, line in enumerate(self.lines, 1):
            text = line.strip()
            if text:
                self.last = text
                if how := ending(text):
                    # the most telling end named anywhere: a death prints a crash line beside its cause
                    if not self.ended or rank_of_end(how) < rank_of_end(self.ended):
                        self.ended, self.ending_line = how, text
                    self.endings.append((number, how, text))
                if error_line(text) and (not self.first_error or better_error(self.first_error, text)):
                    self.first_error = text
                self.exited = self.exited or planned_exit(text)
            yield line

    def read_through(self) -> LogLines:
        """Every line read (for what says how the job ended), none kept."""
        for _ in self:
            pass
        return self

    def cause(self) -> str:
        """How a job that logged no iteration ended, as `learn` reports it (a crash before training is
        one that failed to start)."""
        return self.ended if self.ended and self.ended != "crashed" else "failed to start"

    def after(self, line: int) -> tuple[str, str] | None:
        """The most telling end it names after ``line`` (how, the line; the first of the kind), or None."""
        later = [(rank_of_end(how), number, how, text) for number, how, text in self.endings if number > line]
        return min(later)[2:] if later else None

    def said(self) -> str:
        """The line that says how a job that logged no iteration ended: the one naming its end, else (it
        failed to start) its first error, else its last."""
        if self.cause() != "failed to start":
            return self.ending_line
        return self.first_error or self.last


def first_rank_log(path: Path) -> Path:
    """Rank 0's log beside a job's log ``path``, read where it exists: rank 0 prints the arguments, and is where
    a pipeline's first stage runs out of memory; on a multi-node job whose nodes' logs are saved apart
    (Kubernetes, a local campaign) another node prints the iterations, and its log may only say a peer died."""
    from primus_lang.emit import FIRST_RANK_LOG

    return path.with_name(FIRST_RANK_LOG)
