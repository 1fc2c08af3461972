"""The stdlib's model cards, every one, for the stages that match a model to a card by its fields
(emission's Bridge recipes, import-recipe's card by name or shape)."""

from __future__ import annotations

import functools

from primus_lang.ir.model import Model
from primus_lang.lower.load import load_program
from primus_lang.resources import data_dir


@functools.cache
def stdlib_cards() -> dict[str, tuple[str, Model]]:
    """name -> (stdlib module, card), for every card of stdlib/models/ (the first file to define a
    name keeps it). Cached: the stdlib is read-only data of the installation."""
    out: dict[str, tuple[str, Model]] = {}
    for path in sorted((data_dir("stdlib") / "models").glob("*.prx")):
        for model in load_program(path).models:
            out.setdefault(model.name, (f"models.{path.stem}", model))
    return out
