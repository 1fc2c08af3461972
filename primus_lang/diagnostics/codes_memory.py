"""P5: memory legality."""

from primus_lang.diagnostics.core import register

OUT_OF_MEMORY = register(
    "P5001",
    "out-of-memory",
    "a candidate needs more GPU memory than its rank has",
    "The exact per-rank account of the candidate exceeds the GPU's HBM capacity less the space's headroom "
    "(`fits memory headroom 5%`). The message names the fullest pipeline stage, the bytes over and the "
    "three largest terms; `primusc check FILE --explain --point ...` prints every term. Fix it with more "
    "recomputation, more TP or PP, a smaller micro-batch, or FSDP.",
)
RECIPE_OVER_MEMORY = register(
    "W5002",
    "recipe-over-memory",
    "the space's own recipe needs more memory than its rank has, by primusc's account",
    "The space's `baseline` is the recipe it was imported from: a run someone launched. When the account\n"
    "says it does not fit, `import-recipe` says so as it writes the space (on the node count the recipe\n"
    "gives, or, where it gives none, the legal count closest to fitting), `emit --point baseline` still\n"
    "writes its launch files and `project --point baseline` still projects it, and each says so here,\n"
    "since a recipe that runs as it is means the account overcounts it (`primusc check FILE --explain\n"
    "--point baseline` lists its terms). Any other point that does not fit is refused (P5001), and so is\n"
    "the recipe launched with `--target` for another framework than the space's own: no one ran it that\n"
    "way (torch FSDP2 and Megatron-FSDP hold different bytes).",
)
