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
# P6004 (nothing-to-project) is retired: a space with no legal point is P8006 wherever the search
# stage refuses it, and `primusc check` says which rules empty it (P4099 or the rule's own code).
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
SPEC_SHEET = register(
    "W6002",
    "unfitted-profile",
    "the space projects on a GPU profile whose efficiencies were never fitted to measured runs",
    "A spec-sheet profile (peaks and bandwidths from the data sheet, default efficiencies) projects\n"
    "near the hardware's peak: on the published runs its projections were about 50% optimistic, and\n"
    "its band (printed with every projection) is wide. The plain stdlib names (`h200`, `mi355x`, ...)\n"
    "are the best-informed profiles primusc has; `_spec` names the raw sheet. Build the cluster on a\n"
    "fitted profile, or fit your own: `primusc calibrate --runs my_runs.yaml --out site.prx`.",
)
IMPLAUSIBLE = register(
    "W6003",
    "implausible-projection",
    "a projection uses more of the GPU than any published run measured",
    "Model FLOP utilisation above 65% of the dense peak in the GEMMs' dtype is 12 points above the best\n"
    "of the 204 published runs primusc is validated on (52.9%, Llama 3.1 405B in FP8 on GB300). Such a\n"
    "figure says the profile's efficiencies are too high (a spec sheet, or a hand-edited profile), not\n"
    "that the recipe is that good. Project on a fitted profile, or measure the recipe.",
)
BEYOND_EVIDENCE = register(
    "W6012",
    "beyond-evidence",
    "a projection lies beyond the runs its GPU profile was fitted on",
    "A calibrated profile records what the runs it was fitted on were: the longest sequence, the most\n"
    "GPUs, the model architectures (dense, moe, hybrid), the GEMM precisions (per-tensor FP8 apart from\n"
    "MXFP8, blockwise and rowwise), and the training software (megatron-core for Megatron-LM, NeMo, Megatron-Bridge and\n"
    "Primus; torchtitan; ...). A candidate beyond them (sequence 65,536 on a profile that saw 8,192, a\n"
    "MoE model on a profile fitted on dense ones, MXFP8 where its runs were BF16 and per-tensor FP8) is\n"
    "a kind of run its band was never measured on. Its band becomes the wider of its own and the `far`\n"
    "band of the profile's provenance: the errors of each source's runs projected by fits on the other\n"
    "sources, what a kind of run no fit saw measured. Runs of 32k-64k tokens outside the corpus have\n"
    "measured slower still. Measure one such run and fit it\n"
    "(`primusc calibrate --runs my_runs.yaml --out site.prx`) to narrow it.",
)
RUNS_ROW_MALFORMED = register(
    "W6011",
    "runs-row-malformed",
    "a row of the runs file has a field of the wrong type or outside what a run can have; it is skipped",
    "Each row of `--runs` is read on its own, so one bad row does not stop a file of good ones: a\n"
    "degree that is `true` or `2.5`, a `parallel` that is not a mapping, a measurement that is not a\n"
    "positive number, a field no row has (`parallell`: the row would be read without its layout), a\n"
    "row without an `id` or with another row's, a measurement whose model FLOPs exceed the GPU's peak\n"
    "for its precision or fall under 0.5% of it (a step time in ms, a whole job's tokens). The row is\n"
    "left out of the table and of any fit, and this warning names it and the field.",
)
RUNS_ROW_SKIPPED = register(
    "W6013",
    "runs-row-skipped",
    "a row of the runs file is skipped: primusc cannot project it",
    "A row of your `--runs` file that is well formed but cannot be projected: a GPU or model primusc\n"
    "has no profile or card for, a layout that does not add up (GPUs not divisible by TP x PP x CP, a\n"
    "`dp` or `num_nodes` that disagrees with them, a batch MBS x DP does not divide), a precision the\n"
    "GPU lacks. It is left out of the table and of any fit; the warning says why, so that a file of\n"
    "your own runs never loses one silently (`--json` lists every row's reason too).",
)
SITE_FIT_WORSE = register(
    "W6014",
    "site-fit-worse",
    "a fit on your runs alone projects or orders them worse held out than the shipped profile",
    "`calibrate --runs FILE` without `--with-bundled` refits the shipped profiles on your rows alone.\n"
    "With few rows that fit can follow each row's noise: its cross-validated error (each row projected\n"
    "by a fit that never saw it) then exceeds the error of the shipped profile on the same rows, which\n"
    "no row of yours moved. The profile it writes would project your next run worse than the one you\n"
    "have. A fit can also come nearer in level and still order a group of your runs (one model, GPU and\n"
    "precision) worse than the shipped profile did, by a Spearman 0.2 lower: a search ranks candidates by\n"
    "that order. Keep the shipped profile, add runs, or fit your rows beside the published corpus\n"
    "(`--with-bundled`), which keeps what your rows cannot identify.",
)
DISPATCHER_GAIN = register(
    "W6015",
    "dispatcher-gain-not-projected",
    "candidates that differ by MoE dispatcher are compared with only part of the flex dispatcher's measured gain",
    "primusc prices the flex dispatcher (DeepEP, HybridEP) by what it saves: the traffic where the expert\n"
    "group crosses scale-up domains, and what megatron-core's all-to-all dispatcher does beyond it (a\n"
    "second permutation each way by local expert, the token counts gathered and the routing\n"
    "probabilities sent by collectives of their own). What DeepEP does beyond that is not priced: its\n"
    "transfer kernels, and the dispatch indices computed on the GPU with fewer host synchronizations.\n"
    "Measured inside one MI355X node (Primus's MoE package, validation/sweeps.yaml\n"
    "`primus_dsv2*_features_mi355x`), DeepEP ran 10.7-13.0% faster than the all-to-all, where primusc\n"
    "projects 3-4% on those runs (less where a rank holds few experts: Mixtral's 8 over EP 2, under 1%;\n"
    "nothing with one expert a rank). Measure the two on your cluster (`primusc calibrate --runs`) or\n"
    "choose the dispatcher yourself.",
)
RUNS_FILE_TOO_LARGE = register(
    "P6007",
    "runs-file-too-large",
    "the runs or model-cards file is larger than primusc reads",
    "Data files are read up to 16 MiB and no further (the published-runs corpus is under 0.5 MiB), so a\n"
    "wrong path such as `/dev/zero` or a multi-gigabyte file is refused at once instead of filling\n"
    "memory. Check the path; split a larger corpus into several runs files.",
)
RUNS_FILE_TOO_MANY_VALUES = register(
    "P6008",
    "runs-file-too-many-values",
    "the runs or model-cards file holds more values than primusc reads, counting each alias in full",
    "A YAML alias (`*a`) repeats everything its anchor (`&a`) holds, so nine short lines of aliases of\n"
    "aliases name a billion values: a file that loads quickly but that no code can walk or print. The\n"
    "loader counts the values with every alias expanded and stops at 250,000 (the corpus has 27,000),\n"
    "and refuses an alias that sits inside its own anchor.\n\n"
    "    a: &a [x, x, x, x, x, x, x, x, x]\n"
    "    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]    # and so on: refused\n\n"
    "Fix: write the values out, or split the file.",
)
RUNS_FILE_TOO_DEEP = register(
    "P6009",
    "runs-file-too-deep",
    "the runs or model-cards file nests more than 64 levels deep",
    "A runs file nests four levels (a list of rows, a row, its `parallel` or `measured` mapping, a\n"
    "list inside it). Deeper nesting is refused before the YAML parser, which recurses, runs out of\n"
    "stack. Check how the file was generated.",
)
RUNS_FILE_ENCODING = register(
    "P6010",
    "runs-file-not-utf8",
    "the runs or model-cards file is not UTF-8 text",
    "YAML data files are read as UTF-8. The message gives the offset of the first byte that is not;\n"
    "save the file as UTF-8 (most editors and `iconv -t UTF-8` can).",
)
RUNS_FILE_NUMBER = register(
    "P6011",
    "runs-file-number-too-long",
    "the runs or model-cards file holds an integer of more than 100 digits",
    "No field of a runs file or model card needs a number that long, and Python refuses to convert\n"
    "integers of more than 4,300 digits. Fix the value the diagnostic points at. (Numbers that read\n"
    "but are out of range, such as `gbs: 1.0e+308`, skip their row with the reason instead.)",
)
LOG_VALUE = register(
    "P6012",
    "log-bad-value",
    "a training log holds a value that cannot be a step time or a recipe",
    "`primusc calibrate-log` reads each logged iteration's `elapsed time per iteration (ms)` and the\n"
    "recipe from Megatron's arguments block (`tensor_model_parallel_size`, `micro_batch_size`, ...).\n"
    "A step time must be a finite number above 0, a parallel degree or batch size a whole number of\n"
    "ASCII digits from 1 up, and the recipe must be one the space's model can run (a pipeline size\n"
    "that divides its layers, a TP that divides its heads). The diagnostic names the line; fix or\n"
    "drop that log.",
)
LOG_TOO_LARGE = register(
    "P6013",
    "log-too-large",
    "the training log is longer than primusc reads",
    "`primusc calibrate-log` reads a log line by line up to 256 MiB (a million logged iterations), so a\n"
    "wrong path such as `/dev/zero` ends in this diagnostic instead of reading forever. Pass a shorter\n"
    "log: the arguments block and the iteration lines are all it reads, e.g.\n"
    "`grep -E 'iteration|\\.\\.\\.\\.|-- (end of )?arguments --' train.log > short.log` (the block's marker\n"
    "lines say where the arguments are).",
)
LOG_OTHER_MODEL = register(
    "P6014",
    "log-other-model",
    "the training log ran another model or cluster than the space",
    "A log's arguments block says the model's shape (`num_layers`, `hidden_size`,\n"
    "`num_attention_heads`) and how many GPUs ran it (`world_size`). `primusc calibrate-log` projects\n"
    "the log's recipe on the space's model and cluster; if the log trained another model, or on\n"
    "another number of GPUs, the factor would compare two different runs. Pass the space of the\n"
    "log's model and cluster (`primusc import-recipe` writes one from the run's recipe).",
)
CAMPAIGN_LOG_MISSING = register(
    "P6020",
    "campaign-log-missing",
    "a campaign job's log is not where the manifest says",
    "Each job of a campaign writes its output to `job-<i>/train.log` (the Slurm array's `--output`,\n"
    "or the redirection in `campaign.sh`). A missing file means the job never ran, is still queued,\n"
    "or its output went elsewhere (a site `--output` override, `kubectl logs` that failed). Run the job\n"
    "(`sbatch --array=<i> campaign.sbatch`), copy its log there, or pass `--partial` to learn from\n"
    "the jobs that did run.",
)
CAMPAIGN_LOG_SHORT = register(
    "P6021",
    "campaign-log-short",
    "a campaign job's log has too few steady iterations to measure",
    "`primusc learn` measures a job by the median time of its logged iterations after warm-up: the\n"
    "first `--warmup` iterations of the run, and again of every restart (an iteration number that\n"
    "goes back), are left out, as are iterations Megatron reports as skipped or NaN and a last line\n"
    "the log cut off. Fewer than 3 left means the job died early (out of memory, a time limit, a\n"
    "crash before training) or was logged with a large `log_interval`. Read the log's end for the\n"
    "cause, rerun that job, or pass `--partial` to learn from the others.",
)
CAMPAIGN_LOG_RECIPE = register(
    "P6022",
    "campaign-log-recipe",
    "a campaign job's log ran another recipe than the manifest's candidate",
    "A log's arguments block (`tensor_model_parallel_size ..... 2`) says what the job ran. When it\n"
    "disagrees with the candidate the manifest assigns to that job (TP 4, say), the logs were mixed\n"
    "up between job folders, or the job was launched by hand with other settings; learning from it\n"
    "would credit one layout with another's speed. Put each log in its job's folder, or rerun it.",
)
CAMPAIGN_SPACE = register(
    "P6023",
    "campaign-space-mismatch",
    "the space given to `primusc learn` has another model or cluster than the campaign",
    "A campaign's jobs are projected again on the space's model and cluster to compare them with\n"
    "their measurements. If the space file now names another model, or a cluster of another size,\n"
    "the comparison would be between different runs. Pass the space the campaign was planned from\n"
    "(`--space FILE`, `--space-name NAME`); a space that only imports the learned profile is fine.",
)
NOTHING_TO_LEARN = register(
    "P6024",
    "campaign-nothing-to-learn",
    "no job of the campaign left a log to learn from",
    "With `--partial`, jobs whose logs are missing or unusable are left out; when that leaves none,\n"
    "there is nothing to fit. Run the campaign first (`sbatch campaign.sbatch` or `bash\n"
    "campaign.sh`), and check a job's `train.log` for why it stopped.",
)
BAD_PROFILE_NAME = register(
    "P6025",
    "bad-profile-name",
    "the site profile's name is not a name the language accepts",
    "`primusc learn --name NAME` names the GPU profile it writes (`gpu NAME = h200 { ... }`), which a\n"
    "space then uses as `gpu = NAME`. It must be an identifier (a letter or `_`, then letters,\n"
    "digits and `_`) and differ from the profile it starts from. For example `--name h200_site`.",
)
RUNS_DUPLICATE = register(
    "P6030",
    "runs-duplicate-id",
    "a row of the runs file has the id of a row of the bundled corpus",
    "`--with-bundled` adds the bundled corpus's rows to those of `--runs`, and row ids name a row in\n"
    "`--row ID`, in `--json` and in the cross-validation's folds, so each must be unique over both.\n"
    "Rename your row (a prefix of your own, `site_001`), or drop `--with-bundled` if your file\n"
    "already holds the corpus's rows.",
)
NO_CORPUS = register(
    "P6031",
    "no-bundled-corpus",
    "this installation of primusc has no bundled validation corpus",
    "Without `--runs`, `validate` and `calibrate` read the published runs that ship with primusc\n"
    "(`validation/` in a checkout, `primus_lang/_data/validation` in an installed wheel). This\n"
    "installation lacks them (a package built without its data); reinstall primusc, or give a runs\n"
    "file with `--runs FILE`.",
)
SWEEPS_FILE = register(
    "P6040",
    "sweeps-file",
    "the sweeps file cannot be read or is not a file of controlled sweeps",
    "`primusc validate --sweeps FILE` takes a YAML file with the schema of validation/sweeps.yaml\n"
    "(validation/sweeps.md): `schema: 1`, an optional `models` mapping of model cards, and `sweeps`, a\n"
    "list of sweeps, each with an `id`, a `base` (a published run without its measurement), a\n"
    "`metric` and `variants` (each an `id`, the `set` it changes on the base, and its `measured`\n"
    "value). The message says which part is missing or has the wrong shape.",
)
SWEEPS_SCHEMA = register(
    "P6041",
    "sweeps-schema-version",
    "the sweeps file is written for a schema version this primusc does not read",
    "A sweeps file starts with `schema: N`. This primusc reads schema 1; a file written for a later\n"
    "schema may hold fields whose meaning it would silently miss, so it is refused. Upgrade primusc,\n"
    "or rewrite the file to schema 1 (validation/sweeps.md describes it).",
)
SWEEPS_DUPLICATE = register(
    "P6042",
    "sweeps-duplicate-id",
    "two sweeps, or two variants of one sweep, share an id",
    "Sweep ids name a sweep in the report and in `--sweep ID`, and variant ids name a variant inside\n"
    "its sweep; a repeated id would make a report line ambiguous. Rename one of them.",
)
NO_SWEEP = register(
    "P6043",
    "no-such-sweep",
    "`--sweep` names no sweep of the sweeps file",
    "`primusc validate --sweeps FILE --sweep ID` reports only the sweeps whose `id` is ID; the ids are\n"
    "the first column of `primusc validate --sweeps FILE`.",
)
SWEEP_METRIC = register(
    "P6044",
    "sweeps-bad-metric",
    "a sweep's `metric` is not one primusc compares",
    "A sweep's measurements are `tokens_per_sec_per_gpu`, `step_time_s` (turned into tokens/s/GPU\n"
    "exactly: global batch x sequence length / (step time x GPUs)) or `model_tflops_per_gpu`\n"
    "(compared with the projection's model TFLOP/s per GPU; sources count model FLOPs differently,\n"
    "so only its ranks and ratios inside the sweep mean much). Say which the source publishes.",
)
IGNORED_FEATURE = register(
    "W6010",
    "projection-ignores-feature",
    "the model card has a feature the projection or memory account does not cost",
    "The projection prices each layer's GEMMs, attention, norms, activations and communication from the\n"
    "card's shapes. A few model features change the arithmetic in ways it leaves out: attention-logit\n"
    "soft-capping (Gemma 2) applies a tanh to every attention score inside the fused kernel, and\n"
    "final-logit soft-capping keeps one more vocabulary-wide tensor for the backward that the memory\n"
    "account does not hold. The figures are still shown; read them as a little optimistic for such a\n"
    "model, by the cost of the feature named.",
)
