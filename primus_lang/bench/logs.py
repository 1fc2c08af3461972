"""Read Megatron-LM / Primus training logs and fit the offset between projection and measurement.

What a log gives: the ``arguments`` block Megatron prints at start-up (``  name ..... value``), and
one line per logged iteration with ``elapsed time per iteration (ms)`` and, in newer versions,
``throughput per GPU (TFLOP/s/GPU)``; Primus adds ``tokens per GPU (tokens/s/GPU)``. The first
iterations include warm-up (compilation, allocator growth), so they are skipped.
"""

from __future__ import annotations

import re
import statistics

from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import LOG_UNREADABLE
from primus_lang.ir import Candidate, Recompute

_ITER = re.compile(r"iteration\s+(\d+)\s*/\s*(\d+)")
_ELAPSED = re.compile(r"elapsed time per iteration \(ms\):\s*([0-9.eE+-]+)")
_TFLOPS = re.compile(r"throughput per GPU \(TFLOP/s/GPU\):\s*([0-9.eE+-]+)")
_TOKENS = re.compile(r"tokens per GPU \(tokens/s/GPU\):\s*([0-9.eE+-]+)")
_GBS = re.compile(r"global batch size:\s*(\d+)")
_ARG = re.compile(r"^(?:.*\]\s*)?\s*([a-z_][a-z0-9_]*)\s\.{3,}\s(.*?)\s*$")  # "[rank-0]  name .... value"


@frozen
class Iteration:
    index: int
    seconds: float  # elapsed time per iteration
    tflops_per_gpu: float | None = None
    tokens_per_gpu: float | None = None
    gbs: int | None = None


@frozen
class TrainingLog:
    iterations: tuple[Iteration, ...]
    args: tuple[tuple[str, str], ...]  # Megatron's arguments block, as printed

    def arg(self, name: str) -> str | None:
        return dict(self.args).get(name)

    def step_time(self, skip: int = 1) -> float:
        """Median step time after ``skip`` logged iterations of warm-up."""
        kept = self.iterations[skip:] or self.iterations[-1:]
        return float(statistics.median(i.seconds for i in kept))


def parse_log(text: str, name: str = "<log>") -> TrainingLog:
    iterations: list[Iteration] = []
    args: dict[str, str] = {}
    for line in text.splitlines():
        it, elapsed = _ITER.search(line), _ELAPSED.search(line)
        if it and elapsed:
            tflops, tokens, gbs = _TFLOPS.search(line), _TOKENS.search(line), _GBS.search(line)
            iterations.append(Iteration(
                int(it.group(1)), float(elapsed.group(1)) / 1e3,
                float(tflops.group(1)) if tflops else None,
                float(tokens.group(1)) if tokens else None,
                int(gbs.group(1)) if gbs else None,
            ))
            continue
        arg = _ARG.match(line)
        if arg and "iteration" not in line:
            args.setdefault(arg.group(1), arg.group(2))
    if not iterations:
        raise CompileError(Diagnostic(
            LOG_UNREADABLE, f"`{name}` holds no iteration lines with `elapsed time per iteration (ms)`",
            help="pass the stdout log of a Megatron-LM or Primus training run",
        ))
    return TrainingLog(tuple(iterations), tuple(args.items()))


# Megatron argument -> Candidate knob (integers)
_INT_ARGS = {
    "tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp", "context_parallel_size": "cp",
    "expert_model_parallel_size": "ep", "expert_tensor_parallel_size": "etp", "micro_batch_size": "mbs",
    "global_batch_size": "gbs", "seq_length": "seq_len", "num_virtual_stages_per_pipeline_rank": "vpp",
}


def candidate_from_log(log: TrainingLog, base: Candidate | None = None) -> Candidate:
    """The recipe a log ran, from its arguments block (knobs it does not print keep ``base``'s value)."""
    cand = base or Candidate()
    changes: dict[str, object] = {}
    for arg, knob in _INT_ARGS.items():
        value = log.arg(arg)
        if value is not None and value.lstrip("-").isdigit():
            changes[knob] = int(value)
    granularity = log.arg("recompute_granularity")
    if granularity in ("full", "selective"):
        layers = log.arg("recompute_num_layers") or "0"
        method = log.arg("recompute_method") or "block"
        changes["recompute"] = Recompute(
            granularity, int(layers) if granularity == "full" and layers.isdigit() else 0,
            method if method in ("uniform", "block") else "block",
        )
    if log.arg("fp8") not in (None, "None", "False"):
        changes["precision"] = "fp8"
    elif log.arg("fp4") not in (None, "None", "False"):
        changes["precision"] = "fp4"
    if log.arg("sequence_parallel") in ("True", "False"):
        changes["sequence_parallel"] = log.arg("sequence_parallel") == "True"
    if log.arg("use_distributed_optimizer") == "True":
        changes["sharding"] = "dist_opt"
    return cand.replace(**changes)


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
    import math

    return math.exp(statistics.fmean(math.log(o.factor) for o in offsets))
