"""Projection: per-stage operator lists, the simulate oracle, collectives, the pipeline-schedule
simulator, and validation/calibration against published runs."""

import importlib
from typing import TYPE_CHECKING, Any

from primus_lang.project import trust
from primus_lang.project.build import stage_ops
from primus_lang.project.collectives import Links, collective_time, group_layout
from primus_lang.project.ops import (
    Attention,
    Collective,
    Compute,
    Gemm,
    Group,
    GroupedGemm,
    MemoryOp,
    Op,
    Task,
)
from primus_lang.project.oracle import Oracle, SimulateOracle
from primus_lang.project.precision import PrecisionGain, precision_gain
from primus_lang.project.projection import Projection, project
from primus_lang.project.schedule import simulate as simulate_schedule

if TYPE_CHECKING:
    from primus_lang.project.validate import row_result

# Read on first use: validation reads runs files and the language's parser, which a projection
# (and `primusc plan`) never needs.
_LAZY = {"row_result": "primus_lang.project.validate"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Attention",
    "Collective",
    "Compute",
    "Gemm",
    "Group",
    "GroupedGemm",
    "Links",
    "MemoryOp",
    "Op",
    "Oracle",
    "PrecisionGain",
    "Projection",
    "SimulateOracle",
    "Task",
    "collective_time",
    "group_layout",
    "precision_gain",
    "project",
    "row_result",
    "simulate_schedule",
    "stage_ops",
    "trust",
]
