"""Projection: per-stage operator lists, the simulate oracle, collectives, the pipeline-schedule
simulator, and validation/calibration against published runs."""

from primus_lang.project.build import stage_ops
from primus_lang.project.oracle import Oracle, SimulateOracle
from primus_lang.project.projection import Projection, project

__all__ = ["Oracle", "Projection", "SimulateOracle", "project", "stage_ops"]
