"""P3: types, units and domains (a value of the wrong kind, unit or shape)."""

from primus_lang.diagnostics.core import register

WRONG_UNIT = register(
    "P3001",
    "wrong-unit",
    "a unit of the wrong kind for the field (bandwidth where bytes are expected)",
    "Each field holds one kind of quantity: bytes (GB, GiB), bandwidth (GB/s, Gbps), FLOP/s (TFLOP/s), "
    "time (us, ms, s, min) or a fraction (0.55 or 55%). `hbm_capacity = 192 GB/s` is refused.",
)
MISSING_UNIT = register(
    "P3002",
    "missing-unit",
    "a bare number where the field needs a unit",
    "Write the unit: `hbm_capacity = 192 GB`, not `192`. GB (10^9) and GiB (2^30) differ by 7%.",
)
UNEXPECTED_UNIT = register(
    "P3003",
    "unexpected-unit",
    "a unit on a field that holds a plain count or number",
    "Counts (layers, heads, GPUs) take a bare integer: `num_layers = 80`.",
)
NOT_INTEGER = register(
    "P3004",
    "not-an-integer",
    "a fractional or negative number where a count is expected",
    "Counts are non-negative integers; `1_000` and `1e3` are accepted, `2.5` is not.",
)
BAD_ENUM = register(
    "P3005",
    "bad-enum-value",
    "a name that is not one of the field's values",
    "Enum fields take one of a fixed set of bare names (`precision : bf16 | fp8`); the message lists them.",
)
EMPTY_DOMAIN = register(
    "P3006",
    "empty-domain",
    "an axis whose domain holds no value",
    "`8 .. 1`, `pow2(3 .. 3)` or `full(layers: 5 .. 4)` are empty; an axis needs at least one value.",
)
WRONG_TYPE = register(
    "P3007",
    "wrong-value-type",
    "a value of the wrong shape (a string for a number, a block for a name)",
    "The message says what the field expects. Strings are only for `source` and other text fields.",
)
MISSING_FIELD = register(
    "P3008",
    "missing-field",
    "a definition lacks a field that has no default",
    "Required fields must be set (a model's num_layers, hidden, ...; a GPU's peak_bf16, hbm_capacity, ...; "
    "a space's model and gbs).",
)
OUT_OF_RANGE = register(
    "P3009",
    "value-out-of-range",
    "a value outside the range its field allows (a fraction above 100%, a zero count)",
    "Fractions are between 0 and 1 (0% and 100%). Counts (layers, heads, nodes, GPUs) are at least 1\n"
    "and magnitudes (bandwidths, peaks, capacities, efficiencies) positive, except fields whose default\n"
    "is 0, where 0 means \"none\" or \"the default\"; latencies, `host_launch`, `overlap_slowdown` and\n"
    "`reserved_memory` may be 0. `kv_heads` must divide `heads`, a MoE's `top_k` cannot exceed its\n"
    "`num_experts`, and Mamba's `groups` must divide its `heads`. A run's `train_tokens` is at least one\n"
    "step of the space's smallest batch (`15` is fifteen tokens; `15T` is what was meant).",
)
BAD_STEP = register(
    "P3010",
    "bad-range-step",
    "a range with a step that is zero or negative",
    "Write `lo .. hi step s` with s >= 1: `cp : 1 .. 8 step 2` is 1, 3, 5, 7.",
)
NOT_A_BLOCK = register(
    "P3011",
    "block-mismatch",
    "a nested block for a field that is not a block, or a plain value for one that is",
    "Blocks are written `moe { num_experts = 8; ... }`; plain fields `num_layers = 80`.",
)
MISPLACED_STATEMENT = register(
    "P3012",
    "statement-not-allowed-here",
    "a statement that the enclosing block kind does not take",
    "Axes, `let`, `require`, `fits`, objectives, budgets, `strategy`, `target` and `assume` belong in a "
    "`space`; models, GPUs and clusters hold `field = value` and nested blocks only.",
)
BAD_ARGUMENTS = register(
    "P3013",
    "bad-arguments",
    "a call with the wrong number or kind of arguments",
    "`full(layers: D, method: D)` (or `full(8)`, `full(8, uniform)`), `pow2(lo .. hi)`, "
    "`divides(a, b)`, `min(a, b, ...)`, `max(a, b, ...)`.",
)
DOMAIN_TOO_LARGE = register(
    "P3014",
    "domain-too-large",
    "an axis with more values than any search can use",
    "One axis may hold at most 100,000 values; use a step or `pow2(...)` to thin a range.",
)
CONDITION_CYCLE = register(
    "P3015",
    "condition-cycle",
    "conditional axes whose `when` conditions depend on each other in a circle",
    "`a : ... when b > 1` and `b : ... when a > 1` cannot be ordered; make one of them unconditional.",
)
BAD_EXPRESSION = register(
    "P3016",
    "bad-expression",
    "an expression that cannot be evaluated (a tuple outside `in`, a string in arithmetic)",
    "Expressions combine numbers, knobs and names with + - * / // %, comparisons, and/or/not, `in (..)`.\n"
    "A requirement on the whole training run (`time_to_train`, `cost`, `tokens_per_dollar`, `gpus`)\n"
    "names only those, not a knob; `days` is the one unit an expression carries, and only on\n"
    "`time_to_train` (`require time_to_train <= 30 days`): a cost or a count takes a bare number.",
)
TOO_LARGE = register(
    "P3017",
    "value-too-large",
    "a value above the largest its field, knob or assumption can physically be",
    "Every magnitude has a ceiling far above any published model or machine: 4,096 layers, a width\n"
    "(`hidden`) of 131,072, 4,096 heads, 16,384 experts, a vocabulary of 16,777,216, sequences of\n"
    "4,194,304 tokens, 131,072 nodes and 1,048,576 GPUs in one job, a global batch of 16,777,216\n"
    "sequences, 1 EFLOP/s, 1 PiB and 1 PB/s per GPU, `assume moe_imbalance` of 100. A value above it is\n"
    "a typo (a digit too many, GB for MB) and would only overflow the checks' 64-bit arithmetic or make\n"
    "them run for minutes to say nothing fits. `docs/language.md` lists the ceilings.",
)

