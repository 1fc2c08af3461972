"""The stdlib's model cards (lower.stdlib_cards), found by a Primus card name or by the shape a command line states."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from primus_lang.ir.model import Model

# The fields that make two cards the same model; the rest (sequence, dropout, RoPE base, ...) is
# a run's choice and becomes an inline override of the card.
IDENTITY = ("num_layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "activation", "norm")


def primus_card_name(file: str) -> str:
    """``llama3.1_70B.yaml`` → ``llama3_1_70b``, the stdlib's spelling."""
    stem = re.sub(r"\.ya?ml$", "", file.rsplit("/", 1)[-1])
    return re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")


def find_card(name: str, cards: dict[str, tuple[str, Model]]) -> str | None:
    """The stdlib card for a Primus card name, with or without its release suffix (``_v0_1``)."""
    for candidate in (name, re.sub(r"(_v\d+)+(_\d+)*$", "", name)):
        if candidate in cards:
            return candidate
    return None


# What tells apart cards of one shape when a tokenizer hides the vocabulary (Llama 2 70B and Llama 3 70B).
_TELLING = ("rope_theta", "max_position_embeddings", "tied_embeddings", "norm_epsilon")


def match_shape(model: dict[str, Any], cards: dict[str, tuple[str, Model]], extra: int = 0) -> str | None:
    """The stdlib card with the recipe's shape (and vocabulary, where the recipe states one, or that less
    the ``extra`` tokens its null tokenizer adds to what a script gives it, the card's vocabulary); of
    several, the one that agrees with the recipe in most of what else it states (``_TELLING``), the first
    of those."""
    same = list(_same_shape(model, cards, extra))
    if not same:
        return None
    return max(same, key=lambda name: sum(f in model and model[f] == getattr(cards[name][1], f) for f in _TELLING))


def _same_shape(model: dict[str, Any], cards: dict[str, tuple[str, Model]], extra: int) -> Iterator[str]:
    for name, (_, card) in cards.items():
        if model.get("pattern", "") != card.pattern or model.get("mamba") != card.mamba or model.get("mla") != card.mla:
            continue
        if any(model.get(f) != getattr(card, f) for f in IDENTITY):
            continue
        vocab = model.get("vocab")
        if vocab and card.vocab not in (vocab, vocab - extra):
            continue
        moe = model.get("moe")
        if (moe is None) != (card.moe is None):
            continue
        if moe is not None and card.moe is not None and (moe.num_experts, moe.top_k, moe.ffn_hidden) != (
                card.moe.num_experts, card.moe.top_k, card.moe.ffn_hidden):
            continue
        yield name


def tokenizer_card(files: str, cards: dict[str, tuple[str, Model]]) -> str | None:
    """The stdlib card of the model whose Hugging Face repository ``files`` names (a Primus preset's
    ``tokenizer_model: deepseek-ai/DeepSeek-V2-Lite``), by the repository its ``source`` cites first."""
    for name, (_, card) in cards.items():
        if card.source.split(" ", 1)[0].split(";", 1)[0] == files:
            return name
    return None
