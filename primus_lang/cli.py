"""The ``primusc`` command line. Each sub-command lives in ``primus_lang/commands/<name>.py`` and
exposes ``register(subparsers)``; this module only dispatches and turns failures into diagnostics.

Exit codes: 0 success, 1 a user error (a diagnostic), 2 an internal error, 130 interrupted.
"""

from __future__ import annotations

# Nothing but `sys` at import time: the console script imports this module outside any handler,
# so a Ctrl-C during an import here (argparse and typing take milliseconds) printed a traceback;
# everything else is imported inside `main`, under its handler.
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads it by its name
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import NoReturn

EXIT_OK, EXIT_USER, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 130


def _command_modules() -> list[str]:
    import pkgutil

    import primus_lang.commands as commands

    return sorted(info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_"))


def _requested(argv: Sequence[str], modules: list[str]) -> list[str]:
    """The one command module ``argv`` asks for (a command is its module's name with ``-`` for ``_``),
    so a run imports only that command's stages; all of them for ``--help`` or an unknown command."""
    # the value of a global option (`--error-format short`) is no command
    valued = {"--error-format"}
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] not in valued)]
    if words:
        wanted = words[0].replace("-", "_")
        if wanted in modules:
            return [wanted]
    return modules


def _error_format(argv: Sequence[str]) -> str:
    """The ``--error-format`` ``argv`` asks for, read before parsing: argparse's own usage errors
    come before any value is parsed, and a script that asked for JSON should get JSON from them too."""
    fmt = "human"
    for arg, after in zip(argv, [*argv[1:], ""], strict=True):
        value = after if arg == "--error-format" else arg.removeprefix("--error-format=")
        if value in ERROR_FORMATS and value != arg:
            fmt = value
    return fmt


def _parser(prog: str, description: str, argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse with its usage errors as diagnostics: exit 1 (a user error), not argparse's 2,
        which primusc keeps for internal errors."""

        def error(self, message: str) -> NoReturn:
            from primus_lang.diagnostics import Diagnostic, render
            from primus_lang.diagnostics.codes_names import BAD_ARGUMENT

            fmt = _error_format(sys.argv[1:] if argv is None else argv)
            if fmt == "human":
                self.print_usage(sys.stderr)
            import difflib
            import re

            hint = f"`{self.prog} --help` lists what it takes"
            # the command's choices from the parser itself: argparse's wording of the message changes
            # across Python releases (quoted choices until 3.12)
            wrong = re.search(r"invalid choice: '?([^'\s]+)'?", message)
            commands = [c for a in self._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices]
            close = difflib.get_close_matches(wrong.group(1), commands, n=1) if wrong is not None else []
            if close:
                hint = f"did you mean `{close[0]}`? " + hint
            diag = Diagnostic(BAD_ARGUMENT, message, help=hint)
            print(render([diag], fmt), file=sys.stderr)
            sys.exit(EXIT_USER)

    return _Parser(prog=prog, description=description)


ERROR_FORMATS = ("human", "short", "json")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    import argparse
    import importlib

    from primus_lang import __version__

    parser = _parser(
        prog="primusc",
        description="Compile a distributed-training search space into a checked, projected, runnable recipe.",
        argv=argv,
    )
    parser.add_argument("--version", action="version", version=f"primusc {__version__}")
    parser.add_argument("--error-format", choices=ERROR_FORMATS, default="human", help="how diagnostics are printed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = _command_modules()
    for name in _requested(sys.argv[1:] if argv is None else argv, modules):
        module = importlib.import_module(f"primus_lang.commands.{name}")
        module.register(sub)
    for command in sub.choices.values():
        # after the command too (`primusc check f --error-format json`); SUPPRESS keeps the one
        # given before the command when this one is not
        command.add_argument("--error-format", choices=ERROR_FORMATS, default=argparse.SUPPRESS,
                             help="how diagnostics are printed")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt as stop:
        # wherever it lands (importing a command's stages, parsing, running, rendering an error):
        # one line, never a traceback; a command may say in it how to continue
        print(str(stop) or "interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    from primus_lang.gc_policy import use_bulk_thresholds

    parser = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    rest = getattr(args, "positional_rest", None)
    if extra and rest is not None and not any(x.startswith("-") for x in extra):
        # a list of positionals after an option (`diff FILE --cluster C A B`): argparse closes the list at
        # the option, so its words come back unparsed; they are the list's
        setattr(args, rest, [*getattr(args, rest), *extra])
    elif extra:
        parser.parse_args(argv)  # says what it cannot read, as every command does
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USER
    use_bulk_thresholds()
    if getattr(args, "error_format", "human") == "json":
        from primus_lang.diagnostics.stream import JsonLines

        plain, sys.stderr = sys.stderr, JsonLines(sys.stderr)
        try:
            return _run(args)
        finally:
            sys.stderr.flush()
            sys.stderr = plain
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from primus_lang.diagnostics import CompileError, Diagnostic, render
    from primus_lang.diagnostics.codes_names import FILE_ACCESS
    from primus_lang.sources import SOURCES

    try:
        code = args.func(args)
        return int(code or 0)
    except CompileError as err:
        print(render(err.diagnostics, args.error_format, SOURCES.get), file=sys.stderr)
        return EXIT_USER
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # a path the user gave that cannot be read or written (missing folder, a file where a folder
        # goes, permissions): the user's to fix, so a diagnostic and exit 1, not an internal error
        where = f"`{exc.filename}`" if exc.filename is not None else "a file"
        diag = Diagnostic(FILE_ACCESS, f"cannot use {where}: {exc.strerror or exc}",
                          help="check the path and its permissions")
        print(render([diag], args.error_format), file=sys.stderr)
        return EXIT_USER
    except RuntimeError as exc:
        # Path.resolve() on Python 3.11 reports a symbolic-link loop so, not as an OSError (ELOOP)
        loop = str(exc).removeprefix("Symlink loop from ")
        if loop == str(exc):
            return _internal(exc, args.error_format)
        diag = Diagnostic(FILE_ACCESS, f"cannot use `{loop.strip(chr(39))}`: a loop of symbolic links",
                          help="check the path and its links")
        print(render([diag], args.error_format), file=sys.stderr)
        return EXIT_USER
    except Exception as exc:
        return _internal(exc, args.error_format)


def _internal(exc: Exception, error_format: str) -> int:
    """The last line of defence: never a bare traceback for any input."""
    import os

    from primus_lang.diagnostics import Diagnostic, render
    from primus_lang.diagnostics.codes_internal import INTERNAL

    diag = Diagnostic(
        INTERNAL,
        f"internal error: {type(exc).__name__}: {exc}",
        help="this is a bug in primusc; rerun with PRIMUSC_TRACEBACK=1 and report the output",
    )
    print(render([diag], error_format), file=sys.stderr)
    if os.environ.get("PRIMUSC_TRACEBACK"):
        import traceback

        traceback.print_exc()
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
