"""The knobs memory reads, as Python scalars (one candidate) or numpy columns (many candidates).

Enumerations become small integer codes so the same formulas run on both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from attrs import frozen

from primus_lang.ir import Candidate, derived
from primus_lang.ir.candidate import RECOMPUTE_MODULES
from primus_lang.ir.pipeline import Split
from primus_lang.memory.dual import Num

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2, "op": 3}
SHARDING_CODES = {"none": 0, "dist_opt": 1, "fsdp": 2}
SCHEDULE_CODES = {"1f1b": 0, "interleaved": 1, "zero_bubble": 2, "zbv": 3}
FP8_RECIPE_CODES = {"tensorwise": 0, "delayed": 1, "blockwise": 2, "mxfp8": 3, "rowwise": 4}
# Selective recomputation as a bit set of Megatron's --recompute-modules.
MODULE_BITS = {name: 1 << i for i, name in enumerate(RECOMPUTE_MODULES)}


@frozen
class Knobs:
    """Candidate knobs in the units the formulas use; ``world`` is the cluster's GPU count."""

    world: int
    tp: Num
    pp: Num
    vpp: Num  # model chunks per pipeline rank actually built (ZBV: 2)
    first: Num  # decoder layers on the first stage (0: even split)
    last: Num  # decoder layers on the last stage (0: even split)
    embedding: Num  # bool: the embedding counts as a layer of the split
    loss: Num  # bool: the loss counts as a layer of the split
    cp: Num
    ep: Num
    etp: Num
    mbs: Num
    gbs: Num
    seq: Num
    fp8: Num  # bool
    fp4: Num  # bool: NVFP4
    fp8_recipe: Num
    fp8_param: Num  # bool: FP8 primary weights (--fp8-param-gather), FP8 GEMMs only
    recompute: Num
    recompute_layers: Num
    recompute_uniform: Num  # bool
    recompute_modules: Num  # MODULE_BITS of what selective recomputation recomputes (0 otherwise)
    offload: Num  # leading decoder layers whose activations are offloaded to host memory
    sharding: Num
    schedule: Num
    sp: Num  # bool: sequence parallelism in effect (TP > 1)
    flash: Num  # bool
    overlap_grad_reduce: Num  # bool
    grad_bytes: Num
    state_bytes: Num
    # Megatron's --pipeline-model-parallel-layout ("" = the split knobs): one value for all rows, since
    # a string is no column (the pre-filter evaluates each layout's candidates as their own batch)
    layout: str = ""
    # the GPU reads per-tensor FP8 operands transposed in place (``Gpu.fp8_transposes``): one value
    # for all rows, a property of the cluster, not of a candidate
    fp8_any_layout: Num = False
    # bool: Transformer Engine's cross-entropy keeps the BF16 logits (and their gradient in place), not FP32
    te_cross_entropy: Num = False
    # FSDP launches as torch FSDP2 (``Settings.torch_fsdp2``), not Megatron-FSDP: one value for all rows,
    # a property of the target
    torch_fsdp2: Num = False

    @property
    def zbv(self) -> Num:
        return self.schedule == SCHEDULE_CODES["zbv"]

    @property
    def split(self) -> Split:
        return Split(0, self.pp, self.vpp, self.first, self.last, self.embedding, self.loss, self.zbv, self.layout)

    @property
    def dp(self) -> Num:
        return derived.at_least_one(derived.dp(self.world, self.tp, self.pp, self.cp))

    @property
    def dp_cp(self) -> Num:
        """The distributed optimizer's shard group: data- and context-parallel ranks together."""
        return derived.at_least_one(derived.dp_cp(self.world, self.tp, self.pp))

    @property
    def edp(self) -> Num:
        return derived.at_least_one(derived.edp(self.world, self.etp, self.ep, self.pp))

    @property
    def microbatches(self) -> Num:
        # At least one: memory stays defined on points the legality checker rejects.
        return derived.at_least_one(derived.microbatches(self.gbs, self.mbs, self.dp))


def module_mask(c: Candidate) -> int:
    if c.recompute.kind != "selective":
        return 0
    return sum(MODULE_BITS[m] for m in set(c.recompute.modules or ("core_attn",)))


def fp8_param(c: Candidate) -> bool:
    """FP8 primary weights in effect: the knob, with FP8 GEMMs (legality refuses it otherwise)."""
    return c.fp8_param_gather and c.precision == "fp8"


# what is one value for every candidate of a batch, not a column
SCALARS = ("world", "layout", "fp8_any_layout", "torch_fsdp2")


def from_candidate(c: Candidate, world: int, fp8_any_layout: bool = False, torch_fsdp2: bool = False) -> Knobs:
    return Knobs(
        world=world,
        fp8_any_layout=fp8_any_layout,
        torch_fsdp2=torch_fsdp2,
        tp=c.tp,
        pp=c.pp,
        vpp=derived.virtual_stages(c.schedule, c.vpp),
        first=c.first_stage_layers,
        last=c.last_stage_layers,
        embedding=c.account_for_embedding,
        loss=c.account_for_loss,
        cp=c.cp,
        ep=c.ep,
        etp=c.expert_tp,
        mbs=c.mbs,
        gbs=c.gbs,
        seq=c.seq_len,
        fp8=c.precision == "fp8",
        fp4=c.precision == "fp4",
        fp8_recipe=FP8_RECIPE_CODES[c.fp8_recipe],
        fp8_param=fp8_param(c),
        recompute=RECOMPUTE_CODES[c.recompute.kind],
        recompute_layers=c.recompute.layers,
        recompute_uniform=c.recompute.method == "uniform",
        recompute_modules=module_mask(c),
        offload=c.offload_layers,
        sharding=SHARDING_CODES[c.sharding],
        schedule=SCHEDULE_CODES[c.schedule],
        sp=c.sp,
        flash=c.attention != "unfused",  # every flash-style kernel keeps no score square
        overlap_grad_reduce=c.overlap_grad_reduce,
        grad_bytes=derived.dtype_bytes(c.main_grad_dtype),
        state_bytes=derived.dtype_bytes(c.optimizer_dtype),
        layout=c.pipeline_layout,
        te_cross_entropy=c.cross_entropy == "te",
    )


def from_candidates(cands: Sequence[Candidate], world: int) -> Knobs:
    def col(values: list[int] | list[bool]) -> np.ndarray:
        return np.asarray(values, dtype=bool if values and isinstance(values[0], bool) else np.int64)

    ks = [from_candidate(c, world) for c in cands]
    layouts = {k.layout for k in ks}
    if len(layouts) > 1:
        raise ValueError("candidates with different pipeline layouts cannot share one set of columns")
    names = [f for f in Knobs.__attrs_attrs__ if f.name not in SCALARS]
    return Knobs(world=world, layout=layouts.pop() if layouts else "",
                 **{f.name: col([getattr(k, f.name) for k in ks]) for f in names})
