"""Published measured runs (the schema of ``validation/published_runs.yaml``) as projection inputs.

Each row becomes ``(model, cluster, candidate, measured tokens/s/GPU)`` or a skip reason that says
exactly what is missing or unsupported. Models come from the stdlib, else from a ``model_cards.yaml``
beside the runs file; GPUs from the stdlib hardware profiles.

Assumptions where the rows are silent (documented in docs/projection.md):
- plain "FP8" is delayed scaling (Transformer Engine's default recipe) unless the row's config
  names, table heading or source say current scaling (Megatron-Bridge's performance summary);
  "FP8-CS", "per-tensor current scaling", "tensorwise" are tensorwise; "FP8-MX"/"MXFP8" are MXFP8;
  "FP8-alt-granularity" is MXFP8 on Blackwell and blockwise on Hopper; "blockwise" is blockwise,
  "rowwise" torchao's rowwise recipe;
- FSDP is on when the row's ``fsdp`` is a positive degree or "yes"; otherwise the distributed
  optimizer (the default of every Megatron performance recipe in the corpus);
- ``recompute: null`` means none; Megatron-Bridge perf configs and torchtitan's activation
  checkpointing map to selective or full;
- NeMo/Megatron-Bridge performance recipes overlap TP communication when TP > 1 (except the NVFP4
  ones: their Llama recipes set ``tp_comm_overlap`` off, and Nemotron 3 Super's have no overlap config),
  unless the row records its config's ``tp_comm_overlap`` (Qwen3-235B on H100 turns it off), and MoE rows
  that publish ``moe_a2a_overlap`` overlap the expert all-to-all;
- Adam's moments are FP32 (Megatron's default) unless the row records its recipe's ``exp_avg_dtype``
  (DeepSeek-V3's keeps them in BF16); a Megatron-Bridge FP8 row gathers FP8 parameters where its
  compute dtype's registered precision recipe does (``bridge.perf_precision``);
- NeMo and Megatron-Bridge performance runs accumulate and reduce gradients in BF16
  (``grad_reduce_in_fp32 = False`` for every precision: NeMo 2.0's scripts/performance/helpers.py
  ``set_precision_configs``, Megatron-Bridge's perf_recipes/_common.py), so their ``main_grad_dtype``
  is ``bf16``; other frameworks keep Megatron-LM's and torchtitan's FP32 reduction;
- Megatron-Bridge performance runs compute the loss with Transformer Engine's cross-entropy kernel
  (``cross_entropy = te``: its perf configs set ``cross_entropy_fusion_impl: te`` since the first of
  them, 568b3a3 of Aug 2025, and ``scripts/performance/utils/overrides.py`` since bf75c65, over
  ``GPTModelProvider``'s ``cross_entropy_loss_fusion = True``); other rows keep Megatron's default
  unfused loss;
- Primus rows run under the primus target, whose FSDP is torch FSDP2 (``Run.settings``);
- ``cuda_graph_impl``/``cuda_graph_scope`` map to the ``cuda_graph`` knob; rows that publish none
  ran without CUDA graphs (Megatron's default);
- rows whose notes say the benchmark force-balanced tokens over experts (Megatron-Bridge, AutoModel's
  "fake balanced gate") run with ``moe_imbalance = 1``.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from primus_lang.check import legality
from primus_lang.datafiles import DataCodes, load_yaml
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import (
    RUNS_FILE,
    RUNS_FILE_ENCODING,
    RUNS_FILE_NUMBER,
    RUNS_FILE_TOO_DEEP,
    RUNS_FILE_TOO_LARGE,
    RUNS_FILE_TOO_MANY_VALUES,
)
from primus_lang.frameworks import bridge, reading
from primus_lang.ir import Candidate, Cluster, Gpu, Mla, Model, Moe, Recompute, Settings, Space, derived
from primus_lang.ir.families import hybrid_evidence
from primus_lang.ir.pipeline import Split, problems
from primus_lang.ir.ranges import CEILINGS, MAX_WORLD, object_problems
from primus_lang.lower import load_program
from primus_lang.resources import data_dir
from primus_lang.validate.flop_formulas import tokens_from_tflops
from primus_lang.validate.trust import attention_of, stack_of

RUNS_CODES = DataCodes(unreadable=RUNS_FILE, encoding=RUNS_FILE_ENCODING, too_large=RUNS_FILE_TOO_LARGE,
                       too_deep=RUNS_FILE_TOO_DEEP, too_many_nodes=RUNS_FILE_TOO_MANY_VALUES, number=RUNS_FILE_NUMBER)

# names the corpus uses for a GPU -> the stdlib profile
GPU_NAMES = {
    "a100": "a100_80gb",
    "a100 80gb": "a100_80gb",
    "a100 40gb": "a100_40gb",
    "h100 sxm": "h100_sxm",
    "h100": "h100_sxm",
    "h100 96gb hbm2e (500w)": "h100_96gb",
    "h200": "h200",
    "b200": "b200",
    "gb200": "gb200",
    "b300": "b300",
    "gb300": "gb300",
    "mi300x": "mi300x",
    "mi325x": "mi325x",
    "mi355x": "mi355x",
}


# Parts a label may name beside its stdlib part, which are other parts with other specs: H100 PCIe and
# NVL (lower power and clocks, 94 GB), H800 (cut NVLink), MI350X (the MI355X's air-cooled, lower-clocked
# sibling). Checked before the families they contain.
_OTHER_PARTS = ("pcie", "h100 nvl", "h800", "mi350x")
# (substring, stdlib part), in order: GB parts before the B parts whose names they contain.
_FAMILIES = (("gb300", "gb300"), ("gb200", "gb200"), ("b300", "b300"), ("b200", "b200"), ("h200", "h200"),
             ("mi300x", "mi300x"), ("mi325x", "mi325x"), ("mi355x", "mi355x"))


def gpu_name_of(label: str) -> str | None:
    """The stdlib GPU a published label names: the table's exact labels first, then the part named
    inside a longer label ("DGX-B200", "H100 SXM5 80GB HBM3 700W", "AMD Instinct MI325X"); None for a
    part primusc has no profile for."""
    text = " ".join(label.lower().replace("-", " ").replace("_", " ").split())
    if text in GPU_NAMES:
        return GPU_NAMES[text]
    if any(other in text for other in _OTHER_PARTS):
        return None
    for part, name in _FAMILIES:
        if part in text.replace(" ", ""):
            return name
    if "h100" in text:
        # the torchtitan rows' H100 is the 96 GB HBM2e part; every other H100 label is the SXM part
        return "h100_96gb" if "96gb" in text.replace(" ", "") or "hbm2e" in text else "h100_sxm"
    if "a100" in text:
        # the 40 GB launch part says so ("A100-SXM4-40GB"); an A100 label without it is the 80 GB part
        return "a100_40gb" if "40gb" in text.replace(" ", "") else "a100_80gb"
    return None


@frozen
class Run:
    """One corpus row, resolved. ``skip`` is empty when the row can be projected."""

    id: str
    group: tuple[str, str, str]  # (model card, GPU, precision) as published
    measured: float | None
    model: Model | None = None
    cluster: Cluster | None = None
    cand: Candidate | None = None
    skip: str = ""
    source: str = ""
    framework: str = ""  # the training software, as the row names it
    release: str = ""  # the software the source measured with (a table version or commit), as published
    balanced: bool = False  # the benchmark forced an even token split over experts (no busiest rank)
    # knobs the row leaves out (``primus_lang.memory.unpublished``): its memory is judged at their
    # least-memory setting, since the run may have used it
    unpublished: tuple[str, ...] = ()
    measured_memory: int | None = None  # bytes the source reports (torchtitan: max reserved), if any
    measured_from: str = ""  # how ``measured`` was derived when the row does not publish tokens/s/GPU

    def settings(self, base: Settings | None = None) -> Settings:
        """The space-wide assumptions this row ran under: no MoE imbalance when it was forced away, and
        Primus's launch (its FSDP is torch FSDP2) for a row of Primus."""
        base = base or Settings()
        if self.balanced:
            base = attrs.evolve(base, moe_imbalance=1.0)
        if self.framework.lower().startswith("primus") and stack_of(self.framework) == "megatron-core":
            # Primus's Megatron backend; its torchtitan backend is torchtitan's FSDP2 (FP32 reduction)
            base = attrs.evolve(base, target="primus+slurm")
        return base


