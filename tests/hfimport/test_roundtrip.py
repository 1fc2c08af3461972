"""The card import-hf writes loads through the language and equals the stdlib card, number for number."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from primus_lang.hfimport import map_config, read_config, render_card
from primus_lang.ir import Model
from primus_lang.lower import load_program, loads_program
from primus_lang.resources import data_dir

FIXTURES = Path(__file__).parent / "fixtures"

CASES = [
    ("llama3_1_70b", "llama3", None),
    ("mixtral_8x7b", "mixtral", None),
    ("qwen3_235b_a22b", "qwen3", None),
    ("deepseek_v3", "deepseek", None),
    ("gpt_oss_120b", "gpt_oss", None),
    ("nemotron4_15b", "nemotron4", None),
    # a hybrid Mamba-2 model; its config names no training length, the stdlib card Megatron-Bridge's 8192
    ("nemotron_3_nano_30b_a3b", "nemotron3", 8192),
    # issue 20's families; fixtures written by hand from each model's published config.json
    ("qwen2_5_72b", "qwen2", None),
    ("gemma2_2b", "gemma", 8192),  # the Gemma 2 report's training length; the config names none
    ("gemma3_27b", "gemma", 8192),
    ("phi4", "phi", None),
    ("olmo2_7b", "olmo2", None),
    ("glm4_5_air", "glm4", None),
    ("llama4_scout", "llama4", None),
]


def numbers(model: Model) -> Model:
    """The card without its name and provenance: what memory and projection read."""
    return attrs.evolve(model, name="card", source="")


@pytest.mark.parametrize(("card", "module", "seq_len"), CASES)
def test_imported_card_equals_stdlib(card: str, module: str, seq_len: int | None, tmp_path: Path) -> None:
    imported = map_config(read_config(FIXTURES / f"{card}.json"), card, seq_len)
    text = render_card(imported, f"{card}.json")
    out = tmp_path / f"{card}.prx"
    out.write_text(text)
    loaded = {m.name: m for m in loads_program(text, str(out)).models}[card]
    assert loaded == imported.model  # the text says exactly what the mapping produced
    stdlib = {m.name: m for m in load_program(data_dir("stdlib") / "models" / f"{module}.prx").models}[card]
    assert numbers(loaded) == numbers(stdlib)
