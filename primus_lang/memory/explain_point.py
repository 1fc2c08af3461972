"""``primusc check FILE --explain --point ...``: one candidate's account, term by term (or as JSON)."""

from __future__ import annotations

import json

from rich.console import Console

from primus_lang.diagnostics import render
from primus_lang.ir import Space
from primus_lang.memory.account import account
from primus_lang.memory.explain import explain_overflow
from primus_lang.memory.table import account_to_json, render_account


def explain_point(space: Space, point: str, as_json: bool = False, console: Console | None = None,
                  error_format: str = "human") -> int:
    """Print the account of ``point`` in ``space``; the exit status is 1 when it does not fit or is not
    a legal point (its account is still printed: what an illegal point would hold is often the question,
    but the reader must know it cannot run, and a refused split is accounted by its knobs alone)."""
    from primus_lang.check import legality
    from primus_lang.check.point import read_point

    cand = read_point(space, point, error_format)
    broken = [f"{v.code} {v.message}" for v in legality(space, cand)]
    headroom = space.headroom
    acc = account(space.model, space.cluster, cand, space.settings)
    if as_json:
        data = {"space": space.name, "point": cand.label(), "violations": broken, **account_to_json(acc, headroom)}
        print(json.dumps(data, indent=2))
    else:
        out = console or Console()
        out.print(f"space {space.name}: {cand.label()} on {space.cluster.name} ({space.cluster.world} GPUs)")
        if broken:
            out.print("this point is not a legal point of the space:", *(f"  {b}" for b in broken), sep="\n",
                      markup=False, highlight=False)
        out.print(render_account(acc, headroom))
        if not acc.fits(headroom):
            out.print(render([explain_overflow(acc, headroom)]), markup=False, highlight=False)
    return 0 if acc.fits(headroom) and not broken else 1
