"""Which Megatron-LM settings the importer models (turns into the model card, a knob or the cluster), and
torchrun's own options. Whether a flag exists and what it takes is the version's own parser's answer
(``frameworks.megatron``); every setting a version has that is not modelled here is carried through.

Every name is the flag without ``--``, dashes as underscores (``setting_name``).
"""

from __future__ import annotations

from primus_lang.emit import CARD_ARGUMENTS, MLA_ARGUMENTS, MLA_SWITCH
from primus_lang.frameworks import spelling

# A Mamba-2 hybrid's layers and mixer: the pattern (Megatron-LM's name, then the newer one) and the rest
HYBRID_PATTERNS = ("hybrid_override_pattern", "hybrid_layer_pattern")
MAMBA_SETTINGS = ("mamba_num_heads", "mamba_head_dim", "mamba_state_dim", "mamba_num_groups")
HYBRID_SWITCH = "is_hybrid_model"

# What the importer turns into the model card, a knob or the cluster: every setting frameworks.spelling
# names, but those whose own value a recipe keeps (carried through), and the card features emission writes
MODELLED: frozenset[str] = frozenset({
    *spelling.KNOBS.values(), *spelling.CARD.values(),
    *(name for part, name in spelling.PARTS.items() if part not in spelling.CARRIED_PARTS),
    *(a.dest for a in (*CARD_ARGUMENTS.values(), *MLA_ARGUMENTS.values())), MLA_SWITCH,
    *HYBRID_PATTERNS, *MAMBA_SETTINGS, HYBRID_SWITCH,
})


def setting_name(option: str) -> str:
    """A flag's name in primusc's settings (a recipe's entries, a space's passthrough): the option without
    its dashes, with underscores (``--fp8-format`` is ``fp8_format``)."""
    return option.lstrip("-").replace("-", "_")


# torchrun's own options, read for the cluster's shape or ignored (they do not reach Megatron)
LAUNCHER_VALUES = frozenset({
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend", "rdzv_endpoint",
    "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "log_dir", "redirects", "tee",
    "local_addr", "start_method", "role", "local_ranks_filter", "logs_specs",
    "container_image", "container_mounts",  # srun's (pyxis), before the program it runs
})
LAUNCHER_SWITCHES = frozenset({"standalone", "no_python", "run_path", "module", "m"})
LAUNCHERS = frozenset({"torchrun", "python", "python3", "torch.distributed.run", "torch.distributed.launch",
                       "-m", "env", "exec", "srun"})
