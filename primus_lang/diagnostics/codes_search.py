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
    "primusc never mixes a new plan with old files or replaces a file you have without being asked:\n"
    "`plan`'s --out folder must be empty or new, and its --trace (unless it is the one --resume\n"
    "continues) and --report must not exist yet; the --out file of `report`, `tune-compare` and\n"
    "`calibrate` must not exist yet. Choose other paths, or pass --force to replace them.",
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
    "Every legal recipe of the space exceeds the GPU memory (less the space's headroom); the note gives\n"
    "the smallest peak and the limit in GiB. The help names what the space does not yet take as far as\n"
    "it goes: larger TP (up to the scale-up domain and the head count) or PP (up to the layers and the\n"
    "GPUs), at the values some legal point takes beside the space's other knobs (where none does, the\n"
    "rule that removes them, and on how many nodes they would be legal), full recompute, FSDP or a\n"
    "distributed optimizer, a smaller micro-batch; else GPUs with more memory or more nodes (`primusc\n"
    "check` says how many would fit).",
)
NO_LEGAL_POINT = register(
    "P8006",
    "space-empty",
    "the space has no legal point",
    "The space's constraints and Megatron's legality rules leave no recipe, so there is nothing to "
    "search or project. `plan`, `project`, `tune-compare` and the other commands that search say this "
    "without saying why, since they never count what each rule removes; `primusc check` does, and "
    "reports the same space as the rule that empties it, or as P4099 when only rules together do.",
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
OUTPUT_IS_LINK = register(
    "P8010",
    "output-is-link",
    "an output path is a symbolic link, or a folder where a file goes",
    "primusc writes a file by creating a new one beside it and renaming it into place, and never\n"
    "through a symbolic link: a link planted in an output folder (`--out/node.sh -> ~/.bashrc`) would\n"
    "otherwise make `--force` overwrite a file outside it. The link is refused even with --force;\n"
    "remove it, or choose another output path. A folder where an output file goes is refused too.",
)
OUTPUT_LOCKED = register(
    "P8011",
    "output-in-use",
    "another primusc plan is writing into the same output folder or trace",
    "Two plans into one --out would interleave their trace lines and mix their launch files. A plan\n"
    "holds a lock on its output folder (a `.primusc.lock` file, removed when it ends) and on the trace\n"
    "it appends to; a second plan that finds either held stops at once. Wait for the first to finish,\n"
    "or give the second its own --out.",
)
OUTPUTS_COLLIDE = register(
    "P8012",
    "outputs-collide",
    "two outputs, or an output and an input, name the same file",
    "`primusc plan --trace X --report X` would write the report over the trace it just wrote, and\n"
    "`--trace OUT/node.sh` would be replaced by a launch file. Paths are compared after resolving\n"
    "links and `..`, so two spellings of one file collide too. Give each output its own file.",
)
TRACE_INTERLEAVED = register(
    "P8013",
    "trace-interleaved",
    "the trace holds torn lines or more than one search",
    "A trace is one search's events, one JSON object a line. A line cut short is expected only as the\n"
    "last line of a killed plan (or just before the `resume` marker of the plan that continued it);\n"
    "torn lines elsewhere, or two `start` or two `end` events, mean two plans wrote the file at once\n"
    "(or it was edited), and neither a report nor a resumed search can tell which event is whose.\n"
    "Rerun the plan into its own --out.",
)
NO_CLUSTER_MEETS = register(
    "P8014",
    "no-cluster-meets",
    "no cluster of the space meets the run's requirements",
    "A space with cluster axes (`gpu : ...`, `nodes : ...`) is planned cluster by cluster, and a\n"
    "`require` on the whole run (`time_to_train`, `cost`, `tokens_per_dollar`, `gpus`) sets aside the\n"
    "clusters that fail it; the table's notes say why each cluster was set aside. When none is left,\n"
    "nothing is launched: the help says how near the best cluster came to each requirement, so the\n"
    "requirement can be relaxed, or the axes widened (more nodes, another GPU), to what is reachable.",
)
NAMED_CLUSTER_SET_ASIDE = register(
    "W8015",
    "named-cluster-set-aside",
    "the cluster --cluster names is not the one the run's objective and requirements choose",
    "`plan --cluster gpu=...,nodes=...` plans and launches the cluster it names, whatever the comparison\n"
    "chose: the table marks it `chosen (--cluster)`. Where that cluster fails a `require` on the\n"
    "whole run (a time, a cost, a GPU quota), or has no recipe that fits, the launch files are still\n"
    "written, and this warning says which requirement it fails and which cluster the objective chose.\n"
    "`emit` says it of the point it launches, on the cluster `--cluster` names (or the first the axes\n"
    "span), and `explain` lists the requirements its point fails.\n"
    "Drop `--cluster` to launch the comparison's choice.",
)
LLM_UNAVAILABLE = register(
    "P8016",
    "llm-unavailable",
    "`tune-compare --strategies llm` without a model it can call",
    "`plan` falls back to the evolutionary search when the investigator has no model, key or\n"
    "cassette, and says so in a note; a comparison would print that search's regret under the name\n"
    "`llm`. Give the model (`--llm-model provider/model`, `assume llm_model = ...` in the space, or\n"
    "PRIMUSC_LLM_MODEL) and its key in the environment, or leave `llm` out of --strategies.",
)
BAD_SHORTLIST = register(
    "P8040",
    "bad-shortlist",
    "`--shortlist` asks for a campaign that cannot be written",
    "`primusc plan --shortlist K` writes, beside the winner's launch files, a campaign that runs the\n"
    "top K candidates for a few dozen iterations each. K is from 1 to 64 (a campaign measures a\n"
    "shortlist; a sweep of the space is a job for a scheduler of its own), the campaign is launch\n"
    "files (so not with `--no-emit`), and `--campaign-var` means nothing without `--shortlist`.\n"
    "For example `primusc plan space.prx --shortlist 4 --campaign-var train_iters=50`.",
)
CAMPAIGN_MANIFEST = register(
    "P8041",
    "campaign-manifest",
    "a campaign folder holds no manifest primusc can read",
    "`primusc learn DIR` reads `DIR/manifest.json`, written by `primusc plan --shortlist K` into\n"
    "`<out>/campaign/`: which candidate each job ran, the GPU profile it was projected on, and where\n"
    "each job's log is. A folder without it, a file that is not that manifest (another JSON, an edited\n"
    "one missing a field), or one of a format this primusc does not know is refused. Pass the\n"
    "campaign folder itself (the one holding `campaign.sbatch` or `campaign.sh`), or write the\n"
    "campaign again with `primusc plan --shortlist`.",
)
LSP_UNAVAILABLE = register(
    "P8050",
    "lsp-unavailable",
    "`primusc lsp` needs the language-server library, which is not installed",
    "The language server speaks the Language Server Protocol through pygls, an optional dependency\n"
    "so that the compiler itself stays small. Install it with `pip install 'primusc[lsp]'` into the\n"
    "environment whose `primusc` the editor starts, then restart the editor's language client.",
)
GIT_REVISION = register(
    "P8051",
    "git-revision",
    "a space cannot be read at a git revision",
    "`primusc diff --rev A --rev B FILE` reads FILE and the files it imports by relative path as\n"
    "they were at each revision (`git show REV:PATH`). The file must lie inside a git work tree, `git`\n"
    "must be on the PATH, and each revision must name a commit (a branch, a tag, a hash, `HEAD~1`)\n"
    "in which FILE exists. Check with `git show REV:PATH`; stdlib imports come from the installed\n"
    "primusc, whatever the revision.",
)
DIFF_REVISIONS = register(
    "P8052",
    "diff-revisions",
    "`diff --rev` takes exactly two revisions and no points",
    "`primusc diff FILE A B` compares two candidates of one space; `primusc diff --rev A --rev B\n"
    "FILE` compares one space at two revisions of the repository (`--rev B` may be omitted to\n"
    "compare A with the work tree: `--rev main` alone). The two modes do not mix: give points or\n"
    "revisions, not both, and at most two revisions.",
)
