"""Memory, the projection and the benchmark oracle read one value for each per-rank fact.

Each stage builds one rank's layer its own way (memory as tensors and saved activations, the
projection as ops, the benchmark as torch modules); ``ir.derived`` owns the facts they share. Here
every stage's own structure is read back on legal points of every example and compared with the
owner's value: query and key/value heads, Mamba heads, the padded vocabulary per rank, the virtual
stages a rank builds and the bytes of gradients and optimizer moments. Before these had one owner,
the projection's output layer had the unpadded vocabulary while memory's had the padded one.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from primus_lang.bench.gpt import layer_params, outer_params
from primus_lang.check import legal_points
from primus_lang.ir import Candidate, Cluster, Model, derived
from primus_lang.lower import load_program
from primus_lang.memory.activations import dims
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.params import embedding_tensors, head_tensors, layer_tensors
from primus_lang.project.build import stage_ops
from primus_lang.project.ops import Attention, Gemm
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))


def _points(path: Path, n: int = 12) -> tuple[Model, Cluster, list[Candidate]]:
    (space,) = load_program(path).spaces
    return space.model, space.cluster, list(itertools.islice(legal_points(space), 0, 40 * n, 40))


def _ops(model: Model, cluster: Cluster, cand: Candidate) -> tuple[list[object], int]:
    stages = stage_ops(model, cluster, cand)
    ops = [t.op for st in stages for chunk in st.chunks for block in chunk for t in block.tasks]
    return ops, max(len(st.chunks) for st in stages)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_stages_read_one_value_per_fact(path: Path) -> None:
    model, cluster, cands = _points(path)
    assert cands
    for cand in cands:
        tp, h = cand.tp, model.hidden
        heads, kv = derived.heads_per_rank(model.heads, tp), derived.heads_per_rank(model.kv_heads, tp)
        vocab = derived.vocab_per_rank(model.vocab, tp)
        knobs = from_candidate(cand, cluster.world)
        ops, chunks = _ops(model, cluster, cand)

        # virtual stages: what memory lays out and how many chunks the projection schedules
        assert knobs.vpp == chunks == derived.virtual_stages(cand.schedule, cand.vpp), cand.label()
        # bytes per element of the gradient buffer and the optimizer's moments
        assert knobs.grad_bytes == derived.dtype_bytes(cand.main_grad_dtype)
        assert knobs.state_bytes == derived.dtype_bytes(cand.optimizer_dtype)

        # the output layer: memory's weight and the projection's logits GEMM have one padded width
        (out_w,) = [t for t in head_tensors(model, tp, cand.pp, cand.ep, cand.expert_tp) if t.name == "output_layer.weight"]
        (emb_w,) = embedding_tensors(model, tp)[:1]
        assert out_w.numel == emb_w.numel == vocab * h
        logits = [op for op in ops if isinstance(op, Gemm) and op.k == h and op.n == vocab]
        assert logits, f"{cand.label()}: no output GEMM of {vocab} columns in the projection"

        if model.mla is None and model.mamba is None:
            # heads: memory's activation dims and the projection's attention kernels
            d = dims(model, knobs)
            assert (d.a, d.g) == (heads, kv)
            assert {op.heads for op in ops if isinstance(op, Attention)} == {heads}
        if model.mla is None and model.mamba is None and model.moe is None and not model.attention_sinks:
            # the benchmark oracle's layer (dense, no sinks) and outer modules have memory's counts
            mem_layer = sum(t.numel for t in layer_tensors(model, tp, 1, tp, False))
            assert layer_params(model, tp) == mem_layer, cand.label()
            assert outer_params(model, tp) - 2 * vocab * h == outer_params(model, 1) - 2 * derived.vocab_per_rank(
                model.vocab, 1) * h


def test_padding_and_per_rank_rules() -> None:
    assert derived.padded_vocab(128_256, 1) == 128_256  # Llama 3: a multiple of 128 already
    assert derived.padded_vocab(128_256, 8) == 129_024  # but not of 1,024
    assert derived.padded_vocab(50_257, 1) == 50_304  # GPT-2's 50,257 rounded to 128
    assert derived.vocab_per_rank(50_257, 4) == 50_688 // 4
    assert derived.heads_per_rank(8, 16) == 1  # a point legality rejects still has one head
    assert derived.virtual_stages("zbv", 1) == 2
    assert derived.virtual_stages("interleaved", 4) == 4
