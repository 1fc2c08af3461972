"""Which carried settings the importer says are not modelled: on values only, however a recipe writes them."""

from __future__ import annotations

import pytest

from primus_lang.recipes.unmodelled import UNMODELLED, unmodelled_notes


@pytest.mark.parametrize(("dest", "value", "said"), [
    ("fine_grained_activation_offloading", True, True),
    ("fine_grained_activation_offloading", "true", True),
    ("fine_grained_activation_offloading", False, False),
    ("fine_grained_activation_offloading", "false", False),
    ("moe_paged_stash", True, True),
    ("num_distributed_optimizer_instances", 1, False),
    ("num_distributed_optimizer_instances", 4, True),
    ("num_distributed_optimizer_instances", "4", True),
    ("num_distributed_optimizer_instances", "1", False),  # a command line's text
    ("moe_expert_capacity_factor", None, False),
    ("moe_expert_capacity_factor", 1.0, True),  # a capacity of exactly the mean still drops the excess
    ("moe_expert_capacity_factor", "1.0", True),
    ("moe_expert_capacity_factor", "None", False),
    ("optimizer", "adam", False),
    ("optimizer", "dist_muon", True),
    ("optimizer_cpu_offload", "false", False),
    ("bridge__model__cpu_offloading_weights", "true", True),  # a Bridge field, under its passthrough name
    ("no_fp8_weight_transpose_cache", True, True),  # Primus's own switches
    ("no_fp8_weight_transpose_cache", False, False),
    ("use_fsdp2_fp32_param_optimizer", "true", True),
    ("fsdp_prefetch_depth", 1, False),
    ("fsdp_prefetch_depth", 2, True),
    ("tensor_model_parallel_size", 4, False),  # modelled: never said
])
def test_on_values_only(dest: str, value: object, said: bool) -> None:
    notes = unmodelled_notes([(dest, value)])
    assert bool(notes) == said
    if said:
        assert notes[0].startswith(f"`{dest}` = ") and UNMODELLED[dest] in notes[0]
