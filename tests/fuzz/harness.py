"""One fuzzed source through the command line, and what broke the contract if anything did.

The contract (docs/fuzzing.md): ``check``, ``fmt`` and ``project --top 1`` each exit 0 (accepted) or
1 (a diagnostic), never 2 (an internal error), never raise and never print a traceback; and when
``fmt`` accepts a source, formatting its output changes nothing and the output lowers to the same
IR as the source (spans aside), or fails with the same diagnostic codes.

The commands run in-process through ``primus_lang.cli.main``: a process per source would spend most
of the time importing.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.ir.serialize import to_data
from primus_lang.lower import loads_program
from primus_lang.syntax.parser import decode

COMMANDS = ("check", "fmt", "project")
NAME = "fuzz.prx"


class TimeLimit(BaseException):
    """Raised by the benchmark's per-source alarm; passes through ``run_cli`` untouched."""


def run_cli(argv: list[str]) -> tuple[int | None, str, str, str]:
    """(exit code, stdout, stderr, what escaped ``main``: "" when nothing did)."""
    out, err = io.StringIO(), io.StringIO()
    escaped = ""
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse's way out; main keeps it at 1, never 2
            code = stop.code if isinstance(stop.code, int) else 1
        except TimeLimit:
            raise
        except BaseException as exc:  # the point is to see anything that escapes
            escaped = f"{type(exc).__name__}: {exc}"[:500]
    return code, out.getvalue(), err.getvalue(), escaped


def _argv(command: str, path: str) -> list[str]:
    if command == "project":
        # the simulate oracle whatever the source assumes: the benchmark oracle would time kernels
        return ["project", path, "--top", "1", "--oracle", "simulate"]
    return [command, path]


SPAN_KEYS = {"file", "line", "column", "end_line", "end_column"}


def _without_spans(value: Any) -> Any:
    """The IR without positions: a span under its own key, or in a table beside what it locates."""
    if isinstance(value, dict):
        if set(value) == SPAN_KEYS:
            return "span"
        return {k: _without_spans(v) for k, v in value.items() if k != "span"}
    if isinstance(value, list | tuple):
        return [_without_spans(v) for v in value]
    return value


def lowered(text: str, file: str) -> str:
    """What ``text`` lowers to, spans excluded, or the codes of the diagnostics it gets."""
    try:
        program = loads_program(text, file)
    except CompileError as err:
        return "error " + " ".join(d.code.id for d in err.diagnostics)
    return json.dumps(_without_spans(to_data(program)), sort_keys=True)


def check_source(
    data: bytes, folder: Path, projected: dict[str, int | None] | None = None
) -> tuple[dict[str, int | None], list[str]]:
    """Exit code per command and the contract's breaches (empty when it held) for one source.

    ``projected``, when given, remembers ``project``'s exit code per lowered program: most mutants of
    an example differ from it in a comment or a layout only, lower to the very same IR, and
    ``project`` (by far the costliest command) reads nothing else, so it runs once per distinct IR.
    ``check`` and ``fmt`` run on every source, since their diagnostics quote it."""
    path = folder / NAME
    path.write_bytes(data)
    try:
        text: str | None = decode(data, str(path))
    except CompileError:
        text = None
    before: str | None = None
    problems: list[str] = []
    if text is not None:
        try:
            before = lowered(text, str(path))
        except Exception as exc:  # an escape from lowering is a finding, not a crash of the fuzzer
            problems.append(f"lowering raised {type(exc).__name__}: {exc}"[:500])
    key = hashlib.sha256(before.encode()).hexdigest() if before is not None else None
    codes: dict[str, int | None] = {}
    formatted: str | None = None
    for command in COMMANDS:
        if command == "project" and projected is not None and key is not None and key in projected:
            codes[command] = projected[key]
            continue
        code, out, err, escaped = run_cli(_argv(command, str(path)))
        codes[command] = code
        if escaped:
            problems.append(f"{command}: raised {escaped}")
        elif code not in (0, 1):
            problems.append(f"{command}: exit {code}: {err.strip()[-500:]}")
        if "Traceback" in out + err:
            problems.append(f"{command}: printed a traceback")
        if command == "fmt" and code == 0:
            formatted = out
        if command == "project" and projected is not None and key is not None:
            projected[key] = code
    if formatted is not None:
        again = folder / "fuzz_formatted.prx"
        again.write_text(formatted, encoding="utf-8")
        code, out, err, escaped = run_cli(["fmt", str(again)])
        if code != 0 or escaped:
            problems.append(f"fmt of fmt's output: exit {code} {escaped or err.strip()[-300:]}")
        elif out != formatted:
            problems.append("fmt is not idempotent")
        try:
            after = lowered(formatted, str(path))
        except Exception as exc:
            problems.append(f"lowering fmt's output raised {type(exc).__name__}: {exc}"[:500])
        else:
            if before is not None and before != after:
                problems.append(f"fmt changed the meaning: {before[:200]} -> {after[:200]}")
    return codes, problems
