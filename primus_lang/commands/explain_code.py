"""``primusc explain CODE``: what a diagnostic code means and how to fix it."""

from __future__ import annotations

import argparse

from primus_lang.diagnostics import CompileError, Diagnostic, all_codes, lookup
from primus_lang.diagnostics.codes_internal import INTERNAL


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("explain-code", help="explain a diagnostic code (P1001 or its name)")
    p.add_argument("code", nargs="?", help="a code; omit to list them all")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.code:
        for code in all_codes():
            print(f"{code.id}  {code.name:32} {code.summary}")
        return 0
    code = lookup(args.code)
    if code is None:
        raise CompileError(Diagnostic(INTERNAL, f"no diagnostic code `{args.code}`", help="`primusc explain-code` lists them"))
    print(f"{code.id} ({code.name}): {code.summary}\n")
    if code.explanation:
        print(code.explanation)
    return 0
