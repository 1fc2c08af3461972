"""Read Megatron-LM / Primus training logs and fit the offset between projection and measurement.

What a log gives: the ``arguments`` block Megatron prints at start-up (``  name ..... value``), and
one line per logged iteration with ``elapsed time per iteration (ms)`` and, in newer versions,
``throughput per GPU (TFLOP/s/GPU)``; Primus adds ``tokens per GPU (tokens/s/GPU)``. The first
iterations include warm-up (compilation, allocator growth), so they are skipped.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
import statistics
from collections.abc import Iterable, Iterator

import attrs
from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE
from primus_lang.diagnostics.codes_projection import LOG_VALUE
from primus_lang.frameworks import reading, spelling
from primus_lang.ir import KNOBS, Candidate, Model
from primus_lang.ir.candidate import DISPATCHERS, FP8_FORMATS, FP8_RECIPES
from primus_lang.ir.derived import expert_knobs
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.ranges import CEILINGS
from primus_lang.ir.span import Span

# Labels and the field each takes, up to the next `|`; the field is checked strictly afterwards, so a
# value like `1.2.3`, `-4` or `²` is a diagnostic naming its line, never a crash in `float()`.
_ITER = re.compile(r"iteration\s+([0-9]{1,18})\s*/\s*([0-9]{1,18})", re.ASCII)
# Primus's current line gives the elapsed time as `instant/running average` and its own names for the
# throughputs (primus/backends/megatron/patches/training_log/print_rank_last_patches.py): the instant
# value is read, as Megatron-LM's and Megatron-Bridge's lines give it
_ELAPSED = re.compile(r"elapsed time per iteration \(ms\):\s*([^|\s/]*)(?:/[^|\s]*)?")
_TFLOPS = re.compile(r"(?:throughput|compute) per GPU \(TFLOP/s/GPU\):\s*([^|\s/]*)")
_TOKENS = re.compile(r"(?:tokens per GPU \(tokens/s/GPU\)|tokens/s/GPU inst/harmonic mean):\s*([^|\s/]*)")
_GBS = re.compile(r"global batch size:\s*([^|\s]*)")
_SKIPPED = re.compile(r"number of skipped iterations:\s*([0-9]{1,18})", re.ASCII)
_NANS = re.compile(r"number of nan iterations:\s*([0-9]{1,18})", re.ASCII)
_LOSS_NAN = re.compile(r"loss:\s*[+-]?(nan|inf)", re.IGNORECASE)
# Megatron-LM prints a loss only where it is a number at least 0 (training.py's training_log, `if avg >= 0.0`)
# and counts NaN iterations only among skipped ones: a BF16 run's NaN iteration has no `lm loss` and a
# `grad norm: nan` (an issue thread's "number of nan iterations: 0" beside NaN losses)
_GRAD_NAN = re.compile(r"grad norm:\s*[+-]?(nan|inf)", re.IGNORECASE)
_LOSS = re.compile(r"\bloss:\s*[0-9]")
# Megatron's report_memory (megatron/training/utils/common_utils.py), printed by each data-parallel rank 0,
# and Primus's device lines (print_rank_last_patches.py): the printing rank's own (hip/rocm mem
# usage/free/total/usage_ratio: USEDGB/...) and, on the iterations it samples ROCm SMI, the most any rank
# used (`rank-K rocm max mem usage/usage_ratio: USEDGB/...`, an all-reduce over every rank)
_MEMORY = re.compile(r"memory \(MB\) \| allocated: ([0-9.]{1,20}) \| max allocated: ([0-9.]{1,20}) \| "
                     r"reserved: ([0-9.]{1,20}) \| max reserved: ([0-9.]{1,20})")
_DEVICE_USED = re.compile(r"(?:hip|rocm) mem usage/free/total/usage_ratio: ([0-9.]{1,20})GB/")
_DEVICE_MAX = re.compile(r"rocm max mem usage/usage_ratio: ([0-9.]{1,20})GB/")
# "[rank-0]  name .... value", also behind a collector's timestamp (`kubectl logs --timestamps`), `srun --label`'s
# `0: ` or Primus's logger's `] :`, where a log (an issue's excerpt) lost the block's header
_ARG = re.compile(r"^(?:.*\]\s*:?|\d{4}-\d\d-\d\dT\S+|\d{1,5}:)?\s*([a-z_][a-z0-9_]*)\s\.{3,}\s(.*?)\s*$")
# inside Megatron's `--- arguments ---` block any prefix may come first: Primus's logger ends its own with
# `] :`, a collector's timestamp, `srun --label`'s `0: ` or torchrun's `[default0]:` theirs
_ARG_IN_BLOCK = re.compile(r"(?:^|\s)([a-z_][a-z0-9_]*)\s\.{3,}\s(.*?)\s*$")
_ARGS_START, _ARGS_END = "-- arguments --", "-- end of arguments --"
# Megatron-LM's initialize prints the parallel sizes on one line (megatron/training/arguments.py, core_v0.16.1):
# read where the arguments block leaves one out (a log cut or filtered before it reached primusc)
_SIZES = re.compile(r"using world size: \d+, data-parallel size: \d+, context-parallel size: (\d+),.*?"
                    r"tensor-model-parallel size: (\d+), pipeline-model-parallel size: (\d+)")
_SIZE_ARGS = ("context_parallel_size", "tensor_model_parallel_size", "pipeline_model_parallel_size")
# terminal colours (Primus's logger colours every field) and a container runtime's JSON record
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DOCKER_JSON = '{"log":'
_REAL = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
_WHOLE = re.compile(r"[0-9]{1,18}", re.ASCII)
HOST_OOM = "host out of memory"
# How a job that did not run to the end ended, read from what its log says (the first that matches a line):
# PyTorch's and ROCm's out-of-memory errors, Slurm's time limit and cancellation lines, Kubernetes' deadline
# (the campaign driver appends it), and a crash: torchrun's ChildFailedError, srun's non-zero exit, the
# driver's line for a job Kubernetes marked failed
ENDINGS = (
    # the device's (PyTorch, ROCm, cuBLAS)
    ("out of memory", re.compile(r"(?i:out of memory)|OutOfMemoryError|HIP_ERROR_OutOfMemory|CUBLAS_STATUS_ALLOC_FAILED")),
    # the host's: the kernel's OOM killer, as slurmstepd and srun say it (a task killed in its cgroup), the kernel
    # itself, and Kubernetes' container status (a pod over its memory limit). Host RAM (data-loader workers,
    # pinned buffers, a pod's limit), never the GPU's: it says nothing of the memory account
    (HOST_OOM, re.compile(r"(?i:\boom[-_ ]?kill)|task [0-9]+: Out Of Memory|(?i:memory cgroup out of memory)"
                          r"|Out of memory: Killed process")),
    ("timed out", re.compile(r"DUE TO TIME LIMIT|DeadlineExceeded")),
    ("cancelled", re.compile(r"CANCELLED AT")),
    # a pod the node or the scheduler put out (memory pressure, preemption), as a k8s campaign saves it
    ("evicted", re.compile(r"; pods: .*\b(?:Evicted|Preempted)\b")),
    ("crashed", re.compile(r"ChildFailedError|[Ee]xited with exit code [1-9]|primusc campaign: \S+ failed:")),
)
_ERROR = re.compile(r"\b(?:Error|Exception|error:)|[a-z](?:Error|Exception)\b|Traceback"
                    r"|\b(?:HIP|CUDA|NCCL|RCCL|hip|cuda|nccl|rccl) error\b")
# what Python prints first when it raises, and the line that says what was raised (`ImportError: ...`,
# `torch.OutOfMemoryError: ...`): the one worth quoting of a traceback
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_RAISED = re.compile(r"(?:^|[\s:\]])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b:?")


# Megatron-LM's own stops before its iteration count (megatron/training/training.py): `--exit-duration-in-mins`,
# which a Slurm launch sets before the scheduler's kill, and `--exit-interval`; the run ended as it was told to.
# And rank 0's line once the training loop returned: the one sign of a finished run in the log of a rank
# that prints no iteration line
_PLANNED_EXIT = re.compile(r"exiting program (?:after [0-9.]+ minutes|at iteration [0-9]+)"
                           r"|\[after training is done\]")


# Megatron-LM's arguments that stop a run before its iteration count (training.py's exit checks)
_EXIT_ARGS = ("exit_duration_in_mins", "exit_interval")


def exit_unset(log: TrainingLog) -> bool:
    """Whether ``log``'s arguments block says the run had no exit before its iteration count (both of
    ``_EXIT_ARGS`` printed as None): then no stop short of that count was one its settings set."""
    said = [log.arg(name) for name in _EXIT_ARGS]
    return all(value is not None and value.strip() == "None" for value in said)


def planned_exit(line: str) -> bool:
    """Whether ``line`` is Megatron-LM saying it stops where its settings told it to, or that its training
    loop is done."""
    return bool(_PLANNED_EXIT.search(line))


_HOST_OOM_LINE = dict(ENDINGS)[HOST_OOM]  # looked up once: ``ending`` reads every line of a log


def ending(line: str) -> str | None:
    """The way a job ended that ``line`` says (``ENDINGS``), or None. The host's OOM killer is asked
    first: the kernel's own line (`Memory cgroup out of memory`) says "out of memory" too."""
    if _HOST_OOM_LINE.search(line):
        return HOST_OOM
    return next((cause for cause, pattern in ENDINGS if pattern.search(line)), None)


