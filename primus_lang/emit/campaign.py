"""A shortlist campaign: the top candidates of a plan, each run for a few dozen iterations on the
user's own cluster, so that the choice among candidates a projection cannot tell apart is made by
measurement.

``campaign(space, jobs, target, context, bounds) -> {relative path: text}`` is a pure function like
``emit``: every job is emitted by ``emit`` itself into ``job-<i>/`` (so each can also be rerun
alone), and one driver runs them all: a Slurm job array (``campaign.sbatch``), or a script that
applies the Kubernetes jobs one after another or runs the local ones in turn (``campaign.sh``).
``manifest.json`` maps each job index to its candidate, its projection and band, and the bounds.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from attrs import frozen

from primus_lang.emit.context import EmitContext, resolve_variables
from primus_lang.emit.emitter import emit, parse_target
from primus_lang.emit.sites import slurm_seconds, variable_defaults
from primus_lang.emit.templating import render
from primus_lang.ir import Candidate, Space
from primus_lang.ir.serialize import to_data

FOLDER = "campaign"
MANIFEST = "manifest.json"
LOG = "train.log"  # each job's stdout and stderr, beside its launch files
# rank 0's log where another node prints the iteration lines and the nodes' logs are saved apart (Kubernetes'
# pods, a local campaign's nodes; Slurm's --output gathers them into one): rank 0 prints the arguments
FIRST_RANK_LOG = "rank0.log"
# the longest a campaign's driver waits for a Kubernetes job to start (Kueue admission, image pulls; the
# environment's QUEUE_SECONDS at run time): a job's own deadline counts from when the training operator
# first sees it, queued or not, so it is this beside the time limit, the backstop should the driver stop
QUEUE_SECONDS = 86_400
SPLIT_LOGS = ("k8s", "local")  # the launchers whose campaign saves each node's log apart
FORMAT = 1  # the manifest's layout; `primusc learn` refuses one it does not know

# Variables that shape one run rather than describe the site: the real run's values (a long
# schedule, a checkpoint folder another layout cannot load) never reach a measuring job.
RUN_SHAPE = ("train_iters", "time_limit", "log_interval", "eval_iters", "eval_interval", "checkpoint_dir",
             "save_interval")
ITERATIONS = 30  # enough for a steady state after Megatron's slow first iterations, and a median
START_UP_S = 600.0  # allowance per job for loading, compiling and the first iterations
DRIVERS = {"slurm": ("campaign.sbatch", "campaign/slurm.sbatch.j2"), "k8s": ("campaign.sh", "campaign/k8s.sh.j2"),
           "local": ("campaign.sh", "campaign/local.sh.j2")}


@frozen
class Job:
    """One shortlisted candidate and its projected figures (plain data, as the manifest records)."""

    candidate: Candidate
    tokens_per_gpu: float
    step_time: float
    tied: bool  # in the group tied with the best projection
    baseline: bool = False  # the space's own recipe (what the user runs today), measured to compare against


def folder(index: int) -> str:
    return f"job-{index}"


def file_names(target: str, count: int) -> tuple[str, ...]:
    """What ``campaign`` writes for ``count`` jobs, relative to the campaign folder; known before
    the search, so ``plan`` can refuse collisions and links first."""
    from primus_lang.emit.emitter import emitted_names

    _, launcher = parse_target(target)
    per_job = sorted(emitted_names(target))
    return tuple(sorted({DRIVERS[launcher.NAME][0], MANIFEST,
                         *(f"{folder(i)}/{name}" for i in range(count) for name in per_job)}))


def campaign_variables(site: Mapping[str, str], override: Mapping[str, str]) -> dict[str, str]:
    """The variables every job runs with: the site's ``--var`` values except those of ``RUN_SHAPE``,
    the campaign's own iteration count, then ``override`` (``--campaign-var``) over both."""
    given = {k: v for k, v in site.items() if k not in RUN_SHAPE}
    return {**given, "train_iters": str(ITERATIONS), "log_interval": "1", **override}


