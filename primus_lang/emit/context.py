"""What emission needs beyond the candidate: provenance, projected figures, and user variables.

Variables fill in what a space does not decide (data, tokenizer, checkpoints, scheduler account,
container). Each has a default, a documentation line and a validator; unknown names and values
that could escape their quoting are diagnostics, never silently dropped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from attrs import field, frozen

from primus_lang import __version__
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_emit import BAD_VARIABLE, UNKNOWN_VARIABLE
from primus_lang.frameworks import bridge, megatron
from primus_lang.ir.site import IMAGE, IMAGE_FORM

# every Megatron-LM release primusc has read (frameworks/megatron): a launch may name any
MEGATRON_VERSIONS = megatron.releases()
CONTAINERS = ("none", "pyxis", "apptainer", "docker", "podman")
SLURM_GPU_REQUESTS = ("gpus-per-node", "gres", "none")

# A Kubernetes object name (RFC 1123 label); also safe unquoted in an #SBATCH line. 50 leaves room
# for the "-scripts" suffix of the ConfigMap under the 63-character limit.
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,48}[a-z0-9])?")
_SLURM_WORD = re.compile(r"[A-Za-z0-9_.,+-]{1,128}")
_SLURM_TIME = re.compile(r"(\d+-)?\d+(:\d{1,2}){0,2}")
_DIGITS = re.compile(r"[0-9]{1,18}", re.ASCII)
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?", re.ASCII)
# C0 and C1 control characters: a newline ends a header line, an escape can rewrite a terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@frozen
class EmitContext:
    """Provenance and figures recorded in the manifest, plus the user's ``--var`` settings."""

    primusc_version: str = __version__
    source_name: str = ""
    source_sha256: str = ""
    projection: dict[str, Any] = field(factory=dict)  # plain data: step time, tokens/s/GPU, MFU...
    memory: dict[str, Any] = field(factory=dict)  # plain data: the per-rank byte account
    variables: dict[str, str] = field(factory=dict)
    # a campaign job's backstop: it ends itself this many seconds after it starts, should its driver stop
    # watching it (0: none, as a launch of one's own runs until it is done)
    deadline_seconds: int = 0


def _choice(choices: tuple[str, ...]) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}"

    return check


def _pattern(regex: re.Pattern[str], form: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value == "" or regex.fullmatch(value) else f"must be {form}"

    return check


def _whole(lower: int, upper: int) -> Callable[[str], str | None]:
    """ASCII digits only, and few enough to convert: ``str.isdigit`` also takes `²` and `١`, which
    ``int`` then refuses, and a value reaches the launch files as written."""

    def check(value: str) -> str | None:
        if _DIGITS.fullmatch(value) and lower <= int(value) <= upper:
            return None
        return f"must be a whole number from {lower} to {upper}, in ASCII digits"

    return check


def _positive_int(upper: int) -> Callable[[str], str | None]:
    return _whole(1, upper)


def _count_of(upper: int) -> Callable[[str], str | None]:
    return _whole(0, upper)


def _optional(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    return lambda value: None if value == "" else check(value)


def _real(value: str) -> str | None:
    """A finite number as Python and the frameworks' argument parsers both read it: ``float`` alone
    also takes `inf`, `nan`, `1_0` and other scripts' digits."""
    if _REAL.fullmatch(value) and math.isfinite(float(value)):
        return None
    return "must be a finite number such as 3.0e-4, in ASCII digits"


def _rate(value: str) -> str | None:
    """A learning rate: a finite number above 0 that stays above 0 as a double (``1e-400`` is 0.0 to the
    frameworks' parsers, and a run at 0 or below trains nothing or diverges)."""
    if _real(value) is None and float(value) > 0.0:
        return None
    return "must be a learning rate above 0, such as 3.0e-4, in ASCII digits"


def _any(_: str) -> str | None:
    return None


@frozen
class Variable:
    name: str
    default: str
    doc: str
    check: Callable[[str], str | None] = _any


VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        Variable("job_name", "", "job / Kubernetes object name (default: the space's name)",
                 _pattern(_LABEL, "lowercase letters, digits and '-', at most 50 characters")),
        Variable("data_path", "", "Megatron --data-path prefix (empty: --mock-data)"),
        Variable("tokenizer_model", "", "tokenizer name or path (empty: NullTokenizer of the model's vocab)"),
        Variable("tokenizer_type", "", "Megatron tokenizer type (default: HuggingFaceTokenizer with a model)"),
        Variable("checkpoint_dir", "", "--save/--load folder (empty: no checkpoints)"),
        Variable("train_iters", "100", "training iterations", _positive_int(10**9)),
        Variable("save_interval", "", "iterations between checkpoints (empty: train_iters)",
                 _optional(_positive_int(10**9))),
        Variable("eval_iters", "0", "validation iterations per evaluation (0: none)", _count_of(10**9)),
        Variable("eval_interval", "1000", "iterations between evaluations", _positive_int(10**9)),
        Variable("log_interval", "1", "iterations between logged throughput lines", _positive_int(10**9)),
        Variable("lr", "1.0e-4", "peak learning rate", _rate),
        Variable("partition", "", "Slurm partition (empty: the cluster default)",
                 _pattern(_SLURM_WORD, "a Slurm partition name")),
        Variable("account", "", "Slurm account (empty: the user default)",
                 _pattern(_SLURM_WORD, "a Slurm account name")),
        Variable("time_limit", "01:00:00", "Slurm time limit ([D-]HH:MM:SS)",
                 _pattern(_SLURM_TIME, "a Slurm time such as 04:00:00 or 1-00:00:00")),
        Variable("slurm_gpus", "gpus-per-node", "how sbatch asks for GPUs", _choice(SLURM_GPU_REQUESTS)),
        Variable("container", "none", "container runtime for Slurm (pyxis, apptainer, docker, podman)",
                 _choice(CONTAINERS)),
        Variable("container_image", "", "container image (required for k8s and Slurm containers)",
                 _pattern(IMAGE, IMAGE_FORM)),
        Variable("megatron_version", megatron.DEFAULT_VERSION, "Megatron-LM release the launch's flags are written for",
                 _choice(MEGATRON_VERSIONS)),
        Variable("bridge_version", bridge.DEFAULT_VERSION, "Megatron-Bridge release the bridge target's launch runs",
                 _choice(bridge.version_names())),
        Variable("megatron_dir", "/workspace/Megatron-LM", "Megatron-LM checkout on the nodes"),
        Variable("primus_dir", "/workspace/Primus", "Primus checkout on the nodes"),
        Variable("bridge_dir", "/opt/Megatron-Bridge", "Megatron-Bridge checkout on the nodes (NeMo containers keep it here)"),
        Variable("master_port", "29500", "rendezvous TCP port", _positive_int(65535)),
        Variable("namespace", "default", "Kubernetes namespace",
                 _pattern(_LABEL, "a Kubernetes namespace name")),
    )
}