def error_line(line: str) -> bool:
    """Whether ``line`` reports an error (the first such line is why a job failed to start)."""
    return bool(_ERROR.search(line))


def better_error(first: str, line: str) -> bool:
    """Whether ``line`` says why a job failed better than ``first``, the error line found before it: the
    exception a traceback's header announces."""
    return bool(_TRACEBACK.search(first)) and not _TRACEBACK.search(line) and bool(_RAISED.search(line))


# the iteration lines read, by the framework that prints them
FORMATS = (
    "Megatron-LM and Megatron-Bridge: `iteration N/M | ... | elapsed time per iteration (ms): T | throughput per "
    "GPU (TFLOP/s/GPU): F | ... | global batch size: B |`",
    "Primus, earlier releases: the same with `tokens per GPU (tokens/s/GPU): K`, each figure followed by its "
    "running average in late 2025 (`elapsed time per iteration (ms): T/AVG`, `... (TFLOP/s/GPU): F/AVG`, "
    "`... (tokens/s/GPU): K/AVG`)",
    "Primus, current (its print_rank_last patch, v26.5.1): `elapsed time per iteration (ms): T/AVG`, `throughput per GPU "
    "(TFLOP/s/GPU): F/AVG`, `tokens/s/GPU inst/harmonic mean: K/H` (v26.5.0: `compute per GPU (TFLOP/s/GPU): F (avg A)`)",
)
# which rank's log holds the iteration lines (Megatron's print_rank_last)
PRINTING_RANK = "Megatron prints them from the last rank: a multi-node job's last node"
_MAX_STEP_S = 1e6  # an iteration of 11 days: past any real one, below any float trouble
_MIN_STEP_MS = 1e-3  # a microsecond: less than one kernel launch, so no training step
_LOWEST = 1e-9  # any other logged figure (TFLOP/s, tokens/s) this small is a misprint, not a measurement


