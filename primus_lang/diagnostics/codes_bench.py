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
    "a training log cannot be read or holds no iteration lines",
    "`primusc calibrate-log` reads Megatron-LM or Primus training logs: lines such as\n"
    "` iteration      10/    100 | ... | elapsed time per iteration (ms): 1234.5 | ...`.\n"
    "Pass the log file of a run that reached at least one logged iteration.",
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
