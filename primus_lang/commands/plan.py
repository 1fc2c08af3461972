"""``primusc plan FILE``: search the space, rank what was found, explain the winner, emit its launch files."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen
from rich.console import Console
from rich.table import Table

from primus_lang.commands import _campaign, _capacity
from primus_lang.commands._options import (
    add_oracle_arguments,
    add_space_arguments,
    build_oracle,
    check_outputs,
    foreign_device,
    launched_space,
    mfu_note,
    natural,
    oracle_kind,
    warn_trust,
)
from primus_lang.datafiles import read_count
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import BAD_BUDGET
from primus_lang.ir import Provenance, serialize, units
from primus_lang.ir.candidate import UNLABELLED, Candidate, format_value
from primus_lang.search import (
    ILLEGAL,
    NAMES,
    OOM,
    REFUSED,
    CapacityPlan,
    Limits,
    LlmConfig,
    Prepared,
    Search,
    SearchResult,
    Trial,
    append_plan_note,
    baseline_trial,
    check_resume,
    choose,
    limits_of,
    none_meets,
    prepare,
    run_search,
    why_winner,
)
from primus_lang.search import explain_winner as explain
from primus_lang.validate import describe, trust

_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0}
_TIME = re.compile(r"^(\d{1,12}(?:\.\d{1,12})?)\s*(s|sec|min|m|h)$", re.ASCII)


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
    p.add_argument("--patience", type=natural, default=None, help="stop after this many evaluations without improvement")
    p.add_argument("--seed", type=natural, default=None, help="random seed (default: the space's, else 0)")
    p.add_argument("--jobs", type=natural, default=None,
                   help="clusters searched at a time, for a space with cluster axes and the simulate oracle "
                        "(default, or 0: the CPUs this process may use); the plan is the same whatever the number")
    p.add_argument("--out", default=None, help="output folder (default: ./plan-<space>/); must be empty unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out, and replace an existing --trace or --report file")
    p.add_argument("--target", default=None, help="framework+launcher for the launch files (default: the space's)")
    p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="an emission variable")
    p.add_argument("--no-emit", action="store_true", help="search and rank only; write no launch files")
    _campaign.add_arguments(p)
    p.add_argument("--json", action="store_true", help="print the plan as JSON (no progress bar, no table)")
    p.add_argument("--trace", default=None, help="the search trace, JSONL (default: <out>/trace.jsonl)")
    p.add_argument("--resume", default=None, metavar="TRACE", help="continue the search this trace records")
    p.add_argument("--report", default=None, help="the HTML report (default: <out>/report.html)")
    p.add_argument("--top", type=natural, default=10, help="rows of the ranked table")
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
    gpu: str  # the GPU profile projected on
    provenance: Provenance  # its evidence and error band
    tied: tuple[str, ...] = ()  # candidates tied with the best projection, the winner first
    report: str = ""  # the HTML report's path, one of ``files`` ("" when there is no winner)
    capacity: CapacityPlan | None = None  # the clusters compared, with cluster axes or a training-run objective
    cluster: str = ""  # the cluster planned on, as ``capacity`` names it ("" without cluster axes)
    # each ranked candidate's band (None: not projected), widened where it lies beyond the profile's
    # runs (``beyond``: why; W6012)
    bands: tuple[trust.Band | None, ...] = ()
    # the candidate plan chose (its launch files', unless the target cannot launch it); `result.best` is the
    # search's best projection, which the tie rule or the space's own recipe may have set aside
    winner: str = ""
    # the projected fastest where the tie rule ranked it below `ranked` (None where it is among them), and its band
    fastest: Trial | None = None
    fastest_band: trust.Band | None = None


_BUDGET_HELP = "e.g. --budget 100, --budget 30min, --budget 100,30min or --budget '100 evals, 30 min'"


def parse_budget(text: str | None) -> tuple[int | None, float | None]:
    if text is None:
        return None, None
    evals: int | None = None
    seconds: float | None = None
    parts = [p.strip() for p in text.replace(" ", "").split(",") if p.strip()]
    for part in parts or [text]:  # `--budget ,` says nothing: refused, not read as no budget
        m = _TIME.match(part)
        # `10 evals`, as the space's own `budget` writes it
        part = re.sub(r"(?<=\d)(?:evals?|evaluations?)$", "", part) if part[:1].isdigit() else part
        if part.isascii() and part.isdigit() and evals is None:  # not `²`, which isdigit() takes
            try:
                evals = read_count(part)
            except ValueError as err:
                raise CompileError(Diagnostic(BAD_BUDGET, f"cannot read the budget: {err}",
                                              help=_BUDGET_HELP)) from None
        elif m and seconds is None:
            seconds = float(m.group(1)) * _UNITS[m.group(2)]
        else:
            raise CompileError(Diagnostic(BAD_BUDGET, f"cannot read the budget `{text[:40]}`",
                                          help=_BUDGET_HELP))
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
    """The axis values that differ from the knob defaults: ``tp=2,pp=4,precision=fp8``, in the knobs'
    order, as ``Candidate.label`` and ``project`` write them (not the space's axis order)."""
    if t.candidate is None:
        return "-"
    return _knobs(t.candidate, lambda a: a in axes) or "defaults"  # as `Candidate.label`: it reads back as a `--point`


def held(t: Trial, axes: tuple[str, ...]) -> str:
    """What ``layout`` leaves out of every row: the knobs the space fixes away from their defaults
    (``ep=8``), which the candidates' full labels (``pp=2,ep=8``) name."""
    if t.candidate is None:
        return ""
    return _knobs(t.candidate, lambda a: a not in axes and a not in UNLABELLED)


def _knobs(cand: Candidate, shown: Callable[[str], bool]) -> str:
    """``knob=value`` of each knob ``shown`` keeps that differs from its default, in the knobs' order."""
    return ",".join(f"{a}={format_value(getattr(cand, a))}" for a in _DEFAULTS
                    if shown(a) and getattr(cand, a) != _DEFAULTS[a])


def run(args: argparse.Namespace) -> int:
    from primus_lang.commands.emit import parse_vars, print_warnings
    from primus_lang.emit import check_target, emitted_names, target_warnings, tokenizer_warnings
    from primus_lang.lower import load_space
    from primus_lang.outputs import folder_lock, keep_ledger, preflight, written_before

    source = Path(args.file)
    space = load_space(source, args.space)
    # searched as the chosen target launches each candidate (its FSDP, its argument checks, the releases
    # `--var` names)
    space = launched_space(space, args.target or space.settings.target, parse_vars(args.var))
    evals, seconds = parse_budget(args.budget)
    if args.patience is not None and args.patience < 1:
        raise CompileError(Diagnostic(BAD_BUDGET, f"a patience of {args.patience} evaluations stops before the first",
                                      help="--patience N stops after N evaluations without improvement; N >= 1"))
    limits = limits_of(space, evals, seconds, args.patience)
    capacity, cluster = None, ""
    shape = _capacity.shape_note(space)
    if shape:
        print(f"note: {shape}", file=sys.stderr)
    if _capacity.applies(space) or args.cluster:
        capacity, chosen = _capacity.plan_clusters(args, space, limits, lambda s: _oracle(args, s),
                                                   args.json or not Console(stderr=True).is_terminal)
        if chosen is None:
            if args.json:  # the success output's shape: what a script reads under `capacity` is there either way
                print(serialize.to_json({"capacity": capacity, "cluster": ""}))
            else:
                _capacity.print_table(capacity, "")
            raise CompileError(none_meets(space, capacity))
        cluster, space = chosen
    out = Path(args.out) if args.out else Path(f"plan-{space.name}")
    resume = Path(args.resume) if args.resume else None
    trace = Path(args.trace) if args.trace else (resume if resume is not None else out / "trace.jsonl")
    report = Path(args.report) if args.report else out / "report.html"
    target = space.settings.target
    if not args.no_emit:
        # a target or variable `emit` would refuse is refused before the search, not after it
        check_target(space, target, parse_vars(args.var))
        print_warnings(target_warnings(space, target) + tokenizer_warnings(space, target, parse_vars(args.var)),
                       args.error_format)
    launch = () if args.no_emit else tuple(out / name for name in sorted(emitted_names(target)))
    launch += _campaign.check(args, out, target)
    _refuse_collisions(source, trace, report, resume, launch, _definition_files(space))
    # what an earlier plan wrote here and nobody has changed since is this plan's to replace (a rerun of
    # `plan --no-emit`, or of a plan for another target); a file changed since is the user's
    prior, edited = written_before(out)
    own = (*_own_files(out, resume, (*launch, report)), *prior)
    outputs = {"trace": trace, "report": report}
    check_outputs(out, outputs, args.force, resume, own)
    for path in launch:  # nothing on the way below --out may be a link either (a planted `campaign`)
        preflight(out, str(path.relative_to(out)), force=True)
    llm = LlmConfig.resolve(
        model=args.llm_model,
        space_model=space.settings.llm_model,
        cassette=Path(args.llm_replay or args.llm_cassette) if (args.llm_replay or args.llm_cassette) else None,
        replay=bool(args.llm_replay),
    )
    if args.llm_replay and not Path(args.llm_replay).is_file():
        from primus_lang.diagnostics.codes_search import CASSETTE_INVALID

        # asked to rerun a recorded search, a plan that searched anew would answer another question
        raise CompileError(Diagnostic(CASSETTE_INVALID, f"--llm-replay: `{args.llm_replay}` is no file",
                                      help="give the cassette a `--llm-cassette` run recorded, or drop --llm-replay "
                                           "to search anew"))
    err = Console(stderr=True)
    quiet = args.json or not err.is_terminal
    try:
        prep = _prepare(space, _oracle(args, space), err, quiet)
    except CompileError as failed:
        if not cluster:
            raise
        # the cluster planned on is one of several: say which, and that the others remain
        raise CompileError([attrs.evolve(d, message=f"{d.message} on the cluster `{cluster}`",
                                         help="name another cluster with --cluster, or drop it for the objective's "
                                              "choice (`primusc check` counts each cluster's legal points)")
                            for d in failed.diagnostics]) from None
    if not args.json:
        land = prep.land
        err.print(
            f"space `{space.name}`{f' on {cluster}' if cluster else ''}: {len(land):,} legal points, "
            f"{int(land.fits.sum()):,} fit in memory "
            f"(limit {units.gib(land.limit)} of {units.gib(land.capacity)})", soft_wrap=True
        )
    if resume is not None:  # a trace the search would refuse is refused before --out is made
        check_resume(space, resume, args.strategy, limits, args.seed, llm, prep)
    writes_out = bool(launch) or any(p.parent.resolve() == out.resolve() for p in (trace, report))
    with folder_lock(out) if writes_out else contextlib.nullcontext():
        # another plan may have written here since the look above; now none can until this one ends
        check_outputs(out, outputs, args.force, resume, own)
        replace = {p.resolve() for p in own}
        try:
            result = _search(space, args, limits, prep, trace, resume, llm, err, quiet)
            missed = _missed_row(capacity, cluster, result) if resume is None else ""
            if missed:
                # the comparison's row searched without judging ties, which spends less of the budget; under
                # a budget that binds the tie search can miss the row's best: plan as the row searched
                prep = attrs.evolve(prep, land=prep.land.without_ties())  # the same points and projections
                result = _search(space, args, limits, prep, trace, resume, llm, err, quiet)
                result = attrs.evolve(result, notes=(*result.notes, missed))
                append_plan_note(trace, missed)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted; the trace is in {trace}; continue with: "
                                    f"{rerun_command(args, trace, out)}") from None
        try:
            plan = _finish(args, source, space, prep, result, out, trace, report,
                           lambda path: args.force or path.resolve() in replace, capacity)
            plan = attrs.evolve(plan, capacity=capacity, cluster=cluster)
            if writes_out:
                for note in keep_ledger(out, [Path(f) for f in plan.files] + [trace], prior, edited):
                    print(f"note: {note}", file=sys.stderr)
            if args.json:
                # the notes are in the JSON; said on stderr too, where a pipe into jq would lose them (an
                # LLM strategy that handed over to the evolutionary search, a search run again)
                for note in plan.result.notes:
                    print(f"note: {note}", file=sys.stderr)
                print(serialize.to_json(plan))
            else:
                _print(plan, prep, tuple(a.name for a in prep.land.axes))
            return 0 if plan.report else 1
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted while writing the plan's files; the search is complete in "
                                    f"{trace}; finish with: {rerun_command(args, trace, out)}") from None


