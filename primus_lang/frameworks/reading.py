"""What a set of Megatron settings runs, as primusc's knobs: the one reading that every reverse path
asks (a recipe's import, a published run, a training log's arguments block), so that they cannot read
one run three ways.

Each function takes the settings as Megatron names them (``frameworks.spelling``) and returns the knob
with a note where the reading is not the settings' plain meaning ("" otherwise). A value no Megatron
release runs raises ``Unread``, whose message says why; each reader reports it in its own terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from primus_lang.frameworks.spelling import KNOBS, PARTS
from primus_lang.ir.candidate import RECOMPUTE_MODULES, Recompute

# knob -> megatron-core's CUDA-graph implementation and scope it launches (``--cuda-graph-impl`` and
# ``--cuda-graph-scope``, megatron-core 0.16.1; an empty scope is the whole layer). Megatron's
# TransformerConfig adds moe_preprocess to a local moe_router scope itself, but the transformer_engine
# implementation takes the scopes as written, so both are spelt out. The emitters write these, and
# ``cuda_graph_of`` reads them back.
CUDA_GRAPH_SETTINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "attn": ("transformer_engine", ("attn",)),
    "moe_router": ("transformer_engine", ("moe_router", "moe_preprocess")),
    "attn_moe_router": ("transformer_engine", ("attn", "moe_router", "moe_preprocess")),
    "layer": ("transformer_engine", ()),
    "full": ("local", ("full_iteration",)),
}

# Megatron's default selective module (``--recompute-modules``'s default), written as plain `selective`
_DEFAULT_MODULES = ("core_attn",)


class Unread(ValueError):
    """Settings primusc cannot read as a knob: the message says which, and why."""


def words(value: str | Iterable[object]) -> tuple[str, ...]:
    """A list setting's items, where a recipe or a row may write the list as text (`attn moe_router`,
    `moe_act, layernorm`)."""
    return tuple(value.replace(",", " ").split()) if isinstance(value, str) else tuple(str(x) for x in value)


def listed_layers(value: object) -> tuple[int, ...]:
    """Primus's ``recompute_layer_ids`` (a comma-separated text or a list) as the layer numbers it lists, once
    each and sorted, as its patch normalises them (primus/backends/megatron/patches/recompute_layer_patches.py,
    v26.5.1); empty where it lists none (None, "", "null")."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None", "null")):
        return ()
    items = words(value.strip("[]() ") if isinstance(value, str) else value if isinstance(value, list | tuple)
                  else [value])
    try:
        return tuple(sorted({int(w) for w in items}))
    except ValueError:
        raise Unread(f"`recompute_layer_ids` = {value!r} is not a list of layer numbers") from None


