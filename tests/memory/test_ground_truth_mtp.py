"""The parameters megatron-core builds on a pipeline stage that runs MTP but not the embedding: its
decoder layers, the MTP layer, the output layer and its own copy of the word embeddings, module by
module against primusc's stage tensors."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("megatron.core")
pytest.importorskip("torch")

import ground_truth_cases as cases
import megatron_harness as mh

from primus_lang.ir import Candidate
from primus_lang.ir.derived import padded_vocab
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.params import stage_tensors

# slow as a whole: it builds megatron-core modules on CPU
pytestmark = [pytest.mark.ground_truth, pytest.mark.slow]

# the last stage of PP 2 over 4 layers holds 2 of them, the MTP layer and the output layer
MODEL = cases.LLAMA.replace(name="llama_tiny_mtp", num_layers=4, mtp_layers=1)
STAGE_LAYERS = 2


def _build(rank: int, world: int, port: int, out: str) -> None:
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec, get_gpt_mtp_block_spec
    from megatron.core.models.gpt.gpt_model import GPTModel

    mh.init_distributed(rank, world, port)
    cfg = dataclasses.replace(mh.transformer_config(MODEL.replace(num_layers=STAGE_LAYERS), cases.cand()),
                              mtp_num_layers=1)
    spec = get_gpt_layer_local_spec(normalization=cfg.normalization)
    gpt = GPTModel(cfg, spec, vocab_size=padded_vocab(MODEL.vocab, 1), max_sequence_length=MODEL.max_position_embeddings,
                   position_embedding_type="rope", pre_process=False, post_process=True,
                   mtp_block_spec=get_gpt_mtp_block_spec(cfg, spec, use_transformer_engine=False))
    numel: dict[str, int] = {}
    for name, p in gpt.named_parameters():
        numel[name.split(".")[0]] = numel.get(name.split(".")[0], 0) + p.numel()
    Path(out).write_text(json.dumps(numel))
    mh.shutdown()


def test_a_stage_running_mtp_builds_its_own_embedding(tmp_path: Path) -> None:
    out = tmp_path / "numel.json"
    mh.run_spawned(_build, 1, str(out))
    measured: dict[str, Any] = json.loads(out.read_text())
    k = from_candidate(Candidate(pp=2, gbs=2, seq_len=cases.SEQ, sharding="none"), 2)
    ours: dict[str, int] = {}
    for t in stage_tensors(MODEL, k, 1):
        top = {"mtp_embedding_copy": "embedding"}.get(t.name.split(".")[0], t.name.split(".")[0])
        ours[top] = ours.get(top, 0) + t.numel
    assert measured == ours
    assert measured["embedding"] > 0
