"""Environment presets per vendor and candidate, exported by every launch script before torchrun.

Each value is a default the user can override from the calling environment (the scripts write
``VAR=${VAR:-value}``). ``None`` means the variable is unset on purpose.
"""

from __future__ import annotations

import re

from primus_lang.ir import Candidate, Cluster
from primus_lang.ir.site import Site

# NVIDIA parts of compute capability 10 and later (Blackwell): Megatron no longer needs
# CUDA_DEVICE_MAX_CONNECTIONS=1 there. Matched on the profile's name, as the IR has no architecture.
_BLACKWELL = re.compile(r"^g?b\d{3}", re.IGNORECASE)


def is_blackwell_or_later(cluster: Cluster) -> bool:
    return cluster.gpu.vendor == "nvidia" and bool(_BLACKWELL.match(cluster.gpu.name))


def device_max_connections(cluster: Cluster, cand: Candidate) -> str | None:
    """REFERENCE.md's rule, as Megatron core_v0.16.1 ``validate_args`` enforces it.

    FSDP wants more than one hardware queue (the Megatron-FSDP guide unsets the variable); TP or CP
    before Blackwell must serialize kernel launches so communication overlaps in order (asserted).
    """
    if cand.sharding == "fsdp":
        return None
    if (cand.tp > 1 or cand.cp > 1) and not is_blackwell_or_later(cluster):
        return "1"
    return None


def environment(cluster: Cluster, cand: Candidate, site: Site | None = None) -> tuple[tuple[str, str | None], ...]:
    """Ordered (name, value) pairs; value None means ``unset``. A site's values come after the
    presets and replace those of the same name (its network settings know the fabric)."""
    env: list[tuple[str, str | None]] = [("CUDA_DEVICE_MAX_CONNECTIONS", device_max_connections(cluster, cand))]
    if cluster.gpu.vendor == "amd":
        # RCCL reads the NCCL_* names. Values from AMD Primus runner/helpers/envs/perf_tuning.sh.
        env += [
            ("GPU_MAX_HW_QUEUES", "2"),
            ("HSA_ENABLE_SDMA", "1"),
            ("TORCH_NCCL_HIGH_PRIORITY", "1"),
            ("NCCL_PXN_DISABLE", "1"),
        ]
    else:
        env += [("TORCH_NCCL_HIGH_PRIORITY", "1")]
    if cand.precision == "fp8" and cand.fp8_recipe == "mxfp8":
        # Transformer Engine on ROCm runs MXFP8 only with it, and Primus asserts it for the recipe on any GPU
        # (primus/backends/megatron/patches/args/rocm_arg_validation.py); CUDA's Transformer Engine ignores it
        env += [("NVTE_ROCM_ENABLE_MXFP8", "1")]
    if site is not None:
        own = dict(site.values())
        env = [(name, value) for name, value in env if name not in own] + list(own.items())
    return tuple(env)


def collective_library(cluster: Cluster) -> str:
    return "RCCL" if cluster.gpu.vendor == "amd" else "NCCL"
