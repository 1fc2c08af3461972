"""P60xx: the projection stage (project, validate, calibrate)."""

from primus_lang.diagnostics.core import register

RUNS_FILE = register(
    "P6001",
    "runs-file",
    "the runs file cannot be read or is not a list of published runs",
    "`--runs` takes a YAML file with the schema of validation/published_runs.yaml: a list of rows with\n"
    "`id`, `model_card`, `hardware.gpu`, `num_gpus`, `parallel`, `mbs`, `gbs`, `seq_len`, `precision` and\n"
    "`measured.tokens_per_sec_per_gpu`. Models missing from the stdlib are read from a\n"
    "`model_cards.yaml` beside it.",
)
NO_RUNS = register(
    "P6002",
    "no-projectable-runs",
    "no row of the runs file can be projected",
    "Every row was skipped (unknown model or GPU, unsupported feature, incomplete layout).\n"
    "`primusc validate --runs FILE --json` lists the reason for each row.",
)
BAD_POINT = register(
    "P6003",
    "bad-point",
    "the `--point` does not name a legal point of the space",
    "`--point` takes knob assignments such as `tp=4,pp=2,mbs=1`; the other knobs take the space's fixed\n"
    "values or defaults. The point must pass the space's legality rules and constraints.",
)
NO_LEGAL = register(
    "P6004",
    "nothing-to-project",
    "the space has no legal point to project",
    "Every point of the space breaks a legality rule or a `require`. `primusc check FILE` shows which\n"
    "rules remove them.",
)
BAD_FOLDS = register(
    "P6005",
    "bad-folds",
    "`--folds` must be at least 2",
    "Cross-validation holds out one fold at a time and fits on the rest: it needs two folds or more.",
)
NO_ROW = register(
    "P6006",
    "no-such-row",
    "`--row` names no row of the runs file",
    "`primusc validate --runs FILE --row ID` explains the rows whose `id` is ID; the ids are the first\n"
    "column of `primusc validate --runs FILE`.",
)
OUTSIDE_SPACE = register(
    "W6001",
    "point-outside-space",
    "a `--point` sets a knob to a value the space does not search",
    "The value is not among its axis's values, or differs from the space's fixed value. The point is\n"
    "still explained, projected or emitted (what a nearby recipe would do is a fair question), but no\n"
    "search of the space would reach it; widen the axis to search it.",
)