@frozen
class Iteration:
    index: int
    seconds: float  # elapsed time per iteration
    tflops_per_gpu: float | None = None
    tokens_per_gpu: float | None = None
    gbs: int | None = None
    line: int = 0
    skipped: int = 0  # iterations of this logged interval Megatron skipped (a loss-scale overflow)
    nan: int = 0  # iterations of this logged interval with a NaN or infinite loss or gradient
    total: int = 0  # the iterations the run was to train (`iteration N/M`'s M)

    @property
    def healthy(self) -> bool:
        return self.skipped == 0 and self.nan == 0


@frozen
class TrainingLog:
    iterations: tuple[Iteration, ...]
    args: tuple[tuple[str, str], ...]  # Megatron's arguments block, as printed
    arg_lines: tuple[tuple[str, int], ...] = ()  # the line each argument was read from
    cut_line: int = 0  # a last line without its line end, left unread: the log was cut off there
    # the most any printing rank held, in bytes: PyTorch's allocations, and what its allocator reserved
    # (or the device's used memory, where the log gives only that); 0 where the log prints neither
    max_allocated: int = 0
    max_reserved: int = 0

    def arg(self, name: str) -> str | None:
        return dict(self.args).get(name)

    def line_of(self, name: str) -> int:
        return dict(self.arg_lines).get(name, 0)


