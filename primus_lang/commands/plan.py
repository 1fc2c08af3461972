"""``primusc plan FILE``: search the space, rank what was found, explain the winner, emit its launch files."""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen
from rich.console import Console
from rich.table import Table

from primus_lang.commands._options import (
    add_oracle_arguments,
    add_space_arguments,
    build_oracle,
    check_outputs,
    oracle_kind,
)
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import BAD_BUDGET
from primus_lang.ir import serialize
from primus_lang.ir.candidate import Candidate, format_value
from primus_lang.report import units
from primus_lang.search.budget import Limits
from primus_lang.search.engine import Search
from primus_lang.search.explain import explain
from primus_lang.search.llm.config import LlmConfig
from primus_lang.search.plan import Prepared, baseline_trial, limits_of, prepare, run_search
from primus_lang.search.strategies import NAMES
from primus_lang.search.trial import ILLEGAL, OOM, REFUSED, SearchResult, Trial

_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0}
_TIME = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|sec|min|m|h)$")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "plan",
        help="search a space for the best recipe, explain it and write its launch files",
        description="Search the legal, memory-proved points of a space, print the ranked best with why the "
        "winner wins, and write the winner's launch files (and a report) to --out.",
    )
    add_space_arguments(p)
    add_oracle_arguments(p)
    p.add_argument("--strategy", choices=NAMES, default=None, help="search strategy (default: the space's, else auto)")
    p.add_argument("--budget", default=None,
                   help="evaluations and/or time: 100, 30min or 100,30min (default: the space's budget, else 100)")
    p.add_argument("--patience", type=int, default=None, help="stop after this many evaluations without improvement")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the space's, else 0)")
    p.add_argument("--out", default=None, help="output folder (default: ./plan-<space>/); must be empty unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out, and replace an existing --trace or --report file")
    p.add_argument("--target", default=None, help="framework+launcher for the launch files (default: the space's)")
    p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="an emission variable")
    p.add_argument("--no-emit", action="store_true", help="search and rank only; write no launch files")
    p.add_argument("--json", action="store_true", help="print the plan as JSON (no progress bar, no table)")
    p.add_argument("--trace", default=None, help="the search trace, JSONL (default: <out>/trace.jsonl)")
    p.add_argument("--resume", default=None, metavar="TRACE", help="continue the search this trace records")
    p.add_argument("--report", default=None, help="the HTML report (default: <out>/report.html)")
    p.add_argument("--top", type=int, default=10, help="rows of the ranked table")
    p.add_argument("--llm-model", default="", help="litellm model string for the llm strategy (or PRIMUSC_LLM_MODEL)")
    p.add_argument("--llm-cassette", default=None, help="record LLM requests and replies to this file")
    p.add_argument("--llm-replay", default=None, metavar="CASSETTE", help="rerun offline from a recorded cassette")
    p.set_defaults(func=run)


@frozen
class Plan:
    """What ``primusc plan --json`` prints."""

    result: SearchResult
    ranked: tuple[Trial, ...]
    baseline: Trial | None
    explanation: tuple[str, ...]
    target: str
    out: str
    files: tuple[str, ...]
    trace: str


def parse_budget(text: str | None) -> tuple[int | None, float | None]:
    if text is None:
        return None, None
    evals: int | None = None
    seconds: float | None = None
    for part in (p.strip() for p in text.replace(" ", "").split(",") if p.strip()):
        m = _TIME.match(part)
        if part.isdigit() and evals is None:
            evals = int(part)
        elif m and seconds is None:
            seconds = float(m.group(1)) * _UNITS[m.group(2)]
        else:
            raise CompileError(Diagnostic(BAD_BUDGET, f"cannot read the budget `{text}`",
                                          help="e.g. --budget 100, --budget 30min or --budget 100,30min"))
    if evals == 0:
        raise CompileError(Diagnostic(BAD_BUDGET, "a budget of 0 evaluations finds nothing"))
    return evals, seconds


def _progress_bar(err: Console, limits: Limits) -> tuple[Any, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[best]}"), console=err, transient=True,
    )
    task = bar.add_task("searching", total=limits.evaluations, best="")
    return bar, task


_DEFAULTS = attrs.asdict(Candidate(), recurse=False)


