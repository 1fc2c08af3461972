"""What a model, GPU, cluster or knob field can physically be: a count of zero nodes or heads, a negative
bandwidth or query groups that do not divide the heads are refused where they are written, rather
than found later as a division by zero in the memory account or the projection. So is a value above
anything a machine or a model has been or will soon be (``CEILINGS``): such a number only overflows
the checks' 64-bit arrays or makes the account walk a million layers to say nothing fits."""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs

from primus_lang.ir.hardware import Cluster
from primus_lang.ir.model import Mamba, Model, Moe
from primus_lang.ir.quantity import META_DOC, META_KIND, Kind, kind_of, lowest


class Problem(NamedTuple):
    field: str
    message: str
    help: str
    too_large: bool = False  # above the field's ceiling (P3017) rather than outside its range (P3009)

# The largest value of a field, by name (a name means the same quantity in every block that has it),
# each far above the largest published one (in brackets) so no real recipe comes near:
_LAYERS = 4096  # [126, Llama 3.1 405B; DeepNet trained 1,000]
MAX_WORLD = 2**20  # GPUs in one job [100,000-GPU clusters]
CEILINGS: dict[str, int | float] = {
    "num_layers": _LAYERS, "layers": _LAYERS, "dense_layers": _LAYERS, "mtp_layers": _LAYERS,
    "first_stage_layers": _LAYERS, "last_stage_layers": _LAYERS, "vpp": _LAYERS, "offload_layers": _LAYERS,
    "hidden": 2**17, "latent": 2**17, "kv_lora_rank": 2**17, "q_lora_rank": 2**17,  # [18,432]
    "ffn_hidden": 2**20, "shared_ffn_hidden": 2**20,  # [73,728]
    "heads": 4096, "kv_heads": 4096, "groups": 4096,  # [128]
    "head_dim": 2**14, "qk_nope_head_dim": 2**14, "qk_rope_head_dim": 2**14, "v_head_dim": 2**14,
    "state_dim": 2**14, "conv_kernel": 1024, "chunk": 2**16,
    "vocab": 2**24,  # [262,144]
    "seq_len": 2**22,  # [1M-token context training]; squared by unfused attention's scores
    "max_position_embeddings": 2**24, "sliding_window": 2**24, "attention_chunk": 2**24,  # [10M, Llama 4 Scout]
    "num_experts": 2**14, "top_k": 2**14, "shared_experts": 1024,  # [512 experts]
    "nodes": 2**17, "gpus_per_node": 1024, "nics_per_node": 1024,
    "scale_up_domain": MAX_WORLD,
    "tp": MAX_WORLD, "pp": MAX_WORLD, "cp": MAX_WORLD, "ep": MAX_WORLD, "etp": MAX_WORLD,
    "gbs": 2**24, "mbs": 2**16,  # [16,384 sequences; 8]
    "rope_theta": 1e12,  # [10^6]
    "norm_epsilon": 1.0,  # [1e-5]
    "attention_softcap": 1e4, "logit_softcap": 1e4,  # [50, Gemma 2]
    "glu_offset": 1e4, "activation_clamp": 1e4,  # [1 and 7, gpt-oss]
    "full_attention_every": _LAYERS,  # [6, Gemma 3]
    "aux_loss": 1e3,  # [0.9]
    "rope_scaling": 1e4, "topk_scaling": 1e4,  # [32, Llama 3.2; 16, DeepSeek-V2]
    "router_groups": 2**14, "router_group_topk": 2**14,  # [8]
    "time_limit": 365 * 86400.0,  # a site's Slurm limit [2-00:00:00]
}
# Fields the table does not name, by kind: [2.5 PFLOP/s BF16, 288 GB, 8 TB/s, 10 us]
KIND_CEILINGS: dict[Kind, int | float] = {
    Kind.COUNT: 2**24, Kind.NUMBER: 1e15, Kind.BYTES: 2**50, Kind.BANDWIDTH: 1e15, Kind.FLOPS: 1e18,
    Kind.TIME: 3600.0,
}


# A space's assumptions (``assume NAME = ...``) that are numbers: (least, largest, what the number is).
SETTING_RANGES: dict[str, tuple[float, float, str]] = {
    # the busiest expert rank's load over the mean, so never below 1; the busiest rank holding every
    # token of 100 ranks is already a collapsed router
    "moe_imbalance": (1.0, 100.0, "the busiest expert rank's load over the mean: 1 is perfect balance, "
                      "measured runs give 1.05-1.12"),
}