def bad_value(name: str, line: int, message: str, help: str) -> CompileError:
    span = Span(name, line, 1, line, 2) if line else None
    return CompileError(Diagnostic(LOG_VALUE, message, span=span, help=help))


def _real(text: str, what: str, name: str, line: int, top: float, low: float = _LOWEST) -> float:
    """A logged figure: ASCII digits in decimal or exponent form, from ``low`` (above 0 and a normal
    float: a subnormal step time turns every ratio to it into 0 or infinity) to ``top``."""
    value = float(text) if _REAL.fullmatch(text) else math.nan
    if not low <= value <= top:
        raise bad_value(name, line, f"{what} is `{text[:40]}`, not a number from {low:g} to {top:g}",
                        "the line is not one Megatron or Primus prints; fix or drop this log")
    return value


def _optional(match: re.Match[str] | None, what: str, name: str, line: int, top: float) -> float | None:
    return None if match is None else _real(match.group(1), what, name, line, top)


def parse_log(text: str | Iterable[str], name: str = "<log>") -> TrainingLog:
    """The iterations and arguments of a log (its text, or its lines with their line ends as they
    are read)."""
    log = read_log(text, name)
    if not log.iterations:
        raise CompileError(Diagnostic(
            LOG_UNREADABLE, f"`{name}` holds no iteration lines with `elapsed time per iteration (ms)`",
            notes=FORMATS,
            help=f"pass the stdout log of the rank that prints the iteration lines ({PRINTING_RANK}); of a primusc "
                 "campaign's job, its train.log (rank 0's arguments are read from the rank0.log beside it)",
        ))
    return log


def read_log(text: str | Iterable[str], name: str = "<log>") -> TrainingLog:
    """What ``parse_log`` reads, also from a log with no iteration line (rank 0's of a job whose last
    rank prints them, read for its arguments)."""
    iterations: list[Iteration] = []
    args: dict[str, str] = {}
    lines: dict[str, int] = {}
    cut = 0
    allocated = reserved = used = 0.0
    in_args = False
    losses = False  # an earlier iteration line printed a loss: one without it is Megatron's NaN iteration
    header: dict[str, tuple[str, int]] = {}
    for number, raw, ended in _numbered(io.StringIO(text) if isinstance(text, str) else text):
        if not ended:
            # a log still being written, or copied from a job killed mid-line: its last figure may be cut
            cut = number
            continue
        line = _unwrapped(raw)
        # only the few lines that name memory are searched for it: a log is mostly iteration lines
        memory, device = (_MEMORY.search(line), _DEVICE_USED.search(line)) if " mem" in line else (None, None)
        if memory is not None:
            allocated = max(allocated, _real(memory.group(2), "max allocated (MB)", name, number, 1e9, 0.0) * 2**20)
            reserved = max(reserved, _real(memory.group(4), "max reserved (MB)", name, number, 1e9, 0.0) * 2**20)
        elif device is not None:
            used = max(used, _real(device.group(1), "the device memory used (GB)", name, number, 1e6, 0.0) * 2**30)
            if (most := _DEVICE_MAX.search(line)) is not None:
                used = max(used, _real(most.group(1), "the most device memory a rank used (GB)", name, number,
                                       1e6, 0.0) * 2**30)
        it, elapsed = _ITER.search(line), _ELAPSED.search(line)
        if it and elapsed:
            step = _real(elapsed.group(1), "the elapsed time per iteration (ms)", name, number, _MAX_STEP_S * 1e3,
                         _MIN_STEP_MS)
            gbs = _optional(_GBS.search(line), "the global batch size", name, number, 2**24)
            if gbs is not None and gbs != int(gbs):
                raise bad_value(name, number, f"the global batch size is {gbs:g}, not a whole number",
                                "fix or drop this log")
            logged = Iteration(
                int(it.group(1)), step / 1e3,
                _optional(_TFLOPS.search(line), "the throughput per GPU", name, number, 1e6),
                _optional(_TOKENS.search(line), "the tokens per GPU", name, number, 1e9),
                None if gbs is None else int(gbs),
                number,
                _count(_SKIPPED.search(line)),
                max(_count(_NANS.search(line)), 1 if _LOSS_NAN.search(line) or _GRAD_NAN.search(line)
                    or (losses and not _LOSS.search(line)) else 0),
                int(it.group(2)),
            )
            losses = losses or _LOSS.search(line) is not None
            # Primus logs each iteration line twice, one after the other (two loggers): the same
            # figures again are that echo, where a restart would log the iteration anew
            if not (iterations and attrs.evolve(iterations[-1], line=number) == logged):
                iterations.append(logged)
            continue
        if _ARGS_START in line or _ARGS_END in line:
            in_args = _ARGS_START in line
            continue
        if "using world size" in line and (sizes := _SIZES.search(line)) is not None:
            header = {size: (value, number) for size, value in zip(_SIZE_ARGS, sizes.groups(), strict=True)}
            continue
        arg = (_ARG_IN_BLOCK.search(line) if in_args else _ARG.match(line)) if "..." in line else None
        if arg and "iteration" not in line and arg.group(1) not in args:
            args[arg.group(1)] = arg.group(2)
            lines[arg.group(1)] = number
    for size, (value, number) in header.items():
        if size not in args:
            args[size], lines[size] = value, number
    # the device's memory in use (Primus's line, every process on the GPU) stands in for PyTorch's reserved
    # only where the log prints no allocator figures: a larger figure of another kind is not "reserved"
    return TrainingLog(tuple(iterations), tuple(args.items()), tuple(lines.items()), cut, int(allocated),
                       int(reserved or used))


