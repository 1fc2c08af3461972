"""A benchmark campaign: the job that measures a space's kernels and collectives on the cluster.

The job is data first: the distinct kernel keys of the space, listed in ``kernels.json`` when the
job is written, so the cluster needs neither the space nor its imports, only primusc and torch.
Every task of the job (one per node by default) measures the collectives between nodes; the first
then measures the listed kernels and the collectives inside its node, all into one profile database
that ``primusc bench --merge`` folds into the local one. ``campaign_files`` is a pure function: the
same space, target and variables give the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from attrs import frozen

from primus_lang import __version__
from primus_lang.bench.kernels import KernelSpec
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import BAD_JOB_VARIABLE

LAUNCHERS = ("slurm", "k8s")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,48}[a-z0-9])?")  # a Kubernetes name, also a plain Slurm word
_WORD = re.compile(r"[A-Za-z0-9_.,+-]{1,128}")
_TIME = re.compile(r"(\d+-)?\d+(:\d{1,2}){0,2}")
_COUNT = re.compile(r"[1-9][0-9]{0,5}")
_RANKS = re.compile(r"[1-9][0-9]{0,3}(,[1-9][0-9]{0,3}){0,15}")
_REAL = re.compile(r"[0-9]{1,4}(\.[0-9]{1,6})?")
_TEXT = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,1024}")  # reaches a shell quoted; no control characters
_DEVICE = re.compile(r"cpu|cuda")


@frozen
class Variable:
    default: str
    form: re.Pattern[str]
    meaning: str
    required: bool = False  # an empty value is refused


VARIABLES: dict[str, Variable] = {
    "job_name": Variable("", _LABEL, "Slurm job name, Kubernetes object names (a DNS label)", True),
    "nodes": Variable("2", _COUNT, "nodes of the cross-node collectives (the kernels run on the first)", True),
    "tasks_per_node": Variable("1", _COUNT, "ranks per node of the cross-node collectives (Slurm)", True),
    "time_limit": Variable("01:00:00", _TIME, "Slurm time limit", True),
    "partition": Variable("", _WORD, "Slurm partition"),
    "account": Variable("", _WORD, "Slurm account"),
    "slurm_gpus": Variable("gpus-per-node", re.compile(r"gpus-per-node|gres|none"),
                           "how the sbatch asks for GPUs: gpus-per-node, gres or none", True),
    "master_port": Variable("29631", re.compile(r"[1-9][0-9]{2,4}"), "rendezvous port of the collectives", True),
    "primusc": Variable("primusc", _TEXT, "the primusc command on the nodes (one word: a name or a path)", True),
    "db": Variable("profile.sqlite", _TEXT, "the campaign file (Slurm: relative to the job's folder)", True),
    "budget_s": Variable("0.2", _REAL, "seconds of repeats per kernel", True),
    "max_bytes": Variable(str(1 << 24), re.compile(r"[1-9][0-9]{3,11}"),
                          "largest collective message in bytes (from 4 KiB up by 4x)", True),
    "local_ranks": Variable("", _RANKS, "group sizes of the collectives inside one node (default: the GPUs)"),
    "container_image": Variable("", _TEXT, "Kubernetes: the image with primusc and torch (required there)"),
    "namespace": Variable("default", _LABEL, "Kubernetes namespace", True),
    "volume_claim": Variable("primusc-bench", _LABEL, "Kubernetes: the PersistentVolumeClaim the file goes to",
                             True),
}


def _refuse(message: str, help: str = "") -> CompileError:
    return CompileError(Diagnostic(BAD_JOB_VARIABLE, message, help=help or "see `docs/benchmark.md`, "
                                   "\"Benchmark campaigns\", for the variables and their forms"))


def job_variables(given: Mapping[str, str], defaults: Mapping[str, str], launcher: str) -> dict[str, str]:
    """The job's variables: the user's over ``defaults`` (derived from the space) over the table's."""
    for name in given:
        if name not in VARIABLES:
            raise _refuse(f"unknown job variable `{name}`", f"known: {', '.join(sorted(VARIABLES))}")
    values = {name: var.default for name, var in VARIABLES.items()} | dict(defaults) | dict(given)
    for name, value in values.items():
        var = VARIABLES[name]
        if value == "" and not var.required:
            continue
        if not var.form.fullmatch(value):
            raise _refuse(f"job variable `{name}` cannot be {json.dumps(value)}", f"`{name}`: {var.meaning}")
    if launcher == "k8s" and not values["container_image"]:
        raise _refuse("a Kubernetes benchmark job needs `--var container_image=IMAGE`",
                      "an image holding primusc and torch for the target GPU")
    if int(values["nodes"]) * int(values["tasks_per_node"]) < 2:
        raise _refuse("the cross-node collectives need at least 2 ranks: `nodes` x `tasks_per_node` >= 2")
    return values


def local_ranks(gpus_per_node: int, device: str) -> str:
    """The group sizes measured inside one node: powers of two up to its GPUs, and all of them."""
    if device == "cpu":
        return "2"
    sizes = {n for n in (2, 4, 8, 16, 32, 64) if n <= gpus_per_node} | ({gpus_per_node} if gpus_per_node > 1 else set())
    return ",".join(str(n) for n in sorted(sizes)) or "2"


def kernels_json(specs: Iterable[KernelSpec], space: str, target: str) -> str:
    """One kernel a line, sorted: a reviewer can read and diff what the job will measure."""
    lines = [json.dumps({"op": s.op, "shape": list(s.shape), "dtype": s.dtype}) for s in sorted(set(specs))]
    head = f'{{"space": {json.dumps(space)}, "target": {json.dumps(target)}, "kernels": ['
    return head + ("\n  " + ",\n  ".join(lines) + "\n" if lines else "") + "]}\n"


def campaign_files(
    launcher: str, specs: Iterable[KernelSpec], *, space: str, target: str, device: str, vendor: str,
    gpus_per_node: int, variables: Mapping[str, str], source: str = "",
) -> dict[str, str]:
    """``{relative path: text}`` of the job; ``launcher`` is ``slurm`` or ``k8s``."""
    from primus_lang.emit import render_template as render

    if not _DEVICE.fullmatch(device):
        raise _refuse(f"a benchmark job runs on `cpu` or `cuda`, not `{device}`",
                      "`--device cuda` (ROCm builds of torch also use `cuda`)")
    defaults = {"job_name": _label(f"bench-{space}"), "local_ranks": local_ranks(gpus_per_node, device)}
    v = job_variables(variables, defaults, launcher)
    header = {"version": __version__, "space": space, "target": target, "source": source}
    common: dict[str, object] = {"v": v, "header": header, "device": device, "target": target,
                                 "vendor": vendor, "gpus_per_node": gpus_per_node}
    files = {"kernels.json": kernels_json(specs, space, target), "bench.sh": render("bench/bench.sh.j2", **common)}
    if launcher == "slurm":
        files["bench.sbatch"] = render("bench/bench.sbatch.j2", **common)
    else:
        files["bench-job.yaml"] = render("bench/bench-job.yaml.j2", files=dict(files), **common)
    return files


def executable(rel: str) -> bool:
    return rel.endswith((".sh", ".sbatch"))


def _label(text: str) -> str:
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:50].strip("-")
    return label or "bench"

