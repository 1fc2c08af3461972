"""``primusc learn CAMPAIGN``: a site profile from the logs of a shortlist campaign.

A command of its own rather than more of ``calibrate-log``: that command fits one offset to logs
of any provenance and reads each recipe back from the log's arguments; this one starts from a
campaign's manifest, which knows every job's full candidate (schedule, overlap, sharding: more than
an arguments block says) and the profile it was projected on, refits that profile's efficiency
parameters, writes them as a profile in the language and ranks the shortlist again. The two
share the log parser (``bench.logs``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any

from attrs import frozen

from primus_lang.bench import MIN_STEADY, WARMUP
from primus_lang.commands._log_lines import LogLines, first_rank_log, rank_of_end
from primus_lang.commands._options import natural
from primus_lang.diagnostics import CompileError, Diagnostic, render
from primus_lang.diagnostics.codes_projection import (
    BAD_PROFILE_NAME,
    CAMPAIGN_LOG_MISSING,
    CAMPAIGN_LOG_RECIPE,
    CAMPAIGN_LOG_SHORT,
    CAMPAIGN_SPACE,
    NOTHING_TO_LEARN,
)
from primus_lang.diagnostics.codes_search import CAMPAIGN_MANIFEST
from primus_lang.ir import serialize
from primus_lang.ir.candidate import format_value

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# knobs an arguments block prints (``bench.candidate_from_log`` reads them) that must agree with the
# manifest's candidate: the layout, and what changes the step's work or what it hides (a shortlist's
# candidates often differ in nothing else). Recomputation is compared by kind and layers.
_CHECKED = ("tp", "pp", "vpp", "cp", "ep", "mbs", "gbs", "seq_len", "precision", "tp_comm_overlap",
            "overlap_grad_reduce", "overlap_param_gather", "fp8_param_gather", "ep_comm_overlap", "attention",
            "moe_dispatcher")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "learn", help="refit the GPU profile from a shortlist campaign's logs and rank the shortlist by them",
        description="Read the logs of a campaign written by `primusc plan --shortlist K` (Megatron-LM, Megatron-Bridge or "
        "Primus logs), refit the starting profile's efficiencies toward it, write a site profile and rank the shortlist "
        "by measurement.")
    p.add_argument("campaign", help="the campaign folder (holding manifest.json)")
    p.add_argument("--space", default=None, help="the space's .prx file (default: the one the manifest records)")
    p.add_argument("--space-name", default=None, help="which space of the file (default: the manifest's)")
    p.add_argument("--out", default=None, help="the site profile to write (default: CAMPAIGN/site.prx)")
    p.add_argument("--name", default=None, help="the profile's name (default: <starting profile>_site)")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.add_argument("--warmup", type=natural, default=WARMUP,
                   help=f"iterations of each run (and of each restart) left out as warm-up (default {WARMUP})")
    p.add_argument("--partial", action="store_true",
                   help="learn from the jobs with usable logs and list the others, instead of stopping")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _origin(folder: Path) -> str:
    """The line a site profile names its campaign by: its manifest's SHA-256, which its jobs' logs do not
    change (the jobs and their candidates are fixed when the plan writes it)."""
    import hashlib

    digest = hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
    return f"Learnt from the campaign whose manifest.json has SHA-256 {digest}."


def read_manifest(folder: Path) -> dict[str, Any]:
    from primus_lang.datafiles import DataCodes, loads_json, read_text
    from primus_lang.emit import FOLDER

    if folder.name == "manifest.json" and folder.is_file():
        holder = folder.parent / FOLDER if (folder.parent / FOLDER / "manifest.json").is_file() else folder.parent
        raise CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{folder}` is a manifest, not a campaign folder",
                                      help=f"pass the campaign folder: primusc learn {shlex.quote(str(holder))}"))
    if folder.name.startswith("job-") and (folder.parent / "manifest.json").is_file():
        raise CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{folder}` is one job's folder of the campaign "
                                      f"`{folder.parent}`", help=f"primusc learn {shlex.quote(str(folder.parent))}"))
    path = folder / "manifest.json"
    if (folder / FOLDER / "manifest.json").is_file():
        # the plan's own folder: its manifest.json is the plan's, the campaign one level down
        raise CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{folder}` is the plan's folder; its campaign is "
                                      f"`{folder / FOLDER}`",
                                      help=f"primusc learn {shlex.quote(str(folder / FOLDER))}"))
    if not path.exists():
        raise CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{folder}` holds no manifest.json",
                                      help="pass the folder `primusc plan --shortlist K` wrote (<out>/campaign)"))
    # bounded like every data file: its size, nesting and integers (a 5,000-digit one is no count)
    codes = DataCodes(*(CAMPAIGN_MANIFEST,) * 6)
    data = loads_json(read_text(path, codes, "a campaign manifest"), str(path), codes, "a campaign manifest")
    from primus_lang.emit import FORMAT

    keys = ("format", "space", "model", "cluster", "gpu", "profile", "jobs", "source")
    if not isinstance(data, dict) or data.get("format") != FORMAT or any(k not in data for k in keys):
        raise CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{path}` is not a campaign manifest of format {FORMAT}",
                                      help="write the campaign again with `primusc plan --shortlist K`"))
    from primus_lang.commands._manifest import check_manifest

    check_manifest(path, data)
    return data


def _space(args: argparse.Namespace, folder: Path, manifest: dict[str, Any]) -> Any:
    from primus_lang.lower import load_space

    path = Path(args.space) if args.space else folder / manifest["source"].get("path", "")
    if not args.space and not path.is_file():
        # the manifest names the space relative to the campaign folder, which a copy to the cluster
        # and back may not have kept
        raise CompileError(Diagnostic(
            CAMPAIGN_SPACE, f"the campaign's space file `{manifest['source'].get('file', '')}` is not at `{path}`",
            help="the campaign folder moved: pass the space it was planned from with --space"))
    space = load_space(path, args.space_name or manifest["space"])
    want = manifest["cluster"]
    if (space.model.name != manifest["model"] or space.cluster.nodes != want["nodes"]
            or space.cluster.gpus_per_node != want["gpus_per_node"]):
        raise CompileError(Diagnostic(
            CAMPAIGN_SPACE, f"space `{space.name}` of `{path}` trains `{space.model.name}` on {space.cluster.nodes}x"
            f"{space.cluster.gpus_per_node} GPUs; the campaign ran `{manifest['model']}` on {want['nodes']}x"
            f"{want['gpus_per_node']}", help="pass the space the campaign was planned from with --space"))
    return space


class JobFailed(CompileError):
    """A job whose log shows it did not run to the end (not one never run): ``cause`` says how."""

    def __init__(self, diagnostic: Diagnostic, cause: str, median: float | None = None) -> None:
        super().__init__(diagnostic)
        self.cause = cause
        self.median = median  # its steady step time where it had trained (None: no steady iteration)


@frozen
class Failed:
    """A job that did not run to its end: how it ended, and its steady step time where it had trained."""

    index: int
    label: str
    ended: str
    median: float | None = None


@frozen
class JobRun:
    """What one job's log measured."""

    seconds: float  # steady step time
    notes: tuple[str, ...]
    spread: float  # the step times' interquartile range over their median
    allocated: int  # the most bytes a printing rank allocated (0: the log does not say)
    reserved: int  # the most its allocator reserved, or the device's used memory


