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