# ---- site profiles (`site NAME { ... }`, docs/language.md) and a space's `run` block ------------
SITE_PATH = register(
    "P3030",
    "site-path-not-absolute",
    "a site's mount, checkout or data path is not an absolute path",
    "Mounts and the folders a site names are seen from every node and inside the container, where no\n"
    "working folder is agreed on: `path`, `host`, `megatron_dir`, `primus_dir`, `bridge_dir`,\n"
    "`data_root` and `checkpoint_root` start with `/`, and hold no `:` or `,` (the runtimes' mount lists split on them).\n\n"
    "    mounts { data { host = \"lustre/data\"; path = \"/data\" } }    # refused\n\n"
    "Fix: write the full path, `host = \"/lustre/data\"`.",
)
SITE_RUNTIME = register(
    "P3031",
    "unknown-container-runtime",
    "a site names a container runtime primusc cannot start",
    "`runtime` is one of none, pyxis (NVIDIA's Slurm plugin over enroot), apptainer (also Singularity's\n"
    "successor), docker or podman. `enroot` alone is what pyxis runs: write `runtime = pyxis`.",
)
SITE_IMAGE = register(
    "P3032",
    "missing-container-image",
    "a site names a container runtime but no image",
    "A container runtime needs an image to start: `image = \"nvcr.io/nvidia/pytorch:25.01-py3\"` (pyxis,\n"
    "docker, podman), or a `.sif` file or `docker://` reference for apptainer.",
)
SITE_MOUNT = register(
    "P3033",
    "bad-mount",
    "a site mount names neither or both of a host folder and a volume claim, or an unusable name",
    "Each entry of `mounts { ... }` is `NAME { path = \"/in/container\"; host = \"/on/the/node\" }` or, on\n"
    "Kubernetes, `NAME { path = ...; claim = \"pvc-name\" }`: exactly one source. NAME becomes the\n"
    "Kubernetes volume name, so it is lowercase letters, digits and `_` (written as `-`).",
)
SITE_ENV = register(
    "P3034",
    "bad-site-environment",
    "a site's environment sets a variable primusc controls, or a value that is not text",
    "`env { NCCL_SOCKET_IFNAME = \"ib0\"; WANDB_API_KEY = forward }` sets a value or forwards the\n"
    "submitter's. The rendezvous (MASTER_ADDR, MASTER_PORT, NNODES, NODE_RANK, GPUS_PER_NODE, RANK,\n"
    "WORLD_SIZE, LOCAL_RANK), CUDA_DEVICE_MAX_CONNECTIONS (Megatron asserts its value) and the probe\n"
    "hook PRIMUSC_TORCHRUN come from the launch files and cannot be set here; nor can the variables\n"
    "that change how bash reads the launch script (SHELLOPTS, BASHOPTS, BASH_ENV, ENV, IFS, PS4,\n"
    "BASH_XTRACEFD, CDPATH, GLOBIGNORE, POSIXLY_CORRECT).",
)
SITE_SELECTOR = register(
    "P3035",
    "bad-kubernetes-selector",
    "a site's node selector or toleration list is not in kubectl's form",
    "`node_selector = \"key=value,key=value\"` (kubectl's label form) and `tolerations =\n"
    "\"key=value:NoSchedule,key:NoExecute\"` (kubectl taint's form; effects NoSchedule,\n"
    "PreferNoSchedule, NoExecute). Keys are Kubernetes label keys (`nvidia.com/gpu.product`).",
)
SITE_VALUE = register(
    "P3036",
    "bad-site-value",
    "a site value lands where quoting cannot protect it and is not of the form it needs there",
    "Slurm names (partition, account, QoS, reservation) are written into `#SBATCH` lines, Kubernetes\n"
    "names (namespace, queues, priority class) into object names and labels: they are plain words\n"
    "(letters, digits, `-`, `_`, `.`; lowercase DNS labels on Kubernetes). Control characters are\n"
    "refused everywhere.",
)
RUN_DATA = register(
    "P3037",
    "bad-data-blend",
    "a data blend is not a prefix or a list of weight-prefix pairs",
    "Megatron reads `--data-path` as one prefix or as pairs `WEIGHT PREFIX ...` with positive weights:\n"
    "`data = \"0.7 wiki/text_document 0.3 code/text_document\"`. The per-split fields (`train_data`,\n"
    "`valid_data`, `test_data`) take the same forms and replace `data` (Megatron refuses both).",
)
RUN_TOKENIZER = register(
    "P3038",
    "null-tokenizer-with-data",
    "a run reads real data with the null tokenizer",
    "NullTokenizer gives every id of the model's vocabulary and no text; with real data it would\n"
    "silently train on token ids the corpus's tokenizer never meant. Name the tokenizer:\n"
    "`tokenizer_model = \"meta-llama/Llama-3.1-70B\"` (HuggingFaceTokenizer), or set `tokenizer`.",
)
REPEATED_VALUE = register(
    "P3039",
    "repeated-value",
    "an alternative of an axis that adds no value the earlier ones did not give",
    "`tp : 1 | 2 | 2` or `mbs : pow2(1 .. 8) | 4` lists a value twice: the search would see it once, so the\n"
    "repeat is most likely a typo for a value that is missing (`2 | 4`). Remove it or write the value meant.\n"
    "Ranges that overlap in part (`1 | pow2(1 .. 8)`) are accepted: each adds values of its own.",
)
RUN_TEXT = register(
    "P3040",
    "bad-run-text",
    "a run's or passthrough's text holds a control character, or its checkpoint folder leaves the site's "
    "checkpoint root",
    "The run block's and the passthrough block's texts reach the launch files as arguments: a newline or\n"
    "tab in one (`tokenizer_model = \"meta\\n--save /etc\"`) would be an argument no framework reads as\n"
    "meant, and is refused as `--var` refuses it. A relative `checkpoint_dir` lies under the site's `checkpoint_root`;\n"
    "one that climbs out of it with `..` (`\"../../etc\"`) is refused: write the absolute folder meant.",
)