def measure(job: dict[str, Any], path: Path, warmup: int, space: Any, driver: str = "campaign.sbatch",
            partial: bool = False) -> JobRun:
    """What one job's log measured; a ``JobFailed`` when the log shows the job did not run to the end,
    a ``CompileError`` naming the file when it cannot be measured otherwise (``space``: the campaign's,
    whose model and GPU count an arguments block must state, where it prints them, and whose model says
    whether its MoE settings are the recipe's; ``partial``: --partial was given, so no help offers it)."""
    from primus_lang.bench import (
        PRINTING_RANK,
        candidate_from_log,
        exit_unset,
        other_model,
        parse_log,
        read_log,
        steady,
    )
    from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE
    from primus_lang.frameworks import spelling
    from primus_lang.ir import Candidate
    from primus_lang.ir.serialize import from_data

    label = f"job {job['index']} ({job['label']})"
    or_partial = "" if partial else ", or pass --partial"
    if path.exists() and not path.is_file():
        raise CompileError(Diagnostic(CAMPAIGN_LOG_MISSING, f"{label}: `{path}` is not a file"
                                      + (" but a folder" if path.is_dir() else ""),
                                      help=f"put the job's training log at `{path}`"))
    if not path.is_file():
        raise CompileError(Diagnostic(CAMPAIGN_LOG_MISSING, f"{label}: no log at `{path}`",
                                      help=f"run the job ({_run_hint(driver, job['index'])})"
                                           + ("" if partial else ", or pass --partial to learn without it")))
    lines = LogLines(path)
    first = first_rank_log(path)
    try:
        log = parse_log(lines, str(path))
    except CompileError as err:
        if err.diagnostics[0].code.id == "P6804" and lines.exited:
            # the run ended as planned, so this is the log of a rank that prints no iteration line (rank 0's,
            # with its arguments block), not a job that failed to start
            raise CompileError(Diagnostic(
                LOG_UNREADABLE, f"{label}: `{path}` says the training finished but holds no iteration lines: it "
                "is the log of a rank that does not print them",
                help=f"put at `{path}` the stdout log of the rank that prints the iteration lines ({PRINTING_RANK})"
                + or_partial)) from None
        if err.diagnostics[0].code.id == "P6804":  # no iteration line: it died before training
            ended = _ended(lines, first)
            cause = ended.cause()
            said = ended.said()
            verb = "says" if said != ended.last else "ends"
            # the log that says how the job ended may be rank 0's, which never holds iteration lines
            teller = f"it {verb}" if str(ended.path) == str(path) else f"`{ended.path}` {verb}"
            raise JobFailed(Diagnostic(
                CAMPAIGN_LOG_SHORT, f"{label}: {cause}: `{path}` holds no iteration lines; {teller}: {_quoted(said)}",
                help="read the log for why the job stopped before training, rerun it" + or_partial), cause) from None
        raise
    cand: Candidate = from_data(job["candidate"], Candidate)
    # TP's is an argument every arguments block prints: a log without it printed none, whatever stray
    # `name ... value` it has
    tp_arg = spelling.KNOBS["tp"]
    recipe_log, recipe_path = log, path
    peer = None  # rank 0's log where it is another file (a multi-node Kubernetes or local job's)
    peer_exited = False  # Megatron's planned exit is printed by rank 0 alone (print_datetime: print_rank_0)
    peer_notes: tuple[str, ...] = ()
    if first.exists() and first.resolve() != path.resolve():
        if not first.is_file():
            peer_notes = (f"`{first}` is not a file: rank 0's log was not read",)
        # an unreadable one loses only the recipe's check and its memory figures, not the measurement
        with contextlib.suppress(CompileError):
            peer_lines = LogLines(first)
            peer = read_log(peer_lines, str(first))
            peer_exited = peer_lines.exited
    if log.arg(tp_arg) is None and peer is not None:
        recipe_log, recipe_path = peer, first
    ran = candidate_from_log(recipe_log, cand, str(recipe_path), moe=space.model.is_moe)
    differ = [f"{k} {format_value(getattr(ran, k))} (the manifest: {format_value(getattr(cand, k))})" for k in _CHECKED
              if getattr(ran, k) != getattr(cand, k)]
    if (ran.recompute.kind, ran.recompute.layers) != (cand.recompute.kind, cand.recompute.layers):
        differ.append(f"recompute {ran.recompute} (the manifest: {cand.recompute})")
    differ += [f"{arg} {text} (the campaign's: {want:,})"
               for arg, text, want in other_model(recipe_log, space.model, space.cluster.world)]
    printed = log.iterations[0].gbs
    if recipe_log.arg(tp_arg) is None and printed and printed != cand.gbs:
        differ.append(f"global batch size {printed} on its iteration lines (the manifest: {cand.gbs})")
    if differ:
        raise CompileError(Diagnostic(CAMPAIGN_LOG_RECIPE, f"{label}: `{recipe_path}` ran " + ", ".join(differ),
                                      help="put each job's log in its own folder, or rerun the job"))
    st = steady(log, warmup)
    unchecked = () if recipe_log.arg(tp_arg) is not None else (
        f"`{path}` prints no arguments block: that it ran {job['label']} is taken from the manifest, not checked",)
    last = log.iterations[-1]
    # it ran to its end: every iteration it was to train, or Megatron's own planned exit (the launch's
    # exit before the scheduler's kill); what dies after that is teardown, not the recipe
    all_done = 0 < last.total <= last.index
    # a stop short of the count is the settings' own only where the arguments set an exit (a log whose block
    # says none, e.g. a pod's deadline beside rank 0's `[after training is done]`, was stopped from outside)
    exited = (lines.exited or peer_exited) and (all_done or not exit_unset(recipe_log))
    finished = all_done or exited
    # an end named before the last iteration is one the run went on from (a requeue resumed it); rank 0's
    # log (a multi-node Kubernetes job's) holds no iteration line to place its end against, and tells more
    # than the printing pod's crash when its peer died of something it names
    stopped, where = lines.after(last.line), path
    other = _first_rank_end(first, path)
    if other is not None and (stopped is None or rank_of_end(other.ended) < rank_of_end(stopped[0])):
        stopped, where = (other.ended, other.ending_line), other.path
    if stopped is not None and not finished:
        # it ran, then did not run to the end: its steps were real, but it is no recipe to rank
        how, said = stopped
        raise JobFailed(Diagnostic(
            CAMPAIGN_LOG_SHORT, f"{label}: {how} after {st.logged} logged iteration(s)"
            + (f" (median step {st.seconds:.3f} s over {st.kept} steady)" if st.kept else "")
            + f": `{where}` says {_quoted(said)}", notes=st.notes,
            help="not ranked: a recipe that stops is not one to run; " + _rerun(how) + or_partial), how,
            st.seconds if st.kept else None)
    trained = "every iteration" if 0 < last.total <= last.index else "to the exit its settings set"
    after = [f"`{where}` names an end after its last iteration, {stopped[0]}: {_quoted(stopped[1])}; the run had "
             f"trained {trained}, so it is measured"] if stopped is not None else []
    # Megatron's own exit before the last iteration (the launch's --exit-duration-in-mins, set short of the
    # scheduler's time limit): the steps it ran are real, the run shorter than planned
    cut_short = [f"it stopped at iteration {last.index} of {last.total}, at the exit its settings set (Megatron's "
                 "--exit-duration-in-mins, which the launch sets short of the job's time limit, or --exit-interval): measured "
                 "on the iterations it ran"] \
        if exited and not all_done and last.total else []
    if st.kept < MIN_STEADY:
        # a run that trained to its end was too short for the warm-up asked; one that stopped, stopped early
        why = (f"the run stopped at the exit its settings set (--exit-duration-in-mins or --exit-interval) after "
               f"iteration {last.index} of {last.total}: give the job a longer time limit "
               "(`--campaign-var time_limit=HH:MM:SS`), or lower --warmup" if cut_short else
               f"the run trained to its end: lower --warmup (it leaves {st.kept} of {st.logged}), or run more "
               "iterations" if finished else "the job stopped early (memory, time limit, crash): read the end of its "
               "log, rerun it, or lower --warmup")
        raise CompileError(Diagnostic(
            CAMPAIGN_LOG_SHORT, f"{label}: `{path}` has {st.kept} steady iteration(s) of {st.logged} logged "
            f"(after {warmup} of warm-up per run or restart, and skipped, NaN or cut-off lines), fewer than "
            f"{MIN_STEADY}", notes=st.notes, help=why + ("" if partial else "; or pass --partial")))
    printed_gpus = _printed_world(log, warmup, cand, st.seconds, space.cluster)
    if printed_gpus is not None:
        raise CompileError(Diagnostic(
            CAMPAIGN_LOG_RECIPE, f"{label}: `{path}` prints {printed_gpus[0]:,.0f} tokens/s/GPU where its step time "
            f"over the campaign's {space.cluster.world:,} GPUs gives {printed_gpus[1]:,.0f}: it ran on about "
            f"{printed_gpus[2]:,} GPUs", notes=unchecked,
            help="put each job's log in its own folder, or rerun the job" + or_partial))
    if not finished and last.total:
        raise JobFailed(Diagnostic(
            CAMPAIGN_LOG_SHORT, f"{label}: stopped at iteration {last.index} of {last.total} and its log says no "
            f"more (median step {st.seconds:.3f} s over {st.kept} steady): killed without a word, or still running",
            notes=st.notes, help="not ranked: learn again once the job has ended, or rerun it"), "stopped early",
            st.seconds if st.kept else None)
    # each data-parallel rank 0 prints its memory: under PP across nodes the stages print in their own nodes'
    # logs, which a multi-node job saves beside its own (rank 0's; a local campaign's other nodes' too)
    logs = [log, *([] if peer is None else [peer]), *_node_logs(path)]
    return JobRun(st.seconds, st.notes + unchecked + peer_notes + tuple(after) + tuple(cut_short), st.spread,
                  max(x.max_allocated for x in logs), max(x.max_reserved for x in logs))