def _missed_row(capacity: CapacityPlan | None, cluster: str, result: SearchResult) -> str:
    """Why the cluster's plan is searched again as the comparison's row was ("" when it need not be): the
    search that judges ties did not evaluate the best recipe the row found under the same budget."""
    row = capacity.cluster(cluster) if capacity is not None else None
    if row is None or not row.recipe or any(t.label == row.recipe for t in result.trials if t.evaluation):
        return ""
    return (f"searched as the cluster comparison searched {cluster} (ties with the best not judged): judging "
            f"them spent the budget of {result.evaluations} evaluations before reaching `{row.recipe}`, the best "
            "the comparison found; a larger budget judges them")


def _definition_files(space: Any) -> tuple[Path, ...]:
    """The files the space's model, cluster, GPU profile, site and run were defined in (the space file's
    imports), where they are files: what no output may replace (a trial's `--trace` on the imported site
    file replaced it with the trace's lines under --force)."""
    things = (space, space.model, space.cluster, space.cluster.gpu, space.site, space.run)
    files = {span.file for thing in things if (span := getattr(thing, "span", None)) is not None}
    return tuple(Path(f) for f in sorted(files) if not f.startswith("<") and Path(f).is_file())


def _refuse_collisions(source: Path, trace: Path, report: Path, resume: Path | None,
                       launch: tuple[Path, ...], imported: tuple[Path, ...] = ()) -> None:
    from primus_lang.outputs import refuse_collisions, same_file

    written = {"--trace": trace, "--report": report, **{f"the launch file `{p}`": p for p in launch}}
    read = {"the space file": source, **{f"the imported file `{p}`": p for p in imported}}
    if resume is not None and not same_file(resume, trace):
        read["--resume"] = resume  # a copy of it is continued in --trace: it is read, never written
    refuse_collisions(written, read)


