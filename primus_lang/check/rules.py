"""Megatron's legality rules, each a registered P4 code, written once over frames (numpy arrays).

A rule declares the knobs it reads, so the checker can count its removals over the product of
those axes only. ``ok`` judges a whole frame; ``explain`` words one failing point.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from attrs import frozen

from primus_lang.diagnostics import Code
from primus_lang.diagnostics import codes_legality as L
from primus_lang.frameworks import megatron, megatron_of, rules, spelling
from primus_lang.ir import derived
from primus_lang.ir.candidate import Recompute
from primus_lang.ir.model import Mamba
from primus_lang.ir.pipeline import Split, chunk_sizes, problems
from primus_lang.ir.space import Space

Env = Mapping[str, Any]


@frozen
class Rule:
    code: Code
    reads: tuple[str, ...]  # knob names
    ok: Callable[[Env, Space], Any]
    explain: Callable[[Env, Space], tuple[str, str]]  # (message, help) for one failing point


def _offload_clash(space: Space) -> str:
    """A setting the space carries on (a recipe's, in its passthrough) that megatron-core's TransformerConfig
    refuses beside layer-wise offloading: module-wise offloading (0.16.1 on), paged MoE stashes; "" if none."""
    carried = dict(space.passthrough)
    for name in ("fine_grained_activation_offloading", "moe_paged_stash"):
        value = carried.get(name)
        if value is True or str(value).lower() == "true":
            return name
    return ""


def _full_graph_takes_offload(space: Space) -> bool:
    # megatron-core 0.16.1 refuses every CUDA graph beside offloading; from core_v0.18 (and the commits
    # Megatron-Bridge pins) it refuses all but the full-iteration graph
    return megatron.at_least(_megatron_of(space), "core_v0.18")


def _graphs_take_offload(f: Env, s: Space) -> Any:
    graph = np.asarray(f["cuda_graph"])
    return (graph == "none") | ((graph == "full") & _full_graph_takes_offload(s))


def _offload_refusal(f: Env, s: Space) -> tuple[str, str]:
    n = f["offload_layers"]
    if s.model.hybrid:
        return (f"offload_layers {n} on the hybrid model `{s.model.name}`, whose Mamba stack takes no offload context "
                "(cpu-offloading)", "set `offload_layers = 0`")
    clash = _offload_clash(s)
    if clash:
        return (f"offload_layers {n} beside the space's passthrough `{clash} = true`, which megatron-core refuses "
                "with it (cpu-offloading)", f"set `offload_layers = 0`, or drop `{clash}` from the passthrough")
    graphs = "`cuda_graph = none` or `full`" if _full_graph_takes_offload(s) else "`cuda_graph = none`"
    return (f"offload_layers {n} with PP {f['pp']}, recompute {f['recompute']} and CUDA graphs `{f['cuda_graph']}` "
            f"on {s.model.num_layers} layers (cpu-offloading)",
            f"offload at most {s.model.num_layers - 1} layers, with `pp = 1`, `recompute = none` and {graphs}, "
            "or set `offload_layers = 0`")


def _moe(space: Space) -> bool:
    return space.model.moe is not None


def _mamba(space: Space) -> Mamba:
    assert space.model.mamba is not None
    return space.model.mamba


def _mamba_tp_ok(f: Env, s: Space) -> Any:
    """MambaMixer splits heads and groups over TP; MambaContextParallel splits each rank's heads over
    CP and its groups too (or repeats them when a rank has fewer groups than CP ranks)."""
    m = s.model.mamba
    if m is None:
        return True
    tp, cp = f["tp"], f["cp"]
    heads_ok = m.heads % (tp * cp) == 0
    local_groups = m.groups // np.maximum(tp, 1)
    groups_ok = (m.groups % tp == 0) & ((local_groups % cp == 0) | (cp % np.maximum(local_groups, 1) == 0))
    return heads_ok & groups_ok


def _megatron_of(space: Space) -> str:
    """The Megatron-LM the space's launches run (frameworks.target): whose asserts a candidate meets."""
    return megatron_of(space.settings.framework, space.settings.megatron_version,
                       space.settings.bridge_version)


def _validate_args(space: Space) -> bool:
    """Whether the space's launch goes through Megatron-LM's validate_args (megatron/training/arguments.py):
    Megatron-LM and Primus do; Megatron-Bridge builds megatron-core's configs itself, so the asserts only
    arguments.py makes (the overlap, FP8-gather and torch-FSDP2 ones) do not stop it."""
    return space.settings.framework != "bridge"


def _torch_fsdp2(space: Space) -> bool:
    """Whether the space's launch shards with torch FSDP2 (Primus, as its example configs do) rather than
    Megatron-FSDP (Megatron-LM, Megatron-Bridge), which shards experts over their own data-parallel group."""
    return space.settings.torch_fsdp2


def _ep_overlap_takes_any_graph(space: Space) -> bool:
    # TransformerConfig asserts the overlap's graphs are transformer_engine ones up to core_v0.17; from
    # core_v0.18 it refuses only TE graphs over the MLP or MoE (and megatron-core's own graphs pass)
    return megatron.at_least(_megatron_of(space), "core_v0.18")


def _takes_rank_budget(space: Space) -> bool:
    # HybridEP (NVIDIA's) with its static per-rank budget is what lets a MoE's whole iteration be graphed
    return space.cluster.gpu.vendor == "nvidia" and megatron.has_rank_budget(_megatron_of(space))


def _full_moe_problem(f: Env, s: Space) -> str:
    if f["moe_dispatcher"] != "flex":
        return f"the {f['moe_dispatcher']} dispatcher"
    if s.cluster.gpu.vendor != "nvidia":
        return f"the flex dispatcher on {s.cluster.gpu.vendor} GPUs (HybridEP is NVIDIA's)"
    return (f"the flex dispatcher under Megatron-LM {_megatron_of(s)}, which has no "
            f"{megatron.RANK_BUDGET_FLAG} (HybridEP's token budget)")


# The knobs whose settings a release's validate_args may refuse beside the model card alone
# (frameworks/megatron/rules.json): the rules that read nothing else are judged here, from the table.
_RELEASE_KNOBS = ("cp", "cross_entropy")


def _release_refusals(space: Space, values: tuple[Any, ...]) -> list[rules.Rule]:
    """The start-up rules of the space's Megatron-LM that the card and these values of ``_RELEASE_KNOBS`` break
    whatever else the launch writes; none where the launch does not go through validate_args (Megatron-Bridge)."""
    if not _validate_args(space):
        return []
    settings = spelling.card_settings(space.model)
    for knob, value in zip(_RELEASE_KNOBS, values, strict=True):
        settings.update(spelling.knob_settings(knob, value))
    return rules.refused(settings, _megatron_of(space))


def _release_ok(f: Env, s: Space) -> Any:
    cols = [np.asarray(f[k]) for k in _RELEASE_KNOBS]
    shape = np.broadcast(*cols).shape
    ok = np.ones(shape, dtype=bool)
    full = [np.broadcast_to(c, shape) for c in cols]
    for combo in itertools.product(*(np.unique(c).tolist() for c in cols)):
        if _release_refusals(s, combo):
            ok &= ~np.logical_and.reduce([c == v for c, v in zip(full, combo, strict=True)])
    return ok


def _release_problem(f: Env, s: Space) -> tuple[str, str]:
    rule = _release_refusals(s, tuple(f[k] for k in _RELEASE_KNOBS))[0]
    version = _megatron_of(s)
    knobs = sorted({k for dest in rule.reads if (k := spelling.knob_behind(dest)) in _RELEASE_KNOBS})
    values = ", ".join(f"{k} {f[k]}" for k in knobs)
    return (f"{values}: Megatron-LM {version} refuses it at start (it {rule.says()}: {rule.quoted(version)}) "
            "(release-refused)",
            f"change {', '.join(f'`{k}`' for k in knobs)}, or launch a release that runs it (`assume megatron_version`)")


def _query_groups_problem(f: Env, s: Space) -> tuple[str, str]:
    kv, tp, heads = int(f["kv_heads"]), int(f["tp"]), int(f["heads"])
    whole = derived.qkv_width(heads, kv, s.model.head_dim, 1)
    groups = f"{kv} key/value head{'s' if kv != 1 else ''} (query group{'s' if kv != 1 else ''})"
    if not megatron.takes_tp_over_kv_heads(_megatron_of(s)):
        return (f"{groups} {'are' if kv != 1 else 'is'} not divisible by TP {tp} (query-groups-divisibility)",
                f"use a TP among {_divisors(kv)}" + (f", or launch a Megatron-LM that takes TP {tp} over them "
                                                   '(core_v0.16 or later: `assume megatron_version = "core_v0.16"`)'
                                                   if derived.kv_heads_split(heads, kv, s.model.head_dim, tp, True)
                                                   else ""))
    multiples = [m for m in range(2 * kv, min(64, int(f["world"])) + 1, kv) if heads % m == 0 and whole % m == 0][:4]
    hint = f"use a TP among {_divisors(kv)}" + (f" or a multiple of {kv}: {', '.join(map(str, multiples))}"
                                                   if multiples else "")
    if tp % kv == 0:
        return (f"TP {tp} is a multiple of the {groups} but does not divide the QKV projection's {whole:,} "
                "columns, which megatron-core splits evenly over TP (query-groups-divisibility)", hint)
    return f"{groups} and TP {tp}: neither divides the other (query-groups-divisibility)", hint


def _divisors(n: int, limit: int = 0) -> str:
    ds = [d for d in range(1, n + 1) if n % d == 0 and (limit == 0 or d <= limit)]
    return ", ".join(map(str, ds[:12]))


def _ep_overlap_problem(f: Env, s: Space) -> str:
    if not _moe(s) or int(f["ep"]) <= 1:
        return f"EP {f['ep']}" + ("" if _moe(s) else f" on the dense model `{s.model.name}`")
    if f["moe_dispatcher"] == "allgather":
        return "the allgather dispatcher"
    if f["recompute"] == "full":
        return "full recomputation"
    if int(f["pp"]) > 1 and int(f["vpp"]) == 1:
        return f"PP {f['pp']} without virtual stages"
    return f"{s.model.mtp_layers} MTP layer(s) at PP {f['pp']}"


def _uneven(f: Env) -> Any:
    return (np.asarray(f["first_stage_layers"]) > 0) | (np.asarray(f["last_stage_layers"]) > 0)


def _said(value: Any) -> str:
    """A flag as a message writes it: the one-point view holds "true"/"false" already (``bool`` of either is
    true), an array its boolean."""
    return value if isinstance(value, str) else str(bool(value)).lower()


def _flag(value: Any) -> Any:
    # a frame holds booleans; the one-point view that words messages holds "true"/"false"
    arr = np.asarray(value)
    return arr == "true" if arr.dtype.kind in "UO" else arr.astype(bool)


def _accounted(f: Env) -> Any:
    """The embedding and loss units an even split divides along with the layers."""
    return _flag(f["account_for_embedding"]).astype(np.int64) + _flag(f["account_for_loss"]).astype(np.int64)


def _middle(f: Env) -> tuple[Any, Any]:
    """(middle stages, units they share): Megatron's transformer_config checks, as arrays."""
    first, last = np.asarray(f["first_stage_layers"]), np.asarray(f["last_stage_layers"])
    stages = f["pp"] - (first > 0).astype(np.int64) - (last > 0).astype(np.int64)
    return stages, np.where(_uneven(f), f["num_layers"] - first - last, f["num_layers"] + _accounted(f))


def _middle_per_stage(f: Env) -> Any:
    stages, layers = _middle(f)
    return np.where(stages > 0, np.floor_divide(layers, np.maximum(stages, 1)), 0)


def _split_ok(f: Env) -> Any:
    stages, layers = _middle(f)
    # PP 1 with an uneven knob is uneven-needs-pp's to report
    return (_uneven(f) & ((f["pp"] <= 1) | (_accounted(f) > 0))) | np.where(
        stages > 0, (layers > 0) & (np.mod(layers, np.maximum(stages, 1)) == 0), layers == 0
    )


def _split_problem(f: Env) -> tuple[str, str]:
    stages, layers = (int(x) for x in _middle(f))
    n, pp = int(f["num_layers"]), int(f["pp"])
    if not bool(_uneven(f)):
        counted = " with the embedding/loss" if int(_accounted(f)) else ""
        return (
            f"{layers} layers{counted} do not split evenly over PP {pp} stages (pipeline-split)",
            f"use a PP among {_divisors(layers, 128)}, or {_ends_example(n, pp)}",
        )
    return (
        f"first/last stage layers {f['first_stage_layers']}/{f['last_stage_layers']} leave {layers} of {n} "
        f"layers for {stages} middle stage(s) at PP {pp} (pipeline-split)",
        "the layers left must divide evenly over the middle stages (and be none when no middle stage is left)",
    )


def balanced_ends(layers: int, pp: int) -> tuple[int, int] | None:
    """First and last stage layer counts that split ``layers`` over ``pp`` stages as Megatron allows
    (the middle stages equal), the fullest stage as light as can be; of equal ones, the ends closest to
    each other (Primus's docs give Llama 3.1 405B's 126 layers over PP 8 as 15 and 15, 16 a middle stage).
    None where no such split exists."""
    if pp < 2 or layers < pp:
        return None
    best: tuple[tuple[int, int, int], tuple[int, int]] | None = None
    bound = min(layers, 2 * -(-layers // pp) + 1)  # an end stage heavier than this loses to the even one
    for first in range(bound + 1):
        for last in range(bound + 1):
            ends = (first > 0) + (last > 0)
            if not ends:
                continue
            middle, rest = pp - ends, layers - first - last
            if (middle > 0 and (rest <= 0 or rest % middle)) or (middle <= 0 and rest != 0) or middle < 0:
                continue
            key = (max(first, last, rest // middle if middle > 0 else 0), abs(first - last), -ends)
            if best is None or key < best[0]:
                best = (key, (first, last))
    return None if best is None else best[1]


def _ends_example(layers: int, pp: int) -> str:
    ends = balanced_ends(layers, pp)
    if ends is None:
        return "set first_stage_layers/last_stage_layers so that the middle stages split the rest evenly"
    first, last = ends
    middle = pp - (first > 0) - (last > 0)
    said = [f"`{k} : {v} when pp == {pp}`" for k, v in (("first_stage_layers", first), ("last_stage_layers", last)) if v]
    rest = f" ({(layers - first - last) // middle} layers on each middle stage)" if middle else ""
    return "give the end stages their own layer counts, e.g. " + " and ".join(said) + rest


def _largest_stage(f: Env) -> Any:
    # the even split's layers_per_stage, or the fullest stage of an uneven one
    return np.maximum(_middle_per_stage(f), np.maximum(f["first_stage_layers"], f["last_stage_layers"]))


def _largest_chunk_col(f: Env, s: Space) -> Any:
    """Layers of the fullest (virtual) stage: the knob split's, or an explicit layout's fullest chunk."""
    knobs = np.floor_divide(_largest_stage(f), np.maximum(f["vpp"], 1))
    return _per_layout(f, s, _largest_chunk, knobs)


def _both_at_pp2(f: Env) -> Any:
    # get_transformer_layer_offset divides by the middle stages when interleaving: none at PP 2
    return (f["vpp"] > 1) & (f["pp"] == 2) & (f["first_stage_layers"] > 0) & (f["last_stage_layers"] > 0)


def _has_layout(f: Env) -> Any:
    return np.asarray(f["pipeline_layout"]) != ""


# The knobs a row's pipeline split reads (an explicit layout is checked against the others).
_SPLIT_KNOBS = ("pipeline_layout", "pp", "vpp", "first_stage_layers", "last_stage_layers", "account_for_embedding",
                "account_for_loss", "schedule")


def _split_of_row(f: Env, s: Space, i: int) -> Split:
    cols = [np.asarray(f[n]).ravel() for n in ("pp", "vpp", "first_stage_layers", "last_stage_layers")]
    flags = [_flag(f[n]).ravel() for n in ("account_for_embedding", "account_for_loss")]
    zbv = (np.asarray(f["schedule"]) == "zbv").ravel()
    text = np.asarray(f["pipeline_layout"]).ravel()

    def at(col: Any) -> Any:
        return col[i if col.size > 1 else 0].item()

    pp, vpp, first, last = (int(at(c)) for c in cols)
    emb, loss = (bool(at(c)) for c in flags)
    return Split(s.model.num_layers, pp, vpp, first, last, emb, loss, bool(at(zbv)), str(at(text)))


def _split_columns(f: Env) -> dict[str, Any]:
    """The columns a row's split reads, in ``_split_of_row``'s terms (flags as booleans, the schedule as
    whether it is ZBV), with the recomputed layers: what tells two rows' ``_per_split`` keys apart."""
    return {**{n: f[n] for n in ("pp", "vpp", "first_stage_layers", "last_stage_layers", "pipeline_layout",
                                  "recompute_layers")},
            **{n: _flag(f[n]) for n in ("account_for_embedding", "account_for_loss")},
            "schedule": np.asarray(f["schedule"]) == "zbv"}


def _per_layout(f: Env, s: Space, fn: Callable[[Split], Any], default: Any) -> Any:
    """``fn`` of each row's split where an explicit layout is set (once per distinct split), else
    ``default``; layouts are few, so the rows go through Python one distinct split at a time."""
    return _per_split(f, s, lambda split, _n: fn(split), _has_layout(f), default)


def _per_split(f: Env, s: Space, fn: Callable[[Split, int], Any], rows: Any, default: Any) -> Any:
    """``fn`` of each row's split and recomputed layers where ``rows`` holds (once per distinct pair),
    else ``default``: for the few rows a test needs the split's every chunk for. The distinct pairs are
    found as arrays (a space's frame holds up to 2^17 rows a chunk, a few dozen splits)."""
    if not np.any(rows):
        return default
    columns = _split_columns(f)
    shape = np.broadcast(*(np.asarray(c) for c in columns.values()), np.asarray(rows)).shape
    out = np.broadcast_to(np.asarray(default), shape).copy() if shape else np.asarray(default).copy()
    flat = out.reshape(-1)
    picked = np.nonzero(np.broadcast_to(rows, shape).reshape(-1) if shape else np.asarray([rows]))[0]
    # each column as small integer codes, then one code per row: the rows of one key share a split
    code = np.zeros(picked.size, dtype=np.int64)
    for c in columns.values():
        values = np.broadcast_to(np.asarray(c), shape).reshape(-1)[picked] if shape else np.asarray([c])
        distinct, inverse = np.unique(values, return_inverse=True)
        # renumbered after each column, so the codes stay below the number of rows
        code = np.unique(code * len(distinct) + inverse.reshape(-1), return_inverse=True)[1].reshape(-1)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    full = {n: np.broadcast_to(np.asarray(f[n]), shape) for n in (*_SPLIT_KNOBS, "recompute_layers")}
    layers = full["recompute_layers"].reshape(-1) if shape else np.asarray([full["recompute_layers"]])
    results = [fn(_split_of_row(full, s, int(picked[j])), int(layers[picked[j]])) for j in first.tolist()]
    flat[picked] = np.asarray(results, dtype=out.dtype)[inverse.reshape(-1)]
    return out if shape else flat[0]


def _layout_ok(split: Split, s: Space) -> bool:
    return not problems(split, s.model.mtp_layers)


def _largest_chunk(split: Split) -> int:
    return max(chunk_sizes(split), default=0)


def _uniform_groups_fit(f: Env, s: Space) -> Any:
    """Whether a uniform full recomputation's groups of N layers tile every model chunk: megatron-core
    (``_checkpointed_forward``, 0.16.1) runs layers [i, i + N) of a chunk and indexes past its last
    layer where N does not divide the chunk."""
    uniform = (np.asarray(f["recompute"]) == "full") & (np.asarray(f["recompute_method"]) == "uniform")
    return _per_split(f, s, lambda split, n: n < 1 or all(c % n == 0 for c in chunk_sizes(split)), uniform, True)


def _per_recompute(f: Env, test: Callable[[Recompute], bool]) -> Any:
    """``test`` of each point's recompute value. A column holds a handful of distinct Recompute
    objects repeated over every point, so ``test`` runs once per object, not once per point."""
    recs = f["$recompute"]
    if not isinstance(recs, np.ndarray):
        return test(recs)
    flat = recs.ravel()
    ids = np.fromiter(map(id, flat), dtype=np.int64, count=flat.size)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    table = np.array([test(flat[i]) for i in first], dtype=bool)
    return table[inverse].reshape(recs.shape)


def _has_modules(f: Env) -> Any:
    return _per_recompute(f, lambda r: bool(r.modules))


def _recomputes(f: Env, module: str) -> Any:
    """Selective recomputation that checkpoints ``module`` (no modules given: Megatron's core_attn)."""
    return _per_recompute(f, lambda r: r.kind == "selective" and module in (r.modules or ("core_attn",)))


def _graph_in(f: Env, values: tuple[str, ...]) -> Any:
    return np.isin(np.asarray(f["cuda_graph"]), values)


# architectures whose tensor cores have no MX block-scaled formats (MXFP8 needs Blackwell or CDNA 4); a
# profile that names no architecture, or a newer one, is not refused
PRE_MX_ARCHS = ("volta", "ampere", "ada", "hopper", "cdna2", "cdna3")
# cuda_graph values by what megatron-core 0.16.1 sees: the moe_router scope, the attn scope, and a
# "full" graph (empty scope or full_iteration) that holds every module of a layer
_ROUTER_GRAPHS = ("moe_router", "attn_moe_router")
_ATTN_GRAPHS = ("attn", "attn_moe_router", "layer", "full")
_WHOLE_GRAPHS = ("layer", "full")


def _dropout_graph_ok(f: Env, s: Space) -> Any:
    if s.model.attention_dropout <= 0 and s.model.dropout <= 0:
        return True
    attn = (s.model.attention_dropout > 0) & _recomputes(f, "core_attn") & _graph_in(f, _ATTN_GRAPHS)
    hidden = (s.model.dropout > 0) & (_recomputes(f, "mlp") | _recomputes(f, "moe")) & _graph_in(f, _WHOLE_GRAPHS)
    return ~(attn | hidden)


def _dropout_graph_problem(f: Env, s: Space) -> str:
    cols = getattr(f, "frame", f)  # the one-point view reads no Recompute; its frame holds them
    if s.model.attention_dropout > 0 and np.all(_recomputes(cols, "core_attn")) and np.all(_graph_in(cols, _ATTN_GRAPHS)):
        return f"attention dropout {s.model.attention_dropout} and core_attn recomputed"
    return f"hidden dropout {s.model.dropout} and mlp/moe recomputed"


def _interleave_problem(f: Env) -> tuple[str, str]:
    per_step = f["mbs"] * f["dp"]
    if f["gbs"] % max(per_step, 1):
        # no whole number of micro-batches at all: the count (GBS // (MBS·DP), maybe 0) is not the cause
        return (
            f"interleaving (VPP {f['vpp']}) needs a whole number of micro-batches, a multiple of PP {f['pp']}, "
            f"but GBS {f['gbs']} is not a multiple of MBS·DP = {f['mbs']}·{f['dp']} = {per_step} "
            "(interleave-microbatches)",
            f"choose GBS as a multiple of {per_step * f['pp']} (MBS·DP·PP), or a smaller MBS",
        )
    return (
        f"interleaving (VPP {f['vpp']}) with {f['microbatches']} micro-batches, not a multiple of "
        f"PP {f['pp']} (interleave-microbatches)",
        "raise GBS or lower MBS so that GBS / (MBS·DP) is a multiple of PP",
    )


RULES: tuple[Rule, ...] = (
    Rule(
        L.WORLD_DIVISIBILITY,
        ("tp", "pp", "cp"),
        lambda f, s: f["world"] % f["$mp"] == 0,
        lambda f, s: (
            f"TP·PP·CP = {f['tp']}·{f['pp']}·{f['cp']} = {f['$mp']} does not divide the "
            f"{f['world']} GPUs (world-divisibility)",
            f"choose TP·PP·CP among the divisors of {f['world']}: {_divisors(int(f['world']))}",
        ),
    ),
    Rule(
        L.BATCH_DIVISIBILITY,
        ("gbs", "mbs", "tp", "pp", "cp"),
        lambda f, s: (
            (f["world"] % f["$mp"] != 0)
            | (f["gbs"] % np.maximum(f["mbs"] * f["dp"], 1) == 0) & (f["gbs"] >= f["mbs"] * f["dp"])
        ),
        lambda f, s: (
            f"GBS {f['gbs']} is not a multiple of MBS·DP = {f['mbs']}·{f['dp']} = {f['mbs'] * f['dp']} "
            "(batch-divisibility)",
            "pick an MBS (or a layout with a DP) so that GBS / (MBS·DP) is a whole number of micro-batches",
        ),
    ),
    Rule(
        L.HEADS_TP,
        ("tp",),
        lambda f, s: f["heads"] % f["tp"] == 0,
        lambda f, s: (
            f"{f['heads']} attention heads are not divisible by TP {f['tp']} (heads-divisibility)",
            f"use a TP among {_divisors(int(f['heads']), 64)}",
        ),
    ),
    Rule(
        L.QUERY_GROUPS_TP,
        ("tp",),
        lambda f, s: derived.kv_heads_split(f["heads"], f["kv_heads"], s.model.head_dim, f["tp"],
                                            megatron.takes_tp_over_kv_heads(_megatron_of(s))),
        lambda f, s: _query_groups_problem(f, s),
    ),
    Rule(
        L.TP_OVERLAP_NEEDS_SP,
        ("tp_comm_overlap", "sequence_parallel", "tp"),
        lambda f, s: ~np.asarray(f["tp_comm_overlap"]) | (np.asarray(f["sequence_parallel"]) & (f["tp"] > 1)),
        lambda f, s: (
            f"tp_comm_overlap needs sequence parallelism with TP > 1 (TP {f['tp']}, "
            f"sequence_parallel {_said(f['sequence_parallel'])}) (tp-overlap-needs-sp)",
            "write `tp_comm_overlap : true | false when tp > 1`, and keep sequence_parallel on",
        ),
    ),
    Rule(
        L.PIPELINE_SPLIT,
        ("pp", "first_stage_layers", "last_stage_layers", "account_for_embedding", "account_for_loss",
         "pipeline_layout"),
        lambda f, s: _has_layout(f) | _split_ok(f),
        lambda f, s: _split_problem(f),
    ),
    Rule(
        L.VIRTUAL_SPLIT,
        ("pp", "vpp", "first_stage_layers", "last_stage_layers", "account_for_embedding", "account_for_loss",
         "pipeline_layout"),
        lambda f, s: _has_layout(f) | ~_split_ok(f) | (_middle_per_stage(f) % np.maximum(f["vpp"], 1) == 0)
        # the embedding/loss unit comes out of a chunk: it needs a layer to take it from
        & ((_accounted(f) == 0) | _uneven(f) | (_middle_per_stage(f) >= np.maximum(f["vpp"], 1))),
        lambda f, s: (
            f"{int(_middle_per_stage(f))} layers per {'middle ' if _uneven(f) else ''}stage do not split "
            f"into VPP {f['vpp']} virtual stages (virtual-pipeline-split)",
            f"use a VPP among {_divisors(int(_middle_per_stage(f)))}",
        ),
    ),
    Rule(
        L.UNEVEN_VPP,
        ("pp", "vpp", "first_stage_layers", "last_stage_layers", "pipeline_layout"),
        lambda f, s: _has_layout(f) | (f["first_stage_layers"] % np.maximum(f["vpp"], 1) == 0)
        & (f["last_stage_layers"] % np.maximum(f["vpp"], 1) == 0)
        & ~_both_at_pp2(f),
        lambda f, s: (
            f"first/last stage layers {f['first_stage_layers']}/{f['last_stage_layers']} with VPP {f['vpp']} "
            f"at PP {f['pp']}: "
            + ("megatron-core 0.16.1 cannot place both with no middle stage" if bool(_both_at_pp2(f))
               else "not divisible by VPP")
            + " (uneven-stage-vpp)",
            "choose first_stage_layers and last_stage_layers among the multiples of VPP (and only one of "
            "them at PP 2), or tie them to it with `when`",
        ),
    ),
    Rule(
        L.PIPELINE_LAYOUT,
        _SPLIT_KNOBS,
        lambda f, s: ~_has_layout(f) | _per_layout(f, s, lambda sp: _layout_ok(sp, s), True),
        lambda f, s: (
            "; ".join(problems(_split_of_row(f, s, 0), s.model.mtp_layers)) + " (pipeline-layout)",
            "write a layout with PP x VPP virtual stages holding the model's layers, e.g. "
            "`pipeline_layout : \"Et*4|(t*4|)*14tmL\" when pp * vpp == 16`; see `primusc explain P4028`",
        ),
    ),
    Rule(
        L.UNEVEN_NEEDS_PP,
        ("pp", "first_stage_layers", "last_stage_layers"),
        lambda f, s: ~_uneven(f) | (f["pp"] > 1),
        lambda f, s: (
            f"first_stage_layers {f['first_stage_layers']}, last_stage_layers {f['last_stage_layers']} "
            f"at PP {f['pp']} (uneven-needs-pp)",
            "write `last_stage_layers : ... when pp > 1` (and 0 otherwise)",
        ),
    ),
    Rule(
        L.SPLIT_KNOBS_EXCLUSIVE,
        ("first_stage_layers", "last_stage_layers", "account_for_embedding", "account_for_loss"),
        lambda f, s: ~_uneven(f) | (_accounted(f) == 0),
        lambda f, s: (
            f"first/last stage layers {f['first_stage_layers']}/{f['last_stage_layers']} together with "
            "account_for_embedding/account_for_loss (split-knobs-exclusive)",
            "use either the first/last stage layer counts or the embedding/loss accounting, e.g. "
            "`account_for_loss : true | false when last_stage_layers == 0`",
        ),
    ),
    Rule(
        L.RECOMPUTE_MODULES_NEED_SELECTIVE,
        ("recompute",),
        lambda f, s: (f["recompute"] == "selective") | ~_has_modules(f),
        lambda f, s: (
            f"recompute modules given with recompute {f['recompute']} (recompute-modules-need-selective)",
            "write the modules inside `selective(...)` only",
        ),
    ),
    Rule(
        L.OP_RECOMPUTE_DENSE_ONLY,
        ("recompute",),
        lambda f, s: (f["recompute"] != "op") | (not _moe(s) and s.model.mla is None),
        lambda f, s: (
            f"recompute op on `{s.model.name}`, a " + ("MoE" if _moe(s) else "MLA") + " model "
            "(op-recompute-dense-only)",
            "use `selective(...)` or `full(...)`: primusc models op-level checkpointing for dense, "
            "non-MLA blocks only",
        ),
    ),
    Rule(
        L.INTERLEAVE_NEEDS_PP,
        ("pp", "vpp"),
        lambda f, s: (f["vpp"] == 1) | (f["pp"] > 1),
        lambda f, s: (
            f"VPP {f['vpp']} needs pipeline parallelism, but PP is 1 (interleave-needs-pp)",
            "write `vpp : ... when pp > 1`",
        ),
    ),
    Rule(
        L.SCHEDULE_VPP,
        ("schedule", "vpp"),
        lambda f, s: np.where(
            f["schedule"] == "interleaved",
            f["vpp"] > 1,
            np.where(f["schedule"] == "zbv", f["vpp"] == 2, f["vpp"] == 1),
        ),
        lambda f, s: (
            f"schedule {f['schedule']} with VPP {f['vpp']}: "
            + {
                "interleaved": "interleaving needs VPP > 1",
                "zbv": "ZBV places exactly 2 virtual stages per rank",
            }.get(str(f["schedule"]), "this schedule runs with VPP 1")
            + " (schedule-vpp-mismatch)",
            "tie them together, e.g. `vpp : 2 | 4 when schedule == interleaved`, or add `interleaved` "
            "to the schedule axis",
        ),
    ),
    Rule(
        L.SCHEDULE_NEEDS_PP,
        ("schedule", "pp"),
        lambda f, s: (f["schedule"] == "1f1b") | (f["pp"] > 1),
        lambda f, s: (
            f"schedule {f['schedule']} needs pipeline parallelism, but PP is 1 (schedule-needs-pp)",
            "write `schedule : ... when pp > 1`, or use 1f1b",
        ),
    ),
    Rule(
        L.INTERLEAVE_MICROBATCHES,
        ("vpp", "gbs", "mbs", "tp", "pp", "cp"),
        lambda f, s: (f["vpp"] == 1) | (f["microbatches"] >= f["pp"]) & (f["microbatches"] % f["pp"] == 0),
        lambda f, s: _interleave_problem(f),
    ),
    Rule(
        L.SCHEDULE_TOO_LONG,
        ("vpp", "gbs", "mbs", "tp", "pp", "cp"),
        lambda f, s: derived.schedule_slots(f["pp"], f["vpp"], f["microbatches"]) <= derived.MAX_SCHEDULE_SLOTS,
        lambda f, s: (
            f"PP {f['pp']} x VPP {f['vpp']} over {f['microbatches']} micro-batches: "
            f"{derived.schedule_slots(f['pp'], f['vpp'], f['microbatches']):,} schedule slots, above the "
            f"{derived.MAX_SCHEDULE_SLOTS:,} primusc simulates (schedule-too-long)",
            "use a smaller PP or fewer virtual stages",
        ),
    ),
    Rule(
        L.CP_SEQUENCE,
        ("cp", "seq_len"),
        lambda f, s: (f["cp"] == 1) | (f["seq_len"] % (2 * f["cp"]) == 0),
        lambda f, s: (
            f"seq_len {f['seq_len']} does not split into 2·CP = {2 * f['cp']} chunks (cp-sequence-divisibility)",
            "use a CP for which seq_len / (2·CP) is whole",
        ),
    ),
    Rule(
        L.FULL_RECOMPUTE_LAYERS,
        ("recompute", "pp", "vpp", "first_stage_layers", "last_stage_layers", "account_for_embedding", "account_for_loss",
         "pipeline_layout", "schedule"),
        lambda f, s: (
            (f["recompute"] != "full")
            | (f["recompute_layers"] >= 1)
            & (f["recompute_layers"] <= _largest_chunk_col(f, s))
            & _uniform_groups_fit(f, s)
        ),
        lambda f, s: (
            (f"full recomputation of {f['recompute_layers']} layers, but a (virtual) stage holds at most "
             f"{int(_largest_chunk_col(f, s))} (full-recompute-layers)",
             "keep 1 <= layers <= num_layers / (PP·VPP), e.g. `full(layers: 1 .. 10)`, or use `none`")
            if not 1 <= f["recompute_layers"] <= _largest_chunk_col(f, s) else
            (f"full recomputation by the uniform method in groups of {f['recompute_layers']} layers, which do not "
             "divide every (virtual) stage: megatron-core runs a last group past the stage's last layer "
             "(full-recompute-layers)",
             "use a group size that divides every stage's layers, e.g. `full(layers: 1, method: uniform)`, or the "
             "block method")
        ),
    ),
    Rule(
        L.PARAM_GATHER_NEEDS_DIST_OPT,
        ("overlap_param_gather", "sharding", "overlap_grad_reduce"),
        lambda f, s: (
            ~np.asarray(f["overlap_param_gather"])
            | ((f["sharding"] != "none") & (np.asarray(f["overlap_grad_reduce"]) | (not _validate_args(s))))
        ),
        lambda f, s: (
            "overlap_param_gather with sharding none, where no sharded optimizer gathers parameters to overlap "
            "(param-gather-needs-dist-opt)" if f["sharding"] == "none" else
            f"overlap_param_gather with sharding {f['sharding']} and overlap_grad_reduce "
            f"{_said(f['overlap_grad_reduce'])} (param-gather-needs-dist-opt)",
            "`overlap_param_gather` is true unless set: with `overlap_grad_reduce = false` set it false too (as "
            "axes, `overlap_grad_reduce : true | false` beside `overlap_param_gather : true | false`, the checker keeps "
            "the pairs that hold), and keep `sharding = dist_opt` or fsdp while it is true",
        ),
    ),
    Rule(
        L.FSDP_RESTRICTIONS,
        ("sharding", "pp", "ep"),
        lambda f, s: (
            (f["sharding"] != "fsdp")
            | ((f["pp"] == 1) & ((f["ep"] == 1) | (not _torch_fsdp2(s))) & (not s.model.tied_embeddings))
        ),
        lambda f, s: (
            f"FSDP with PP {f['pp']}, EP {f['ep']}"
            + (", tied embeddings" if s.model.tied_embeddings else "")
            + " (fsdp-restrictions)",
            "torch FSDP2 needs PP = 1, EP = 1 and untied embeddings; use `dist_opt` otherwise",
        ),
    ),
    Rule(
        L.EXPERTS_EP,
        ("ep",),
        lambda f, s: (not _moe(s)) | (f["num_experts"] % f["ep"] == 0),
        lambda f, s: (
            f"{f['num_experts']} experts are not divisible by EP {f['ep']} (experts-divisibility)",
            f"use an EP among {_divisors(int(f['num_experts']))}",
        ),
    ),
    Rule(
        L.EP_NEEDS_MOE,
        ("ep", "etp"),
        lambda f, s: _moe(s) | ((f["ep"] == 1) & (f["etp"] == 0)),
        lambda f, s: (
            f"EP {f['ep']} / ETP {f['etp']} set on the dense model `{s.model.name}` (ep-needs-moe)",
            "leave ep = 1 and etp unset for a dense model",
        ),
    ),
    Rule(
        L.EXPERT_WORLD,
        ("etp", "tp", "ep", "pp"),
        lambda f, s: (not _moe(s)) | (f["world"] % (f["$etp"] * f["ep"] * f["pp"]) == 0),
        lambda f, s: (
            f"ETP·EP·PP = {f['$etp']}·{f['ep']}·{f['pp']} does not divide the {f['world']} GPUs "
            "(expert-world-divisibility)",
            f"choose ETP·EP·PP among the divisors of {f['world']}",
        ),
    ),
    Rule(
        L.MOE_BIAS_ETP,
        ("etp", "tp"),
        lambda f, s: (
            (not (_moe(s) and s.model.moe is not None and s.model.moe.expert_bias)) | (f["$etp"] == 1)
        ),
        lambda f, s: (
            f"`{s.model.name}` has expert biases, which need ETP 1, not {f['$etp']} (moe-bias-etp)",
            "set `etp = 1`",
        ),
    ),
    Rule(
        L.RECOMPUTE_SPLIT_WGRAD,
        ("recompute", "schedule"),
        lambda f, s: (
            ((f["schedule"] != "zero_bubble") & (f["schedule"] != "zbv")) | (f["recompute"] == "none")
        ),
        lambda f, s: (
            f"recompute {f['recompute']} with the {f['schedule']} schedule (recompute-split-wgrad)",
            "use `recompute = none` with zero_bubble/zbv, or another schedule",
        ),
    ),
    Rule(
        L.CPU_OFFLOADING,
        ("offload_layers", "pp", "recompute", "cuda_graph"),
        lambda f, s: (f["offload_layers"] == 0) | (
            (not s.model.hybrid) & (not _offload_clash(s)) & (f["pp"] == 1) & (f["recompute"] == "none")
            & _graphs_take_offload(f, s) & (f["offload_layers"] < s.model.num_layers)),
        _offload_refusal,
    ),
    Rule(
        L.PRECISION_AWARE_NEEDS_DIST_OPT,
        ("optimizer_dtype", "sharding"),
        lambda f, s: (f["optimizer_dtype"] == "fp32") | s.settings.distributed_optimizer(f["sharding"]),
        lambda f, s: (
            f"optimizer_dtype {f['optimizer_dtype']} with sharding {f['sharding']}"
            + (" (torch FSDP2 on the primus target)" if f["sharding"] == "fsdp" else "")
            + " (precision-aware-needs-dist-opt)",
            "use `sharding = dist_opt`, or `optimizer_dtype = fp32`",
        ),
    ),
    Rule(
        L.FA2_UNSUPPORTED,
        ("attention",),
        lambda f, s: (f["attention"] != "fa2") | (not s.model.fa2_unsupported),
        lambda f, s: (
            f"FlashAttention-2 cannot run `{s.model.name}`'s attention: {s.model.fa2_unsupported} (fa2-unsupported)",
            "use `attention = flash`, the fused kernel",
        ),
    ),
    Rule(
        L.EP_TP_NEEDS_SP,
        ("ep", "tp", "sequence_parallel"),
        lambda f, s: (not _moe(s)) | (f["ep"] == 1) | (f["tp"] == 1) | np.asarray(f["sequence_parallel"]),
        lambda f, s: (
            f"EP {f['ep']} with TP {f['tp']} but sequence parallelism off (ep-tp-needs-sp)",
            "keep `sequence_parallel = true`",
        ),
    ),
    Rule(
        L.EP_OVERLAP_NEEDS_EP,
        ("ep_comm_overlap", "ep", "moe_dispatcher", "recompute", "pp", "vpp"),
        lambda f, s: (
            ~np.asarray(f["ep_comm_overlap"])
            | (
                _moe(s)
                & (f["ep"] > 1)
                & (f["moe_dispatcher"] != "allgather")
                & (f["recompute"] != "full")
                & ((f["pp"] == 1) | (f["vpp"] > 1))
                & ((s.model.mtp_layers == 0) | ((s.model.mtp_layers == 1) & (f["pp"] > 1)))
            )
        ),
        lambda f, s: (
            "ep_comm_overlap with " + _ep_overlap_problem(f, s) + " (ep-overlap-needs-ep)",
            "write `ep_comm_overlap : true | false when ep > 1` and keep its requirements: EP > 1, the "
            "alltoall or flex dispatcher, no full recomputation, VPP > 1 when PP > 1, at most one MTP "
            "layer and then PP > 1",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_NEEDS_MOE,
        ("cuda_graph",),
        lambda f, s: _moe(s) | ~_graph_in(f, _ROUTER_GRAPHS),
        lambda f, s: (
            f"cuda_graph {f['cuda_graph']} on the dense model `{s.model.name}` (cuda-graph-needs-moe)",
            "the router graphs need routed experts; use `attn` or `layer` on a dense model",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_LAYER_MOE,
        ("cuda_graph",),
        lambda f, s: (not _moe(s)) | (np.asarray(f["cuda_graph"]) != "layer"),
        lambda f, s: (
            f"cuda_graph layer on the MoE model `{s.model.name}`: a dropless MoE layer copies its token "
            "counts to the host (cuda-graph-layer-moe)",
            "use `attn_moe_router` (attention and router graphs per layer), or `full` (the whole iteration) "
            "with the flex dispatcher where HybridEP's token budget is launched (P4047)",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_FULL_MOE,
        ("cuda_graph", "moe_dispatcher"),
        lambda f, s: (not _moe(s)) | (np.asarray(f["cuda_graph"]) != "full")
        | ((np.asarray(f["moe_dispatcher"]) == "flex") & _takes_rank_budget(s)),
        lambda f, s: (
            f"cuda_graph full on the MoE model `{s.model.name}` with {_full_moe_problem(f, s)}: a dropless MoE "
            "layer copies its token counts to the host, which no graph can hold (cuda-graph-full-moe)",
            "use `attn_moe_router`, or `moe_dispatcher = flex` on NVIDIA GPUs with a Megatron-LM that has "
            f"{megatron.RANK_BUDGET_FLAG} (`target bridge`, or `assume megatron_version = \"core_v0.18\"` or later)",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_FULL_RECOMPUTE,
        ("cuda_graph", "recompute"),
        lambda f, s: (f["recompute"] != "full") | _graph_in(f, ("none", "full")),
        lambda f, s: (
            f"full recomputation with cuda_graph {f['cuda_graph']}: Megatron supports full recompute with the "
            "full-iteration graph only (cuda-graph-full-recompute)",
            "with `full(...)` recomputation keep cuda_graph none or full; the per-layer graphs go with "
            "`selective` or no recomputation",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_MOE_RECOMPUTE,
        ("cuda_graph", "recompute"),
        lambda f, s: ~(_recomputes(f, "moe") & _graph_in(f, _ROUTER_GRAPHS)),
        lambda f, s: (
            f"selective recomputation of `moe` with cuda_graph {f['cuda_graph']} (cuda-graph-moe-recompute)",
            "drop `moe` from `selective(...)` (recompute `moe_act` instead), or use cuda_graph `attn` or `full`",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_DROPOUT_RECOMPUTE,
        ("cuda_graph", "recompute"),
        _dropout_graph_ok,
        lambda f, s: (
            f"cuda_graph {f['cuda_graph']} with {_dropout_graph_problem(f, s)}: a graphed recomputed module "
            "cannot draw random numbers (cuda-graph-dropout-recompute)",
            "recompute other modules, or graph less (`attn` keeps MLP/MoE recomputation outside the graph)",
        ),
    ),
    Rule(
        L.CUDA_GRAPH_EP_OVERLAP,
        ("cuda_graph", "ep_comm_overlap"),
        lambda f, s: ~np.asarray(f["ep_comm_overlap"]) | (np.asarray(f["cuda_graph"]) != "full")
        | _ep_overlap_takes_any_graph(s),
        lambda f, s: (
            "ep_comm_overlap with cuda_graph full: Megatron overlaps EP communication only with the "
            f"transformer_engine graphs before core_v0.18, and the launch runs {_megatron_of(s)} "
            "(cuda-graph-ep-overlap)",
            "use `attn_moe_router` (or `attn`) with ep_comm_overlap, or turn the overlap off for `full`",
        ),
    ),
    Rule(
        L.RELEASE_REFUSED,
        _RELEASE_KNOBS,
        _release_ok,
        _release_problem,
    ),
    Rule(
        L.MAMBA_TP,
        ("tp", "cp"),
        lambda f, s: _mamba_tp_ok(f, s),
        lambda f, s: (
            f"`{s.model.name}` has {_mamba(s).heads} Mamba heads in {_mamba(s).groups} groups, which TP "
            f"{f['tp']} and CP {f['cp']} do not split (mamba-tp-divisibility)",
            f"use a TP among {_divisors(math.gcd(_mamba(s).heads, _mamba(s).groups))}, and a CP that divides "
            "the heads (and the groups) left on each TP rank",
        ),
    ),
    Rule(
        L.HYBRID_SPLIT,
        ("vpp", "schedule", "pipeline_layout", "account_for_embedding", "account_for_loss"),
        lambda f, s: (not s.model.hybrid)
        | ((f["vpp"] == 1) & (np.asarray(f["schedule"]) != "zbv") & (np.asarray(f["pipeline_layout"]) == "")
           & ~np.asarray(f["account_for_embedding"], dtype=bool) & ~np.asarray(f["account_for_loss"], dtype=bool)),
        lambda f, s: (
            f"`{s.model.name}` is a hybrid model; megatron-core's MambaStack takes no VPP, ZBV, pipeline "
            f"layout or embedding/loss accounting (VPP {f['vpp']}, schedule {f['schedule']}) "
            "(hybrid-pipeline-split)",
            "write `vpp = 1`, a 1f1b or zero-bubble schedule without VPP, and first/last stage layers "
            "for an uneven split",
        ),
    ),
    Rule(
        L.HYBRID_OP_RECOMPUTE,
        ("recompute",),
        lambda f, s: (f["recompute"] != "op") | (not s.model.hybrid),
        lambda f, s: (
            f"recompute op on `{s.model.name}`, a hybrid Mamba model (hybrid-op-recompute)",
            "use `selective(...)` or `full(...)`",
        ),
    ),
    Rule(
        L.CHUNKED_ATTENTION,
        ("seq_len",),
        lambda f, s: (f["seq_len"] <= s.model.attention_chunk) | (s.model.attention_chunk == 0),
        lambda f, s: (
            f"seq_len {int(f['seq_len'])} on `{s.model.name}`, whose attention is chunked over "
            f"{s.model.attention_chunk} tokens (chunked-attention-too-short)",
            f"keep `seq_len` at most {s.model.attention_chunk}: chunked attention is not modelled",
        ),
    ),
    Rule(
        L.LEARNED_POSITIONS,
        ("seq_len",),
        lambda f, s: (f["seq_len"] <= s.model.max_position_embeddings) | (s.model.position != "learned"),
        lambda f, s: (
            f"seq_len {int(f['seq_len'])} on `{s.model.name}`, whose learned position table holds "
            f"{s.model.max_position_embeddings} (learned-positions-too-short)",
            f"keep `seq_len` at most {s.model.max_position_embeddings}, or give the card a longer table",
        ),
    ),
    Rule(
        L.FP8_NEEDS_FP8,
        ("precision",),
        lambda f, s: (f["precision"] != "fp8") | (s.cluster.gpu.peak_fp8 > 0),
        lambda f, s: (
            f"precision fp8 on `{s.cluster.gpu.name}`, whose profile has no FP8 peak (fp8-needs-fp8)",
            "use `bf16` on this GPU, or set the profile's `peak_fp8` if the part has FP8 tensor cores",
        ),
    ),
    Rule(
        L.MXFP8_NEEDS_MX,
        ("precision", "fp8_recipe"),
        lambda f, s: (f["precision"] != "fp8") | (np.asarray(f["fp8_recipe"]) != "mxfp8")
        | (s.cluster.gpu.arch not in PRE_MX_ARCHS),
        lambda f, s: (
            f"fp8_recipe mxfp8 on `{s.cluster.gpu.name}`, a {s.cluster.gpu.arch} GPU without MX tensor-core formats "
            "(mxfp8-needs-mx)",
            "use `fp8_recipe = blockwise` (fine-grained scaling: DeepSeek-V3's 128-wide blocks), `tensorwise` or "
            "`delayed` on this GPU",
        ),
    ),
    Rule(
        L.FP8_PARAM_GATHER,
        ("fp8_param_gather", "precision", "sharding"),
        lambda f, s: ~_flag(f["fp8_param_gather"])
        | ((f["precision"] == "fp8") & ((f["sharding"] != "none") | (not _validate_args(s)))),
        lambda f, s: (
            "fp8_param_gather needs FP8 GEMMs and a sharded optimizer (fp8-param-gather)",
            "set `precision = fp8` and `sharding = dist_opt` or `fsdp`, or `fp8_param_gather = false`",
        ),
    ),
    Rule(
        L.FP4_NEEDS_NVFP4,
        ("precision",),
        lambda f, s: (f["precision"] != "fp4") | s.cluster.gpu.nvfp4,
        lambda f, s: (
            f"precision fp4 (NVFP4) on `{s.cluster.gpu.name}`, which has no NVFP4 tensor cores "
            "(fp4-needs-nvfp4)",
            "use `fp8` or `bf16` on this GPU, or an NVIDIA Blackwell profile (b200, gb200, b300, gb300)",
        ),
    ),
)