# how much earlier than the manifest a log may have been written and still be this campaign's: a copy of the
# folder (cp -r, a git checkout) stamps its files in its own order, never minutes apart
STALE_S = 60.0


def _older_than(folder: Path, job: dict[str, Any]) -> list[str]:
    """A note where job's log was last written before the campaign's manifest: a job runs after `plan`
    writes its campaign, so such a log is an earlier campaign's in the same folder (`plan --force` keeps
    the logs it did not write), which may have run another container or recipe."""
    try:
        written = (folder / "manifest.json").stat().st_mtime
        logged = (folder / job["log"]).stat().st_mtime
    except OSError:
        return []
    if logged >= written - STALE_S:
        return []
    return [f"job {job['index']} ({job['log']}): the log was last written {_ago(written - logged)} before the "
            "campaign's manifest: it is an earlier campaign's run in this folder, not this one's, unless the files "
            "were copied with their times; rerun the job to measure this campaign's"]


def _ago(seconds: float) -> str:
    for unit, size in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size:
            n = max(1, round(seconds / size))
            return f"about {n} {unit}{'s' if n > 1 else ''}"
    return f"{seconds:.0f} s"


def _node_logs(path: Path) -> list[Any]:
    """The other nodes' logs a local campaign saves beside a job's (``node<R>.log``), read for their memory
    lines; one that cannot be read is left out."""
    from primus_lang.bench import read_log

    out = []
    for node in sorted(path.parent.glob("node*.log")):
        with contextlib.suppress(CompileError):
            out.append(read_log(LogLines(node), str(node)))
    return out


