"""P31xx: `primusc import-hf`, turning a Hugging Face config.json into a model card."""

from primus_lang.diagnostics.core import register

CONFIG_UNREADABLE = register(
    "P3101",
    "hf-config-unreadable",
    "the Hugging Face config could not be read as a JSON object",
    "`primusc import-hf` reads a model's `config.json` (the file next to the weights on the Hugging Face "
    "Hub). The path must name a readable file holding one JSON object, e.g. "
    '`{"model_type": "llama", "hidden_size": 4096, ...}`.',
)
UNKNOWN_MODEL_TYPE = register(
    "P3102",
    "hf-unknown-model-type",
    "the config's `model_type` is not one primusc can map to a model card",
    "The importer maps the architectures it knows field by field: llama, llama4_text, mistral, mixtral, "
    "qwen2, qwen3, qwen3_moe, phi3, olmo2, gemma, gemma2, gemma3_text, glm4_moe, deepseek_v3 (and "
    "deepseek_v2, kimi_k2), gpt_oss, nemotron and nemotron_h. Another family may differ in ways that "
    "change parameter counts or memory (biases, norms, gating), so it is refused rather than guessed; "
    "for a family primusc knows of, the message names the feature the model card lacks. A near name is "
    "suggested only when it has the same version digits: `qwen2` and `qwen3` are different "
    "architectures, not a typo. A multimodal wrapper (a config holding a `text_config`, such as LLaVA's) is "
    "refused as one, with its `text_config` to import as a config of its own. Write the card by hand (see `stdlib/models/` for examples) or map it in "
    "`primus_lang/hfimport/mapping.py`.",
)
MISSING_FIELD = register(
    "P3103",
    "hf-missing-field",
    "the config lacks a field the model card needs",
    "A model card needs the layer count, widths, head counts, vocabulary and longest position. Each "
    "is read from its Hugging Face name (`num_hidden_layers`, `hidden_size`, `intermediate_size`, "
    "`num_attention_heads`, `vocab_size`, `max_position_embeddings`, and for MoE the expert fields). "
    "Add the field to the config or write the card by hand.",
)
HYBRID_ARCHITECTURE = register(
    "P3104",
    "hf-hybrid-architecture",
    "the config describes a hybrid state-space / linear-attention model the IR cannot express",
    "primusc models decoder-only transformers and Megatron's Mamba-2 hybrids (Nemotron-H and "
    "Nemotron 3, model_type nemotron_h: a pattern of Mamba-2, attention, MLP and MoE layers). Other "
    "hybrids (Jamba's Mamba-1 layers, Zamba, Falcon-H1, Qwen3-Next's gated delta net, ...) have "
    "layers whose parameters, FLOPs and activation memory follow other formulas; a card for them "
    "would be wrong, so none is written.",
)
UNSUPPORTED_FEATURE = register(
    "P3105",
    "hf-unsupported-feature",
    "the config uses a feature the model card cannot represent faithfully",
    "Some settings change the shape of the model in ways the IR has no field for: MoE on only some "
    "layers in a pattern other than a dense prefix (Llama 4 Maverick), chunked local attention "
    "shorter than the training sequence (Llama 4), windowed layers that are not every layer but the "
    "n-th. The message names the field and value; write the card by hand with the closest faithful "
    "description, and say in a comment what it approximates.",
)
BAD_VALUE = register(
    "P3106",
    "hf-bad-value",
    "a config field holds a value of the wrong type or out of range",
    'Sizes must be positive integers (`hidden_size: 4096`, not `"4096"` or `0`), flags booleans. '
    "Fix the config value.",
)
OUTPUT_EXISTS = register(
    "P3107",
    "import-output-exists",
    "the output file exists; `import-hf` does not overwrite it without `--force`",
    "`primusc import-hf config.json --out FILE` refuses to replace an existing FILE so that a "
    "hand-edited card is never lost. Choose another path or pass `--force`.",
)
BAD_CARD_NAME = register(
    "P3108",
    "import-bad-card-name",
    "the model card's name is not a valid identifier",
    "Card names are identifiers: a letter or `_`, then letters, digits or `_` (e.g. `llama3_1_70b`). "
    "Pass a valid `--name`.",
)
CONFIG_TOO_LARGE = register(
    "P3109",
    "hf-config-too-large",
    "the config file is larger than primusc reads",
    "Data files are read up to 16 MiB and no further (a Hugging Face config.json is a few KiB), so a "
    "wrong path such as `/dev/zero` is refused at once instead of filling memory. Pass the model's "
    "config.json.",
)
CONFIG_TOO_DEEP = register(
    "P3110",
    "hf-config-too-deep",
    "the config nests more than 64 levels deep",
    "A config.json nests a few levels (`rope_scaling`, `quantization_config`). Deeper nesting is "
    "refused rather than handed to a parser that recurses. Check that the file is a model's config.",
)
CONFIG_NUMBER = register(
    "P3111",
    "hf-config-number-too-long",
    "the config holds an integer of more than 100 digits",
    "No field of a model's config needs a number that long, and Python refuses to convert integers "
    "of more than 4,300 digits. Fix the value the diagnostic points at.",
)
INCONSISTENT_CONFIG = register(
    "P3112",
    "hf-inconsistent-config",
    "the config's values cannot describe one model, so no card is written",
    "Each value can be fine alone and the set still impossible: more experts per token than experts "
    "(`num_experts_per_tok` above `num_local_experts`), or a value outside the range the language "
    "accepts for its field. `import-hf` loads the card it is about to write as `primusc check` would, and "
    "writes nothing if that fails; the message says which values disagree. Fix the config.",
)