def _own_files(out: Path, resume: Path | None, files: tuple[Path, ...]) -> tuple[Path, ...]:
    """What a plan resumed from a trace in its own --out may replace there: the files it writes
    itself (launch files, report), which a plan killed while writing them leaves behind."""
    if resume is None or resume.resolve().parent != out.resolve():
        return ()
    return tuple(p for p in files if p.parent.resolve() == out.resolve())


# options that `--resume` must repeat: they name the stream the trace records, or what is written
_RERUN_OPTIONS = ("space", "oracle", "device", "db", "strategy", "budget", "patience", "seed", "target",
                  "report", "top", "shortlist", "llm_model", "llm_cassette", "llm_replay")
_RERUN_DEFAULTS: dict[str, object] = {"device": "cpu", "top": 10, "llm_model": ""}


def rerun_command(args: argparse.Namespace, trace: Path, out: Path) -> str:
    """The command that continues this plan from ``trace``, quoted to paste into a shell."""
    words = ["primusc", "plan", args.file, "--resume", str(trace), "--out", str(out)]
    for name in _RERUN_OPTIONS:
        value = getattr(args, name, None)
        if value is not None and value != _RERUN_DEFAULTS.get(name):
            words += [f"--{name.replace('_', '-')}", str(value)]
    for item in args.var:
        words += ["--var", item]
    for item in getattr(args, "campaign_var", []):
        words += ["--campaign-var", item]
    words += [flag for flag in ("--force", "--no-emit", "--json") if getattr(args, flag[2:].replace("-", "_"))]
    return shlex.join(words)


