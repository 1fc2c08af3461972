"""``primusc tune-compare FILE...``: every strategy's regret against the exhaustive optimum."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from primus_lang.commands._options import whole_between
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import BAD_BUDGET, LLM_UNAVAILABLE
from primus_lang.ir import Space, serialize
from primus_lang.search import DEFAULT_BUDGETS, DEFAULT_STRATEGIES, NAMES, LlmConfig, markdown
from primus_lang.search import compare_strategies as compare


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tune-compare",
        help="compare search strategies by regret against the exhaustive optimum",
        description="For each space, find the optimum exhaustively, then run every strategy at each budget "
        "over several seeds and report its regret (the share of the optimum it misses).",
    )
    p.add_argument("files", nargs="+", help=".prx files (each file's only space, or FILE:SPACE)")
    p.set_defaults(positional_rest="files")
    p.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)), help="evaluation budgets, comma-separated")
    p.add_argument("--seeds", type=whole_between(1, 1000), default=5, help="seeds per strategy and budget (1 to 1,000)")
    p.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES), help="strategies, comma-separated")
    p.add_argument("--llm-model", default="", help="the `llm` strategy's model, `provider/model` (default: the space's "
                   "`assume llm_model`, else PRIMUSC_LLM_MODEL)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--out", default=None, help="also write the markdown tables to this file (kept if it exists, "
                   "unless --force)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands._options import check_outputs
    from primus_lang.lower import load_space
    from primus_lang.outputs import refuse_collisions, write_file

    try:
        budgets = tuple(int(b) for b in args.budgets.split(",") if b.strip())
    except ValueError:
        raise CompileError(Diagnostic(BAD_BUDGET, f"cannot read the budgets `{args.budgets}`",
                                      help="e.g. --budgets 25,50,100,200")) from None
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    unknown = [s for s in strategies if s not in NAMES]
    if unknown or not budgets or min(budgets) <= 0 or args.seeds <= 0:
        raise CompileError(Diagnostic(BAD_BUDGET, "tune-compare needs known strategies, positive budgets and seeds",
                                      notes=tuple(f"unknown strategy `{s}`" for s in unknown)))
    out = Path(args.out) if args.out else None
    if out is not None:
        # refused before the comparison, which can run for hours, not after it
        refuse_collisions({"--out": out}, {f"the space file `{f}`": Path(f.partition(":")[0]) for f in args.files})
        check_outputs(None, {"out": out}, args.force)
    spaces = []
    for item in args.files:
        path, _, name = item.partition(":")
        spaces.append(load_space(Path(path), name or None))

    def llm(space: Space) -> LlmConfig:
        return LlmConfig.resolve(args.llm_model, space.settings.llm_model)

    if "llm" in strategies:
        # without a model the investigator hands over to the evolutionary search: its row would be that
        for space in spaces:
            usable, why = llm(space).usable()
            why = why.partition("; using the evolutionary search")[0]  # plan's fallback, which this refuses
            if not usable:
                raise CompileError(Diagnostic(LLM_UNAVAILABLE, f"the `llm` strategy cannot run on space `{space.name}`: {why}",
                                              help="give --llm-model provider/model and its key in the environment, "
                                                   "or leave `llm` out of --strategies"))

    def progress(line: str) -> None:
        if not args.json:
            print(line, file=sys.stderr)

    result = compare(spaces, strategies, budgets, args.seeds, progress, llm)
    text = markdown(result)
    if out is not None:
        write_file(out, text, force=args.force)
    print(serialize.to_json(result) if args.json else text)
    return 0
