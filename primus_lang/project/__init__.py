"""Projection: per-stage operator lists, the simulate oracle, collectives, the pipeline-schedule
simulator, and a recipe in BF16 beside its low precision."""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports
from primus_lang.project.batch import project_many, step_floors
from primus_lang.project.build import ops_key, stage_ops
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
from primus_lang.project.precision import twins as precision_twins
from primus_lang.project.projection import Projection, project, step_floor, step_model_flops
from primus_lang.project.schedule import simulate as simulate_schedule

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
    "ops_key",
    "precision_gain",
    "precision_twins",
    "project",
    "project_many",
    "simulate_schedule",
    "stage_ops",
    "step_floor",
    "step_floors",
    "step_model_flops",
]


# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.project.features import feature_warnings
    from primus_lang.project.precision import precision_label

__getattr__ = lazy_exports(__name__, __file__)

__all__ += ["feature_warnings", "precision_label"]