def _oracle(args: argparse.Namespace, space: Any) -> Any:
    kind = oracle_kind(args, space.settings)
    if kind == "simulate":
        return None
    from primus_lang.check import legal_points

    # Anchoring measures each distinct layer shape of the space once (the database keeps them).
    oracle = build_oracle(args, kind, space.cluster, space.model, legal_points(space), space.settings)
    foreign = foreign_device(oracle, space.cluster.gpu)
    if foreign:  # the plan's bands are the profile's, which such timings never saw
        print(f"note: oracle {kind}: {foreign}; the bands shown are the profile's, which never saw them",
              file=sys.stderr)
    return oracle


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
    finally:
        if bar is not None:
            bar.stop()


def _finish(args: argparse.Namespace, source: Path, space: Any, prep: Prepared, result: SearchResult,
            out: Path, trace: Path, report: Path, replace: Callable[[Path], bool],
            capacity: CapacityPlan | None = None) -> Plan:
    if result.evaluations == 0 and result.best is None:
        # `budget 0 evals` or `budget 1 ns` in the space: an empty table and exit 1 said nothing
        raise CompileError(Diagnostic(
            BAD_BUDGET, f"the search stopped before its first evaluation ({result.stop_reason})",
            getattr(space.budget, "span", None),
            help="give the search at least one evaluation and the time for it, e.g. `budget 50 evals, 5 min` "
                 "in the space or --budget 50"))
    axes = tuple(a.name for a in prep.land.axes)
    metric = prep.land.objective.metric
    baseline = baseline_trial(prep, result)
    choice = choose(result, space.cluster.gpu.provenance, metric, prep.land.objective.sense,
                    space.settings, baseline)
    settled, winner, kept, own = choice.settled, choice.winner, choice.kept, choice.recipe
    ranked = settled.ranked[: max(1, args.top)]
    fastest = settled.fastest_below(args.top)  # the table shows it too
    lines: list[str] = []
    stack = trust.target_stack(space.settings.target)
    warn_trust(space.cluster.gpu, [(t.candidate.label(), t.evaluation.mfu) for t in ranked
                                   if t.candidate is not None and t.evaluation is not None], args.error_format,
               space.model, [(t.candidate, space.cluster.world, trust.host_share(t.evaluation)) for t in ranked
                             if t.candidate is not None],  # the rows the table marks with †, the winner first
               stack)
    if winner is not None and kept:
        lines = [kept]
    elif winner is not None:
        lines = why_winner(settled, metric) + explain(winner, ranked[1] if len(ranked) > 1 else None, baseline,
                                                      axes, metric)
    target = args.target or space.settings.target
    files: list[str] = []
    launch_line = ""
    if winner is not None and winner.candidate is not None and not args.no_emit:
        from primus_lang.emit import launchable

        launch = launchable(space, result, winner, target, prep.land, prep.evaluator)
        launched, launch_line = launch.trial, launch.line(target, winner)
        if launch_line:
            lines.append(launch_line)
        files = _emit(args, source, space, launched, target, out, replace)
        if launched.evaluation is not None and launched.candidate is not None:
            from primus_lang.commands.emit import parse_vars, print_warnings
            from primus_lang.emit import START_UP_S, EmitContext, left_out, time_warnings

            print_warnings(left_out(space, launched.candidate, target, EmitContext(variables=parse_vars(args.var)))
                           + time_warnings(space, target, launched.evaluation.step_time, parse_vars(args.var),
                                           START_UP_S, launched.candidate.gbs), args.error_format)
            lines += _whole_run(space, launched, parse_vars(args.var))
        if args.shortlist is not None:
            written, said = _campaign.write(args, source, space, settled, target, out, replace, own)
            files += written
            lines.append(said)
    if winner is not None:
        from primus_lang.report import write_report

        # the report's baseline is the one this output names (the space's recipe when it has one)
        shown = attrs.evolve(result, baseline=baseline) if baseline is not None else result
        if launch_line:
            # said in the report, and recorded in the trace for the report rebuilt from it
            append_plan_note(trace, launch_line)
            shown = attrs.evolve(shown, notes=(*shown.notes, launch_line))
        write_report(shown, report, space, force=replace(report), capacity=capacity)
        files.append(str(report))
    bands = tuple(trust.band_on(space, t.candidate, t.evaluation)
                  if t.evaluation is not None and t.candidate is not None else None for t in (*ranked, fastest)
                  if t is not None)
    plan = Plan(result, ranked, baseline, tuple(lines), target, str(out), tuple(files), str(trace),
                space.cluster.gpu.name, space.cluster.gpu.provenance, tuple(t.candidate.label() for t in settled.tied if t.candidate),
                str(report) if winner is not None else "", bands=bands[:len(ranked)],
                winner=winner.candidate.label() if winner is not None and winner.candidate is not None else "",
                fastest=fastest, fastest_band=bands[len(ranked)] if fastest is not None else None)
    return plan