# The GPU profiles rows are projected on: the spec sheets (False), the calibrated ones (True), or a .prx
# file's over the calibrated ones (its path: the site profile `calibrate` or `learn` wrote)
Profiles = bool | str
_SITE_SUFFIXES = ("_site", "_calibrated")


def profile_base(name: str) -> str:
    """The stdlib part a fitted profile's name stands for (``h100_sxm_calibrated_site``: ``h100_sxm``)."""
    for suffix in _SITE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


@functools.lru_cache(maxsize=4)
def stdlib_definitions(calibrated: Profiles = False) -> tuple[dict[str, Model], dict[str, Gpu]]:
    models: dict[str, Model] = {}
    gpus: dict[str, Gpu] = {}
    root = data_dir("stdlib")
    for path in sorted((root / "models").glob("*.prx")):
        for m in load_program(str(path)).models:
            models[m.name] = m
    # The corpus is read against the spec sheets (under the parts' plain names, as calibrate's bases)
    # or against the calibrated profiles, never the plain stdlib names, which alias the calibrated ones.
    for path in sorted((root / "hardware").glob("*_spec.prx")):
        for g in load_program(str(path)).gpus:
            plain = g.name.removesuffix("_spec")
            gpus[plain] = attrs.evolve(g, name=plain)
    if calibrated:
        # a calibrated profile replaces its base under the base's name
        for g in load_program(str(root / "hardware" / "calibrated.prx")).gpus:
            gpus[g.name.removesuffix("_calibrated")] = g
    if isinstance(calibrated, str):
        defined = load_program(calibrated).gpus
        if not defined:
            raise CompileError(Diagnostic(RUNS_FILE, f"`{calibrated}` defines no GPU profile",
                                          help="pass the file `calibrate --out` or `learn` wrote"))
        for g in defined:
            base = profile_base(g.name)
            if base not in gpus:
                raise CompileError(Diagnostic(RUNS_FILE, f"`{calibrated}` defines the profile `{g.name}`, which "
                                              "stands for no GPU primusc knows",
                                              help="name a fitted profile as calibrate and learn do: the part's "
                                                   "name, `_calibrated` and `_site` after it (h100_sxm_calibrated)"))
            gpus[base] = g
    return models, gpus


def _activation(text: str | None) -> str:
    text = (text or "swiglu").lower()
    for name in ("squared_relu", "swiglu", "gelu", "relu"):
        if text.startswith(name):
            return name
    return "swiglu"


def card_model(name: str, card: Any, seq_len: int) -> Model | str:
    """A ``model_cards.yaml`` entry as a Model, or why it cannot be one."""
    if not isinstance(card, dict) or card.get("details", "") is None or "hidden_size" not in card:
        note = card.get("note", "no details") if isinstance(card, dict) else "not a mapping"
        return f"model card `{name}` is not compiled in model_cards.yaml ({note})"
    if card.get("vocab_size") is None:
        return f"model card `{name}` has no verified vocabulary size"
    hybrid, _ = hybrid_evidence(card)
    if hybrid:
        # the cards' schema has no layer pattern or Mamba block: read as a transformer it would be wrong
        return (f"model card `{name}` describes a hybrid model ({hybrid}), which model_cards.yaml cannot "
                "hold; a stdlib card can (`primusc import-hf` maps nemotron_h configs)")
    try:
        model = _card_model(name, card, seq_len)
        problems = object_problems(model)
        if problems:
            return f"model card `{name}` cannot be read: {problems[0][1]}"
        return model
    except KeyError as exc:
        return f"model card `{name}` cannot be read: no `{exc.args[0]}`"
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        # a field that is not a positive whole number, or one the Model's checks refuse
        return f"model card `{name}` cannot be read: {exc}"


def _count(table: Any, key: str, default: int | None = None) -> int:
    """A whole-number field of a card; absent or null takes ``default`` when there is one."""
    if not isinstance(table, dict):
        raise ValueError(f"`{key}` sits in something that is not a mapping")
    value = table.get(key)
    if value is None or (value == 0 and default is not None):
        if default is None:
            raise KeyError(key)
        return default
    if (isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
            or value != int(value) or value < 0):
        raise ValueError(f"`{key}` is {value!r}, not a whole number")
    return int(value)


