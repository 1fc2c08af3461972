"""primusc's account against real megatron-core 0.16.1 modules built on CPU: exact byte equality."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("megatron.core")
pytest.importorskip("torch")

import ground_truth_cases as cases

from primus_lang.ir import Settings
from primus_lang.memory import account
from primus_lang.memory.activations import dims, softmax_kernel_runs
from primus_lang.memory.knobs import from_candidate

# slow as a whole: the module's fixture builds the megatron-core modules (seconds) before its first test
pytestmark = [pytest.mark.ground_truth, pytest.mark.slow]

# group -> (world, TP, EP, ETP: None for megatron's default, ETP = TP)
GROUPS = {"SINGLE": (1, 1, 1, None), "TP2": (2, 2, 1, None), "EP2": (2, 1, 2, None), "TP2ETP1": (2, 2, 1, 1)}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    from ground_truth_worker import run_group

    out = str(tmp_path_factory.mktemp("gt"))
    results: dict[str, list[dict[str, Any]]] = {}
    for group, (world, tp, ep, etp) in GROUPS.items():
        per_rank = run_group(group, world, tp, ep, out, etp)
        for name in per_rank[0]:
            results[name] = [r[name] for r in per_rank]
    return results


def _all_cases() -> list[tuple[str, int, cases.Case]]:
    out = []
    for group, (world, _, _, _) in GROUPS.items():
        out += [(group, world, c) for c in getattr(cases, group)]
    return out


def _softmax_path_agrees(got: dict[str, int], model: Any, cand: Any, world: int, name: str) -> None:
    """megatron-core took the softmax path the account's rule (Transformer Engine's) names, unless
    the case switches the fusion off on purpose."""
    if cand.attention != "unfused" or cand.recompute.kind == "selective":
        return
    if cases.CONFIG.get(name, {}).get("masked_softmax_fusion") is False:
        assert got["fused"] == 0
        return
    runs = bool(softmax_kernel_runs(dims(model, from_candidate(cand, world))))
    assert (got["fused"] > 0, got["torch"] > 0) == (runs, not runs)


def _bytes(terms: Any, prefix: str) -> int:
    return sum(t.bytes for t in terms if t.name.startswith(prefix))


@pytest.mark.parametrize("group,world,case", _all_cases(), ids=[c[2][0] for c in _all_cases()])
def test_exact_bytes(measured: dict[str, list[dict[str, Any]]], group: str, world: int, case: cases.Case) -> None:
    name, model, cand, what = case
    per_rank = measured[name]
    for r in per_rank:
        assert "error" not in r, r["error"]
    acc = account(model, cases.cluster(world), cand, Settings(moe_imbalance=1.0))
    rank = acc.ranks[0]
    for got in per_rank:  # every rank of a stage holds the same bytes
        if what == "params":
            want = _bytes(rank.terms, "parameters bf16")
            assert got["params"] == want
        elif what == "activations":
            assert got["activations"] == _bytes(rank.terms, "act: ")
            _softmax_path_agrees(got, model, cand, world, name)
        elif what == "peak":
            transient = rank.term("backward transient")
            recomputed = dict(transient.inputs).get("recomputed bytes", 0)
            assert got["peak"] == _bytes(rank.terms, "act: ") + recomputed
            _softmax_path_agrees(got, model, cand, world, name)
        else:
            assert got["grad"] == rank.term("gradients").bytes
            assert got["param"] == rank.term("parameters bf16").bytes
            if cand.ep == 1:  # megatron-core keeps experts in the dense buffer at EP 1
                assert got["grad_expert"] == got["param_expert"] == 0
            else:
                assert got["grad_expert"] == rank.term("gradients (experts)").bytes
                assert got["param_expert"] == rank.term("parameters bf16 (experts)").bytes