def _whole_run(space: Any, launched: Trial, given: dict[str, str]) -> list[str]:
    """What the launch files' iterations are beside the run a capacity plan was sized for: the files
    run the site's or the default `train_iters` (a trial of the recipe), which ``--var`` changes."""
    tokens = space.capacity.train_tokens
    if tokens <= 0 or "train_iters" in given or (space.run is not None and space.run.train_iters) \
            or launched.candidate is None:
        return []
    from primus_lang.emit import VARIABLES
    from primus_lang.ir.text import count
    from primus_lang.search import whole_iterations

    cand = launched.candidate
    whole = whole_iterations(tokens, cand)
    return [f"The launch files run {VARIABLES['train_iters'].default} iterations (`train_iters`), a trial of the "
            f"recipe: the {count(tokens)} tokens take {whole:,} iterations at {cand.gbs:,} x {cand.seq_len:,} tokens "
            f"each. To run them whole, give `--var train_iters={whole}` with a `checkpoint_dir` and a "
            "`time_limit` the site allows: each job stops itself before the limit, and the next one loads the "
            "last checkpoint."]


def _emit(args: argparse.Namespace, source: Path, space: Any, winner: Trial, target: str, out: Path,
          replace: Callable[[Path], bool]) -> list[str]:
    from primus_lang.commands.emit import executable, figures, parse_vars
    from primus_lang.emit import EmitContext, emit
    from primus_lang.outputs import write_files

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
    written = write_files(out, emitted, force=lambda rel: replace(out / rel), executable=executable)
    return [str(path) for path in written]