def _card_model(name: str, card: dict[str, Any], seq_len: int) -> Model:
    heads = _count(card, "num_attention_heads")
    hidden = _count(card, "hidden_size")
    if not heads or not hidden:
        raise ValueError("`num_attention_heads` and `hidden_size` must be above 0")
    moe = None
    if card.get("moe"):
        mo = card["moe"]
        moe = Moe(
            num_experts=_count(mo, "num_experts"), top_k=_count(mo, "topk"), ffn_hidden=_count(mo, "moe_ffn_hidden_size"),
            shared_experts=_count(mo, "shared_experts", 0),
            shared_ffn_hidden=_count(mo, "shared_expert_ffn_hidden_size", 0),
            dense_layers=_count(mo, "first_k_dense_layers", 0),
        )
    mla = None
    if card.get("mla"):
        ml = card["mla"]
        mla = Mla(kv_lora_rank=_count(ml, "kv_lora_rank"), qk_nope_head_dim=_count(ml, "qk_nope_head_dim"),
                  qk_rope_head_dim=_count(ml, "qk_rope_head_dim"), v_head_dim=_count(ml, "v_head_dim"),
                  q_lora_rank=_count(ml, "q_lora_rank", 0))
    ffn = _count(card, "ffn_hidden_size", moe.ffn_hidden if moe else 4 * hidden)
    sinks = "sink" in str(card.get("attention") or "").lower()
    known = {"heads": heads, "hidden": hidden, "seq_len": seq_len}
    return Model(
        name=name, num_layers=_count(card, "num_layers"), hidden=hidden, ffn_hidden=ffn,
        heads=heads, kv_heads=_count(card, "num_kv_heads", derived.model_default("kv_heads", known)),
        head_dim=_count(card, "head_dim", derived.model_default("head_dim", known)),
        vocab=_count(card, "vocab_size"), seq_len=seq_len,
        max_position_embeddings=_count(card, "max_position_embeddings",
                                       derived.model_default("max_position_embeddings", known)),
        activation=_activation(card.get("activation")), tied_embeddings=bool(card.get("tied_embeddings", False)),
        qk_layernorm=bool(card.get("qk_layernorm", False)), moe=moe, mla=mla,
        mtp_layers=_count(card, "mtp_layers", 0), attention_sinks=sinks,
    )


# Parts whose FP8 "alternative granularity" is MX blocks (E8M0 scales); Hopper's is 128x128 / 1x128
# blockwise (footnote of the Megatron-Bridge performance tables).
_MX_NATIVE = ("b200", "gb200", "b300", "gb300")


def precision_of(text: str | None, gpu: str = "", context: str = "") -> tuple[str, str] | str:
    """(precision, fp8 recipe) for a published precision label, or why it is not modelled.

    ``context`` is what else the row says about its recipe: the performance config names
    (Megatron-Bridge's end in ``FP8_CS`` or ``FP8_MX``), the table heading and the source. A bare
    "FP8" is delayed scaling, Transformer Engine's default, unless the context names current scaling:
    Megatron-Bridge's performance summary labels its current-scaling rows "FP8" (every row of it that
    names its config says ``FP8_CS``)."""
    if not text:
        return "precision not published"
    t = text.lower()
    ctx = context.lower()
    if "nvfp4" in t:
        return ("fp4", "tensorwise")  # the FP8 recipe does not apply
    if "fp4" in t:
        return f"unsupported feature: precision `{text}` (only NVFP4 is modelled)"
    if t.startswith("bf16"):
        return ("bf16", "tensorwise")
    if "fp8" not in t:
        return f"unsupported feature: precision `{text}`"
    words = set(re.split(r"[^a-z0-9]+", t))

    def named(tag: str) -> bool:
        """The context names this compute dtype (``..._FP8_SC_V1``), not a longer word (fp8_scaling)."""
        return re.search(tag + r"(?![a-z])", ctx) is not None

    if "mx" in t or named("fp8_mx"):
        return ("fp8", "mxfp8")
    if "alt-granularity" in t:
        return ("fp8", "mxfp8" if gpu.lower() in _MX_NATIVE else "blockwise")
    # Megatron-Bridge's compute dtypes: fp8_cs current, fp8_ds delayed, fp8_sc sub-channel (blockwise)
    if "rowwise" in t:
        return ("fp8", "rowwise")  # torchao's recipe (torchtitan): Transformer Engine has none
    if "blockwise" in t or "subchannel" in t or "sc" in words:
        return ("fp8", "blockwise")
    if "delayed" in t or "ds" in words:
        return ("fp8", "delayed")
    if "cs" in words or "current" in t or "tensorwise" in t or "torchao" in t:
        return ("fp8", "tensorwise")
    if "identical" in t or "variant" in t:
        return f"precision label `{text}` is ambiguous"
    if named("fp8_sc"):
        return ("fp8", "blockwise")
    if named("fp8_ds"):
        return ("fp8", "delayed")
    if named("fp8_cs") or "current scaling" in ctx or "megatron-bridge performance summary" in ctx:
        return ("fp8", "tensorwise")
    return ("fp8", "delayed")


# Megatron-Bridge's DeepSeek-V3 layouts (set_deepseek_v3_pipeline_model_parallel_layout and its table
# _get_deepseek_v3_pipeline_layout in src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py, formerly
# recipes/deepseek/deepseek_v3.py; NVIDIA-NeMo/Megatron-Bridge at 067f987df03b, Aug 2026). Without
# interleaving they lighten the last stage only, which the last-stage knob says: decoder layers of the
# last stage, the others even.
_DSV3_LAST_STAGE = {(4, 1): 13, (8, 1): 5, (16, 1): 1}
# Interleaved, its chunks of one stage differ, which only an explicit layout says: (4, 2) is its
# (8, 1) list [E t*8] + [t*8]*6 + [t*5 m L] over 8 virtual stages, (8, 2) and (4, 4) its (16, 1) list
# [E t*4] + [t*4]*14 + [t m L] over 16. The recipe has no layout for other interleaved (PP, VPP).
_DSV3_LAYOUT = {(4, 2): "Et*8|(t*8|)*6t*5{mtp}L", (8, 2): "Et*4|(t*4|)*14t{mtp}L", (4, 4): "Et*4|(t*4|)*14t{mtp}L"}


