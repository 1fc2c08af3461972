"""P8: search, plan output and their files (traces, cassettes, output folders)."""

from primus_lang.diagnostics.core import register

TRACE_INVALID = register(
    "P8001",
    "trace-invalid",
    "the file given to --resume is not a readable search trace",
    "`primusc plan --resume FILE` continues a search from the JSONL trace written by `--trace FILE`. "
    "The file must exist and start with the trace header. Start a new search without --resume.",
)
TRACE_MISMATCH = register(
    "P8002",
    "trace-mismatch",
    "the trace was written by a different search",
    "A trace resumes only the search that wrote it: the same space, strategy, seed, objective and "
    "evaluation budget. Rerun with the options the trace's first line records.",
)
OUT_NOT_EMPTY = register(
    "P8003",
    "output-not-empty",
    "the output folder already has files, or an output file already exists",
    "`primusc plan` and `primusc report` will not mix a new plan with old files or replace a file you\n"
    "have: the --out folder must be empty or new, and a --trace (unless it is the one --resume continues)\n"
    "or --report file must not exist yet. Choose other paths, or pass --force to replace them.",
)
UNKNOWN_STRATEGY = register(
    "P8004",
    "unknown-strategy",
    "no search strategy has this name",
    "Strategies: auto, planner, exhaustive, random, evolutionary, bayes, llm.",
)
NO_FITTING_POINT = register(
    "P8005",
    "nothing-fits",
    "no legal point of the space fits in memory",
    "Every legal recipe of the space exceeds the GPU memory (less the space's headroom). Add recompute, "
    "more pipeline or tensor parallelism, a smaller micro-batch, or a distributed optimizer to the space.",
)
NO_LEGAL_POINT = register(
    "P8006",
    "space-empty",
    "the space has no legal point",
    "The space's constraints and Megatron's legality rules leave no recipe. `primusc check` lists why "
    "points were rejected.",
)
OPTIONAL_MISSING = register(
    "P8007",
    "optional-dependency-missing",
    "a strategy needs an optional dependency that is not installed",
    "`bayes` needs optuna (`pip install primusc[search]`); `llm` needs litellm (`pip install primusc[agent]`).",
)
CASSETTE_INVALID = register(
    "P8008",
    "cassette-invalid",
    "the LLM cassette cannot be read",
    "A cassette is the JSON file of recorded LLM requests and replies written by `--llm-cassette`. "
    "Record it again, or run without --llm-replay.",
)
BAD_BUDGET = register(
    "P8009",
    "bad-budget",
    "the budget is not understood",
    "A budget is a number of evaluations (`--budget 100`), optionally with a time limit (`100,30min`).",
)
