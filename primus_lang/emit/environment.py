"""Environment presets per vendor and candidate, exported by every launch script before torchrun.

Each value is a default the user can override from the calling environment (the scripts write
``VAR=${VAR:-value}``), but ``CUDA_DEVICE_MAX_CONNECTIONS=1`` where Megatron requires it. ``None``
means the variable is unset on purpose; a variable nothing requires is left to the environment.
"""

from __future__ import annotations

import re

from primus_lang.ir import Candidate, Cluster
from primus_lang.ir.site import Site

# NVIDIA parts of compute capability 10 and later (Blackwell): Megatron no longer needs
# CUDA_DEVICE_MAX_CONNECTIONS=1 there. Read from the profile's architecture, else its name.
_BLACKWELL = re.compile(r"^g?b\d{3}", re.IGNORECASE)
# compute capability 10 and later; any other architecture a profile names (ampere, hopper, ada, ...) is before
_BLACKWELL_OR_LATER = ("blackwell", "rubin")


def is_blackwell_or_later(cluster: Cluster) -> bool:
    gpu = cluster.gpu
    if gpu.vendor != "nvidia":
        return False
    if gpu.arch:
        return gpu.arch in _BLACKWELL_OR_LATER
    return bool(_BLACKWELL.match(gpu.name))


def device_max_connections(cluster: Cluster, cand: Candidate) -> str | bool | None:
    """REFERENCE.md's rule, as Megatron core_v0.16.1 ``validate_args`` enforces it: the value, None to
    unset it, False where nothing requires one.

    FSDP wants more than one hardware queue (asserted; the Megatron-FSDP guide unsets the variable, and
    Primus sets 8 itself); TP or CP before Blackwell must serialize kernel launches so communication
    overlaps in order (asserted). Elsewhere the caller's value stands: an unset there had thrown a
    user's own away, and on the primus target Primus then sets 1 as its own launcher does."""
    if cand.sharding == "fsdp":
        return None
    if (cand.tp > 1 or cand.cp > 1) and not is_blackwell_or_later(cluster):
        return "1"
    if cand.ep_comm_overlap:
        # the expert all-to-all overlap wants more than one queue (Megatron's MoE guide): CUDA's default, written
        # (an unset one Primus sets to 1) and overridable from the environment; DeepEP's dispatcher and
        # Blackwell take 32, as Megatron-Bridge v0.6's performance launcher sets them
        # (scripts/performance/utils/overrides.py, and its DeepSeek-V3 performance recipes)
        deep = cand.moe_dispatcher == "flex" and cluster.gpu.vendor == "nvidia"
        return "32" if deep or is_blackwell_or_later(cluster) else "8"
    return False


# AMD presets: Primus v26.5.1 runner/helpers/envs/base_env.sh, which its own launcher exports before
# every run (RCCL reads the NCCL_* names); the runs measured through it had them. Scratch reclaim off:
# "Must disable scratch reclaim to avoid MoE training crash on AMD GPUs" (its comment).
# Its RCCL network settings too: RoCE's GID index (3, RoCE v2 over IPv4), no cross-NIC rings, RCCL's own checks
# and MSCCL/MSCCL++ off "for better stability" (its comment); the interfaces (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) it
# detects per host are left to RCCL's own detection.
_AMD = (("GPU_MAX_HW_QUEUES", "2"), ("HSA_ENABLE_SDMA", "1"), ("HSA_NO_SCRATCH_RECLAIM", "1"),
        ("TORCH_NCCL_HIGH_PRIORITY", "1"), ("NCCL_PXN_DISABLE", "1"), ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
        ("NCCL_CHECKS_DISABLE", "1"), ("NCCL_IB_GID_INDEX", "3"), ("NCCL_CROSS_NIC", "0"),
        ("RCCL_MSCCL_ENABLE", "0"), ("RCCL_MSCCLPP_ENABLE", "0"),
        ("NVTE_USE_CAST_TRANSPOSE_TRITON", "1"), ("NVTE_CK_USES_BWD_V3", "1"))


# deterministic mode's environment, as Megatron-LM core_v0.19 sets it by default (megatron/training/determinism.py,
# DETERMINISM_ENV_VAR_DEFAULTS); earlier releases and Megatron-Bridge v0.6 assert NCCL_ALGO at start instead
# (`NCCL_ALGO must be one of ...`), and Bridge's own `--deterministic` exports the same three
_DETERMINISTIC = (("NCCL_ALGO", "Ring"), ("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0"),
                  ("CUBLAS_WORKSPACE_CONFIG", ":4096:8"))
# the settings that turn it on, as a space's passthrough holds them (Megatron-LM's, Megatron-Bridge's)
DETERMINISTIC_SETTINGS = ("deterministic_mode", "bridge__model__deterministic_mode")


def environment(cluster: Cluster, cand: Candidate, site: Site | None = None,
                deterministic: bool = False) -> tuple[tuple[str, str | None], ...]:
    """Ordered (name, value) pairs; value None means ``unset``. A site's values come after the
    presets and replace those of the same name (its network settings know the fabric).
    ``deterministic``: the recipe runs in deterministic mode, whose checks read the environment."""
    connections = device_max_connections(cluster, cand)
    env: list[tuple[str, str | None]] = [] if connections is False else \
        [("CUDA_DEVICE_MAX_CONNECTIONS", connections if isinstance(connections, str) else None)]
    if cluster.gpu.vendor == "amd":
        env += list(_AMD)
        if cand.moe_dispatcher == "flex":  # Primus Turbo's DeepEP, AMD's flex dispatcher
            env += [("PRIMUS_TURBO_DEEPEP_TIMEOUT", "600")]
    else:
        env += [("TORCH_NCCL_HIGH_PRIORITY", "1")]
    if cand.precision == "fp8" and cand.fp8_recipe == "mxfp8":
        # Transformer Engine on ROCm runs MXFP8 only with it, and Primus asserts it for the recipe on any GPU
        # (primus/backends/megatron/patches/args/rocm_arg_validation.py); CUDA's Transformer Engine ignores it
        env += [("NVTE_ROCM_ENABLE_MXFP8", "1")]
    if deterministic:
        env += list(_DETERMINISTIC)
    if site is not None:
        own = dict(site.values())
        env = [(name, value) for name, value in env if name not in own] + list(own.items())
    return tuple(env)


def collective_library(cluster: Cluster) -> str:
    return "RCCL" if cluster.gpu.vendor == "amd" else "NCCL"