# --- P3120-P3139: `primusc import-recipe`, a launch recipe read into a space ------------------------

RECIPE_UNREADABLE = register(
    "P3120",
    "recipe-unreadable",
    "the recipe file could not be read, or is neither a command line nor a Primus experiment",
    "`primusc import-recipe FILE` reads a Megatron-LM command line or arguments file (a `torchrun ... "
    "pretrain_gpt.py --tensor-model-parallel-size 8 ...` script, or the flags alone) or a Primus "
    "experiment YAML (`modules.pre_trainer.model` and `overrides`; one written as JSON is read alike, "
    "whatever the file's name). The file must be UTF-8 text of at "
    "most 16 MiB, and a Megatron-Bridge launch is read as a command line (`scripts/training/run_recipe.py "
    "--recipe NAME` and its `section.field=value` overrides, P3140-P3142); a Bridge recipe's Python "
    "source is not read. A file with no command line in it (empty, or comments only), or a launcher and "
    "script without a single flag, has nothing to read and is refused once, here.",
)
RECIPE_SHELL_SYNTAX = register(
    "P3121",
    "recipe-shell-syntax",
    "the command line uses shell syntax primusc does not evaluate",
    "The importer reads words and quotes as a shell would and nothing more: it never runs the file. "
    "A variable reference (`$TP`, `${TP}`), a command substitution (`$(...)`, backquotes), a pipe, a "
    "redirection, `;`, `&&` or a background `&` would need a shell to give the value the run used. "
    "Write the value itself in the file (line continuations with `\\` are read as spaces).",
)
RECIPE_UNKNOWN_FLAG = register(
    "P3122",
    "recipe-unknown-flag",
    "the command line has a flag that is not a Megatron-LM argument primusc knows",
    "Every flag is either modelled (it becomes a knob, a model field or the cluster) or carried "
    "through to emission unchanged, and for that primusc must know whether it takes a value. A "
    "misspelt flag would make Megatron exit at start, so it is refused here with the nearest known "
    "flag. A real flag of a newer Megatron that primusc does not list can be passed through by "
    "writing it in the space's `passthrough { ... }` block by hand.",
)
RECIPE_BAD_VALUE = register(
    "P3123",
    "recipe-bad-value",
    "a recipe setting has a value of the wrong type or outside what Megatron accepts",
    "Sizes are positive whole numbers (`--tensor-model-parallel-size 8`), choices one of the "
    "values Megatron's argument parser lists (`--recompute-granularity full|selective`). A flag "
    "that takes a value needs one before the next flag.",
)
RECIPE_CONTRADICTION = register(
    "P3124",
    "recipe-contradiction",
    "two settings of the recipe contradict each other",
    "The same flag given twice with different values (argparse keeps the last silently), both FP8 and "
    "FP4, both the virtual-pipeline flags and an explicit layout, a distributed optimizer with "
    "torch FSDP2: a run would do one of the two without saying which. Keep the one you mean.",
)
RECIPE_UNSUPPORTED = register(
    "P3125",
    "recipe-unsupported",
    "the recipe uses a setting primusc cannot model or emit faithfully",
    "FP16 training, a pipeline schedule or architecture feature the IR has no field for, a training "
    "script of another model family (BERT, T5, multimodal): a space that silently dropped it would "
    "project and emit another run. The message names the setting; change it in the recipe, or write "
    "the space by hand.",
)
RECIPE_MISSING = register(
    "P3126",
    "recipe-missing-setting",
    "the recipe lacks a setting the space needs, and the command line does not give it",
    "A space needs the model's shape (layers, widths, heads, vocabulary), the global batch size, the "
    "sequence length and the cluster (nodes, GPUs per node, the GPU). A Megatron command line that "
    "uses a tokenizer does not state the vocabulary: name a stdlib model card whose shape it matches, "
    "or add `--vocab-size`. Give the cluster with `--nodes`, `--gpus-per-node` and `--gpu` when the "
    "recipe (torchrun's `--nnodes`/`--nproc-per-node`) does not say.",
)
RECIPE_NOT_PRIMUS = register(
    "P3127",
    "recipe-not-primus-experiment",
    "the YAML file is not a Primus experiment",
    "A Primus experiment is a mapping with `modules.pre_trainer` holding `framework: megatron`, "
    "`model: <card>.yaml` and `overrides` (AMD-AGI/Primus examples/megatron/configs/<GPU>/). Other "
    "YAML (a Kubernetes object, a Megatron-Bridge or NeMo config, a torchtitan job) is not read.",
)
RECIPE_UNKNOWN_CARD = register(
    "P3128",
    "recipe-unknown-model-card",
    "the Primus experiment names a model card primusc has no stdlib card for",
    "Primus's model cards (primus/configs/models/megatron/) are matched to stdlib cards by name "
    "(`llama3.1_70B.yaml` is `llama3_1_70b`). A card without a stdlib twin is refused rather than "
    "guessed; write its architecture in the overrides (num_layers, hidden_size, ...), or write the "
    "model card with `primusc import-hf` and the space by hand.",
)
RECIPE_ILLEGAL = register(
    "P3129",
    "recipe-illegal",
    "the recipe breaks a rule Megatron enforces",
    "The recipe is checked as `primusc check --point` would check it: TP divides the heads and the "
    "query groups, the layers split over the pipeline stages, the batch over the micro-batches and "
    "data-parallel replicas. Megatron would refuse it at start (or run another split), so no space "
    "is written; the diagnostic points at the flag that sets the knob the rule names.",
)
RECIPE_ENV_DEFAULT = register(
    "W3130",
    "recipe-env-default",
    "a Primus value is an environment reference; its default was taken",
    "Primus experiments write `${PRIMUS_TP:1}`: the environment variable's value when set, else the "
    "default after the colon. The importer never reads the environment and takes the default; "
    "set the value in the space if the run used another. A reference without a default is P3121.",
)
RECIPE_NO_BASELINE = register(
    "P3131",
    "space-baseline-invalid",
    "the space's `baseline` block sets something that is not a knob, or a value the knob cannot take",
    "`baseline { tp = 8; pp = 2; recompute = full(8) }` names the recipe a plan starts from, one "
    "value per knob (knobs it leaves out take the space's fixed value, else the knob's default, else "
    "the axis's first value). `passthrough { name = value }` holds Megatron settings primusc carries "
    "to the launch files unchanged: text, numbers or true/false.",
)

