"""``primusc explain CODE``: what a diagnostic code means and how to fix it.

``primusc explain FILE --point ...`` explains one candidate instead; that needs the memory and
projection stages, which plug in through ``explain_candidate`` below.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from primus_lang.commands._options import add_cluster_argument
from primus_lang.diagnostics import CompileError, Diagnostic, all_codes, lookup, render
from primus_lang.diagnostics.codes_names import FILE_ACCESS, UNKNOWN_CODE
from primus_lang.ir import serialize

if TYPE_CHECKING:
    from primus_lang.memory import ModelSize


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain", help="explain a diagnostic code (P1001 or its name), or a candidate of a space"
    )
    p.add_argument("code", nargs="?", help="a code or its name (omit to list them all), or a .prx file")
    p.add_argument("--space", help="the space of FILE to use")
    add_cluster_argument(p)
    p.add_argument("--point", help="the candidate, e.g. `tp=2,pp=4,recompute=full(8)`")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def explain_candidate(args: argparse.Namespace) -> int:
    """The memory account and projection of one candidate of ``args.code``'s space. What an illegal or
    overflowing point would cost is shown (often why one asks), but the status says it cannot run,
    as `check --explain` does."""

    from primus_lang.commands._candidates import (
        console,
        evaluated,
        load,
        nearer_point,
        print_broken,
        say_illegal,
    )
    from primus_lang.commands._capacity import cluster_words, point_rate, run_json, run_rows
    from primus_lang.report import (
        attention_note,
        explain_view,
        explained_json,
        layout_note,
        no_low_precision,
        precision_gain,
        precision_json,
        precision_table,
        violations,
    )

    space = load(args)
    [ev] = evaluated(space, [args.point or ""], args.error_format)
    broken = violations(space, ev.candidate)
    status = 0 if ev.view.fits and not broken else 1
    nearer = nearer_point(space, args.point or "", ev.candidate) if broken else None
    gain = precision_gain(space, ev.candidate)
    v = ev.view
    # a point that does not fit, or that a rule refuses, has no run to give days or a cost to (its figures
    # say what it would cost)
    run = point_rate(v, runs=not broken)
    from primus_lang.memory import model_size

    size = model_size(space.model, ev.candidate)
    if args.json:
        print(serialize.to_json({**explained_json(ev), "model_size": size, "run": run_json(space, run, ev.candidate),
                          "precision_gain": precision_json(gain),
                          "violations": [list(v) for v in broken],
                          "attention_kernel": attention_note(space, ev.candidate),
                          "layout": layout_note(space, ev.candidate)}))
        say_illegal(space.name, ev.candidate.label(), broken, args.error_format, nearer)
        return status
    out = console()
    print_broken(out, broken)
    if broken:
        out.print("[yellow]the figures below price a point its framework refuses to start (the rules above): what "
                  "it would cost, not a run[/yellow]")
    out.print(f"on {cluster_words(space)}", markup=False)
    out.print(_size_line(space.model.name, size), markup=False)
    out.print(explain_view(ev.view, int(ev.account.capacity), ev.limit, run_rows(space, run, ev.candidate)))
    if gain is None:
        out.print(no_low_precision(space), markup=False)
    else:
        out.print(precision_table(gain))
    for note in (attention_note(space, ev.candidate), layout_note(space, ev.candidate)):
        if note:
            out.print(note, markup=False)
    if not ev.view.fits:
        # the table shows the overflow; stderr says why the status is 1, as `check --explain` prints it
        from primus_lang.memory import explain_overflow

        print(render([explain_overflow(ev.account, space.headroom)], args.error_format), file=sys.stderr)
    say_illegal(space.name, ev.candidate.label(), broken, args.error_format, nearer)
    return status


def _size_line(name: str, size: ModelSize) -> str:
    """``model qwen3_30b_a3b: 30.53B parameters, 3.35B active a token``: what a user checks a card by."""
    def short(n: int) -> str:
        return f"{n / 1e9:,.2f}B" if n >= 1e9 else f"{n / 1e6:,.1f}M"

    without = (f"{short(size.active - size.embedding)} without the input embedding, "
               f"{short(size.active - size.embedding - size.output)} without the output layer too" if size.output
               else f"{short(size.active - size.embedding)} without the embedding table, which the output layer shares")
    # published active counts differ in which tables they hold: each reading is given
    active = f", {short(size.active)} active a token ({without})" if size.active != size.total else ""
    mtp = f"; {short(size.mtp)} more in its multi-token-prediction layers" if size.mtp else ""
    return (f"model {name}: {short(size.total)} parameters{active}{mtp} (as megatron-core builds it, the "
            "vocabulary padded to a multiple of 128)")


def run(args: argparse.Namespace) -> int:
    if args.code and (Path(args.code).is_file() or (args.code.endswith(".prx") and Path(args.code).exists())):
        # a space's path that is no file (a folder) is refused by loading it, as every command refuses it
        return explain_candidate(args)
    if not args.code:
        for code in all_codes():
            print(f"{code.id}  {code.name:32} {code.summary}")
        return 0
    if args.point or args.space or args.code.endswith(".prx"):
        raise CompileError(Diagnostic(FILE_ACCESS, f"no file `{args.code}`", help="pass the path of a .prx file"))
    found = lookup(args.code)
    if found is None:
        close = difflib.get_close_matches(args.code, [c for code in all_codes() for c in (code.id, code.name)], n=1)
        raise CompileError(
            Diagnostic(UNKNOWN_CODE, f"no diagnostic code `{args.code}`",
                       help=f"did you mean `{close[0]}`?" if close else "`primusc explain` lists them")
        )
    print(f"{found.id} ({found.name}): {found.summary}\n")
    if found.explanation:
        print(found.explanation)
    return 0