def layout(t: Trial, axes: tuple[str, ...]) -> str:
    """The axis values that differ from the knob defaults: ``tp=2,pp=4,precision=fp8``."""
    if t.candidate is None:
        return "-"
    parts = [
        f"{a}={format_value(getattr(t.candidate, a))}" for a in axes if getattr(t.candidate, a) != _DEFAULTS[a]
    ]
    return ",".join(parts) or "defaults"  # as `Candidate.label`, so it reads back as a `--point`


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands.emit import parse_vars
    from primus_lang.emit import check_target
    from primus_lang.lower import load_space

    source = Path(args.file)
    space = load_space(source, args.space)
    evals, seconds = parse_budget(args.budget)
    if args.patience is not None and args.patience < 1:
        raise CompileError(Diagnostic(BAD_BUDGET, f"a patience of {args.patience} evaluations stops before the first",
                                      help="--patience N stops after N evaluations without improvement; N >= 1"))
    limits = limits_of(space, evals, seconds, args.patience)
    out = Path(args.out) if args.out else Path(f"plan-{space.name}")
    resume = Path(args.resume) if args.resume else None
    trace = Path(args.trace) if args.trace else (resume if resume is not None else out / "trace.jsonl")
    report = Path(args.report) if args.report else out / "report.html"
    check_outputs(out, {"trace": trace, "report": report}, args.force, resume)
    target = args.target or space.settings.target
    if not args.no_emit:
        # a target or variable `emit` would refuse is refused before the search, not after it
        check_target(space, target, parse_vars(args.var))
    llm = LlmConfig.resolve(
        model=args.llm_model,
        space_model=space.settings.llm_model,
        cassette=Path(args.llm_replay or args.llm_cassette) if (args.llm_replay or args.llm_cassette) else None,
        replay=bool(args.llm_replay),
    )
    err = Console(stderr=True)
    quiet = args.json or not err.is_terminal
    prep = _prepare(space, _oracle(args, space), err, quiet)
    if not args.json:
        land = prep.land
        err.print(
            f"space `{space.name}`: {len(land):,} legal points, {int(land.fits.sum()):,} fit in memory "
            f"(limit {units.gib(land.limit)} of {units.gib(land.capacity)})"
        )
    result = _search(space, args, limits, prep, trace, resume, llm, err, quiet)
    return _finish(args, source, space, prep, result, out, trace)


def _oracle(args: argparse.Namespace, space: Any) -> Any:
    kind = oracle_kind(args, space.settings)
    if kind == "simulate":
        return None
    from primus_lang.check import legal_points

    # Anchoring measures each distinct layer shape of the space once (the database keeps them).
    return build_oracle(args, kind, space.cluster, space.model, legal_points(space))


def _prepare(space: Any, oracle: Any, err: Console, quiet: bool) -> Prepared:
    if quiet:
        return prepare(space, oracle)
    with err.status("checking legality and proving memory for every point..."):
        return prepare(space, oracle)


def _search(space: Any, args: argparse.Namespace, limits: Limits, prep: Prepared, trace: Path,
            resume: Path | None, llm: LlmConfig, err: Console, quiet: bool) -> SearchResult:
    bar, task = (None, None) if quiet else _progress_bar(err, limits)

    def progress(search: Search) -> None:
        if bar is None:
            return
        best = search.best.evaluation if search.best is not None else None
        shown = f"best {best.tokens_per_gpu:,.0f} tokens/s/GPU" if best is not None else ""
        bar.update(task, completed=search.meter.evaluations, best=shown, description=search.phase or "searching")

    try:
        if bar is not None:
            bar.start()
        return run_search(space, args.strategy, limits, args.seed, trace=trace, resume=resume,
                          progress=progress, llm=llm, prepared=prep)
    except KeyboardInterrupt:
        if bar is not None:
            bar.stop()
        print(f"interrupted; the trace is in {trace}; continue with: primusc plan {args.file} --resume {trace}"
              + (f" --strategy {args.strategy}" if args.strategy else "")
              + (f" --budget {args.budget}" if args.budget else "")
              + (f" --seed {args.seed}" if args.seed is not None else ""), file=sys.stderr)
        raise
    finally:
        if bar is not None:
            bar.stop()