def pipeline_split(model: Model, pp: int, vpp: int, recipe: Any = None) -> dict[str, Any] | str:
    """The split knobs of a published layout: the row's own ``pp_layout`` (in its ``recompute`` dict,
    ``recipe``) when it publishes one, Megatron's even split where the layers divide, else what
    Megatron-Bridge's recipe for the model used (a reason to skip when that is unknown)."""
    published = recipe.get("pp_layout") if isinstance(recipe, dict) else None
    if published:
        layout = str(published)
        why = problems(Split(model.num_layers, pp, vpp, layout=layout), model.mtp_layers)
        if why:
            return f"layout inconsistent: published pp_layout: {'; '.join(why)}"
        return {"pipeline_layout": layout}
    if not problems(Split(model.num_layers, pp, vpp)):
        return {}
    if model.mtp_layers and model.num_layers == 61:
        last = _DSV3_LAST_STAGE.get((pp, vpp))
        if last is not None:
            return {"last_stage_layers": last}
        bridge = _DSV3_LAYOUT.get((pp, vpp))
        if bridge is not None:
            return {"pipeline_layout": bridge.format(mtp="m" * model.mtp_layers)}
        return (f"unsupported feature: DeepSeek-V3 at PP {pp} x VPP {vpp}: the row publishes no pipeline layout "
                "and Megatron-Bridge's DeepSeek-V3 recipe sets none for it")
    # The Llama-3.1-405B and Qwen3-MoE recipes count the embedding and the loss as layers of the split
    knobs = {"account_for_embedding": True, "account_for_loss": True}
    if not problems(Split(model.num_layers, pp, vpp, embedding=True, loss=True)):
        return knobs
    return f"layout inconsistent: {model.num_layers} layers split over neither PP {pp} x VPP {vpp} nor with the embedding and loss"


def recompute_of(rec: Any) -> Recompute | str:
    if rec is None:
        return Recompute()
    if not isinstance(rec, dict):
        return f"recompute `{rec}` not understood"
    if "activation_checkpointing" in rec:
        text = str(rec["activation_checkpointing"]).lower()
        if text.startswith("full"):
            # torchtitan's full AC wraps every transformer block in its own checkpoint
            return Recompute("full", 1, "uniform")
        if "op-level" in text or "selective (op)" in text or "per-op" in text:
            # torchtitan's op-level selective AC (ac_mode selective, selective_ac_option "op")
            return Recompute("op")
        if "selective" in text:
            return Recompute("selective")
        return Recompute()
    modules = rec.get("recompute_modules")
    if modules is not None and not isinstance(modules, str | list | tuple):
        return f"recompute modules `{modules}` not understood"
    layers = rec.get("recompute_num_layers")
    try:
        rc, _note = reading.recompute_of(
            rec.get("recompute_granularity"), rec.get("recompute_method"),
            None if layers is None else _int(layers, 1, "recompute_num_layers"),
            None if modules is None else reading.words(modules))
    except reading.Unread as err:
        return f"recompute not understood: {err}"
    return rc


def _unpublished(rec: Any, grads_known: bool) -> tuple[str, ...]:
    """The memory knobs a row leaves out: recompute unless it names a granularity; the main-grad
    dtype unless the framework's performance scripts fix it; the Adam-moment dtype unless its recipe's
    is recorded (``exp_avg_dtype``)."""
    info = rec if isinstance(rec, dict) else {}
    published = bool(info.get("recompute_granularity") or info.get("activation_checkpointing"))
    return tuple(k for k, left_out in (("recompute", not published),
                                       ("main_grad_dtype", not (grads_known or info.get("main_grad_dtype"))),
                                       ("optimizer_dtype", not info.get("exp_avg_dtype"))) if left_out)


def _moments(info: dict[str, Any]) -> str:
    """Adam's moment dtype the row's recipe records (``recompute.exp_avg_dtype``), else Megatron's FP32."""
    return _dtype(info, "exp_avg_dtype", "fp32")


def _dtype(info: dict[str, Any], key: str, otherwise: str) -> str:
    value = info.get(key) or otherwise
    if value not in ("bf16", "fp32"):
        raise WrongType(f"`recompute.{key}` is {value!r}, not bf16 or fp32")
    return str(value)


def _published_switch(info: dict[str, Any], key: str, otherwise: bool) -> bool:
    """A yes/no the row's recipe records (``recompute.tp_comm_overlap``), else the framework's rule."""
    value = info.get(key)
    if value is None:
        return otherwise
    if not isinstance(value, bool):
        raise WrongType(f"`recompute.{key}` is `{str(value)[:40]}`, not yes or no")
    return value


def _offload_layers(rec: Any) -> int:
    """Decoder layers whose activations the run offloaded to host memory (Megatron's
    --cpu-offloading-num-layers, NeMo's activation_offload_layers); 0 when it says none."""
    if not isinstance(rec, dict):
        return 0
    n = rec.get("cpu_offloading_num_layers(activations)") or rec.get("activation_offload_layers") or 0
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


class WrongType(ValueError):
    """A field the projection reads holding another kind of value (``precision: [BF16]``)."""


class OutOfRange(ValueError):
    """A number no run can have (``gbs: 1.0e+308``, ``tp: -4``): its row is skipped with this reason
    before any product of it overflows a float or an int64 array."""


# A row's name for a number -> the IR field whose ceiling (``ir.ranges.CEILINGS``) bounds it
_FIELD_OF = {"vp": "vpp", "recompute_num_layers": "layers", "num_nodes": "nodes"}


def _bounded(number: int, name: str, low: int) -> int:
    top = MAX_WORLD if name in ("num_gpus", "dp") else int(CEILINGS[_FIELD_OF.get(name, name)])
    if number < low:
        raise OutOfRange(f"`{name}` is {number}, below {low}")
    if number > top:
        shown = f"{number:,}" if number < 10**15 else f"{number:.6g}"
        raise OutOfRange(f"`{name}` is {shown}, above the largest it can be ({top:,})")
    return number


def _int(value: Any, default: int, name: str, low: int = 0) -> int:
    """A whole-number field of a row (null takes ``default``), within its bounds; text that is no whole
    number (`8k`) is the row's wrong type, not a field left unset."""
    if value is None:
        return default
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRange(f"`{name}` is {value}, not a finite number")
    # YAML's `true` is an int to Python and `2.5` truncates: either would project another run
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise OutOfRange(f"`{name}` is {value}, not a whole number")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise WrongType(f"`{name}` is `{str(value)[:40]}`, not a whole number (write 8192, not 8k)") from None
    return _bounded(number, name, low)


def _positive(value: Any, name: str, top: float) -> float:
    if isinstance(value, str):
        raise WrongType(f"`{name}` is the text '{value[:40]}', not a number")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= top:
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)[:40]
        raise OutOfRange(f"`{name}` is {shown}, not a number above 0 and at most {top:,.0f}")
    return float(value)


# Megatron's switch that spreads tokens evenly over the experts, as a row's notes may quote it
_FORCED = re.compile(r"moe_router_force_load_balancing\W{0,3}(true|yes|on|1)\b", re.IGNORECASE)
# Far above any GPU's throughput (hundreds of thousands of tokens/s on a small model) and memory (288 GB)
_MAX_TOKENS = 1e9
_MAX_TFLOPS = 1e6  # a thousand times the densest GPU's peak
_MAX_GIB = 2.0**20
_MAX_STEP = 86_400.0 * 7  # a week a step: beyond any training run's


