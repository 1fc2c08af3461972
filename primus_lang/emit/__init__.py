"""Emission: a chosen candidate to runnable launch files (Megatron-LM or Primus × Slurm, k8s, local)."""

from primus_lang.emit.arguments import CUDA_GRAPH_SETTINGS
from primus_lang.emit.context import VARIABLES, EmitContext, Variables, resolve_variables
from primus_lang.emit.emitter import (
    MANIFEST,
    TARGETS,
    check_target,
    emit,
    emitted_names,
    parse_target,
    target_warnings,
    unsupported,
)
from primus_lang.emit.templating import render as render_template

__all__ = ["CUDA_GRAPH_SETTINGS", "MANIFEST", "TARGETS", "VARIABLES", "EmitContext", "Variables", "check_target", "emit", "emitted_names",
           "parse_target", "render_template", "resolve_variables", "target_warnings", "unsupported"]
