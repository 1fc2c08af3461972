"""P68xx: the benchmark oracle (measured kernels, profile database, training logs).

The bench codes sit at the top of the projection family (P6) so they never collide with the
projection stage's own P60xx-P67xx codes.
"""

from primus_lang.diagnostics.core import register

TORCH_MISSING = register(
    "P6801",
    "torch-missing",
    "the benchmark oracle needs torch, which is not installed",
    "Measuring kernels needs PyTorch. Install the optional extra: `pip install 'primusc[bench]'`,\n"
    "or project with `--oracle simulate`, which needs no torch.",
)
BAD_DEVICE = register(
    "P6802",
    "bad-device",
    "the benchmark device does not exist or cannot be used",
    "`--device` takes `cpu`, `cuda`, or `cuda:N` for a visible GPU (ROCm builds of torch also use `cuda`).\n"
    "Check `python -c 'import torch; print(torch.cuda.device_count())'`.",
)
PROFILE_DB = register(
    "P6803",
    "profile-db",
    "the profile database cannot be opened or is not a primusc profile database",
    "`--db` names an SQLite file that primusc creates on first use. Point it at a writable path,\n"
    "or delete a file that is not a primusc profile database.",
)
LOG_UNREADABLE = register(
    "P6804",
    "log-unreadable",
    "a training log cannot be read, or holds too little to measure or to know which recipe it ran",
    "`primusc calibrate-log` and `learn` read Megatron-LM, Megatron-Bridge and Primus training logs: lines\n"
    "such as ` iteration      10/    100 | ... | elapsed time per iteration (ms): 1234.5 | ...`. The log is\n"
    "refused when it cannot be read, holds no iteration line, keeps none once the warm-up iterations are\n"
    "left out (`--warmup`), or, for `calibrate-log`, prints no arguments block to say which recipe it ran\n"
    "(Megatron's `------ arguments ------` list). Pass the log of a run that logged more iterations than its\n"
    "warm-up, with its arguments block (rank 0's log holds it where another rank prints the iterations).",
)
UNSUPPORTED_OP = register(
    "P6805",
    "unsupported-op",
    "the benchmark harness cannot run this operator kind",
    "The harness measures GEMMs, grouped GEMMs, attention, norms, element-wise ops, softmax,\n"
    "cross-entropy and optimizer updates. Other operators are timed by the simulate oracle.",
)
UNMEASURED_RECOMPUTE = register(
    "P6806",
    "unmeasured-recompute",
    "the downscaled step has no measured block for this recomputation kind",
    "`project_downscaled` composes a step from the reduced model's measured layer blocks: plain,\n"
    "Megatron's selective (core attention) and full recomputation. torchtitan's op-level checkpointing\n"
    "(`recompute = op`) has no measured block; the benchmark oracle times its kernels one by one\n"
    "(`primusc project --oracle benchmark`) instead.",
)