def _measured_tokens(row: dict[str, Any]) -> float | None:
    """The row's tokens/s/GPU; a row that publishes only its step time gives them exactly, as
    global batch x sequence length / (step time x GPUs)."""
    measured = row.get("measured") or {}
    tokens = measured.get("tokens_per_sec_per_gpu")
    if tokens is not None:
        return _positive(tokens, "measured.tokens_per_sec_per_gpu", _MAX_TOKENS)
    step_time = measured.get("step_time_s")
    if step_time is not None:  # a step time given is judged as such: -3.2 s is out of range, not absent
        _positive(step_time, "measured.step_time_s", _MAX_STEP)
    values = [step_time, row.get("gbs"), row.get("seq_len"), row.get("num_gpus")]
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    if len(numbers) < len(values):
        return None
    step, gbs, seq, gpus = numbers
    return _positive(gbs * seq / (step * gpus), "tokens/s/GPU from `measured.step_time_s`", _MAX_TOKENS)


def _flops_formula(row: dict[str, Any]) -> str:
    measured = row.get("measured") or {}
    formula = measured.get("flops_formula")
    if formula is not None and not isinstance(formula, str):
        raise WrongType(f"`measured.flops_formula` is {type(formula).__name__} `{str(formula)[:40]}`, not text")
    return formula if formula and measured.get("model_tflops_per_gpu") is not None else ""


def _tokens_by_formula(row: dict[str, Any], model: Model, seq: int) -> tuple[float, str] | str:
    """Tokens/s/GPU from the row's model TFLOP/s/GPU, counted by the formula its source documents
    (``measured.flops_formula``), with how they were derived; a string says why not."""
    tflops = _positive(row["measured"]["model_tflops_per_gpu"], "measured.model_tflops_per_gpu", _MAX_TFLOPS)
    formula = _flops_formula(row)
    tokens = tokens_from_tflops(formula, tflops, model, seq)
    if isinstance(tokens, str):
        return tokens
    return (_positive(tokens, "tokens/s/GPU from `measured.model_tflops_per_gpu`", _MAX_TOKENS),
            f"{tflops:g} model TFLOP/s/GPU as the source counts them (`{formula}`)")


def resolve(row: dict[str, Any], cards: dict[str, Any], calibrated: Profiles = False) -> Run:
    """Map one corpus row to a projectable run or a reason to skip it."""
    run = _published(row)

    def skip(reason: str) -> Run:
        return attrs.evolve(run, skip=reason)

    notes = _notes(row)
    reason = _unprojectable(row, notes, run.measured)
    if reason is not None:
        return skip(reason)
    models, gpus = stdlib_definitions(calibrated)
    seq = _int(row.get("seq_len"), 0, "seq_len")
    model = _model_of(row.get("model_card"), models, cards, seq)
    if isinstance(model, str):
        return skip(model)
    if run.measured is None:
        derived_tokens = _tokens_by_formula(row, model, seq)
        if isinstance(derived_tokens, str):
            return skip(derived_tokens)
        run = attrs.evolve(run, measured=derived_tokens[0], measured_from=derived_tokens[1])
    gpu_label = run.group[1]
    gpu_name = gpu_name_of(gpu_label)
    if gpu_name is None or gpu_name not in gpus:
        return skip(f"unknown GPU `{gpu_label}`: primusc has a profile for {', '.join(sorted(gpus))}")
    raw_rec = row.get("recompute")
    recipe_info: dict[str, Any] = raw_rec if isinstance(raw_rec, dict) else {}
    prec = _precision_on(row, gpus[gpu_name], gpu_label, recipe_info)
    if isinstance(prec, str):
        return skip(prec)
    par = row.get("parallel") or {}  # a mapping or null: resolve_row checked its shape
    layout = _layout_of(row, par, seq)
    if isinstance(layout, str):
        return skip(layout)
    split = pipeline_split(model, layout.pp, layout.vp if layout.vp > 1 and layout.pp > 1 else 1, recipe_info)
    if isinstance(split, str):
        return skip(split)
    rec = recompute_of(row.get("recompute"))
    if isinstance(rec, str):
        return skip(rec)
    try:
        graphs = cuda_graph_of(recipe_info)
    except reading.Unread as err:
        return skip(f"CUDA graphs not understood: {err}")
    framework = str(row.get("framework") or "")
    nemo = "NeMo" in framework or "Megatron-Bridge" in framework
    cand = attrs.evolve(_candidate_of(layout, seq, prec, rec, split, _fsdp(par), nemo, recipe_info, notes),
                        attention=attention_of(framework, notes, model), offload_layers=_offload_layers(raw_rec),
                        cross_entropy="te" if "Megatron-Bridge" in framework else "unfused", cuda_graph=graphs,
                        fp8_param_gather=_bridge_fp8_param_gather(framework, prec)
                        or _labelled_fp8_gather(str(row.get("precision") or ""), prec))
    cluster = Cluster(name=f"{gpu_name}_{layout.world}", gpu=gpus[gpu_name], nodes=layout.world // layout.per_node,
                      gpus_per_node=layout.per_node)
    # the run as a space's point, judged by the checker's rules of a layout's shape: it ran on its own
    # framework and release, whose argument checks may not be the ones primusc emits for
    broken = legality(Space(name=str(row.get("id") or "run"), model=model, cluster=cluster), cand, shape_only=True)
    if broken:
        return skip(f"layout inconsistent: {broken[0].message}")
    unpublished = _unpublished(raw_rec, nemo)
    if cand.offload_layers:  # megatron-core refuses recomputation beside activation offloading: the run had none
        unpublished = tuple(k for k in unpublished if k != "recompute")
    run = attrs.evolve(run, model=model, cluster=cluster, cand=cand, unpublished=unpublished)
    implausible = _implausible(run)
    return skip(f"{IMPLAUSIBLE}: {implausible}") if implausible else run


# The share of its precision's peak a measurement's model FLOPs may reach: above the peak no GPU runs;
# far below it (the bundled corpus's slowest run: 4.6%) a figure is in other units (a step in ms, the job's
# tokens rather than one GPU's) rather than a run's
MFU_RANGE = (0.005, 1.0)