def _printed_world(log: Any, warmup: int, cand: Any, seconds: float, cluster: Any) -> tuple[float, float, int] | None:
    """Where the log's own tokens/s/GPU (Primus prints it) disagrees with what its step time gives over the
    campaign's GPUs by more than a quarter: (printed, derived, the GPU count that would agree). A log of
    another job's GPU count with the same global batch passes every other check (no arguments block)."""
    from primus_lang.bench import past_warmup

    printed = [it.tokens_per_gpu for it in past_warmup(log, warmup)[0] if it.tokens_per_gpu]
    if not printed or not seconds > 0:
        return None
    from primus_lang.validate import tokens_per_gpu

    said = float(statistics.median(printed))
    derived = tokens_per_gpu(cand, cluster, seconds)
    if 0.8 <= said / derived <= 1.25:
        return None
    return said, derived, max(1, round(cluster.world * derived / said))


def _rerun(how: str) -> str:
    """What rerunning a job that stopped takes, by how it stopped."""
    from primus_lang.bench import HOST_OOM

    if how == "out of memory":
        return ("it does not fit this cluster as it is: a larger `fits memory headroom` keeps such points out of the "
                "space's plans")
    if how == HOST_OOM:
        return ("the node's host memory ran out (the kernel's OOM killer), not the GPU's, so the memory account is not in "
                "question: give the job more host memory (a site's `memory_request` on Kubernetes, the partition's "
                "memory on Slurm) or fewer data-loader workers, then rerun it to measure it")
    if how == "timed out":
        return "rerun it with a longer time limit (`--campaign-var time_limit=HH:MM:SS`) to measure it"
    if how == "evicted":
        return ("rerun it to measure it; a pod with no CPU or memory request is the first a node under pressure "
                "evicts (a site's `cpu_request` and `memory_request`)")
    return "read its log for why it stopped, then rerun it to measure it"


