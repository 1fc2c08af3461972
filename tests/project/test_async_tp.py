"""Overlapped TP communication hides under the GEMMs it is pipelined with: (TP-1)/TP of the linears
of its own attention or MLP, shared by that part's collectives (project/projection.py)."""

from __future__ import annotations

import pytest

from primus_lang.ir import Candidate
from primus_lang.project import project
from primus_lang.project.collectives import group_layout
from primus_lang.project.ops import Block, Collective, Compute, Gemm, Task
from primus_lang.project.projection import block_passes

from .fixtures import H100, LLAMA3_1_8B, cluster


class _Fixed:
    """An oracle that times a GEMM by its ``m`` (seconds) and a collective by its bytes (seconds)."""

    def compute(self, op: Compute) -> float:
        assert isinstance(op, Gemm)
        return float(op.m)

    def collective(self, op: Collective) -> float:
        return float(op.bytes)


def _block(tp: int, comm: list[tuple[str, int]]) -> Block:
    group = group_layout(tp, 1, 8)
    tasks = [Task(Gemm(4, 1, 1), "F", part="attn"), Task(Gemm(20, 1, 1), "F", part="mlp")]
    tasks += [Task(Collective("all_gather", seconds, group), "F", "tp_comm", hides_under="gemm", part=part)
              for part, seconds in comm]
    return Block("layer", tuple(tasks))


def _forward(tp: int, comm: list[tuple[str, int]], overlap: bool = True, slowdown: float = 0.0) -> dict[str, float]:
    cand = Candidate(tp=tp, tp_comm_overlap=overlap, mbs=1, gbs=8, seq_len=4096)
    f, _, _ = block_passes(_block(tp, comm), cand, _Fixed(), 1.0, 0.0, slowdown)
    return f.parts


def test_a_collective_hides_under_its_own_parts_gemms_less_one_chunk() -> None:
    # 6 s of attention all-gather at TP 4 against 4 s of attention GEMMs: 3 s hide, 3 s show, though
    # the MLP's 20 s of GEMMs could have covered it all
    assert _forward(4, [("attn", 6)])["tp_comm"] == pytest.approx(3.0)
    assert _forward(8, [("attn", 6)])["tp_comm"] == pytest.approx(6 - 4 * 7 / 8)
    assert _forward(4, [("mlp", 6)])["tp_comm"] == pytest.approx(0.0)
    assert _forward(4, [("attn", 6)], overlap=False)["tp_comm"] == pytest.approx(6.0)


def test_the_collectives_of_one_part_share_its_gemms() -> None:
    # two 2 s collectives against 4 s of attention GEMMs at TP 4: 3 s of them can overlap, so the
    # first hides whole and the second by half
    assert _forward(4, [("attn", 2), ("attn", 2)])["tp_comm"] == pytest.approx(1.0)
    assert _forward(4, [("attn", 2), ("mlp", 2)])["tp_comm"] == pytest.approx(0.0)
    # what hides still slows the GEMMs by the overlap cost
    assert _forward(4, [("attn", 2)], slowdown=0.25)["tp_comm"] == pytest.approx(0.25 * 2)


def test_async_tp_gains_less_where_the_attention_linears_are_small() -> None:
    """Llama 3 8B at TP 8 (GQA: the q/k/v and output linears are a fifth of the layer's GEMMs):
    the attention's gather and scatter outlast its linears, so overlap gains less there."""
    base = Candidate(tp=8, mbs=2, gbs=64, seq_len=8192)
    plain = project(LLAMA3_1_8B, cluster(H100, nodes=1), base)
    overlapped = project(LLAMA3_1_8B, cluster(H100, nodes=1), base.replace(tp_comm_overlap=True))
    assert overlapped.step_time < plain.step_time
    assert dict(overlapped.breakdown)["tp_comm"] > 0.0
