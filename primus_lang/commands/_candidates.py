"""What ``explain FILE --point`` and ``diff`` share: the space their file names, each point read with
its W6001, the trust warnings, and the lines that say a point breaks the space's rules.

The leading underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from primus_lang.commands._options import read_point, warn_trust
from primus_lang.ir import Candidate, Space
from primus_lang.report import Evaluated, evaluate_point
from primus_lang.validate import trust


def load(args: argparse.Namespace) -> Space:
    from primus_lang.lower import load_space

    # `primusc explain` takes the file in the position of a diagnostic code; `diff` names it `file`.
    file = getattr(args, "file", None) or args.code
    from primus_lang.commands._capacity import on_cluster

    return on_cluster(load_space(Path(file), getattr(args, "space", None)), args)


def evaluated(space: Space, texts: list[str], error_format: str) -> list[Evaluated]:
    """Each point read (W6001 on stderr where the space would never search it) and evaluated, with
    the profile's trust warnings (W6002, W6003) once for all of them."""
    out = [evaluate_point(space, read_point(space, text, error_format), text) for text in texts]
    warn_trust(space.cluster.gpu, [(e.view.label, e.view.mfu) for e in out], error_format, space.model,
               [(e.candidate, space.cluster.world, trust.host_share(e.projection)) for e in out],
               trust.target_stack(space.settings.target))
    return out


def console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def say_illegal(space_name: str, label: str, broken: list[tuple[str, str]] | list[str], error_format: str,
                nearer: str | None = None) -> None:
    """P6003 on stderr for a point the space's rules refuse, in the error format asked: the reason a command
    that still prints what the point would cost exits 1, in the form a script reads (`--error-format json`).
    ``nearer``: a legal ``--point`` that keeps the knobs the user named (``check.nearest_legal_point``)."""
    import sys

    from primus_lang.diagnostics import Diagnostic, render
    from primus_lang.diagnostics.codes_projection import BAD_POINT

    if not broken:
        return
    notes = tuple(" ".join(b) if isinstance(b, tuple) else b for b in broken)
    print(render([Diagnostic(BAD_POINT, f"`{label}` is not a legal point of `{space_name}`: its figures price a "
                             "launch its framework refuses", notes=notes,
                             help=nearer_help(nearer) or "`primusc check FILE` lists the rules; change the knobs "
                                                         "the notes name")],
                 error_format), file=sys.stderr)


def print_broken(out: Console, broken: list[tuple[str, str]], name: str = "this point") -> None:
    if broken:
        out.print(f"[yellow bold]{name} is not a legal point of the space:[/yellow bold]")
        for code, message in broken:
            out.print(f"  [yellow]{code}[/yellow] {message}", markup=True, highlight=False)
        out.print()


def nearer_help(nearer: str | None) -> str | None:
    return (f"`--point {nearer}` keeps the knobs you named and is legal (a knob left out takes its axis's first "
            "value)") if nearer else None


def nearer_point(space: Space, text: str, cand: Candidate) -> str | None:
    """A legal ``--point`` that keeps the knobs ``text`` names, one that fits in memory where any near one does
    (``check.nearest_legal_point``): what an illegal point's refusal suggests."""
    from primus_lang.check import nearest_legal_point
    from primus_lang.memory import account

    def fits(point: Candidate) -> bool:
        return account(space.model, space.cluster, point, space.settings).fits(space.headroom)

    return nearest_legal_point(space, text, cand, fits)