def _quoted(line: str) -> str:
    """A log's line as a message quotes it: up to 160 characters, its start and its end where it is longer (an
    error's words are often last: `... hipModuleLaunchKernel(...) [HIP error](invalid resource handle)`), or
    what it is where it is no text."""
    if not line:
        return "(empty)"
    odd = sum(1 for c in line if c == "\ufffd" or not c.isprintable())
    if odd * 10 >= len(line):
        return f"{len(line):,} characters that are not text (binary data?)"
    return f"{line!r}" if len(line) <= 160 else f"{line[:60]!r} ... {line[-96:]!r}"


def _ended(lines: LogLines, first: Path) -> LogLines:
    """The log that says how a job that logged no iteration ended: ``lines`` (read through) where it names
    more than a crash, else rank 0's log beside it (``first``) where that one does, else ``lines``."""
    if lines.cause() != "failed to start":
        return lines
    other = _first_rank_end(first, lines.path)
    return other if other is not None and other.cause() != "failed to start" else lines


def _first_rank_end(first: Path, path: Path) -> LogLines | None:
    """Rank 0's log beside ``path``, read through, where it exists, is another file and names an end."""
    if not first.is_file() or first.resolve() == path.resolve():
        return None
    with contextlib.suppress(CompileError):
        other = LogLines(first).read_through()
        if other.ended:
            return other
    return None