def _finish(args: argparse.Namespace, source: Path, space: Any, prep: Prepared, result: SearchResult,
            out: Path, trace: Path) -> int:
    axes = tuple(a.name for a in prep.land.axes)
    ranked = tuple(result.ranked(max(1, args.top)))
    baseline = baseline_trial(prep, result)
    winner = ranked[0] if ranked else None
    lines: list[str] = []
    if winner is not None:
        lines = explain(winner, ranked[1] if len(ranked) > 1 else None, baseline, axes, prep.land.objective.metric)
    target = args.target or space.settings.target
    files: list[str] = []
    if winner is not None and winner.candidate is not None and not args.no_emit:
        launched, why = _launchable(space, result, winner, target)
        if launched is not winner and launched.candidate is not None:
            ours, best = launched.evaluation, winner.evaluation
            change = (f" ({ours.tokens_per_gpu:,.0f} against {best.tokens_per_gpu:,.0f} tokens/s/GPU)"
                      if ours is not None and best is not None else "")
            lines.append(
                f"The target {target} cannot express the best recipe ({why}); the launch files are for "
                f"the best one it can: {launched.candidate.label()}{change}."
            )
        files = _emit(args, source, space, launched, target, out)
    report = Path(args.report) if args.report else out / "report.html"
    if winner is not None:
        from primus_lang.report import write_report

        write_report(result, report, space)
        files.append(str(report))
    plan = Plan(result, ranked, baseline, tuple(lines), target, str(out), tuple(files), str(trace))
    if args.json:
        print(serialize.to_json(plan))
        return 0 if winner is not None else 1
    _print(plan, prep, axes)
    return 0 if winner is not None else 1


def _launchable(space: Any, result: SearchResult, winner: Trial, target: str) -> tuple[Trial, str]:
    """The best evaluated trial the target can express, and why the winner is not (the winner
    itself, or the winner when none is: ``emit`` then says why with P7001)."""
    from primus_lang.emit import unsupported

    assert winner.candidate is not None
    why = unsupported(space, winner.candidate, target)
    if not why:
        return winner, ""
    for trial in result.ranked(len(result.trials)):
        if trial.candidate is not None and not unsupported(space, trial.candidate, target):
            return trial, "; ".join(why)
    return winner, "; ".join(why)


def _emit(args: argparse.Namespace, source: Path, space: Any, winner: Trial, target: str, out: Path) -> list[str]:
    from primus_lang.commands.emit import figures, parse_vars
    from primus_lang.emit import EmitContext, emit

    assert winner.candidate is not None
    projection, memory = figures(space, winner.candidate)
    ctx = EmitContext(
        source_name=source.name,
        source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(),
        projection=projection,
        memory=memory,
        variables=parse_vars(args.var),
    )
    emitted = emit(space, winner.candidate, target, ctx)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, text in emitted.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if rel.endswith((".sh", ".sbatch")):
            path.chmod(0o755)
        written.append(str(path))
    return written


def _print(plan: Plan, prep: Prepared, axes: tuple[str, ...]) -> None:
    res = plan.result
    # Layout labels are long; below 160 columns (a pipe, a CI log) rich would wrap them letter by letter.
    console = Console(highlight=False, width=max(Console().width, 160))
    counts = {v: sum(1 for t in res.trials if t.verdict == v) for v in (REFUSED, ILLEGAL, OOM)}
    console.print(
        f"strategy {res.strategy}, seed {res.seed}: {res.evaluations} evaluations, {res.proposals} proposals "
        f"({counts[REFUSED]} refused by the gate, {counts[ILLEGAL]} illegal, {counts[OOM]} over memory) "
        f"in {res.elapsed:.1f} s; stopped: {res.stop_reason}"
        + ("; optimum proven" if res.optimum_proven else "")
    )
    for note in res.notes:
        console.print(f"note: {note}", style="yellow")
    limit = prep.land.limit
    table = Table(title=f"best of {res.space} ({res.objective})", show_lines=False)
    # GiB and spare against the limit, as `explain` and `diff` show the same candidates
    for col, just in (("#", "right"), ("layout", "left"), ("memory peak", "right"), ("spare vs limit", "right"),
                      ("tokens/s/GPU", "right"), ("MFU", "right"), ("bubble", "right"), ("exposed comm", "right")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for i, t in enumerate(plan.ranked, start=1):
        ev = t.evaluation
        if ev is None or t.memory_peak is None:
            continue
        table.add_row(
            str(i), layout(t, axes), units.gib(t.memory_peak), units.gib(limit - t.memory_peak),
            f"{ev.tokens_per_gpu:,.0f}", f"{ev.mfu:.1%}", f"{ev.bubble_fraction:.1%}", f"{ev.exposed_comm:.3g} s",
        )
    console.print(table)
    if plan.baseline is not None and plan.baseline.evaluation is not None:
        b = plan.baseline
        assert b.evaluation is not None
        console.print(f"baseline: {layout(b, axes)}: {b.evaluation.tokens_per_gpu:,.0f} tokens/s/GPU")
    for line in plan.explanation:
        console.print(line)
    if plan.files:
        console.print(f"wrote {len(plan.files)} files to {plan.out} ({plan.target}); trace: {plan.trace}")