def _implausible(run: Run) -> str:
    """Why the run's measurement cannot be one of its recipe ("" when it can): its model FLOPs (the
    projection's, counted without timing the step) at the measured rate against the GPU's peak for its
    precision."""
    from primus_lang.project import step_model_flops

    assert run.model is not None and run.cluster is not None and run.cand is not None and run.measured
    cluster, cand = run.cluster, run.cand
    steps_per_s = run.measured * cluster.world / (cand.gbs * cand.seq_len)
    mfu = step_model_flops(run.model, cluster, cand, run.settings()) * steps_per_s / cluster.gpu.peak(cand.precision)
    low, high = MFU_RANGE
    rate = f"{run.measured:,.0f} tokens/s/GPU is {mfu:.1%} of the GPU's {run.cand.precision} peak in model FLOPs"
    if mfu > high:
        return f"{rate}, more than the GPU can do"
    if mfu < low:
        return f"{rate}: check its units (a step time in ms, a whole job's tokens)"
    return ""


def _notes(row: dict[str, Any]) -> str:
    return " ".join(str(n) for n in row.get("notes") or []).lower()


def _published(row: dict[str, Any]) -> Run:
    """What a row states about itself, before it is resolved: its identity, source and measurements."""
    rid = str(row.get("id"))
    gpu_label = str((row.get("hardware") or {}).get("gpu") or "")
    group = (str(row.get("model_card")), gpu_label, str(row.get("precision")))
    measured = _measured_tokens(row)
    memory_gib = (row.get("measured") or {}).get("memory_gib")
    notes = _notes(row)
    balanced = "force-balanced" in notes or "fake balanced" in notes or bool(_FORCED.search(notes))
    release = (row.get("source_ref") or {}).get("table_version") if isinstance(row.get("source_ref"), dict) else None
    if isinstance(memory_gib, int | float) and not isinstance(memory_gib, bool) and 0 < memory_gib < 1:
        raise OutOfRange(f"`measured.memory_gib` is {memory_gib:g}, under 1 GiB, which no training run's GPU holds: "
                         "a share of the GPU's memory? write GiB (the share times the GPU's capacity)")
    return Run(rid, group, measured, source=str(row.get("source", "")), framework=str(row.get("framework") or ""),
               release=str(release or ""),
               balanced=balanced,
               measured_memory=round(_positive(memory_gib, "measured.memory_gib", _MAX_GIB) * 2**30)
               if memory_gib else None)


def _unprojectable(row: dict[str, Any], notes: str, measured: float | None) -> str | None:
    """Why the row cannot be projected whatever its model and layout (None: it may be)."""
    if row.get("quality_flag"):
        return f"quality flag: {row['quality_flag']}"
    if "degraded measurement" in notes:
        # the source itself says a known regression slowed this run (e.g. a cuDNN bug in one container)
        return "degraded measurement: the source reports a known performance regression for this run"
    # a curated flag of the corpus: a row of one's own that leaves it out is judged by its fields (a trial's
    # rows were skipped as "config_complete: false" that no one had written)
    if row.get("config_complete") is False:
        return "config incomplete (config_complete: false)"
    if measured is None and not _flops_formula(row):
        return "no measured tokens/s/GPU"
    if row.get("task") is None:
        return "no `task`: pretrain or sft (the other tasks are not projected)"
    if row.get("task") not in ("pretrain", "sft"):
        return f"unsupported feature: task `{row.get('task')}` (pre-training and full fine-tuning only)"
    return None


def _model_of(card: Any, models: dict[str, Model], cards: dict[str, Any], seq: int) -> Model | str:
    """The row's model card at its sequence length: the stdlib's, else ``model_cards.yaml``'s (a string: why none)."""
    if not card:
        return "unknown model: the row names no model card"
    if card in models:
        return models[card].replace(seq_len=seq or models[card].seq_len)
    if card in cards:
        return card_model(card, cards[card], seq)
    return f"unknown model `{card}`: no stdlib card has the name, nor has a model_cards.yaml beside the file"


def _precision_on(row: dict[str, Any], gpu: Gpu, gpu_label: str,
                  recipe_info: dict[str, Any]) -> tuple[str, str] | str:
    """``precision_of`` the row's precision, read in the context of its source and recipe, refused where
    the GPU lacks the tensor cores for it."""
    context = " ".join([str(row.get("source") or ""), str((row.get("source_ref") or {}).get("table_version") or ""),
                        *(str(n) for n in recipe_info.get("perf_config_names") or ())])
    prec = precision_of(row.get("precision"), gpu_label, context)
    if isinstance(prec, str):
        return prec
    if prec[0] == "fp4" and not gpu.nvfp4:
        return f"unsupported feature: NVFP4 on `{gpu_label}`, which has no NVFP4 tensor cores"
    if prec[0] == "fp8" and gpu.peak_fp8 <= 0:
        # read as a rate it was said beside the FP8 peak, 0: "238.4% of the GPU's fp8 peak"
        return f"unsupported feature: FP8 on `{gpu_label}`, which has no FP8 tensor cores"
    return prec


@frozen
class _Layout:
    """A row's parallel layout and batch, as published (defaults filled, nodes made whole)."""

    tp: int
    pp: int
    cp: int
    ep: int
    vp: int
    etp: int
    world: int
    per_node: int
    mbs: int
    gbs: int


def _layout_of(row: dict[str, Any], par: dict[str, Any], seq: int) -> _Layout | str:
    """The row's layout, or why it is incomplete or inconsistent."""
    tp, pp = _int(par.get("tp"), 1, "tp", 1), _int(par.get("pp"), 1, "pp", 1)
    cp, ep = _int(par.get("cp"), 1, "cp", 1), _int(par.get("ep"), 1, "ep", 1)
    vp = _int(par.get("vp"), 1, "vp")
    etp = _int(par.get("etp"), 0, "etp")
    world = _int(row.get("num_gpus"), 0, "num_gpus")
    per_node = _int(row.get("gpus_per_node"), 8, "gpus_per_node", 1)
    mbs, gbs = _int(row.get("mbs"), 0, "mbs"), _int(row.get("gbs"), 0, "gbs")
    if not (world and mbs and gbs and seq):
        missing = [name for name, v in (("num_gpus", world), ("mbs", mbs), ("gbs", gbs), ("seq_len", seq)) if not v]
        return f"layout incomplete: {', '.join(missing)} missing or 0 (num_gpus, mbs, gbs and seq_len are all needed)"
    if world % (tp * pp * cp):
        return f"layout inconsistent: {world} GPUs not divisible by tp*pp*cp = {tp * pp * cp}"
    dp = _int(par.get("dp"), 0, "dp")
    if dp and dp != world // (tp * pp * cp):
        return (f"layout inconsistent: dp {dp}, but {world} GPUs at tp*pp*cp = {tp * pp * cp} leave "
                f"{world // (tp * pp * cp)}")
    if world < per_node:
        per_node = world  # part of one node: every GPU of the run shares its scale-up fabric
    if world % per_node:
        return f"layout inconsistent: {world} GPUs do not fill whole nodes of {per_node}"
    nodes = _int(row.get("num_nodes"), 0, "num_nodes")
    if nodes and nodes * per_node != world:
        return f"layout inconsistent: {nodes} nodes of {per_node} GPUs are not num_gpus {world}"
    if par.get("etp") is None and ep > 1 and world % (tp * ep * pp):
        etp = 1  # Megatron would refuse ETP = TP here; the perf recipes set expert TP to 1
    return _Layout(tp, pp, cp, ep, vp, etp, world, per_node, mbs, gbs)


