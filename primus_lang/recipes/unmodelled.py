"""Settings a recipe may carry whose cost the projection and the memory account leave out: each is
carried to the launch as the recipe wrote it, and the import says what the space's numbers miss.

Keys are Megatron's argument names (a Megatron-Bridge field is read under the argument it holds:
``emit/bridge.py``'s ``dest_of``); a setting at its off value (false, 0, 1 instance, none) says nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from primus_lang.ir.candidate import format_value

UNMODELLED: dict[str, str] = {
    "fine_grained_activation_offloading": "moves the saved tensors of the modules `offload_modules` names to host "
                                          "memory; the account keeps them on the GPU, and their copies are not costed "
                                          "(layer-wise offloading is `offload_layers`)",
    "moe_paged_stash": "keeps MoE activations in paged stash buffers sized by the routing, not in the account's "
                       "per-layer tensors",
    "num_distributed_optimizer_instances": "shards the optimizer state over DP / instances ranks, not over all of DP "
                                           "as the account does: each rank holds that many times more",
    "moe_expert_capacity_factor": "caps (and with `moe_pad_expert_input_to_capacity` pads) the tokens each expert "
                                  "takes; the projection routes every token (dropless)",
    "optimizer": "is not Adam: the account holds Adam's two moments beside the FP32 master weights, and the step "
                 "is costed as Adam's (Muon keeps one momentum and runs Newton-Schulz iterations on every matrix)",
    # a Megatron-Bridge field no Megatron argument holds: carried under its passthrough name
    "bridge__model__cpu_offloading_weights": "offloads the offloaded layers' weights too; the account keeps them on "
                                             "the GPU",
    # Primus's own settings (primus/backends/megatron/patches, core/distributed at v26.5.1)
    "no_fp8_weight_transpose_cache": "builds Transformer Engine's linears without the cached transposed FP8 "
                                     "weight (made again in each backward); the account keeps that copy, a "
                                     "byte per GEMM weight in flight",
    "use_fsdp2_fp32_param_optimizer": "keeps torch FSDP2's parameter shards in FP32 (no BF16 copy, no separate "
                                      "master) and casts to BF16 at each gather; the account holds BF16 shards "
                                      "beside FP32 masters, the same 16 bytes a parameter split otherwise",
    "fsdp_prefetch_depth": "gathers that many torch FSDP2 units ahead; the account holds one unit in flight "
                           "beside the one computing",
}
# A Megatron-Bridge recipe's own fields that no Megatron-LM argument holds (so none is carried or read as a
# knob) and that change what the projection counts: said where the launched recipe sets them, since the
# launch runs them by naming the recipe
BRIDGE_RECIPE_UNMODELLED: dict[str, str] = {
    "mixed_precision.fp8_dot_product_attention": "runs attention's dot products in FP8 (Transformer Engine's FP8 "
                                                 "fused attention); the projection and the account run attention in "
                                                 "BF16, so read the projection as slow",
}
# read by the importer (recipes/interpret.py): a Bridge launch's choice of what layer-wise offloading moves
# (its passthrough name, as emit/bridge.py's passthrough_key spells a field no Megatron argument holds), and
# Megatron's optimizer offload, which it refuses
OFFLOAD_ACTIVATIONS = "bridge__model__cpu_offloading_activations"
OFFLOAD_OPTIMIZER = "optimizer_cpu_offload"
# each setting's off value, as Megatron's default has it
_OFF: dict[str, object] = {"fine_grained_activation_offloading": False, "moe_paged_stash": False,
                           "num_distributed_optimizer_instances": 1, "moe_expert_capacity_factor": None,
                           "optimizer": "adam", "bridge__model__cpu_offloading_weights": False,
                           "no_fp8_weight_transpose_cache": False, "use_fsdp2_fp32_param_optimizer": False,
                           "fsdp_prefetch_depth": 1}


def _on(dest: str, value: object) -> bool:
    if isinstance(value, str):  # a command line's or a Hydra override's text
        value = {"true": True, "false": False, "none": None, "null": None, "": None}.get(value.lower(), _number(value))
    off = _OFF[dest]
    # a switch left unset (None) is off too
    return value not in (False, None) if off is False else value != off


def _number(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def unmodelled_notes(carried: Iterable[tuple[str, object]]) -> list[str]:
    """A note for each carried setting, on, whose cost is left out."""
    return [f"`{dest}` = {format_value(value)} is carried to the launch, not modelled: it {UNMODELLED[dest]}"
            for dest, value in carried if dest in UNMODELLED and _on(dest, value)]
