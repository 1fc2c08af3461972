"""``primusc calibrate-log LOG... --space FILE``: the offset between projection and real runs.

Each log's recipe is read from its Megatron arguments block, projected on the space's model and
cluster, and compared with the log's median step time after warm-up. The per-run factors and their
geometric mean are printed (``--json`` for machines); multiply projections by the factor to land on
measurements of this software stack.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from primus_lang.bench import WARMUP
from primus_lang.commands._log_lines import LogLines
from primus_lang.commands._options import add_oracle_arguments, natural, oracle_kind
from primus_lang.ir import serialize

if TYPE_CHECKING:
    from primus_lang.bench import TrainingLog
    from primus_lang.ir import Candidate, Space


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("calibrate-log", help="fit the projection's offset to Megatron/Primus training logs")
    p.add_argument("logs", nargs="+", help="training log files (stdout of Megatron-LM or Primus)")
    p.set_defaults(positional_rest="logs")
    p.add_argument("--space", required=True, help="a .prx file whose space names the model and cluster")
    p.add_argument("--name", help="which space of the file (default: the only one)")
    add_oracle_arguments(p)
    p.add_argument("--warmup", "--skip", type=natural, default=WARMUP, dest="warmup",
                   help=f"iterations left out as warm-up, at the start and after each restart (default {WARMUP}, "
                        "as `learn`)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from primus_lang.bench import MIN_STEADY, Offset, fit_offset, make_oracle, parse_log, steady
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE
    from primus_lang.lower import load_space
    from primus_lang.project import project

    space = load_space(args.space, args.name)
    kind = oracle_kind(args, space.settings)
    oracle = make_oracle(kind, args.device, args.db, cluster=space.cluster)
    offsets: list[Offset] = []
    rows = []
    for name in args.logs:
        lines = LogLines(Path(name))
        log = _with_first_rank(parse_log(lines, name), Path(name))
        _say_unfinished(lines, log, name)
        refuse_other_model(space, log, name)
        cand = _ran(log, space, name)
        refuse_illegal(space, cand, log, name)
        proj = project(space.model, space.cluster, cand, space.settings, oracle=oracle)
        # `learn`'s reading: a restart's first iterations are warm-up again, skipped and NaN ones left out
        st = steady(log, args.warmup)
        if not st.kept:
            raise CompileError(Diagnostic(LOG_UNREADABLE, f"`{name}`: no steady iteration among the {st.logged} "
                                          f"it logs, after {args.warmup} iteration(s) of warm-up per run or restart and those with "
                                          "skipped or NaN iterations", notes=st.notes,
                                          help="pass a longer log, or a smaller --warmup"))
        for note in st.notes:
            print(f"note: `{name}`: {note}", file=sys.stderr)
        if st.kept < MIN_STEADY:
            # learn refuses such a job (P6021); a factor from a log excerpt is still a reading, said as one sample
            print(f"note: `{name}`: measured on {st.kept} steady iteration{'s' if st.kept != 1 else ''} "
                  f"(fewer than {MIN_STEADY}, which `learn` asks of a job): a median of so few is one noisy sample",
                  file=sys.stderr)
        off = Offset(name, st.seconds, proj.step_time)
        measured_mfu = proj.mfu * proj.step_time / st.seconds if st.seconds > 0 else 0.0
        if measured_mfu > 1.0:
            # the step the log prints does more model FLOPs a second than the GPU's peak: the log ran another model,
            # batch or GPU count than the space says (a trial's 8B step of 1.5 s on 8 H100 at 128 x 8192 tokens)
            print(f"warning: `{name}`: a step of {st.seconds:.3f} s for `{cand.label()}` is {measured_mfu:.1f}x the "
                  f"GPU's dense peak in model FLOPs: the log did not run what the space says (its model, global batch, "
                  "sequence or GPU count); the factor below is not a measurement of it", file=sys.stderr)
        offsets.append(off)
        rows.append({"log": name, "candidate": cand.label(), "measured_s": off.measured,
                     "projected_s": off.projected, "factor": off.factor})
    factor = fit_offset(offsets)
    if args.json:
        print(serialize.to_json({"oracle": kind, "runs": rows, "factor": factor}))
        return 0
    for r in rows:
        print(f"{r['log']}: {r['candidate']}  measured {r['measured_s']:.3f} s, projected "
              f"{r['projected_s']:.3f} s, factor {r['factor']:.3f}")
    print(f"offset factor (geometric mean of {len(rows)} runs): {factor:.3f}")
    # the factor is a reading, not a profile: say how a site makes its projections land on these runs
    print("next: to fit a profile to runs like these, `primusc learn` reads the logs of a campaign "
          "`plan --shortlist N` writes (docs/projection.md, Learn from your runs); or write each run as a row of a runs file "
          "(validation/published_runs.md) and `primusc calibrate --runs FILE --with-bundled --out site.prx`")
    return 0


def _with_first_rank(log: TrainingLog, path: Path) -> TrainingLog:
    """``log`` with the arguments block of rank 0's log beside it where it prints none itself: a multi-node
    campaign job (Kubernetes, local) saves the printing rank's stdout as its log and rank 0's, which prints
    the arguments, apart (``learn`` reads the two the same way)."""
    import sys

    from primus_lang.bench import read_log
    from primus_lang.commands._log_lines import first_rank_log
    from primus_lang.diagnostics import CompileError

    first = first_rank_log(path)
    if log.args or not first.is_file() or first.resolve() == path.resolve():
        return log
    try:
        peer = read_log(LogLines(first), str(first))
    except CompileError:
        return log
    if not peer.args:
        return log
    print(f"note: `{path}` prints no arguments block: the recipe is read from rank 0's `{first}` beside it",
          file=sys.stderr)
    return attrs.evolve(log, args=peer.args, arg_lines=())


def _say_unfinished(lines: LogLines, log: TrainingLog, name: str) -> None:
    """A note on stderr where the log names how the job ended after its last iteration, short of its
    count (``learn``'s reading): its steps are real and measured, but the run did not finish."""
    import sys

    last = log.iterations[-1]
    stopped = lines.after(last.line)
    if stopped is not None and last.index < last.total:
        how, text = stopped
        print(f"note: `{name}`: {how} after iteration {last.index} of {last.total} ({text[:120]}): its steps "
              "are measured, but the run did not finish", file=sys.stderr)


def _ran(log: TrainingLog, space: Space, name: str) -> Candidate:
    """The recipe ``log`` ran: from its arguments block, or, in a log without one (iteration lines
    alone), the space's own recipe (an imported one's baseline) at the batch its lines print."""
    import sys

    from primus_lang.bench import candidate_from_log
    from primus_lang.check import baseline_point
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE
    from primus_lang.ir import Candidate, Span

    if log.args:
        cand = candidate_from_log(log, Candidate(seq_len=space.model.seq_len), name, moe=space.model.is_moe)
        _say_unprinted(log, cand, name)
        return cand
    base = baseline_point(space)
    if base is None:
        raise CompileError(Diagnostic(
            LOG_UNREADABLE, f"`{name}` prints no arguments block: which recipe it ran is unknown",
            span=Span(name, 1, 1, 1, 2),
            help="Megatron-Bridge prints no arguments block: pass a space whose `baseline` is the recipe the run "
                 "ran (`primusc import-recipe` writes one from the Bridge launch, or write `baseline { tp = ...; ... }` "
                 "in the space); of Megatron-LM or Primus, which print their arguments before the first iteration, "
                 "pass the run's whole stdout"))
    gbs = log.iterations[0].gbs or base.gbs
    print(f"note: `{name}` prints no arguments block: read as space `{space.name}`'s recipe, {base.label()}"
          + (f", at the global batch of {gbs} its lines print" if gbs != base.gbs else ""), file=sys.stderr)
    return base.replace(gbs=gbs)


# the knobs that decide a step's time most: an arguments block without one (a cut log, a launcher's own
# block) is read at primusc's default for it, which the user should hear about
_DECISIVE = ("tp", "pp", "cp", "mbs", "gbs", "precision", "recompute")


def _say_unprinted(log: TrainingLog, cand: Candidate, name: str) -> None:
    import sys

    from primus_lang.frameworks import spelling
    from primus_lang.ir.candidate import format_value

    absent = [k for k in _DECISIVE if log.arg(spelling.KNOBS[k]) is None]
    if absent:
        print(f"note: `{name}`'s arguments block prints no " + ", ".join(f"`{spelling.KNOBS[k]}`" for k in absent)
              + ": read as " + ", ".join(f"{k}={format_value(getattr(cand, k))}" for k in absent)
              + " (pass the run's whole stdout, or check the recipe line below)", file=sys.stderr)


def refuse_other_model(space: Space, log: TrainingLog, name: str) -> None:
    """A log whose arguments state another model shape or GPU count than the space's: its factor would
    compare different runs. Arguments it does not print are not compared."""
    from primus_lang.bench import other_model
    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_projection import LOG_OTHER_MODEL
    from primus_lang.ir import Span

    differ = other_model(log, space.model, space.cluster.world)
    if differ:
        line = log.line_of(differ[0][0])
        raise CompileError(Diagnostic(
            LOG_OTHER_MODEL, f"`{name}` ran " + ", ".join(f"{arg} {text} (space `{space.name}`: {want:,})"
                                                          for arg, text, want in differ),
            span=Span(name, line, 1, line, 2) if line else None,
            help="pass the space of the log's model and cluster (`primusc import-recipe` writes one from the "
                 "run's recipe)"))


def refuse_illegal(space: Space, cand: Candidate, log: TrainingLog, name: str) -> None:
    """A recipe Megatron would refuse on the space's model and cluster (a PP that does not divide
    the layers, a TP that does not divide the heads) cannot be projected; the space's own
    ``require`` lines are its search's business, not the log's."""
    from primus_lang.bench import bad_value
    from primus_lang.check import legality
    from primus_lang.frameworks import spelling

    broken = legality(attrs.evolve(space, constraints=()), cand)
    if broken:
        first = min((line for arg in (spelling.KNOBS["tp"], spelling.KNOBS["pp"]) if (line := log.line_of(arg))),
                    default=0)
        raise bad_value(name, first, f"`{name}` ran `{cand.label()}`, which space `{space.name}`'s model and "
                        f"cluster cannot: {broken[0].message}",
                        "calibrate against a space with the log's model and cluster")
