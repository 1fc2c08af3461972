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
    "The importer maps the architectures it knows field by field: llama, mistral, mixtral, qwen3, "
    "qwen3_moe, deepseek_v3 (and deepseek_v2, kimi_k2), gpt_oss and nemotron. Another family may differ in ways "
    "that change parameter counts or memory (biases, norms, gating), so it is refused rather than "
    "guessed. Write the card by hand (see `stdlib/models/` for examples) or map it in "
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
    "layers in a pattern other than a dense prefix, a gated GELU MLP, sliding-window attention on "
    "every layer longer than the training sequence. The message names the field and value; write the "
    "card by hand with the closest faithful description, and say in a comment what it approximates.",
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