@frozen
class Variables:
    """The resolved variables, one attribute per entry of ``VARIABLES``."""

    job_name: str
    data_path: str
    tokenizer_model: str
    tokenizer_type: str
    checkpoint_dir: str
    train_iters: str
    save_interval: str
    eval_iters: str
    eval_interval: str
    log_interval: str
    lr: str
    partition: str
    account: str
    time_limit: str
    slurm_gpus: str
    container: str
    container_image: str
    megatron_version: str
    bridge_version: str
    megatron_dir: str
    primus_dir: str
    bridge_dir: str
    master_port: str
    namespace: str


def _bad(name: str, value: str, why: str) -> Diagnostic:
    shown = value if len(value) <= 60 else value[:57] + "..."
    return Diagnostic(BAD_VARIABLE, f"variable `{name}` = {shown!r} {why}", help=f"docs/emit.md describes `{name}`")


def default_job_name(space_name: str) -> str:
    """A label derived from the space's name: lowercase, '-' for anything else, trimmed."""
    label = re.sub(r"[^a-z0-9]+", "-", space_name.lower()).strip("-")[:50].strip("-")
    return label or "primusc"


def resolve_variables(given: Mapping[str, str], space_name: str, defaults: Mapping[str, str] | None = None) -> Variables:
    """Check every ``--var`` against the table and fill in the defaults: ``defaults`` (what the
    space's site and run block say, checked where they are written) before the table's own."""
    problems: list[Diagnostic] = []
    values: dict[str, str] = {name: v.default for name, v in VARIABLES.items()}
    values.update(defaults or {})
    for name, value in sorted(given.items()):
        var = VARIABLES.get(name)
        if var is None:
            problems.append(
                Diagnostic(
                    UNKNOWN_VARIABLE,
                    f"unknown emission variable `{name}`",
                    help="known variables: " + ", ".join(sorted(VARIABLES)),
                )
            )
            continue
        if _CONTROL.search(value):
            problems.append(_bad(name, value, "contains a control character (newline, tab, escape...)"))
            continue
        why = var.check(value)
        if why is not None:
            problems.append(_bad(name, value, why))
            continue
        values[name] = value
    if problems:
        raise CompileError(problems)
    if not values["job_name"]:
        values["job_name"] = default_job_name(space_name)
    if not values["tokenizer_type"]:
        values["tokenizer_type"] = "HuggingFaceTokenizer" if values["tokenizer_model"] else "NullTokenizer"
    return Variables(**values)


def variable_names() -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(Variables))
