"""A stand-in for torchrun in the campaign tests: it prints the training log a run of the job's
candidate would print if the GPU had the hidden "true" efficiencies of ``$FAKE_TRUTH``.

It is started by the emitted ``node.sh`` with torchrun's arguments, then the program and its
arguments (Megatron-LM: ``pretrain_gpt.py --tensor-model-parallel-size ...``; Primus:
``primus/cli/main.py train pretrain --config .../experiment.yaml``). It checks that those carry the
manifest's candidate for job ``$PRIMUSC_CAMPAIGN_JOB``, projects that candidate on the space with
the true efficiencies, and prints an arguments block and one line per iteration in the program's
format: slow first iterations (warm-up) and a small deterministic jitter. Only node rank 0 logs.
``$FAKE_ENDINGS`` (a JSON file: job index -> oom, timeout or start) makes a job end as such a job's log does.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import yaml


def fail(message: str) -> None:
    print(f"fake torchrun: {message}", file=sys.stderr)
    raise SystemExit(3)


# How a job that does not run to the end ends, as its log shows it: PyTorch's out-of-memory error before
# the first iteration, slurmstepd's line at the time limit after a few, an import error at start
ENDINGS = {
    "oom": ("------------------------ arguments ------------------------",
            "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
            "capacity of 139.72 GiB of which 1.21 GiB is free."),
    "timeout": (" [2026-12-01 10:00:00] iteration        1/      30 | elapsed time per iteration (ms): 90000.0 |",
                "slurmstepd: error: *** STEP 7.0 ON node1 CANCELLED AT 2026-12-01T10:01:30 DUE TO TIME LIMIT ***"),
    "start": ("Traceback (most recent call last):", "ModuleNotFoundError: No module named 'megatron'"),
}


def end(how: str, index: int) -> None:
    for line in ENDINGS[how]:
        print(line, flush=True)
    raise SystemExit(1)


def main(argv: list[str]) -> None:
    opts = dict(zip(argv[0:10:2], argv[1:10:2], strict=True))
    script, program = argv[10], argv[11:]
    truth = json.loads(Path(os.environ["FAKE_TRUTH"]).read_text())
    folder = Path(truth["campaign"])
    manifest = json.loads((folder / "manifest.json").read_text())
    job = manifest["jobs"][int(os.environ["PRIMUSC_CAMPAIGN_JOB"])]
    cand = job["candidate"]
    if script == "pretrain_gpt.py":
        flags = {program[i]: program[i + 1] if i + 1 < len(program) else "" for i in range(len(program))}
        seen = {"tp": flags["--tensor-model-parallel-size"], "mbs": flags["--micro-batch-size"],
                "gbs": flags["--global-batch-size"]}
        style, console = "megatron", True
    else:
        config = yaml.safe_load(Path(program[program.index("--config") + 1]).read_text())
        over = config["modules"]["pre_trainer"]["overrides"]
        seen = {"tp": over["tensor_model_parallel_size"], "mbs": over["micro_batch_size"],
                "gbs": over["global_batch_size"]}
        style = "primus"
        # Primus logs print() at DEBUG and its console from INFO unless the experiment says DEBUG: the
        # arguments block and iteration lines would be in each rank's debug.log, not in this output
        console = over.get("stderr_sink_level", "INFO") == "DEBUG"
    for knob, value in seen.items():
        if int(value) != cand[knob]:
            fail(f"job {job['index']} was given {knob} {value}, its candidate has {cand[knob]}")
    if opts["--node_rank"] != "0":
        return
    endings = os.environ.get("FAKE_ENDINGS")
    ending = json.loads(Path(endings).read_text()).get(str(job["index"])) if endings else None
    if ending is not None:
        end(ending, job["index"])
    step = truth["steps"][str(job["index"])]
    if style == "primus" and not console:
        print(f"[Primus] [rank-0] experiment: {manifest['space']}  framework: megatron (log lines at DEBUG: not shown)")
        return
    prefix = "[rank-0] " if style == "primus" else " "
    if style == "primus":
        print(f"[Primus] {prefix}experiment: {manifest['space']}  framework: megatron")
    else:
        print("------------------------ arguments ------------------------")
    recompute = cand["recompute"]["kind"]
    args = {"tensor_model_parallel_size": cand["tp"], "pipeline_model_parallel_size": cand["pp"],
            "micro_batch_size": cand["mbs"], "global_batch_size": cand["gbs"], "seq_length": cand["seq_len"],
            "recompute_granularity": recompute if recompute != "none" else "None"}
    for name, value in args.items():
        print(f"{prefix} {name} {'.' * (48 - len(name))} {value}")
    iters = int(manifest["bounds"]["iterations"])
    tokens = cand["gbs"] * cand["seq_len"] / truth["world"]
    for i in range(1, iters + 1):
        seconds = step * ({1: 3.0, 2: 1.4}.get(i, 1.0) + 0.003 * math.sin(7.0 * i))
        line = (f"{prefix}[2026-12-01 10:00:00] iteration {i:>8}/{iters:>8} | consumed samples: {i * cand['gbs']:>12} | "
                f"elapsed time per iteration (ms): {seconds * 1e3:.1f} | ")
        if style == "primus":
            line += f"tokens per GPU (tokens/s/GPU): {tokens / seconds:.1f} | "
        line += (f"learning rate: 1.000000E-04 | global batch size: {cand['gbs']:>5} | lm loss: 1.05E+01 | "
                 "loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |")
        print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