def _print_space_baseline(console: Console, b: Trial, prep: Prepared) -> None:
    """The space's baseline (the recipe it was imported from) first: its memory and its projection."""
    from primus_lang.memory import account

    space = prep.space
    assert b.candidate is not None and b.evaluation is not None and b.memory_peak is not None
    peak = account(space.model, space.cluster, b.candidate, space.settings).peak
    terms = ", ".join(f"{t.name} {units.gib(t.bytes)}" for t in peak.largest(3))
    limit = prep.land.limit
    verdict = "fits" if b.memory_peak <= limit else "does not fit"
    ev = b.evaluation
    console.print(f"baseline (the space's recipe): {b.candidate.label()}")
    console.print(f"  memory  {units.gib(b.memory_peak)} on the fullest stage ({peak.name}), {verdict} "
                  f"(limit {units.gib(limit)}): {terms}")
    console.print(f"  project {ev.tokens_per_gpu:,.0f} tokens/s/GPU, step {ev.step_time:.3g} s, MFU {ev.mfu:.1%}, "
                  f"bubble {ev.bubble_fraction:.1%}")


def _proof(res: SearchResult) -> str:
    """What the summary line adds about optimality: a proof, or its absence where one was sought."""
    if res.optimum_proven:
        return "" if "proven" in res.stop_reason else "; optimum proven"
    return "; optimum not proven" if res.strategy == "exhaustive" else ""