# Benchmark campaigns: a job that measures on the cluster, a file that travels, a merge that judges it.
CAMPAIGN_FILE = register(
    "P6807",
    "campaign-file",
    "a file given to `--merge` is not a primusc profile database",
    "`primusc bench --merge FILE...` reads the SQLite files a benchmark campaign writes\n"
    "(`primusc bench space.prx --job slurm --out DIR`, then `sbatch DIR/bench.sbatch`). The file must\n"
    "be one of those: an SQLite file with primusc's tables and this primusc's schema version. Copy the\n"
    "whole file back from the cluster (a file copied while the job was still writing can be torn).",
)
NO_PROVENANCE = register(
    "P6808",
    "no-provenance",
    "a campaign file holds measurements of a device it records no provenance for",
    "A merge judges every device's rows by their provenance: device name, runtime, driver, torch and\n"
    "framework versions, collective backend. Rows without it cannot be judged, so none of the file is\n"
    "merged. Files written by `primusc bench` record it; re-run the campaign with this primusc.",
)
PROVENANCE_MISMATCH = register(
    "P6809",
    "provenance-mismatch",
    "a campaign file's provenance does not describe the device its rows are keyed by",
    "Every row of a profile database is keyed by `device name|runtime|driver|torch version`; the\n"
    "provenance of that key must state the same facts. A file where they differ was edited or\n"
    "assembled by hand, and its numbers cannot be attributed to a device. Re-run the campaign.",
)
MERGE_OTHER_DEVICE = register(
    "P6810",
    "merge-other-device",
    "a campaign measured another device than the one already recorded for the same target GPU",
    "Measurements are merged under the target GPU the campaign was written for (the space's\n"
    "`gpu`, e.g. `h200`), and `plan --oracle hybrid --device h200` reads them back by that name. Two\n"
    "campaigns for one target must have run on the same device model: a job that landed on an H100\n"
    "node while the target is an H200 would otherwise price the H200 with H100 kernels. Re-run the job\n"
    "on the right partition, or write it for a target of its own (`--target NAME`).",
)
MERGE_RUNTIME_MISMATCH = register(
    "P6811",
    "merge-runtime-mismatch",
    "a campaign ran the same device under another runtime or torch release",
    "Kernel times move with the CUDA/ROCm major version and the torch release (major.minor): their\n"
    "kernels, attention paths and allocators differ. A campaign under another one is refused rather\n"
    "than mixed with what the database holds for the same target. Merge it into a database of its own\n"
    "(`--db OTHER`), or re-run the older campaign on the current software.",
)
DEVICE_AMBIGUOUS = register(
    "P6812",
    "device-ambiguous",
    "`--device` names several measured devices of the profile database",
    "The hybrid oracle reads one device's measurements. A name such as `h200` matches every merged\n"
    "campaign for that target; when several (e.g. two driver versions) are recorded, pass the full\n"
    "device key that the diagnostic lists: `--device 'NVIDIA H200|cuda 12.8|driver 570.1|torch 2.7.1'`.",
)
DEVICE_NOT_MEASURED = register(
    "P6813",
    "device-not-measured",
    "`--device` names no device of this machine and none recorded in the profile database",
    "`--device` is `cpu`, `cuda` or `cuda:N` for a device of this machine. With `--oracle hybrid`,\n"
    "which never measures, it may also name a device measured elsewhere and merged with\n"
    "`primusc bench --merge`: its target name (`h200`), device name (`NVIDIA H200`) or full key.\n"
    "`--oracle benchmark` measures missing kernels, so it needs a device of this machine.",
)
BAD_JOB_VARIABLE = register(
    "P6814",
    "bad-job-variable",
    "a benchmark job variable is unknown or has a value the job cannot use",
    "`primusc bench space.prx --job slurm|k8s --out DIR --var name=value` takes the variables that\n"
    "`docs/benchmark.md` lists (nodes, tasks_per_node, time_limit, partition, ...). Counts are\n"
    "positive integers; names that reach Slurm or Kubernetes are plain words.",
)
NO_RANK_ENVIRONMENT = register(
    "P6815",
    "no-rank-environment",
    "the cross-node collective step found no rank, world size or rendezvous in its environment",
    "`primusc bench --collectives net` is one rank of a job: it reads `RANK` and `WORLD_SIZE` (a\n"
    "Kubernetes PyTorchJob sets them) or `SLURM_PROCID` and `SLURM_NTASKS` (srun), and `MASTER_ADDR`\n"
    "and `MASTER_PORT`. Start it through the generated job, which sets them, with at least 2 ranks.",
)
KERNELS_FILE = register(
    "P6816",
    "kernels-file",
    "the kernel list a benchmark job reads is not valid",
    "`primusc bench --kernels FILE` measures the kernels a campaign listed when it was written: a\n"
    "JSON object `{\"kernels\": [{\"op\": \"gemm\", \"shape\": [m, n, k, batch], \"dtype\": \"bf16\"}, ...]}`\n"
    "of operators the harness knows. Write it again with `primusc bench space.prx --job ...`.",
)