def _fsdp(par: dict[str, Any]) -> bool:
    """Whether the row shards parameters with FSDP (``fsdp: 1`` beside the distributed optimizer does not)."""
    fsdp_field = par.get("fsdp")
    return fsdp_field == "yes" or (isinstance(fsdp_field, int) and not isinstance(fsdp_field, bool) and fsdp_field > 0
                                   and not (fsdp_field == 1 and par.get("distributed_optimizer")))


def _candidate_of(layout: _Layout, seq: int, prec: tuple[str, str], rec: Recompute, split: dict[str, Any],
                  fsdp: bool, nemo: bool, recipe_info: dict[str, Any], notes: str) -> Candidate:
    """The row's knobs as a candidate (``nemo``: it ran on NeMo or Megatron-Bridge)."""
    tp, pp, vp = layout.tp, layout.pp, layout.vp
    return Candidate(
        tp=tp, pp=pp, vpp=vp if vp > 1 else 1, cp=layout.cp, ep=layout.ep, etp=layout.etp, mbs=layout.mbs,
        gbs=layout.gbs, seq_len=seq, precision=prec[0], fp8_recipe=prec[1], recompute=rec,
        sharding="fsdp" if fsdp else "dist_opt",
        schedule="interleaved" if vp > 1 and pp > 1 else "1f1b",
        tp_comm_overlap=_published_switch(recipe_info, "tp_comm_overlap", nemo and tp > 1 and prec[0] != "fp4"),
        optimizer_dtype=_moments(recipe_info),
        main_grad_dtype=_dtype(recipe_info, "main_grad_dtype", "bf16" if nemo else "fp32"),
        ep_comm_overlap=bool(recipe_info.get("moe_a2a_overlap")),
        # Megatron-Bridge's perf configs name the flex backend; AutoModel's notes say "DeepEP"
        moe_dispatcher="flex" if recipe_info.get("moe_flex_dispatcher_backend") or "deepep" in notes else "alltoall",
        **split,
    )


def _bridge_fp8_param_gather(framework: str, prec: tuple[str, str]) -> bool:
    """Whether a Megatron-Bridge row gathered FP8 parameters: its performance scripts run the registered
    precision recipe of its compute dtype, which says (``bridge.perf_precision``: the current-scaling,
    delayed and MXFP8 ones do, the sub-channel one does not; the same at every tag from v0.2.0 to v0.5.1,
    training/mixed_precision.py). Until 6 Dec 2026 no row did, and the FP8 rows' parameter gathers and
    memory were a BF16 recipe's."""
    if "Megatron-Bridge" not in framework or prec[0] != "fp8":
        return False
    fields = bridge.perf_precision(prec)
    return bool(fields and fields.get("fp8_param_gather"))


# A precision label that says its data-parallel gathers move FP8 ("FSDP float8 all-gather", torchao's
# "tensorwise with float8 all-gather", "f8 all-gather", the flag enable_fsdp_float8_all_gather): what
# its per-tensor recipe alone supports (rowwise and MX gather BF16, and their labels say "bf16
# all-gather"). A label that says it was off ("no float8 all-gather", "... disabled") is not one.
_FP8_GATHER = re.compile(r"(?<![a-z0-9])(?:float8|fp8|f8)[\s_-]+(?:fsdp2?[\s_-]+)?all[\s_-]?gather")
_NOT = re.compile(r"\b(?:no|without|w/o|disabled?|off)\b")


def _labelled_fp8_gather(label: str, prec: tuple[str, str]) -> bool:
    """Whether a row's precision label says its parameter gathers move FP8 (``_FP8_GATHER``)."""
    text = label.lower()
    said = _FP8_GATHER.search(text)
    return prec == ("fp8", "tensorwise") and said is not None and _NOT.search(text) is None


def cuda_graph_of(info: dict[str, Any]) -> str:
    """The ``cuda_graph`` knob for Megatron's ``cuda_graph_impl`` and ``cuda_graph_scope`` (or, from
    core_v0.18, ``cuda_graph_modules``) as the perf configs publish them (``frameworks.reading``); a
    scope no knob holds raises ``reading.Unread``, and the row is skipped."""
    scope = reading.words(info.get("cuda_graph_modules") or info.get("cuda_graph_scope") or [])
    return reading.cuda_graph_of(str(info.get("cuda_graph_impl") or "none"), scope)[0]


def load_runs(path: str | Path, calibrated: Profiles = False) -> list[Run]:
    """Every row of a runs file, resolved (``model_cards.yaml`` beside it fills missing models)."""
    path = Path(path)
    stdlib_definitions(calibrated)  # a profiles file that names no GPU is the command's error, not each row's
    rows = load_yaml(path, RUNS_CODES, "a runs file", unique_keys=True)
    cards = load_cards(path.parent / "model_cards.yaml")
    if not isinstance(rows, list) or not rows:
        raise TypeError("expected a non-empty list of rows (and a mapping of model cards beside it)")
    out: list[Run] = []
    first: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        run = resolve_row(row, cards, calibrated)
        if isinstance(row, dict) and row.get("id") is None:
            run = attrs.evolve(run, id=f"#{n} (no id)")  # named by its place in the file
        if run.id in first and not malformed(run):
            # a row counted twice would weigh twice in a fit: the later one is set aside
            run = attrs.evolve(run, skip=f"{DUPLICATE} `{run.id}`: row {first[run.id]} has it too")
        first.setdefault(run.id, n)
        out.append(run)
    return out


