"""``primusc explain FILE --point ...`` and ``primusc diff FILE A B``: the bodies behind the commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import BAD_POINT
from primus_lang.diagnostics.codes_report import NEEDS_TWO_POINTS
from primus_lang.ir import Candidate, Space
from primus_lang.ir.serialize import to_data
from primus_lang.report.compare import diff
from primus_lang.report.evaluate import Evaluated, evaluate
from primus_lang.report.terminal import diff_view, explain_view


def load(args: argparse.Namespace) -> Space:
    from primus_lang.lower import load_space

    # `primusc explain` takes the file in the position of a diagnostic code; `diff` names it `file`.
    file = getattr(args, "file", None) or args.code
    return load_space(Path(file), getattr(args, "space", None))


def point(space: Space, text: str | None, error_format: str = "human") -> Candidate:
    """The candidate ``text`` names, with a warning when the space would never search it."""
    from primus_lang.check.point import read_point

    return read_point(space, text or "", error_format)


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def explained_json(ev: Evaluated) -> dict[str, Any]:
    return {
        "candidate": ev.view.label,
        "knobs": dict(ev.view.knobs),
        "fits": ev.view.fits,
        "memory_peak": ev.view.memory_peak,
        "limit": ev.limit,
        "capacity": int(ev.account.capacity),
        "figures": {k: getattr(ev.view, k) for k in
                    ("step_time", "tokens_per_gpu", "tflops_per_gpu", "mfu", "bubble_fraction")},
        "band": {"basis": ev.view.basis, "coverage": ev.view.coverage, "tokens_low": ev.view.tokens_low,
                 "tokens_high": ev.view.tokens_high, "paired": ev.view.paired},
        "breakdown": [list(p) for p in ev.view.breakdown],
        "memory": [to_data(r) for r in ev.view.ranks],
    }


def violations(space: Space, cand: Candidate) -> list[tuple[str, str]]:
    """The legality rules and ``require``s the point breaks: it is still explained, since seeing what an
    illegal point would cost is often why one asks, but the reader must know it cannot run."""
    from primus_lang.check import legality

    return [(v.code, v.message) for v in legality(space, cand)]


def _evaluate(space: Space, cand: Candidate, text: str) -> Evaluated:
    """``evaluate``, but an illegal point whose pipeline split Megatron refuses (the account and the
    projection need the split's layers per stage) is a diagnostic naming the broken rules."""
    try:
        return evaluate(space, cand)
    except ValueError:
        broken = violations(space, cand)
        if not broken:
            raise
        raise CompileError(Diagnostic(
            BAD_POINT,
            f"`{text}` is not a legal point of `{space.name}`, and its pipeline split cannot be built to explain it",
            help="the notes name the rules it breaks; `primusc explain CODE` says what each needs",
            notes=tuple(f"{code} {message}" for code, message in broken),
        )) from None


def _warn_trust(space: Space, evaluated: list[Evaluated], error_format: str = "human") -> None:
    from primus_lang.commands._options import warn_trust

    warn_trust(space.cluster.gpu, [(e.view.label, e.view.mfu) for e in evaluated], error_format)


def _warn(console: Console, broken: list[tuple[str, str]], name: str = "this point") -> None:
    if broken:
        console.print(f"[yellow bold]{name} is not a legal point of the space:[/yellow bold]")
        for code, message in broken:
            console.print(f"  [yellow]{code}[/yellow] {message}", markup=True, highlight=False)
        console.print()


def explain_candidate(args: argparse.Namespace) -> int:
    space = load(args)
    text = getattr(args, "point", None)
    cand = point(space, text, getattr(args, "error_format", "human"))
    ev = _evaluate(space, cand, text or "")
    _warn_trust(space, [ev])
    broken = violations(space, cand)
    # what an illegal or overflowing point would cost is shown (often why one asks), but the status
    # says it cannot run, as `check --explain` does
    status = 0 if ev.view.fits and not broken else 1
    if getattr(args, "json", False):
        print(json.dumps({**explained_json(ev), "violations": [list(v) for v in broken]}, indent=2))
        return status
    console = _console()
    _warn(console, broken)
    console.print(explain_view(ev.view, int(ev.account.capacity), ev.limit))
    return status


def diff_candidates(args: argparse.Namespace) -> int:
    given = [p for p in (getattr(args, "a", None), getattr(args, "b", None)) if p] + list(
        getattr(args, "points", None) or ())
    if len(given) != 2:
        raise CompileError(Diagnostic(NEEDS_TWO_POINTS, f"`primusc diff` needs two points, got {len(given)}",
                                      help="`primusc diff FILE tp=2,pp=4 tp=4,pp=2` or `--a ... --b ...`"))
    space = load(args)
    first, second = given
    fmt = getattr(args, "error_format", "human")
    ea, eb = _evaluate(space, point(space, first, fmt), first), _evaluate(space, point(space, second, fmt), second)
    _warn_trust(space, [ea, eb])
    broken_a, broken_b = violations(space, ea.candidate), violations(space, eb.candidate)
    d = diff(ea.view, eb.view)
    if getattr(args, "json", False):
        out = {
            "a": {**explained_json(ea), "violations": [list(v) for v in broken_a]},
            "b": {**explained_json(eb), "violations": [list(v) for v in broken_b]},
            "knobs": [list(k) for k in d.knobs],
            "time": [{"part": c.name, "a": c.a, "b": c.b, "delta": c.delta} for c in d.time],
            "memory": [{"term": c.name, "a": int(c.a), "b": int(c.b), "delta": int(c.delta)} for c in d.memory],
            "summary": list(d.summary),
        }
        print(json.dumps(out, indent=2))
        return 0
    console = _console()
    _warn(console, broken_a, "A")
    _warn(console, broken_b, "B")
    console.print(diff_view(d))
    sys.stdout.flush()
    return 0