def _run_hint(driver: str, index: int) -> str:
    """How the campaign's driver runs one job: a Slurm array task alone, else the driver (Kubernetes and a
    local campaign run their jobs one after another)."""
    name = shlex.quote(driver)
    return f"sbatch --array={index} {name}" if driver.endswith(".sbatch") else f"bash {name}"


def _profile_import(manifest: dict[str, Any], folder: Path, out: Path) -> str:
    prof = manifest["profile"]
    if prof.get("module"):
        return f"import {prof['module']} ({prof['name']})"
    rel = os.path.relpath((folder / prof["file"]).resolve(), out.resolve().parent)
    return f"import {json.dumps(rel if rel.startswith('.') else './' + rel)} ({prof['name']})"


def run(args: argparse.Namespace) -> int:
    from primus_lang.ir import Candidate, Gpu
    from primus_lang.ir.serialize import from_data
    from primus_lang.outputs import refuse_collisions, refuse_link, sealed, still_sealed, write_file
    from primus_lang.validate import Measured, site_profile, tokens_per_gpu
    from primus_lang.validate import learn_site as learn

    folder = Path(args.campaign)
    manifest = read_manifest(folder)
    space = _space(args, folder, manifest)
    start = from_data(manifest["gpu"], Gpu)
    name = args.name or f"{start.name}_site"
    if not _NAME.fullmatch(name) or name == start.name:
        raise CompileError(Diagnostic(BAD_PROFILE_NAME, f"`{name}` cannot name the site profile",
                                      help=f"an identifier other than `{start.name}`, e.g. --name {start.name}_site"))
    out = Path(args.out) if args.out else folder / "site.prx"
    refuse_link(out)
    # --force replaces an earlier site profile, never what this one is learnt from
    space_file = Path(args.space) if args.space else folder / manifest["source"].get("path", "")
    inputs = {"the manifest": folder / "manifest.json", "the space file": space_file}
    for job in manifest["jobs"]:
        inputs[f"the log of job {job['index']}"] = folder / job["log"]
        inputs[f"rank 0's log of job {job['index']}"] = first_rank_log(folder / job["log"])
    refuse_collisions({"--out": out}, inputs)
    # an earlier learn's profile of this campaign, unchanged since, is this command's to replace (a campaign
    # is learnt from again as more of its jobs finish); one the user edited, or another campaign's, is theirs
    origin = _origin(folder)
    again = out.exists() and still_sealed(out) and origin in out.read_text(encoding="utf-8", errors="replace")
    if out.exists() and not args.force and not again:
        from primus_lang.diagnostics.codes_search import OUT_NOT_EMPTY

        raise CompileError(Diagnostic(OUT_NOT_EMPTY, f"`{out}` already exists, and is not a site profile `primusc "
                                      "learn` wrote from this campaign and nobody changed since",
                                      help="choose another --out, or pass --force to replace it"))
    import attrs

    cluster = attrs.evolve(space.cluster, gpu=start)
    measured, unmeasured, problems, notes = [], [], [], []
    failed: list[Failed] = []  # never ranked
    spreads: dict[int, float] = {}  # each measured job's noise (its step times' spread)
    for job in manifest["jobs"]:
        cand = from_data(job["candidate"], Candidate)
        try:
            ran = measure(job, folder / job["log"], args.warmup, space,
                          str(manifest.get("driver") or "campaign.sbatch"), args.partial)
        except JobFailed as err:
            # it ran and failed on this cluster: evidence about the candidate, not a result to rank
            problems += err.diagnostics
            failed.append(Failed(job["index"], job["label"], err.cause, err.median))
            if err.cause == "out of memory":
                notes.append(_memory_said(space, cand, job["index"]))
            continue
        except CompileError as err:
            problems += err.diagnostics
            unmeasured.append((job["index"], job["label"], cand))
            continue
        spreads[job["index"]] = ran.spread
        notes += [f"job {job['index']} ({job['log']}): {n}" for n in ran.notes]
        notes += _older_than(folder, job)
        if ran.allocated or ran.reserved:
            notes.append(_memory_measured(space, cand, job["index"], ran))
        measured.append(Measured(job["index"], job["label"], cand, tokens_per_gpu(cand, cluster, ran.seconds),
                                 ran.seconds))
    if problems and not args.partial:
        raise CompileError(problems)
    if not measured:
        # each job's own reason first: with --partial they were not raised
        raise CompileError([*problems, Diagnostic(
            NOTHING_TO_LEARN, f"none of the {len(manifest['jobs'])} jobs of `{folder}` left a usable log",
            help="run the campaign first; see each job's train.log")])
    result = learn(space.model, cluster, space.settings, measured, unmeasured)
    command = _command(args, folder, out, name)
    logs = ", ".join(f"job-{m.index}" for m in measured)
    comments = [
        f"Site profile written by `{command}`.",
        f"From the shortlist campaign of space `{manifest['space']}` ({manifest['model']} on "
        f"{manifest['cluster']['nodes']}x{manifest['cluster']['gpus_per_node']} GPUs, {manifest['target']}):",
        f"the logs of {logs} ({len(measured)} of {len(manifest['jobs'])} jobs), median step time after "
        f"{args.warmup} warm-up iterations.",
        f"Starting profile: {start.name}. Fitted, with a prior toward it (partial pooling: what these runs",
        f"cannot tell apart stays near it): {', '.join(result.fitted)}; the FP8 and NVFP4 plateaus follow",
        "the BF16 one through the starting profile's ratios unless the runs had both dtypes.",
        f"Mean error of the runs' projections: {result.mape_before:.1%} on {start.name}, "
        f"{result.mape_after:.1%} on this profile (in-sample).",
        f"The band is {start.name}'s: {len(measured)} runs of one space cannot measure one.",
        f"Use it: `import \"{os.path.basename(out)}\" ({name})` and `gpu = {name}` in the cluster.",
        origin,
    ]
    text = sealed(site_profile(result, name, _profile_import(manifest, folder, out), comments))
    write_file(out, text, force=args.force or again)
    if again:
        notes.append(f"replaced `{out}`, the site profile an earlier `primusc learn` wrote, unchanged since")
    if problems:
        print(f"learnt without {len(problems)} job(s) (--partial):", file=sys.stderr)
        if args.error_format == "human":
            # what each job lacked, not an error to act on: --partial was asked for
            for d in problems:
                print(f"  {d.code.id} {d.message}", file=sys.stderr)
        else:
            print(render(problems, args.error_format), file=sys.stderr)
    notes += _against_baseline(manifest, measured, spreads, failed)
    _print(args, result, start, out, name, notes, problems, failed)
    return 0


