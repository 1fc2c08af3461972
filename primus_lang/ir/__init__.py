"""The typed intermediate representation: frozen attrs classes, SI units, integer bytes."""

from primus_lang.ir.candidate import KNOBS, Candidate, Recompute
from primus_lang.ir.expr import Expr
from primus_lang.ir.hardware import Cluster, Efficiency, Gpu, Provenance, provenance_items
from primus_lang.ir.model import Mamba, Mla, Model, Moe
from primus_lang.ir.run import Run
from primus_lang.ir.site import EnvVar, Mount, Site
from primus_lang.ir.space import (
    Axis,
    Budget,
    Constraint,
    Domain,
    Let,
    MemoryRule,
    Objective,
    Program,
    Settings,
    Space,
    Value,
    cluster_points,
)
from primus_lang.ir.span import Span

__all__ = [
    "KNOBS",
    "Axis",
    "Budget",
    "Candidate",
    "Cluster",
    "Constraint",
    "Domain",
    "Efficiency",
    "EnvVar",
    "Expr",
    "Gpu",
    "Let",
    "Mamba",
    "MemoryRule",
    "Mla",
    "Model",
    "Moe",
    "Mount",
    "Objective",
    "Program",
    "Provenance",
    "Recompute",
    "Run",
    "Settings",
    "Site",
    "Space",
    "Span",
    "Value",
    "cluster_points",
    "provenance_items",
]