def time_limit(jobs: Sequence[Job], iterations: int, slow: float) -> str:
    """A wall time per job that a healthy run stays inside: the start-up allowance plus twice the
    slowest job's iterations at the pessimistic end of its band (``slow``: step-time factor),
    rounded up to whole minutes."""
    step = max((j.step_time for j in jobs), default=0.0)
    minutes = math.ceil((START_UP_S + 2 * iterations * step * slow) / 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00" if minutes < 24 * 60 else f"{minutes // 1440}-00:00:00"


def _job_name(base: str, index: int) -> str:
    suffix = f"-c{index}"
    return base[: 50 - len(suffix)].rstrip("-") + suffix


def campaign(space: Space, jobs: Sequence[Job], target: str, context: EmitContext,
             override: Mapping[str, str] | None = None, profile_file: str = "",
             space_file: str = "") -> dict[str, str]:
    """The campaign's files for ``jobs`` (best first). ``context.variables`` are the plan's
    ``--var`` values; ``override`` the ``--campaign-var`` ones; ``profile_file`` the file defining
    the space's GPU profile, relative to the campaign folder, when the stdlib does not; ``space_file``
    the space's file, relative to the campaign folder (where ``primusc learn`` finds it)."""
    from primus_lang.validate import trust

    framework_cls, launcher_cls = parse_target(target)
    target = f"{framework_cls.NAME}+{launcher_cls.NAME}"
    first_log = FIRST_RANK_LOG if space.cluster.nodes > 1 and launcher_cls.NAME in SPLIT_LOGS else ""
    chosen = campaign_variables(context.variables, dict(override or {}))
    prov = space.cluster.gpu.provenance
    if "time_limit" not in chosen:
        chosen["time_limit"] = time_limit(jobs, int(chosen["train_iters"]), 1 / prov.low)
    # the site's values (its namespace, queue, image) as every job's manifest has them
    variables = resolve_variables(chosen, space.name, variable_defaults(space))
    files: dict[str, str] = {}
    entries = []
    for i, job in enumerate(jobs):
        per_job = {**chosen, "job_name": _job_name(variables.job_name, i)}
        emitted = emit(space, job.candidate, target, attrs.evolve(
            context, variables=per_job, deadline_seconds=int(slurm_seconds(variables.time_limit)) + QUEUE_SECONDS))
        files.update({f"{folder(i)}/{path}": text for path, text in emitted.items()})
        b = trust.band(space.cluster.gpu, job.tokens_per_gpu, job.step_time, job.candidate, space.cluster.world,
                       space.model, trust.target_stack(space.settings.target))
        entries.append({
            "index": i, "folder": folder(i), "log": f"{folder(i)}/{LOG}",
            **({"first_log": f"{folder(i)}/{first_log}"} if first_log else {}), "job_name": per_job["job_name"],
            "label": job.candidate.label(), "tied": job.tied, "baseline": job.baseline,
            "candidate": to_data(job.candidate),
            "projected": {"tokens_per_gpu": job.tokens_per_gpu, "step_time": job.step_time,
                          "band": {"coverage": b.coverage, "tokens_per_gpu": [b.tokens_low, b.tokens_high],
                                   "step_time": [b.step_low, b.step_high], "paired": b.paired,
                                   # why the band is the far one (empty: the profile's own)
                                   "beyond": list(b.beyond)}},
        })
    cluster = space.cluster
    hours = len(jobs) * cluster.nodes * slurm_seconds(variables.time_limit) / 3600
    # Megatron prints the iteration lines from the last rank, on the last node: PyTorchJob's last worker
    printing = f"worker-{cluster.nodes - 2}" if cluster.nodes > 1 else "master-0"
    values = {"jobs": entries, "v": variables, "nodes": cluster.nodes, "gpus_per_node": cluster.gpus_per_node,
              "printing_pod": printing, "first_log": first_log,
              "site": space.site,
              "space": space.name, "target": target, "version": context.primusc_version, "log": LOG,
              "source": context.source_name or "<python>",
              "wait_seconds": int(slurm_seconds(variables.time_limit)), "queue_seconds": QUEUE_SECONDS}
    driver, template = DRIVERS[launcher_cls.NAME]
    files[driver] = render(template, **values)
    data = {
        "format": FORMAT,
        "primusc_version": context.primusc_version,
        "source": {"file": context.source_name, "sha256": context.source_sha256, "path": space_file},
        "space": space.name, "model": space.model.name, "target": target, "driver": driver,
        "cluster": {"name": cluster.name, "nodes": cluster.nodes, "gpus_per_node": cluster.gpus_per_node},
        "gpu": {k: v for k, v in to_data(cluster.gpu).items() if k != "span"},
        "profile": profile_of(space, profile_file),
        "bounds": {"iterations": int(variables.train_iters), "nodes_per_job": cluster.nodes,
                   "time_limit": variables.time_limit, "jobs": len(jobs),
                   "node_hours_at_most": round(hours, 3)},
        "variables": attrs.asdict(variables),
        "jobs": entries,
        "files": {path: hashlib.sha256(text.encode()).hexdigest() for path, text in sorted(files.items())},
    }
    files[MANIFEST] = json.dumps(data, indent=2, ensure_ascii=True, default=_plain) + "\n"
    return dict(sorted(files.items()))


def profile_of(space: Space, profile_file: str) -> dict[str, str]:
    """Where the site profile ``primusc learn`` writes imports its base from: a stdlib module, or
    the user's file (relative to the campaign folder)."""
    gpu = space.cluster.gpu
    shown = gpu.span.file if gpu.span is not None else ""
    if shown.startswith("<stdlib>/"):
        return {"name": gpu.name, "module": shown.removeprefix("<stdlib>/").removesuffix(".prx").replace("/", ".")}
    return {"name": gpu.name, "file": profile_file}


def _plain(value: Any) -> Any:
    raise TypeError(f"not plain data: {type(value).__name__}")
