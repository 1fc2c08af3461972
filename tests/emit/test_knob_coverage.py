"""Every knob of `Candidate` reaches the emitted arguments: changing it changes the Megatron argv and
the Primus overrides. A knob added to the IR fails here until the emitters express it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from primus_lang.emit import emit
from primus_lang.ir import KNOBS, Recompute
from tests.emit.harness import all_cases, context

# From the mixtral_h100 case (tp 2, pp 2, vpp 2, cp 2, ep 8, etp 1, flex, a2a, interleaved, EP overlap),
# one legal change per knob; knobs that only matter together with another change carry it along.
CHANGES: dict[str, dict[str, Any]] = {
    "tp": {"tp": 4},
    "pp": {"pp": 4},
    "vpp": {"vpp": 4},
    "first_stage_layers": {"first_stage_layers": 18},  # 32 layers at PP 2, VPP 2: 18 + 14
    "last_stage_layers": {"last_stage_layers": 14},
    # 33 units (32 layers and the embedding or the loss) split only at PP 1
    "account_for_embedding": {"account_for_embedding": True, "pp": 1, "schedule": "1f1b", "vpp": 1},
    "account_for_loss": {"account_for_loss": True, "pp": 1, "schedule": "1f1b", "vpp": 1},
    # mixtral's 32 layers at PP 2 x VPP 2, unevenly: 7, 9, 9 and 7 decoder layers a virtual stage
    "pipeline_layout": {"pipeline_layout": "Et*7|t*9|t*9|t*7L"},
    "cp": {"cp": 1},
    "ep": {"ep": 4},
    "etp": {"etp": 2},
    "mbs": {"mbs": 2},
    "gbs": {"gbs": 1024},
    "seq_len": {"seq_len": 8192},
    "precision": {"precision": "fp8"},
    "fp8_recipe": {"precision": "fp8", "fp8_recipe": "delayed"},
    "fp8_format": {"precision": "fp8", "fp8_format": "e4m3"},
    "recompute": {"recompute": Recompute("selective")},
    # megatron-core offloads activations only without PP (TransformerConfig)
    "offload_layers": {"offload_layers": 8, "pp": 1, "schedule": "1f1b", "vpp": 1},
    "sharding": {"sharding": "none", "overlap_param_gather": False},
    "schedule": {"schedule": "1f1b", "vpp": 1, "ep_comm_overlap": False},
    "sequence_parallel": {"sequence_parallel": False, "ep": 1, "ep_comm_overlap": False},  # EP x TP needs SP
    "attention": {"attention": "unfused"},
    "cp_comm": {"cp_comm": "p2p"},
    "cross_entropy": {"cross_entropy": "te"},
    "moe_dispatcher": {"moe_dispatcher": "alltoall"},
    "tp_comm_overlap": {"tp_comm_overlap": True},
    "overlap_grad_reduce": {"overlap_grad_reduce": False, "overlap_param_gather": False},
    "overlap_param_gather": {"overlap_param_gather": False},
    "ep_comm_overlap": {"ep_comm_overlap": False},
    "cuda_graph": {"cuda_graph": "attn_moe_router"},  # legal with the EP overlap; `full` is not
    "fp8_param_gather": {"precision": "fp8", "fp8_param_gather": True},
    "main_grad_dtype": {"main_grad_dtype": "bf16"},
    "optimizer_dtype": {"optimizer_dtype": "bf16"},
}
# Compared against the base with these companions applied too, so only the knob itself differs.
BASE_COMPANIONS: dict[str, dict[str, Any]] = {
    "account_for_embedding": {"pp": 1, "schedule": "1f1b", "vpp": 1},
    "account_for_loss": {"pp": 1, "schedule": "1f1b", "vpp": 1},
    "offload_layers": {"pp": 1, "schedule": "1f1b", "vpp": 1},
    "fp8_recipe": {"precision": "fp8"},
    "fp8_format": {"precision": "fp8"},
    "fp8_param_gather": {"precision": "fp8"},
    "overlap_grad_reduce": {"overlap_param_gather": False},
    "sequence_parallel": {"ep": 1, "ep_comm_overlap": False},
}


def test_every_knob_has_a_change() -> None:
    assert set(CHANGES) == set(KNOBS)


def _outputs(changes: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(**changes)
    megatron = emit(space, cand, "megatron+local", context())["node.sh"]
    args = megatron[megatron.index("ARGS=("):megatron.index("\n)\n")]
    primus = emit(space, cand, "primus+local", context())["experiment.yaml"]
    return args, yaml.safe_load(primus)["modules"]["pre_trainer"]["overrides"]


@pytest.mark.parametrize("knob", sorted(CHANGES))
def test_knob_changes_the_launch(knob: str) -> None:
    base_args, base_overrides = _outputs(BASE_COMPANIONS.get(knob, {}))
    args, overrides = _outputs(CHANGES[knob])
    assert args != base_args
    assert overrides != base_overrides
