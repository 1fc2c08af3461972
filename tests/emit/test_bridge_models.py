"""The stdlib cards with a Megatron-Bridge library recipe (emit/bridge.py BRIDGE_MODELS, read from
src/megatron/bridge/recipes at Megatron-Bridge v0.6.0 and 067f987) emit as that recipe with no architecture
override: Bridge's provider builds the model from the checkpoint's config, Gemma 2's soft-capping and
post-norms included. A family without a recipe is refused before any search."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import parse_point
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.emit.bridge import BRIDGE_MODELS, recorded_fields
from primus_lang.lower import load_space, stdlib_cards

ADDED = {
    "qwen2_5_7b": "qwen25_7b", "qwen2_5_72b": "qwen25_72b", "qwen3_8b": "qwen3_8b", "qwen3_32b": "qwen3_32b",
    "llama3_2_1b": "llama32_1b", "llama3_2_3b": "llama32_3b", "gemma2_2b": "gemma2_2b", "gemma2_9b": "gemma2_9b",
    "gemma2_27b": "gemma2_27b", "deepseek_v2": "deepseek_v2", "deepseek_v2_lite": "deepseek_v2_lite",
    "kimi_k2": "kimi_k2", "glm4_5_air": "glm45_air_106b", "nemotron_3_nano_30b_a3b": "nemotron_3_nano",
}

# the provider's fields that shape the model (megatron-core TransformerConfig and Bridge's
# GPTModelProvider, as frameworks/bridge/recipes.json records them)
ARCHITECTURE = {f"model.{f}" for f in (
    "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "kv_channels", "num_query_groups",
    "layernorm_epsilon", "add_qkv_bias", "add_bias_linear", "window_size", "window_attn_skip_freq",
    "normalization", "gated_linear_unit", "qk_layernorm", "num_moe_experts", "moe_ffn_hidden_size",
)}


def _space(tmp_path: Path, card: str) -> Path:
    module = stdlib_cards()[card][0]
    path = tmp_path / "s.prx"
    path.write_text(f"import {module} ({card})\nimport clusters.nvidia (h100_x8)\n\n"
                    f"space s on h100_x8 {{\n  model = {card}\n  gbs = 64\n  tp = 1\n  target bridge + local\n}}\n")
    return path


@pytest.mark.parametrize("card", sorted(ADDED))
def test_a_card_with_a_library_recipe_is_that_recipe_unchanged(tmp_path: Path, card: str) -> None:
    assert BRIDGE_MODELS[card] == ADDED[card]
    space = load_space(_space(tmp_path, card))
    node = emit(space, parse_point(space, "tp=1"), "bridge+local")["node.sh"]
    assert f"  --recipe {ADDED[card]}_pretrain_config\n" in node
    written = {line.strip().split("=", 1)[0] for line in node.splitlines() if line.startswith("  model.")}
    assert not ARCHITECTURE - set(recorded_fields())
    assert written and not written & ARCHITECTURE


def test_a_family_without_a_recipe_is_refused(tmp_path: Path) -> None:
    space = load_space(_space(tmp_path, "mistral_7b"))
    with pytest.raises(CompileError) as err:
        emit(space, parse_point(space, "tp=1"), "bridge+local")
    assert "Bridge recipes only for these stdlib cards" in str([d.message for d in err.value.diagnostics])
