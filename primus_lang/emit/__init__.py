"""Emission: a chosen candidate to runnable launch files (Megatron-LM, Primus or Megatron-Bridge ×
Slurm, k8s, local). Besides ``emit``, the package's tables of what each framework's launch states
(a card's Megatron arguments, Bridge's field paths and recorded recipes) are public: import-recipe
reads a launch back through the same tables."""

from typing import TYPE_CHECKING

from primus_lang.emit.arguments import (
    ATTENTION_OF_BACKEND,
    CARD_ARGUMENTS,
    CUDA_GRAPH_SETTINGS,
    MEGATRON_ROPE_SCALING,
    MLA_ARGUMENTS,
    MLA_SWITCH,
    NORMS,
    POSITIONS,
)
from primus_lang.emit.bridge import (
    BRIDGE_MODELS,
    PRECISION_KNOBS,
    RECIPE_KEY,
    dest_of,
    negated_dest_of,
    passthrough_key,
    paths,
    precision_settings,
    recorded_fields,
    unmodelled_precision,
)
from primus_lang.emit.bridge_recipes import (
    DTYPES,
    LAUNCHERS,
    PERF_EFFECTS,
    PERF_LAUNCH_GROUPS,
    PERF_LAUNCH_ONLY,
    PRECISION_SECTIONS,
    BridgeRecipe,
    after_precision,
    precision_fields,
    recipes,
)
from primus_lang.emit.context import VARIABLES, EmitContext, Variables, resolve_variables
from primus_lang.emit.emitter import (
    MANIFEST,
    TARGETS,
    check_target,
    emit,
    emitted_names,
    left_out,
    parse_target,
    target_warnings,
    time_warnings,
    tokenizer_warnings,
    unsupported,
)
from primus_lang.emit.templating import render as render_template
from primus_lang.exports import lazy_exports

__all__ = [
    "ATTENTION_OF_BACKEND",
    "BRIDGE_MODELS",
    "CARD_ARGUMENTS",
    "CUDA_GRAPH_SETTINGS",
    "DTYPES",
    "LAUNCHERS",
    "MANIFEST",
    "MEGATRON_ROPE_SCALING",
    "MLA_ARGUMENTS",
    "MLA_SWITCH",
    "NORMS",
    "PERF_EFFECTS",
    "PERF_LAUNCH_GROUPS",
    "PERF_LAUNCH_ONLY",
    "POSITIONS",
    "PRECISION_KNOBS",
    "PRECISION_SECTIONS",
    "RECIPE_KEY",
    "TARGETS",
    "VARIABLES",
    "BridgeRecipe",
    "EmitContext",
    "Variables",
    "after_precision",
    "check_target",
    "dest_of",
    "emit",
    "emitted_names",
    "left_out",
    "negated_dest_of",
    "parse_target",
    "passthrough_key",
    "paths",
    "precision_fields",
    "precision_settings",
    "recipes",
    "recorded_fields",
    "render_template",
    "resolve_variables",
    "target_warnings",
    "time_warnings",
    "tokenizer_warnings",
    "unmodelled_precision",
    "unsupported",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.emit.campaign import (
        FIRST_RANK_LOG,
        FOLDER,
        FORMAT,
        START_UP_S,
        Job,
        campaign_variables,
        file_names,
    )
    from primus_lang.emit.campaign import campaign as campaign_files
    from primus_lang.emit.coverage import Inexpressible, inexpressible
    from primus_lang.emit.emitter import refuse_illegal
    from primus_lang.emit.launch_choice import Launch, launchable
    from primus_lang.emit.sites import slurm_seconds, slurm_time

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["FIRST_RANK_LOG", "FOLDER", "FORMAT", "START_UP_S", "Inexpressible", "Job", "Launch", "campaign_files", "campaign_variables", "file_names", "inexpressible", "launchable", "refuse_illegal", "slurm_seconds", "slurm_time"]