def highest(field: attrs.Attribute[Any]) -> int | float | None:
    """The largest value ``field`` may take; None for fields that hold no magnitude."""
    if field.name in CEILINGS:
        return CEILINGS[field.name]
    return KIND_CEILINGS.get(field.metadata.get(META_KIND))  # type: ignore[arg-type]


def ceiling_problem(field: attrs.Attribute[Any], value: Any) -> Problem | None:
    """``value`` above ``field``'s ceiling (an infinite one included), as a problem to report."""
    top = highest(field)
    if top is None or not isinstance(value, int | float) or isinstance(value, bool) or value <= top:
        return None
    shown, limit = _show(field, value), _show(field, top)
    return Problem(field.name, f"`{field.name}` is {shown}, above the largest it can be ({limit})",
                   f"{field.metadata.get(META_DOC, field.name)}: no machine or model comes near {limit}; "
                   f"check the digits{' and the unit' if kind_of(field) in _SHOWN_IN else ''}", True)


def _show(field: attrs.Attribute[Any], value: int | float) -> str:
    kind = kind_of(field)
    if kind in _SHOWN_IN:
        scale, unit = _SHOWN_IN[kind]
        return f"{value / scale:,.6g} {unit}"
    return _plain(value)


_SHORTENED = 1e15  # beyond this a value is a typo whose every digit says nothing: 1e308 in full is 309 of them


def _plain(value: int | float) -> str:
    if abs(value) <= _SHORTENED:
        return f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
    try:
        return f"{float(value):.6g}"
    except OverflowError:  # an integer past the largest float
        return "more than 1.8e+308"


_SHOWN_IN = {Kind.BYTES: (2**40, "TiB"), Kind.BANDWIDTH: (1e12, "TB/s"), Kind.FLOPS: (1e15, "PFLOP/s"),
             Kind.TIME: (1.0, "s")}


# A positive share of a peak or rate below this is no efficiency a part has, only a typo: every time
# divides by it, and 5e-324 overflowed a step to infinite seconds
FRACTION_FLOOR = 1e-4


def _bound(field: attrs.Attribute[Any], value: Any) -> Problem | None:
    bound = lowest(field)
    if bound is None or not isinstance(value, int | float) or isinstance(value, bool):
        return None
    low, strict = bound
    if kind_of(field) is Kind.FRACTION and strict and 0 < value < FRACTION_FLOOR:
        return Problem(field.name, f"`{field.name}` must be at least {FRACTION_FLOOR:g}, not {value:g}",
                       f"{field.metadata.get(META_DOC, '')}: a share below {FRACTION_FLOOR:.2%} is no efficiency "
                       "a part has")
    if value > low or (value == low and not strict):
        return None
    if kind_of(field) is Kind.COUNT:
        need = "at least 1" if low else "0 or more"
    else:
        need = "positive" if strict else "0 or more"
    return Problem(field.name, f"`{field.name}` must be {need}, not {value:g}", str(field.metadata.get(META_DOC, "")))


def _divides(values: dict[str, Any], part: str, whole: str, why: str) -> Problem | None:
    a, b = values.get(part), values.get(whole)
    if isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0 and b % a:
        return Problem(part, f"`{part}` ({a}) must divide `{whole}` ({b})", why)
    return None


