"""A recipe's settings, keyed by Megatron's argument names, each with where it is written."""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from primus_lang.datafiles import DataCodes
from primus_lang.diagnostics import Diagnostic
from primus_lang.diagnostics.codes_import import RECIPE_UNREADABLE
from primus_lang.ir.span import Span
from primus_lang.recipes.scheduler import Placement

# a recipe file, and a value inside one, is refused with one code whichever limit it passes
CODES = DataCodes(unreadable=RECIPE_UNREADABLE, encoding=RECIPE_UNREADABLE, too_large=RECIPE_UNREADABLE,
                  too_deep=RECIPE_UNREADABLE, too_many_nodes=RECIPE_UNREADABLE, number=RECIPE_UNREADABLE)


@frozen
class Entry:
    """One setting: its value as the recipe writes it (a command line's text, a YAML value)."""

    dest: str
    value: Any
    span: Span | None = field(default=None, eq=False)
    written: str = ""  # how the recipe spells it: `--tensor-model-parallel-size`, `overrides.tensor_...`
    preset: bool = False  # a framework preset's value (Primus's pre_trainer.yaml), not the recipe's own
    # a model preset's value that the launch's own presets would not give (it builds on Primus's generic
    # card): carried through as the recipe's own are, or the launch would run without it
    carry: bool = False


@frozen
class Recipe:
    """What a recipe file says, before interpretation."""

    file: str
    kind: str  # "megatron" | "primus" | "bridge"
    entries: dict[str, Entry]
    nodes: Entry | None = None  # torchrun's --nnodes
    gpus_per_node: Entry | None = None  # torchrun's --nproc-per-node
    card: Entry | None = None  # a Primus experiment's model card; a Bridge recipe's stdlib card
    gpu_hint: str = ""  # a GPU named by the file's folder (Primus: configs/MI300X/...)
    notes: tuple[str, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    version: str = ""  # the framework version its settings were read at (`core_v0.16`, Primus `v26.5`)
    env: tuple[tuple[str, str], ...] = ()  # environment variables the launch script exports
    defaults: tuple[tuple[str, str], ...] = ()  # environment variables read at the script's default (name, default)
    placement: Placement = field(factory=Placement)  # where the script's job runs: its Slurm settings, container, mounts
