from __future__ import annotations

import pytest

pytest.importorskip("torch")

from primus_lang.bench.runtime import DeviceInfo, describe
from primus_lang.ir import Model


@pytest.fixture(scope="session")
def cpu() -> DeviceInfo:
    return describe("cpu")


@pytest.fixture
def micro_model() -> Model:
    """Small enough that every kernel of a candidate runs in microseconds."""
    return Model(
        name="micro", num_layers=4, hidden=64, ffn_hidden=128, heads=4, kv_heads=2, head_dim=16, vocab=256,
        seq_len=64, max_position_embeddings=128,
    )