def range_problems(cls: type, values: dict[str, Any]) -> list[Problem]:
    """Each field of ``values`` (a block about to become ``cls``) outside its range, in field order."""
    out = [p for f in attrs.fields(cls) if f.name in values
           and (p := _bound(f, values[f.name]) or ceiling_problem(f, values[f.name])) is not None]
    if any(p[0] in ("heads", "kv_heads", "groups", "top_k", "num_experts", "nodes", "gpus_per_node") for p in out):
        return out  # a relation between fields already out of range says nothing more
    related: list[Problem | None] = []
    if cls is Model:
        related.append(_divides(values, "kv_heads", "heads", "each key/value head serves heads/kv_heads query heads"))
        related.append(_dense_layers(values))
        moe = values.get("moe")
        if values.get("pattern") and getattr(moe, "layer_cycle", "E") != "E":
            # said at the MoE block rather than the model's brace, where the model's own check would put it
            related.append(Problem("moe", "a hybrid model says which layers are MoE in its `pattern` (`E`), not in "
                                   "`moe.layer_cycle`", "remove `layer_cycle`, or write the layers in the pattern"))
    elif cls is Mamba:
        related.append(_divides(values, "groups", "heads", "each B/C group serves heads/groups SSM heads"))
    elif cls is Cluster:
        n, g = values.get("nodes"), values.get("gpus_per_node")
        if isinstance(n, int) and isinstance(g, int) and n * g > MAX_WORLD:
            related.append(Problem("nodes", f"{n:,} nodes of {g:,} GPUs are {n * g:,} GPUs, more than the "
                                   f"{MAX_WORLD:,} one job can span", "check `nodes` and `gpus_per_node`", True))
    elif cls is Moe:
        k, n = values.get("top_k"), values.get("num_experts")
        if isinstance(k, int) and isinstance(n, int) and k > n:
            related.append(Problem("top_k", f"`top_k` ({k}) cannot exceed `num_experts` ({n})",
                            "a token is routed to top_k distinct experts"))
        related.append(_router_groups(values))
        cycle = values.get("layer_cycle", "E")
        if isinstance(cycle, str) and (not cycle or set(cycle) - {"-", "E"} or "E" not in cycle):
            related.append(Problem("layer_cycle", f"`layer_cycle` is \"{cycle}\": it is `E` (experts) and `-` (a "
                                   "dense MLP), one a layer, with at least one `E`",
                                   "e.g. `layer_cycle = \"-E\"` for a dense layer then a MoE one, repeated"))
        if values.get("router_pre_softmax") and values.get("router_score", "softmax") != "softmax":
            related.append(Problem("router_pre_softmax", "`router_pre_softmax` needs `router_score = softmax`",
                            "it orders a softmax before the top-k; a sigmoid router has no softmax"))
        if values.get("bias_balancing") and values.get("router_score", "softmax") != "sigmoid":
            related.append(Problem("bias_balancing", "`bias_balancing` needs `router_score = sigmoid`",
                            "Megatron balances with an expert bias only on sigmoid scores"))
    return out + [p for p in related if p is not None]


def _dense_layers(values: dict[str, Any]) -> Problem | None:
    """A MoE's leading dense layers must leave it MoE layers (a config's `first_k_dense_replace` of 100
    on a 61-layer model was read as a model of dense layers that still called itself a MoE)."""
    dense, n = getattr(values.get("moe"), "dense_layers", None), values.get("num_layers")
    if isinstance(dense, int) and isinstance(n, int) and n > 0 and dense >= n:
        return Problem("moe", f"`dense_layers` ({dense}) leaves none of the {n} layers a MoE layer",
                       "`dense_layers` counts the leading layers with a dense MLP; the rest route to experts")
    cycle = getattr(values.get("moe"), "layer_cycle", "E")
    if isinstance(dense, int) and isinstance(n, int) and isinstance(cycle, str) and len(cycle) > max(n - dense, 1):
        return Problem("moe", f"`layer_cycle` \"{cycle[:40]}\" is {len(cycle)} layers long, more than the "
                       f"{max(n - dense, 0)} layer(s) after the dense ones it repeats over",
                       "write the cycle that repeats (`\"-E\"`: a dense layer, then a MoE one)")
    return None


def _router_groups(values: dict[str, Any]) -> Problem | None:
    """Group-limited routing as megatron-core's TransformerConfig asserts it (0.16.1): both counts or
    neither, groups that split the experts evenly, no more groups picked than there are, and a top-k
    the picked groups share evenly (moe_utils.group_limited_topk takes top_k // group_topk per group)."""
    groups, pick = values.get("router_groups", 0), values.get("router_group_topk", 0)
    n, k = values.get("num_experts"), values.get("top_k", 2)
    if not (isinstance(groups, int) and isinstance(pick, int)) or (groups == 0 and pick == 0):
        return None
    why = "megatron-core's group-limited routing (TransformerConfig, moe_utils.group_limited_topk)"
    if not groups or not pick:
        return Problem("router_groups", "`router_groups` and `router_group_topk` go together", f"give both: {why}")
    if isinstance(n, int) and n % groups:
        return Problem("router_groups", f"{groups} router groups do not split {n} experts evenly",
                       f"use a divisor of `num_experts`: {why}")
    if pick > groups:
        return Problem("router_group_topk", f"`router_group_topk` ({pick}) exceeds `router_groups` ({groups})", why)
    if isinstance(k, int) and k % pick:
        return Problem("router_group_topk", f"`top_k` ({k}) is not shared evenly by {pick} groups",
                       f"`top_k` must be a multiple of `router_group_topk`: {why}")
    return None


def object_problems(obj: Any) -> list[Problem]:
    """``range_problems`` of an IR object built in Python (a card read from YAML, say), its nested
    blocks included."""
    values = {f.name: getattr(obj, f.name) for f in attrs.fields(type(obj))}
    out = range_problems(type(obj), values)
    for value in values.values():
        if attrs.has(type(value)):
            out += object_problems(value)
    return out