def load_cards(path: Path) -> dict[str, Any]:
    """The model cards of a ``model_cards.yaml`` (none when the file is absent)."""
    cards = load_yaml(path, RUNS_CODES, "a model-cards file") if path.exists() else {}
    if not isinstance(cards or {}, dict):
        raise TypeError("expected a non-empty list of rows (and a mapping of model cards beside it)")
    return cards or {}


def resolve_row(row: Any, cards: dict[str, Any], calibrated: Profiles) -> Run:
    """``resolve``, with a row whose fields have the wrong shape skipped with the reason (one bad
    row must not stop a file of good ones)."""
    if not isinstance(row, dict):
        return Run(str(row)[:40], ("", "", ""), None, skip=f"{NOT_UNDERSTOOD}: not a mapping")
    unknown = _unknown_field(row)
    if unknown:
        return _unresolved(row, f"{UNKNOWN_FIELD} {unknown}")
    if row.get("id") is None:
        return _unresolved(row, f"{NOT_UNDERSTOOD}: the row has no `id`")
    try:
        _check_shapes(row)
        return resolve(row, cards, calibrated)
    except OutOfRange as exc:
        return _unresolved(row, f"{OUT_OF_RANGE}: {exc}")
    except WrongType as exc:
        return _unresolved(row, f"{WRONG_TYPE}: {exc}")
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError, CompileError) as exc:
        return _unresolved(row, f"{NOT_UNDERSTOOD}: {type(exc).__name__}: {exc}")


# Every field a row may have (validation/published_runs.md's table, which a test keeps equal): a mapping's
# own fields beside it. A name outside it is a typo the row would otherwise be read without.
ROW_FIELDS: dict[str, frozenset[str]] = {
    "id": frozenset(), "source": frozenset(), "framework": frozenset(), "task": frozenset(), "model": frozenset(),
    "model_card": frozenset(), "seq_len": frozenset(), "precision": frozenset(), "num_gpus": frozenset(),
    "num_nodes": frozenset(), "gpus_per_node": frozenset(), "mbs": frozenset(), "gbs": frozenset(),
    "ga_published": frozenset(), "ga_derived": frozenset(), "local_batch_size": frozenset(), "notes": frozenset(),
    "config_complete": frozenset(), "quality_flag": frozenset(),
    "source_ref": frozenset({"repo", "path", "commit", "url", "table_version", "section", "citation",
                             "related_public_copy", "retrieval"}),
    "model_arch_inline": frozenset({"num_layers", "hidden_size", "num_attention_heads", "vocab_size"}),
    "hardware": frozenset({"system", "gpu"}),
    "parallel": frozenset({"tp", "pp", "vp", "cp", "ep", "etp", "dp", "dp_derived", "fsdp", "distributed_optimizer"}),
    "recompute": frozenset({"perf_config_tag", "perf_config_names", "recompute_granularity", "recompute_modules",
                            "recompute_method", "recompute_num_layers", "cpu_offloading_num_layers(activations)",
                            "cuda_graph_impl", "cuda_graph_scope", "moe_flex_dispatcher_backend", "moe_a2a_overlap",
                            "pp_layout", "expert_tensor_parallel_size", "activation_checkpointing", "source",
                            "recompute_layers", "activation_offload_layers", "cuda_graphs", "tp_comm_overlap",
                            "exp_avg_dtype", "main_grad_dtype"}),
    "measured": frozenset({"tokens_per_sec_per_gpu", "model_tflops_per_gpu", "flops_formula", "units",
                           "step_time_s", "mfu", "aggregate_pflops", "tokens_per_batch", "memory_gib"}),
}


def _unknown_field(row: dict[str, Any]) -> str:
    """The first field ``row`` names that no row has, with the nearest one it may mean ("" when none)."""
    for key, value in row.items():
        inner = ROW_FIELDS.get(str(key))
        if inner is None:
            return _misspelt(str(key), ROW_FIELDS)
        if inner and isinstance(value, dict):
            for sub in value:
                if str(sub) not in inner:
                    return _misspelt(f"{key}.{sub}", {f"{key}.{f}" for f in inner})
    return ""


def _misspelt(name: str, known: Iterable[str]) -> str:
    near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"`{name}`" + (f" (did you mean `{near[0]}`?)" if near else " (validation/published_runs.md lists the fields)")


# the kind of value each field the projection reads holds (null is always allowed: the field is unset)
_SHAPES: dict[str, tuple[type, ...]] = {
    "id": (str, int), "model_card": (str,), "precision": (str,), "framework": (str,), "task": (str,),
    "source": (str,), "quality_flag": (str,), "config_complete": (bool,),
    "hardware": (dict,), "measured": (dict,), "parallel": (dict,), "source_ref": (dict,),
    "recompute": (dict, str), "notes": (list, str),
}
_KINDS = {str: "text", int: "a number", bool: "true or false", dict: "a mapping", list: "a list"}


def _check_shapes(row: dict[str, Any]) -> None:
    for name, kinds in _SHAPES.items():
        value = row.get(name)
        if value is not None and not isinstance(value, kinds):
            want = " or ".join(_KINDS[k] for k in kinds)
            raise WrongType(f"`{name}` is {type(value).__name__} `{str(value)[:40]}`, not {want}")
    hardware = row.get("hardware") or {}
    if not isinstance(hardware.get("gpu") or "", str):
        raise WrongType(f"`hardware.gpu` is `{str(hardware['gpu'])[:40]}`, not text")


# how the skip reason of a row whose fields are malformed starts (the others skip a well-formed row
# primusc cannot model); ``validate`` and ``calibrate`` warn about these in a user's file
OUT_OF_RANGE, WRONG_TYPE, NOT_UNDERSTOOD = "value out of range", "wrong type", "row not understood"
UNKNOWN_FIELD, DUPLICATE, IMPLAUSIBLE = "unknown field", "duplicate id", "measurement implausible"


def malformed(run: Run) -> bool:
    return run.skip.startswith((OUT_OF_RANGE, WRONG_TYPE, NOT_UNDERSTOOD, UNKNOWN_FIELD, DUPLICATE, IMPLAUSIBLE))


_resolve_row = resolve_row


def _unresolved(row: dict[str, Any], reason: str) -> Run:
    hardware = row.get("hardware")
    gpu = hardware.get("gpu") if isinstance(hardware, dict) else hardware
    group = (str(row.get("model_card")), str(gpu), str(row.get("precision")))
    return Run(str(row.get("id")), group, None, skip=reason)


def gpu_key(run: Run) -> str:
    """The hardware profile a run calibrates (its GPU's stdlib name)."""
    return run.cluster.gpu.name.removesuffix("_calibrated") if run.cluster else ""