def _print(plan: Plan, prep: Prepared, axes: tuple[str, ...]) -> None:
    if plan.capacity is not None:
        _capacity.print_table(plan.capacity, plan.cluster, files=any(f != plan.report for f in plan.files))
    res = plan.result
    # Layout labels are long; below 160 columns (a pipe, a CI log) rich would wrap them letter by letter.
    console = Console(highlight=False, width=max(Console().width, 160))
    counts = {v: sum(1 for t in res.trials if t.verdict == v) for v in (REFUSED, ILLEGAL, OOM)}
    console.print(
        f"strategy {res.strategy}, seed {res.seed}: {res.evaluations} evaluations, {res.proposals} proposals "
        f"({counts[REFUSED]} refused by the gate, {counts[ILLEGAL]} illegal, {counts[OOM]} over memory) "
        f"in {res.elapsed:.1f} s; stopped: {res.stop_reason}"
        + _proof(res)
    )
    for note in res.notes:
        console.print(f"note: {note}", style="yellow")
    limit = prep.land.limit
    given = plan.baseline if plan.baseline is not None and plan.baseline.is_space_recipe else None
    if given is not None:
        _print_space_baseline(console, given, prep)
    table = Table(title=f"best of {res.space} ({res.objective})", show_lines=False)
    # GiB and spare against the limit, as `explain` and `diff` show the same candidates
    prov = plan.provenance
    for col, just in (("#", "right"), ("layout", "left"), ("memory peak", "right"), ("spare vs limit", "right"),
                      ("tokens/s/GPU", "right"), (f"{prov.coverage:.0%} band", "right"), ("MFU", "right"),
                      ("bubble", "right"), ("exposed comm", "right")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    tied = set(plan.tied[1:])
    rows = list(enumerate(zip(plan.ranked, plan.bands, strict=True), start=1))
    if plan.fastest is not None and plan.fastest.candidate is not None:  # ranked lower by the tie rule
        rows.append((plan.tied.index(plan.fastest.candidate.label()) + 1, (plan.fastest, plan.fastest_band)))
    for i, (t, b) in rows:
        ev = t.evaluation
        if ev is None or t.memory_peak is None or t.candidate is None or b is None:
            continue
        label = t.candidate.label()
        if t is plan.fastest:
            table.add_section()  # a line: the rows between are left out
        table.add_row(
            f"{i}{'≈' if label in tied else ''}", layout(t, axes), units.gib(t.memory_peak),
            units.gib(limit - t.memory_peak), f"{ev.tokens_per_gpu:,.0f}",
            units.band(b.tokens_low, b.tokens_high) + (" †" if b.beyond else ""), f"{ev.mfu:.1%}",
            f"{ev.bubble_fraction:.1%}", f"{ev.exposed_comm:.3g} s",
        )
    console.print(table)
    fixed = held(plan.ranked[0], axes) if plan.ranked else ""
    if fixed:
        console.print(f"every row also: {fixed} (fixed by the space; a full label names them)")
    console.print(describe(plan.gpu, prov))
    mixed = mfu_note(prep.space.cluster.gpu, (t.candidate.precision for t in plan.ranked if t.candidate is not None))
    if mixed:
        console.print(mixed)
    if any(b is not None and b.beyond for b in plan.bands):
        low, high = trust.far(prov)
        console.print(f"†: beyond the runs the profile was fitted on (W6012), the band widened to {low:.2f}-{high:.2f}x")
    if tied:
        console.print(f"≈: tied with #1: the fastest projection of the tied group is at most {prov.paired:.1%} ahead, "
                      "within what the ratio of two projections errs on this profile, so the projected order among "
                      "them is not evidence; #1 is the one the tie rule picks (below), not necessarily the fastest")
    if given is None and plan.baseline is not None and plan.baseline.evaluation is not None:
        base = plan.baseline
        assert base.evaluation is not None
        console.print(f"baseline: {layout(base, axes)}: {base.evaluation.tokens_per_gpu:,.0f} tokens/s/GPU")
    for line in plan.explanation:
        console.print(line)
    launch = [f for f in plan.files if f != plan.report]
    if launch:
        console.print(f"wrote {len(plan.files)} files to {plan.out} ({plan.target}); trace: {plan.trace}")
    elif plan.files:  # --no-emit: the report alone
        console.print(f"wrote the report to {plan.out} (no launch files: --no-emit); trace: {plan.trace}")
