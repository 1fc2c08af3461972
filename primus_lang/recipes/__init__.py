"""`primusc import-recipe`: a launch recipe people run today, read into a space.

``words`` splits a command line into words with their positions (never running it), ``megatron``
and ``primus`` turn a command line or a Primus experiment into ``Setting``s keyed by Megatron's
argument names, ``interpret`` turns those into a model, a baseline candidate, the cluster and
the settings carried through unchanged, and ``render`` writes the space.
"""

from primus_lang.recipes.interpret import Imported, interpret
from primus_lang.recipes.read import ReadOptions, read_recipe
from primus_lang.recipes.render import render_space

__all__ = ["Imported", "ReadOptions", "interpret", "read_recipe", "render_space"]