def _against_baseline(manifest: dict[str, Any], measured: list[Any], spreads: dict[int, float],
                      failed: list[Failed]) -> list[str]:
    """Whether the best measured job beat the space's own recipe, by how much, against the noise of
    the two runs' iterations; [] for a campaign without the recipe among its jobs."""
    base = next((j for j in manifest["jobs"] if j.get("baseline") is True), None)
    if base is None:
        return []
    runs = {m.index: m for m in measured}
    ours = runs.get(base["index"])
    if ours is None:
        how = next((f.ended for f in failed if f.index == base["index"]), "not measured")
        return [f"the baseline (job {base['index']}, {base['label']}) did not give a measurement ({how}): "
                "the campaign cannot say whether the plan beats it"]
    others = [m for m in measured if m.index != base["index"]]
    if not others:
        return [f"only the baseline (job {base['index']}) was measured"]
    best = max(others, key=lambda m: m.tokens_per_gpu)
    change = best.tokens_per_gpu / ours.tokens_per_gpu - 1
    noise = spreads.get(best.index, 0.0) + spreads.get(base["index"], 0.0)
    verdict = "beyond" if abs(change) > noise else "within"
    return [f"the best measured, job {best.index} ({best.label}), is {change:+.1%} in tokens/s/GPU over the "
            f"baseline, job {base['index']} ({base['label']}): {verdict} the noise of their iterations "
            f"(±{noise:.1%}, the two runs' step-time spreads)"]


def _account_peak(space: Any, cand: Any) -> int:
    """The memory account's busiest GPU for ``cand`` on the space's cluster, in bytes."""
    from primus_lang.memory import prefilter

    return int(prefilter(space.model, space.cluster, [cand], space.settings)[0])


def _memory_measured(space: Any, cand: Any, index: int, ran: JobRun) -> str:
    """The memory account against what the run's printing ranks measured: the proof checked on this cluster."""
    peak = _account_peak(space, cand)
    seen = ran.allocated or ran.reserved
    what = "allocated" if ran.allocated else "in use on the device"
    change = peak / seen - 1
    said = (f"job {index}: the memory account gives the busiest GPU {peak / 2**30:.1f} GiB; the ranks that print "
            f"measured at most {seen / 2**30:.1f} GiB {what}")
    if ran.allocated and ran.reserved:
        said += f" ({ran.reserved / 2**30:.1f} GiB reserved)"
    return said + f": the account is {abs(change):.0%} {'above' if change >= 0 else 'below'} it on this cluster"


