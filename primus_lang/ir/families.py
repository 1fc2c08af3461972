"""Which Hugging Face model families are hybrid state-space or linear-attention models.

``import-hf`` refuses the ones the IR cannot hold, and the published-run reader skips rows of
them; both read this one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HYBRID_MODEL_TYPES = frozenset(
    {
        "bamba",
        "falcon_h1",
        "falcon_mamba",
        "granitemoehybrid",
        "jamba",
        "lfm2",
        "mamba",
        "mamba2",
        "plamo2",
        "qwen3_next",
        "recurrent_gemma",
        "rwkv",
        "zamba",
        "zamba2",
    }
)
# Hybrid families with a mapping (their family function reads the pattern and the Mamba block).
HYBRID_FAMILIES = frozenset({"nemotron_h"})
# Keys that only hybrid or state-space configs carry.
_HYBRID_KEY_PREFIXES = ("mamba_", "ssm_", "linear_num_", "linear_key_", "linear_value_")
_HYBRID_KEYS = frozenset({"hybrid_override_pattern", "layers_block_type", "attn_layer_period", "block_types"})
_ATTENTION_LAYER_TYPES = frozenset({"full_attention", "sliding_attention", "attention"})


def hybrid_evidence(data: Mapping[str, Any]) -> tuple[str, str]:
    """Why a config (or a model card written from one) describes a hybrid state-space or
    linear-attention model, and the key that says so; ("", "") for a plain transformer."""
    mt = data.get("model_type")
    if isinstance(mt, str) and mt in HYBRID_MODEL_TYPES | HYBRID_FAMILIES:
        return f"`model_type` `{mt}` is a hybrid state-space / linear-attention family", "model_type"
    for k in data:
        if isinstance(k, str) and (k in _HYBRID_KEYS or k.startswith(_HYBRID_KEY_PREFIXES)):
            return f"it has `{k}`, a field of hybrid state-space models", k
    layer_types = data.get("layer_types")
    if isinstance(layer_types, list):
        odd = sorted({str(t) for t in layer_types} - _ATTENTION_LAYER_TYPES)
        if odd:
            return f"`layer_types` lists non-attention layers ({', '.join(odd)})", "layer_types"
    return "", ""