def listed_recompute(layer_ids: object, chunks: int) -> tuple[Recompute, str]:
    """Primus's recomputation of the listed layers (``recompute_layer_ids``: exactly those, by their number in
    the model) as the knob's count per model chunk: a space says a count per chunk, so the listed layers are
    spread over the ``chunks`` (PP x virtual stages), the count the one whose total comes nearest theirs."""
    ids = listed_layers(layer_ids)
    chunks = max(1, chunks)
    per_chunk = max(1, (2 * len(ids) + chunks) // (2 * chunks))
    return Recompute("full", per_chunk, "block"), (
        f"`recompute_layer_ids` lists {len(ids)} layers: read as full recomputation of {per_chunk} per model "
        f"chunk (block), {per_chunk * chunks} over the {chunks} chunk(s); a launch of this recomputation runs "
        f"the listed layers on the primus target")


def recompute_of(granularity: str | None, method: str | None = None, layers: int | None = None,
                 modules: Iterable[str] | None = None, layer_ids: object = None,
                 chunks: int = 1) -> tuple[Recompute, str]:
    """``recompute`` for ``--recompute-granularity``, ``--recompute-method``, ``--recompute-num-layers``
    and ``--recompute-modules`` (None: not set, as Megatron prints an unset one), and Primus's
    ``recompute_layer_ids`` over ``chunks`` model chunks (``listed_recompute``), which under full
    recomputation decides alone (Primus asserts no method beside it).

    megatron-core's TransformerConfig refuses full recomputation without a method or a layer count at
    start; recipes that leave them out are read at `uniform` and 1 layer, what Megatron-LM's examples
    write, and said. Zero layers and an empty module list recompute nothing."""
    if granularity in (None, "", "None", "none", "null"):
        return Recompute(), ""
    if granularity == "full" and listed_layers(layer_ids):
        return listed_recompute(layer_ids, chunks)
    if granularity == "full":
        notes = []
        if method in (None, "", "None"):
            method = "uniform"
            notes.append("full recomputation without `recompute_method` (megatron-core refuses it at start): read "
                         "as `uniform`")
        if method not in ("uniform", "block"):
            raise Unread(f"recompute method `{method}` is neither `uniform` nor `block`")
        if layers is None:
            layers = 1
            notes.append("full recomputation without `recompute_num_layers` (megatron-core refuses it at start): "
                         "read as 1 layer")
        if layers < 0:
            raise Unread(f"`recompute_num_layers` is {layers}, below 0")
        if layers == 0:
            # Megatron recomputes no layer then; Primus's sweeps write it to turn recomputation off
            return Recompute(), "full recomputation of 0 layers recomputes nothing: read as `recompute = none`"
        return Recompute("full", layers, method), "; ".join(notes)
    if granularity == "selective":
        listed = tuple(modules) if modules is not None else _DEFAULT_MODULES
        unknown = [m for m in listed if m not in RECOMPUTE_MODULES]
        if unknown:
            raise Unread(f"recompute module(s) {', '.join(f'`{m}`' for m in unknown)} are not among "
                         f"{', '.join(RECOMPUTE_MODULES)}")
        if not listed:
            # megatron-core recomputes the listed modules only: an empty list recomputes nothing
            return Recompute(), "selective recomputation of no module: read as `recompute = none`"
        return Recompute("selective", modules=() if listed == _DEFAULT_MODULES else listed), ""
    raise Unread(f"recompute granularity `{granularity}` is neither `full` nor `selective`")


# The settings that turn sharding on, as Megatron names them: the distributed optimizer, Megatron-FSDP
# (and core_v0.12's name of it) and torch FSDP2
SHARDING_SETTINGS = (KNOBS["sharding"], PARTS["sharding.fsdp"], PARTS["sharding.custom_fsdp"],
                     PARTS["sharding.torch_fsdp2"])


def sharding_of(on: Mapping[str, bool]) -> tuple[str, bool]:
    """``sharding`` for the settings of ``SHARDING_SETTINGS`` that are on (a setting left out is off),
    and whether the FSDP is torch FSDP2's."""
    torch_fsdp2 = bool(on.get(PARTS["sharding.torch_fsdp2"]))
    if torch_fsdp2 or on.get(PARTS["sharding.fsdp"]) or on.get(PARTS["sharding.custom_fsdp"]):
        return "fsdp", torch_fsdp2
    return ("dist_opt" if on.get(KNOBS["sharding"]) else "none"), False


def cuda_graph_of(impl: str | None, scope: Iterable[str] = ()) -> tuple[str, str]:
    """``cuda_graph`` for ``--cuda-graph-impl`` and ``--cuda-graph-scope``. Spellings of one setting are
    read alike: scope `full` is the deprecated name of the whole layer, the whole-iteration graph is impl
    `local` with scope `full_iteration` or (newer megatron-core, Megatron-Bridge) an impl of its own. What graphs the same kernels under
    another grouping is read as the nearest knob, and said."""
    impl = impl or "none"
    if impl in ("none", "None"):
        return "none", ""
    # the knob's `attn` is the sequence mixer: a hybrid model's Mamba mixers are graphed under it (the
    # emitters write `mamba` beside `attn` for a hybrid model)
    parts = tuple(dict.fromkeys("attn" if s == "mamba" else s for s in scope))
    if parts == ("full",):
        parts = ()
    if impl == "full_iteration" or "full_iteration" in parts:
        return "full", ""
    exact = next((knob for knob, setting in CUDA_GRAPH_SETTINGS.items() if setting == (impl, parts)), None)
    if exact is not None:
        alone = "mamba" in scope and "attn" not in scope
        return exact, (f"CUDA graphs over {list(scope)} capture the Mamba mixers alone: read as `cuda_graph = "
                       f"{exact}`, which a launch writes with the attention layers too" if alone else "")
    if impl not in ("transformer_engine", "local"):
        raise Unread(f"CUDA graph implementation `{impl}` is not one megatron-core has")
    if set(parts) - {"attn", "moe_router", "moe_preprocess"}:
        raise Unread(f"CUDA graphs over {list(parts)} are not a setting primusc models")
    attn, router = "attn" in parts, bool({"moe_router", "moe_preprocess"} & set(parts))
    knob = "attn_moe_router" if attn and router else "moe_router" if router else "attn" if attn else "layer"
    launched = CUDA_GRAPH_SETTINGS[knob]
    return knob, (f"CUDA graphs `{impl}` over {list(parts)} are read as `cuda_graph = {knob}`, which launches "
                  f"`{launched[0]}` over {list(launched[1])}")


def hybrid_layers(total: int, attention: float, mlp: float) -> str:
    """The layers megatron-core allots a hybrid model from its ratios when no pattern is given
    (`--hybrid-attention-ratio`, `--hybrid-mlp-ratio`; ssm/mamba_hybrid_layer_allocation.py, core_v0.16.1):
    Mamba-2 layers (``M``) but for ``round(total·attention)`` attention layers (``*``) spread evenly between
    Mamba sections, then ``round(total·mlp)`` MLP layers (``-``) spread evenly among the Mamba layers left.
    Each spreading walks its positions with a running share that places a layer where the share falls
    below one half, then adds the gap between two such layers to it."""
    layers = ["M"] * total
    n_attention = round(total * attention)
    _spread(layers, "*", (total - n_attention) / (n_attention + 1))
    n_mlp = round(total * mlp)
    if n_mlp > 0:
        _spread(layers, "-", (total - n_attention - n_mlp) / n_mlp)
    return "".join(layers)


def _spread(layers: list[str], kind: str, gap: float) -> None:
    """Turn Mamba layers of ``layers`` into ``kind``, one after every ``gap`` Mamba layers on average."""
    share = gap
    for i, layer in enumerate(layers):
        if layer != "M":
            continue
        if share < 0.5:
            layers[i] = kind
            share += gap
        else:
            share -= 1


def moe_freq_cycle(k: int) -> str:
    """The layer cycle (``Moe.layer_cycle``) of an integer ``--moe-layer-freq k``: megatron-core routes layers
    0, k, 2k, ... to experts (transformer_block.py, core_v0.16.1), the others dense."""
    return "E" + "-" * (k - 1)


def moe_flags(kinds: str) -> str:
    """MLP kinds (``E`` experts, ``-`` dense) as ``--moe-layer-freq``'s list entries, ``1,0,...``."""
    return ",".join("1" if kind == "E" else "0" for kind in kinds)


def moe_kinds(flags: Iterable[int]) -> str:
    """``--moe-layer-freq``'s list entries (1 experts, 0 dense) as MLP kinds."""
    return "".join("E" if flag else "-" for flag in flags)
