"""``primusc fmt FILE...``: print the canonical layout; ``--check`` for CI, ``--write`` in place."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_names import BAD_ARGUMENT, UNKNOWN_MODULE
from primus_lang.syntax import decode, format_module, parse, read_source


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("fmt", help="format .prx files (prints to stdout unless --check or --write)")
    p.add_argument("files", nargs="+", help=".prx files")
    p.set_defaults(positional_rest="files")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--check", action="store_true", help="exit 1 if a file is not formatted; change nothing"
    )
    mode.add_argument("--write", "-w", action="store_true", help="rewrite the files in place")
    p.add_argument("--diff", action="store_true",
                   help="show what would change, as a unified diff; changes nothing (implies --check)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.diff and args.write:
        raise CompileError(Diagnostic(BAD_ARGUMENT, "--diff shows what --write would change, without changing it: "
                                      "give one of them", help="`fmt --diff FILE`, then `fmt --write FILE`"))
    # alone, --diff was ignored and the formatted text printed in its place
    args.check = args.check or args.diff
    changed = 0
    errors: list[Diagnostic] = []
    for name in args.files:
        path = Path(name)
        try:
            data = read_source(path, name)
        except OSError as exc:
            errors.append(Diagnostic(UNKNOWN_MODULE, f"cannot read `{name}`: {exc.strerror or exc}",
                                     help="check the path"))
            continue
        except CompileError as err:
            errors.extend(err.diagnostics)
            continue
        try:
            # the file's bytes parsed as check parses them: decoding twice would drop a second
            # byte-order mark that check refuses, and fmt would write a file check reads
            text = decode(data, name)
            out = format_module(parse(data, name), text)
        except CompileError as err:
            errors.extend(err.diagnostics)
            continue
        if args.check:
            if out != text:
                changed += 1
                print(f"would reformat {name}", file=sys.stderr)
                if args.diff:
                    sys.stdout.writelines(
                        difflib.unified_diff(
                            text.splitlines(True), out.splitlines(True), name, name + " (formatted)"
                        )
                    )
        elif args.write:
            if out != text:
                if b"\r\n" in data:  # the file's own line ends (a Windows editor's): the layout changes, not them
                    out = out.replace("\n", "\r\n")
                from primus_lang.outputs import rewrite_file

                # atomically, so a crash mid-write never leaves the user's file half-written (a file
                # with several hard links is written through its inode instead); a source reached
                # through a link is formatted where it lives; its permissions stay
                try:
                    rewrite_file(path.resolve(), data, out)
                except CompileError as err:
                    errors.extend(err.diagnostics)
                    continue
                print(f"reformatted {name}", file=sys.stderr)
        else:
            sys.stdout.write(out)
    if errors:
        raise CompileError(errors)
    return 1 if changed else 0