RECIPE_VALUE_UNKNOWN = register(
    "P3132",
    "recipe-value-unknown",
    "a setting primusc models reads a value only the running script knows",
    "A launch script is read, never run: a variable the script does not set (`$TP` from the environment, "
    "`$1` the script was not given), a command substitution (`$(nproc)`) or a file test has no value "
    "until the script runs. When such a value reaches a setting primusc models (the parallel layout, "
    "the batch, the model's shape), the space would be a guess, so it is refused; give the variable "
    "the run uses with `--set NAME=VALUE` (`--set 1=VALUE` for the script's first argument).",
)
RECIPE_VALUE_NOT_CARRIED = register(
    "W3133",
    "recipe-value-not-carried",
    "a setting primusc carries through reads a value only the running script knows; it is left out",
    "A flag primusc does not model (a data path, a cache folder, a run name) is carried to the launch "
    "files as written, but a value the script computes when it runs (`${PWD}/cache`, `$1`) has no text "
    "to carry. It is left out of the space and said here; give the variable with `--set NAME=VALUE` "
    "to carry it.",
)

RECIPE_EMPTY_VARIABLE = register(
    "W3135",
    "recipe-empty-variable",
    "a word of the launch line is a variable the script never sets: read as empty",
    "Scripts leave room for more flags with an unquoted `${EXTRA_ARGS}` on the launch line. When the script "
    "never sets it, bash expands it to no word at all, and primusc reads it so; if the run's environment "
    "sets it, give its flags with `--set EXTRA_ARGS='--flag VALUE ...'`.",
)