def _memory_said(space: Any, cand: Any, index: int) -> str:
    """What an out-of-memory death says of the memory account on this cluster: stated, never applied."""
    from primus_lang.memory import usable_bytes

    peak = _account_peak(space, cand)
    limit = usable_bytes(space.cluster.gpu.hbm_capacity, space.headroom)
    if peak > limit:
        return (f"job {index} ran out of memory, as the account said it would ({peak / 2**30:.1f} GiB against "
                f"{limit / 2**30:.1f} GiB usable)")
    return (f"job {index} ran out of memory on this cluster though the memory account gives it {peak / 2**30:.1f} GiB "
            f"of {limit / 2**30:.1f} GiB usable: here the account undercounts it by at least "
            f"{(limit - peak) / 2**30:.1f} GiB (allocator fragmentation, the framework's own buffers, or a term the "
            "account lacks); plan with more headroom on this cluster (`fits memory headroom ...`)")


def _command(args: argparse.Namespace, folder: Path, out: Path, name: str) -> str:
    """The command that writes this profile again (the options that change it)."""
    words = ["primusc", "learn", str(folder)]
    words += ["--space", args.space] if args.space else []
    words += ["--space-name", args.space_name] if args.space_name else []
    words += ["--out", str(out)] if args.out else []
    words += ["--name", name] if args.name else []
    words += ["--warmup", str(args.warmup)] if args.warmup != 5 else []
    words += ["--partial"] if args.partial else []
    return shlex.join(words)


def _print(args: argparse.Namespace, result: Any, start: Any, out: Path, name: str, notes: list[str],
           problems: list[Diagnostic], failed: list[Failed]) -> None:
    from primus_lang.validate import PARAMS

    if args.json:
        print(serialize.to_json({
            "profile": str(out), "name": name, "start": start.name, "fitted": list(result.fitted),
            "efficiency": {n: getattr(result.efficiency, n) for n in PARAMS},
            "start_efficiency": {n: getattr(start.efficiency, n) for n in PARAMS},
            "runs": [{"index": r.index, "label": r.label, "measured": r.measured, "before": r.before,
                      "after": r.after, "error_before": r.error_before, "error_after": r.error_after}
                     for r in result.runs],
            "ranked": [{"label": r.label, "tokens_per_gpu": r.tokens_per_gpu, "measured": r.measured,
                        "index": r.index} for r in result.ranked],
            "failed": [{"index": f.index, "label": f.label, "ended": f.ended, "median_step": f.median}
                       for f in failed],
            "notes": notes, "left_out": [d.message for d in problems],
        }))
        return
    for note in notes:
        print(f"note: {note}")
    w = max([40, *(len(r.label) for r in (*result.runs, *result.ranked)), *(len(f.label) for f in failed)])
    # the sign a reader cannot guess: + is a projection faster than the run
    print("tokens/s/GPU measured, and the projection's error against it before and after the fit "
          "(projected / measured - 1: + projects faster than the run)")
    print(f"{'job':>4}  {'candidate':<{w}} {'measured':>12} {'before':>9} {'after':>9}")
    for r in result.runs:
        print(f"{r.index:>4}  {r.label:<{w}} {r.measured:>12,.0f} {r.error_before:>+9.1%} {r.error_after:>+9.1%}")
    print(f"mean error of the projections: {result.mape_before:.1%} on `{start.name}` -> {result.mape_after:.1%} "
          "(in-sample: the fit saw these runs)")
    for n in result.fitted:
        print(f"  {n}: {getattr(start.efficiency, n):.4g} -> {getattr(result.efficiency, n):.4g}")
    print("shortlist, each measured job by its measurement, the others by the learned profile's projection:")
    for i, r in enumerate(result.ranked, 1):
        how = "measured" if r.measured else "projected on the learned profile"
        print(f"{i:>4}. {r.label:<{w}} {r.tokens_per_gpu:>12,.0f} tokens/s/GPU ({how})")
    if failed:
        print("did not run to the end (not ranked):")
        for f in failed:
            steady = f" (median step {f.median:.3f} s before it stopped)" if f.median is not None else ""
            print(f"  job {f.index}: {f.label:<{w}} {f.ended}{steady}")  # by job, not a rank: ranks number the list above
    print(f"wrote `{out}` (gpu `{name}`); plan with it: import it and set `gpu = {name}` in your cluster")
