"""P9: internal errors (a bug in primusc, exit code 2)."""

from primus_lang.diagnostics.core import register

INTERNAL = register(
    "P9001",
    "internal-error",
    "primusc hit a bug",
    "Something inside primusc failed. The message names the exception; please report it with the input.",
)
