"""The benchmark oracle: kernels timed on the device at hand, collectives measured in scope and
restored beyond it, a reduced model's layers run for real and composed into the full step.

torch is optional (the ``bench`` extra); nothing here imports it until a measurement is asked for.
"""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports

# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.bench.acceptance import CPU_CONFIGS, TINY_GPT, markdown, run_check
    from primus_lang.bench.campaign import campaign_files, executable
    from primus_lang.bench.collectives import DEFAULT_SIZES, backend_of, measure_collectives
    from primus_lang.bench.database import DEFAULT_DB, ProfileDB
    from primus_lang.bench.kernels import KernelSpec
    from primus_lang.bench.logs import (
        ENDINGS,
        HOST_OOM,
        MIN_STEADY,
        PRINTING_RANK,
        WARMUP,
        Offset,
        TrainingLog,
        bad_value,
        better_error,
        candidate_from_log,
        ending,
        error_line,
        exit_unset,
        fit_offset,
        other_model,
        parse_log,
        past_warmup,
        planned_exit,
        read_log,
        steady,
    )
    from primus_lang.bench.merge import merge as merge_campaigns
    from primus_lang.bench.netstep import run_net_rank
    from primus_lang.bench.oracle import ORACLE_KINDS, BenchmarkOracle, make_oracle
    from primus_lang.bench.profile import profile as profile_kernels
    from primus_lang.bench.provenance import facts_of
    from primus_lang.bench.runtime import DeviceInfo, describe, torch
    from primus_lang.bench.space import collect_specs

__getattr__ = lazy_exports(__name__, __file__)

__all__ = ["CPU_CONFIGS", "DEFAULT_DB", "DEFAULT_SIZES", "ENDINGS", "HOST_OOM", "MIN_STEADY", "ORACLE_KINDS", "PRINTING_RANK", "TINY_GPT", "WARMUP", "BenchmarkOracle", "DeviceInfo", "KernelSpec", "Offset", "ProfileDB", "TrainingLog", "backend_of", "bad_value", "better_error", "campaign_files", "candidate_from_log", "collect_specs", "describe", "ending", "error_line", "executable", "exit_unset", "facts_of", "fit_offset", "make_oracle", "markdown", "measure_collectives", "merge_campaigns", "other_model", "parse_log", "past_warmup", "planned_exit", "profile_kernels", "read_log", "run_check", "run_net_rank", "steady", "torch"]