PRIMUS_UNREAD_OVERRIDE = register(
    "W3134",
    "primus-override-unread",
    "a Primus override names neither a Megatron-LM argument nor a setting of Primus's presets",
    "Primus merges every override into the arguments it hands Megatron, whatever its name; one that "
    "no Megatron argument of the version Primus pins and no Primus preset has is read by nothing, "
    "which is most often a misspelling. It is carried through as written; check its spelling.",
)

# --- P3140-P3149: `primusc import-recipe` of a Megatron-Bridge launch ---------------------------------

BRIDGE_UNKNOWN_RECIPE = register(
    "P3140",
    "bridge-unknown-recipe",
    "the Megatron-Bridge launch names a recipe whose settings primusc has not recorded",
    "Bridge's recipes are Python functions; primusc knows their settings from the table its tools wrote "
    "by running every pretraining recipe of each release read (frameworks/bridge/recipes.json, "
    "`import-recipe --bridge-version` chooses the release). A name that is no recipe of the release, "
    "a recipe whose model has no stdlib card, or one Bridge's code could not build on CPU is refused "
    "with the reason, the nearest name and the recipes primusc reads. Launch "
    "lines of `scripts/training/run_recipe.py` (or `train.sh`) name it with `--recipe NAME` or "
    "`--model STEM`; the performance launcher (`setup_experiment.py`, `run_script.py`) by its parts, "
    "`-mr`, `-ng`, `-g` and `-c`, all of which it needs.",
)
BRIDGE_UNKNOWN_KEY = register(
    "P3141",
    "bridge-unknown-override",
    "a Megatron-Bridge override names no ConfigContainer field, or an option run_recipe.py lacks",
    "Every `section.field=value` override must name a field of the recipe's ConfigContainer at the "
    "launch's Bridge release (frameworks/bridge/recipes.json): "
    "Bridge refuses a key its config lacks, so a misspelt key is refused here too, at its span, with "
    "the nearest field. `mixed_precision=NAME` takes one of Bridge's registered precision recipes.",
)
BRIDGE_BAD_OVERRIDE = register(
    "P3142",
    "bridge-bad-override",
    "a word after the Bridge script is neither an option nor a `KEY=VALUE` override primusc reads",
    "run_recipe.py takes its options, then Hydra-style overrides `section.field=value` (`+field=value` "
    "adds one). A deletion (`~field`), a mode other than pretraining (`--mode sft`, `--task sft`), a "
    "dataset preset other than mock data, or a performance-launcher option that changes the run and "
    "that primusc does not read (`--use_megatron_fsdp true`: write it as the override of its field) "
    "would change what the recipe runs in ways a space does not describe, so they are refused with the "
    "reason rather than dropped.",
)