def _unwrapped(line: str) -> str:
    """The line the framework printed: without terminal colours, and out of a container runtime's
    JSON record (Docker's json-file driver: `{"log":"...\\n","stream":"stdout","time":"..."}`)."""
    if line.startswith(_DOCKER_JSON):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("log"), str):
            line = record["log"].rstrip("\r\n")
    return _ANSI.sub("", line) if "\x1b" in line else line


def _numbered(pieces: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """(number, line without its end, whether it ended) for each line. Only the last line of a log of
    several can have been cut off; a piece of an overlong line, also without an end, is read as a line."""
    held: tuple[int, str] | None = None
    for number, piece in enumerate(pieces, 1):
        if held is not None:
            yield held[0], held[1].removesuffix("\n"), True
        held = (number, piece)
    if held is not None:
        yield held[0], held[1].removesuffix("\n"), held[0] == 1 or held[1].endswith("\n")


def _count(match: re.Match[str] | None) -> int:
    return int(match.group(1)) if match else 0


@frozen
class Steady:
    """A log's steady-state step time and what was left out to find it."""

    seconds: float  # median elapsed time per iteration of the kept iterations
    kept: int
    logged: int
    notes: tuple[str, ...]  # one sentence per pathology met, naming the line
    spread: float = 0.0  # the kept step times' interquartile range over their median: the run's noise


WARMUP = 5  # iterations of warm-up `learn` and `calibrate-log` leave out, at the start and after each restart
MIN_STEADY = 3  # a median of fewer steady iterations is one noisy sample: `learn` refuses it, `calibrate-log` says so


def past_warmup(log: TrainingLog, warmup: int) -> tuple[list[Iteration], list[str]]:
    """The logged lines of ``log`` after ``warmup`` iterations of warm-up, and a note per restart. A
    restart (an iteration number at or below the one before: the job was requeued or resumed from a
    checkpoint) starts a new segment whose first ``warmup`` iterations are warm-up again. A line averages
    the iterations since the line before it (Megatron's ``log_interval``), so it is warm-up while any of
    them is: at an interval of 1, the first ``warmup`` lines of a segment."""
    notes: list[str] = []
    segments: list[list[Iteration]] = [[]]
    for it in log.iterations:
        current = segments[-1]
        if current and it.index <= current[-1].index:
            notes.append(f"line {it.line}: iteration {it.index} after {current[-1].index}: the run restarted; "
                         f"its first {warmup} iterations after the restart are warm-up again")
            segments.append([])
        segments[-1].append(it)
    steps = [b.index - a.index for segment in segments for a, b in itertools.pairwise(segment)]
    interval = min(steps, default=1)
    kept: list[Iteration] = []
    for segment in segments:
        if not segment:
            continue
        start = segment[0].index - interval  # the iteration the segment resumed after
        first = start + 1
        for it in segment:
            if first > start + warmup:
                kept.append(it)
            first = it.index + 1
    return kept, notes


def steady(log: TrainingLog, warmup: int) -> Steady:
    """The median step time of ``log`` after ``warmup`` iterations of warm-up (``past_warmup``);
    iterations Megatron counts as skipped or NaN, and a last line the log cut off, are left out. The
    notes say what was dropped and where."""
    kept, notes = past_warmup(log, warmup)
    sick = [it for it in kept if not it.healthy]
    if sick:
        lines = ", ".join(str(it.line) for it in sick[:5]) + (" ..." if len(sick) > 5 else "")
        notes.append(f"{len(sick)} logged iteration(s) with skipped or NaN iterations left out (line {lines})")
        kept = [it for it in kept if it.healthy]
    if log.cut_line:
        notes.append(f"line {log.cut_line}: cut off without its line end (a log still being written, or a "
                     "killed job); left unread")
    seconds = float(statistics.median(it.seconds for it in kept)) if kept else math.nan
    spread = 0.0
    if len(kept) >= 4:
        quartiles = statistics.quantiles([it.seconds for it in kept], n=4)
        spread = (quartiles[2] - quartiles[0]) / seconds
    return Steady(seconds, len(kept), len(log.iterations), tuple(notes), spread)


# Megatron argument -> Candidate knob, for the knobs that are counts (frameworks.spelling: a log prints the
# parsed arguments, VPP as virtual_pipeline_model_parallel_size)
_INT_ARGS = {name: knob for name, knob in {**{s: k for k, s in spelling.KNOBS.items()}, **spelling.ALIASES}.items()
             if knob in KNOBS and kind_of(KNOBS[knob]) is Kind.COUNT}
_UNSET = ("None", "none", "null", "")  # how Megatron prints an argument left at its default
# the switches an arguments block prints as True or False, read as the knobs they are
_SWITCHES = tuple(k for k in ("sequence_parallel", "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
                              "fp8_param_gather", "ep_comm_overlap") if kind_of(KNOBS[k]) is Kind.FLAG)
# knobs of the experts alone: a dense run's block prints them at Megatron's defaults, which say nothing of it
_MOE_ONLY = ("moe_dispatcher", "ep_comm_overlap")


def _whole(log: TrainingLog, arg: str, knob: str, name: str, low: int | None = None) -> int | None:
    """An integer argument, ASCII digits from ``low`` (by default 1, or 0 for a knob whose 0 means
    none: Megatron-LM prints `cpu_offloading_num_layers ... 0` when nothing is offloaded) to the knob's
    ceiling; None when left unset."""
    text = log.arg(arg)
    if text is None or text in _UNSET:
        return None
    top = int(CEILINGS[knob])
    if low is None:
        low = 0 if getattr(Candidate(), knob, 1) == 0 else 1
    value = int(text) if _WHOLE.fullmatch(text) else -1
    if not low <= value <= top:
        raise bad_value(name, log.line_of(arg), f"`{arg}` is `{text[:40]}`, not a whole number from {low} to {top:,}",
                        "Megatron prints these as plain numbers; fix or drop this log")
    return value


def candidate_from_log(log: TrainingLog, base: Candidate | None = None, name: str = "<log>", *,
                       moe: bool) -> Candidate:
    """The recipe a log ran, from its arguments block (knobs it does not print keep ``base``'s value);
    ``moe``: whether the model it ran has experts. Required: Megatron prints every argument, the MoE ones
    at their defaults for a dense model too, and a default guess would read those as the recipe's."""
    cand = base or Candidate()
    counts: dict[str, int] = {}
    for arg, knob in _INT_ARGS.items():
        value = _whole(log, arg, knob, name)
        if value is not None:
            counts[knob] = value
    counts["ep"], counts["etp"] = expert_knobs(counts.get("ep", cand.ep), counts.get("etp", cand.etp),
                                               counts.get("tp", cand.tp), moe)
    changes: dict[str, object] = dict(counts)
    K, P = spelling.KNOBS, spelling.PARTS
    if "vpp" in counts or "pp" in counts:
        # the schedule the printed pipeline ran: Megatron's interleaved one at VPP > 1, Primus's patched one
        # where it says so (a base's schedule that VPP contradicts would be a recipe no run had)
        patched = log.arg(P["schedule.patch"]) == "True"
        schedule = spelling.schedule_of(counts.get("vpp", cand.vpp), log.arg(P["schedule.algorithm"]) if patched else None)
        if schedule is not None and (patched or schedule != "1f1b" or cand.schedule == "interleaved"):
            changes["schedule"] = schedule
    granularity = log.arg(K["recompute"])
    if granularity == cand.recompute.kind == "selective":  # its modules: the log's list is not read
        changes["recompute"] = cand.recompute
    elif granularity is not None:
        layers = _whole(log, P["recompute.layers"], "layers", name, low=0) if granularity == "full" else None
        if layers is None and granularity == cand.recompute.kind:  # a block that leaves the count out
            layers = cand.recompute.layers
        method = log.arg(P["recompute.method"])
        if method in _UNSET and granularity == cand.recompute.kind:  # as the count: the block's own
            method = cand.recompute.method
        try:
            # Primus's listed layers, spread over the chunks the log's layout has (the base's where it prints none)
            chunks = counts.get("pp", cand.pp) * max(1, counts.get("vpp", cand.vpp))
            changes["recompute"] = reading.recompute_of(granularity, None if method in _UNSET else method, layers,
                                                        layer_ids=log.arg(P["recompute.layer_ids"]), chunks=chunks)[0]
        except reading.Unread as err:
            raise bad_value(name, log.line_of(K["recompute"]), str(err), "fix or drop this log") from None
    fp8, fp4 = log.arg(K["precision"]), log.arg(P["precision.fp4"])
    if fp8 not in (None, *_UNSET, "False"):
        changes["precision"] = "fp8"
        # Megatron prints the formats as --fp8-format's value and the recipe as --fp8-recipe's
        if fp8 in FP8_FORMATS:
            changes["fp8_format"] = fp8
        if log.arg(K["fp8_recipe"]) in FP8_RECIPES:
            changes["fp8_recipe"] = log.arg(K["fp8_recipe"])
    elif fp4 not in (None, *_UNSET, "False"):
        changes["precision"] = "fp4"
    elif fp8 is not None:  # printed, and neither low precision set: the GEMMs ran in BF16
        changes["precision"] = "bf16"
    for knob in _SWITCHES:
        printed = log.arg(K[knob])
        if printed in ("True", "False") and (moe or knob not in _MOE_ONLY):
            changes[knob] = printed == "True"
    backend = (log.arg(K["attention"]) or "").rsplit(".", 1)[-1]  # printed as AttnBackend.auto
    if backend in spelling.ATTENTION_OF_BACKEND:
        changes["attention"] = spelling.ATTENTION_OF_BACKEND[backend]
    if moe and log.arg(K["moe_dispatcher"]) in DISPATCHERS:
        changes["moe_dispatcher"] = log.arg(K["moe_dispatcher"])
    sharded = {d: log.arg(d) for d in reading.SHARDING_SETTINGS}
    if any(v in ("True", "False") for v in sharded.values()):
        changes["sharding"] = reading.sharding_of({d: v == "True" for d, v in sharded.items()})[0]
    fused = log.arg(P["cross_entropy.fusion"])
    if fused in ("True", "False"):
        changes["cross_entropy"] = spelling.cross_entropy_kernel(fused == "True", log.arg(K["cross_entropy"]))
    return cand.replace(**changes)


def other_model(log: TrainingLog, model: Model, world: int) -> list[tuple[str, str, int]]:
    """Where ``log``'s arguments state another model shape or GPU count than ``model`` on ``world`` GPUs:
    (argument, what the log printed, what the space has). Arguments it does not print are not compared."""
    ours = {spelling.CARD[f]: getattr(model, f) for f in ("num_layers", "hidden", "heads")}
    ours["world_size"] = world
    return [(arg, text, want) for arg, want in ours.items()
            if (text := log.arg(arg)) is not None and text.isascii() and text.isdigit() and int(text) != want]


@frozen
class Offset:
    """measured / projected for one run: multiply a projection by it to land on the measurement."""

    name: str
    measured: float
    projected: float

    @property
    def factor(self) -> float:
        return self.measured / self.projected


def fit_offset(offsets: list[Offset]) -> float:
    """One factor for a set of runs: the geometric mean, so 2x over and 2x under cancel."""
    return math.exp(statistics.fmean(math.log(o.factor) for o in offsets))
