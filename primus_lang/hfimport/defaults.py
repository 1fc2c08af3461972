"""What a Hugging Face config leaves to its configuration class: ``config.json`` omits a field whose
value is the class's default (``PretrainedConfig.to_diff_dict``), so a published config of such a model
lacks its vocabulary, context and RoPE base. The defaults are facts of transformers' classes, each
table named by its source; a value the config states always wins."""

from __future__ import annotations

from typing import Any

import attrs

from primus_lang.hfimport.config import HfConfig

# model_type -> (the class, its defaults for the fields the mapping reads)
CLASS_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    # transformers models/gemma3/configuration_gemma3.py, Gemma3TextConfig.__init__
    "gemma3_text": ("Gemma3TextConfig", {
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1_000_000.0,
        "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh",
        "tie_word_embeddings": True,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
    }),
}


def with_class_defaults(config: HfConfig, notes: list[str]) -> HfConfig:
    """``config`` with its class's defaults for the fields it leaves out, each one said in ``notes``."""
    found = CLASS_DEFAULTS.get(config.model_type)
    if found is None:
        return config
    cls, defaults = found
    absent = {k: v for k, v in defaults.items() if k not in config.data}
    if not absent:
        return config
    notes.append(f"{', '.join(f'{k} {v}' for k, v in absent.items())}: transformers' {cls} defaults, which "
                 "config.json leaves out")
    return attrs.evolve(config, data={**absent, **config.data})
