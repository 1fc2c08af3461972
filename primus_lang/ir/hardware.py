"""Accelerators and clusters. Bandwidths are bytes/s per GPU in one direction; FLOP/s are dense."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs
from attrs import field, frozen

from primus_lang.ir.quantity import Kind, q
from primus_lang.ir.span import Span

VENDORS = ("amd", "nvidia", "other")
FP8_LAYOUTS = ("tn", "any")
PER_TENSOR_FP8 = ("delayed", "tensorwise")  # one scale per tensor: a transposed copy keeps the scale
CONFIDENCE = ("high", "medium", "low")


def fp8_transposes(recipe: str, layouts: str) -> bool:
    """``Gpu.fp8_transposes`` for a part whose ``fp8_layouts`` is ``layouts``."""
    return recipe not in PER_TENSOR_FP8 or layouts == "tn"


# The share of its dense peak an FP8 GEMM reaches, relative to the share a BF16 GEMM of the same
# large shape reaches of its own: a property of the GEMM kernels, measured by timing them, not by
# end-to-end runs (where it trades off against everything else a step does, and a corpus of mostly
# FP8 rows fitted it at 1.48, FP8 GEMMs three times as fast as BF16 ones and every FP8 gain
# overestimated). cuBLAS on H100 SXM: FP8 tensorwise 1083-1141 TFLOP/s against BF16's 546-585 on
# the same large shapes (FBGEMM PR #2546), 0.547-0.577 of the FP8 peak against 0.552-0.592 of the
# BF16 one. Calibration keeps a profile's ratio and fits its BF16 plateau, on the vendors whose
# kernels it was measured on; another vendor's ratio is fitted from its rows of both dtypes until its
# kernels are timed (on AMD's, two sources' BF16/FP8 pairs say 0.98 overestimates FP8 by 21-25%).
FP8_GEMM_RATIO = 0.98
FP8_RATIO_MEASURED = ("nvidia",)


@frozen
class Efficiency:
    """Physical efficiency parameters of a hardware profile (fit by ``primusc calibrate``).

    GEMM efficiency follows a saturating curve in the GEMM's FLOP count: ``gemm_max * f / (f + knee)``,
    so small GEMMs run slower per FLOP. Memory-bound kernels reach ``hbm`` of the HBM bandwidth,
    collectives reach ``scale_up_bus`` / ``scale_out_bus`` of the link bandwidth.
    A collective hidden under compute still takes SMs and HBM bandwidth from it: each second of
    hidden communication costs ``overlap_slowdown`` seconds of compute.
    """

    gemm_max: float = field(default=0.80, metadata=q(Kind.FRACTION, "GEMM efficiency plateau vs dense peak"))
    gemm_knee_flops: float = field(
        default=2.0e9, metadata=q(Kind.NUMBER, "GEMM FLOPs at which efficiency is half the plateau", zero_ok=True)
    )
    fp8_gemm_max: float = field(default=0.80 * FP8_GEMM_RATIO, metadata=q(Kind.FRACTION, "FP8 GEMM plateau vs FP8 peak"))
    fp4_gemm_max: float = field(default=0.70, metadata=q(Kind.FRACTION, "NVFP4 GEMM plateau vs FP4 peak"))
    attention: float = field(default=0.55, metadata=q(Kind.FRACTION, "flash-attention efficiency vs peak"))
    sink_attention: float = field(
        default=1.0, metadata=q(Kind.NUMBER, "attention with learned sinks (cuDNN's kernel) relative to flash")
    )
    ssm_scan: float = field(
        default=1.0,
        metadata=q(Kind.NUMBER, "Mamba-2 scan kernels (mamba_ssm) relative to the attention, GEMM and HBM rates"),
    )
    hbm: float = field(default=0.75, metadata=q(Kind.FRACTION, "memory-bound kernel share of HBM bandwidth"))
    scale_up_bus: float = field(default=0.75, metadata=q(Kind.FRACTION, "bus efficiency inside the domain"))
    scale_out_bus: float = field(default=0.80, metadata=q(Kind.FRACTION, "bus efficiency across NICs"))
    # Ratios, not fractions of a peak: calibration may find a kernel class faster than the dense
    # plateau, which itself absorbs what dense layers lose.
    grouped_gemm: float = field(
        default=1.0, metadata=q(Kind.NUMBER, "grouped (MoE expert) GEMM plateau relative to dense GEMMs")
    )
    host_launch: float = field(
        default=10.0e-6, metadata=q(Kind.TIME, "host (CPU) time per kernel launch outside CUDA graphs", zero_ok=True)
    )
    overlap_slowdown: float = field(
        default=0.1, metadata=q(Kind.FRACTION, "compute seconds lost per second of communication hidden under it",
                                      zero_ok=True)
    )


PROVENANCE_BASES = ("spec", "pooled", "fitted")


def _ordered(instance: Provenance, _attribute: object, high: float) -> None:
    if high < instance.low:
        raise ValueError(f"the band's high end ({high:g}) is below its low end ({instance.low:g})")


def _far_ordered(instance: Provenance, _attribute: object, high: float) -> None:
    if high == 0 and instance.far_low != 0:
        raise ValueError("`far_low` without `far_high`: give both ends of the far band, or neither")
    if high != 0 and high < instance.far_low:
        raise ValueError(f"the far band's high end ({high:g}) is below its low end ({instance.far_low:g})")


# What a provenance's lists may name: the architectures ``trust.architecture`` and the precisions
# ``trust.gemm_precision`` give (the software is any lower-case name: megatron-core, torchtitan, ...)
PROVENANCE_KINDS = ("dense", "moe", "hybrid")
PROVENANCE_PRECISIONS = ("bf16", "fp8", "fp8 mxfp8", "fp8 blockwise", "fp8 rowwise", "fp4")
_STACK_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


def provenance_items(value: str) -> list[str]:
    """The items of a provenance's comma-separated list (``kinds``, ``precisions``, ``stacks``)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _listed_in(allowed: tuple[str, ...] | None) -> Callable[[object, attrs.Attribute[str], str], None]:
    """A validator of a comma-separated list: each item one of ``allowed`` (None: a lower-case name)."""
    def check(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
        for item in provenance_items(value):
            if allowed is not None and item not in allowed:
                raise ValueError(f"`{attribute.name}` names `{item}`; it lists {', '.join(allowed)}, comma-separated")
            if allowed is None and not _STACK_NAME.fullmatch(item):
                raise ValueError(f"`{attribute.name}` names `{item}`; each is a lower-case name "
                                 "(megatron-core, hopper, ...), comma-separated")
    return check


@frozen
class Provenance:
    """Where a profile's efficiencies come from and how far a projection on it carries.

    ``low`` and ``high`` bound measured over projected tokens/s/GPU for ``coverage`` of the rows the
    band was measured on, each projected by a fit that never saw it (k-fold cross-validation for a
    fitted profile, leave one GPU out for a pooled one, the stdlib defaults for a spec sheet):
    a projection of T tokens/s/GPU is expected between ``low·T`` and ``high·T``. ``paired`` bounds the
    error of the *ratio* of two projections of one model on one GPU at the same coverage, which errs
    less than either figure alone. The defaults are the spec sheet's, measured on the development
    corpus (``primusc calibrate --runs ... --json``'s ``bands.spec``, 1 Dec 2026; docs/projection.md):
    a spec sheet projects 15-104% too fast."""

    basis: str = field(default="spec", metadata=q(
        Kind.ENUM, "spec: spec sheet and default efficiencies; pooled: its vendor's fitted values; "
                   "fitted: fitted on its own measured runs", PROVENANCE_BASES))
    rows: int = field(default=0, metadata=q(Kind.COUNT, "measured runs of this GPU the efficiencies were fitted on"))
    error: float = field(default=0.508, metadata=q(
        Kind.NUMBER, "mean absolute relative error of tokens/s/GPU on runs the fit never saw", zero_ok=True))
    low: float = field(default=0.491, metadata=q(Kind.NUMBER, "measured over projected tokens/s/GPU: low end of the band"))
    high: float = field(default=0.873, validator=_ordered, metadata=q(
        Kind.NUMBER, "measured over projected tokens/s/GPU: high end of the band"))
    paired: float = field(default=0.081, metadata=q(
        Kind.NUMBER, "relative error of the ratio of two candidates' projections (same model and GPU)", zero_ok=True))
    coverage: float = field(default=0.8, metadata=q(Kind.FRACTION, "share of measured runs inside the band"))
    paired_coverage: float = field(default=0.5, metadata=q(
        Kind.FRACTION, "share of measured pairs whose ratio erred less than `paired`"))
    note: str = field(default="the stdlib defaults on 202 published runs of 7 GPUs", metadata=q(
        Kind.TEXT, "how the band was measured"))
    # What the fit saw: a candidate beyond it (a longer sequence, more GPUs) is a kind of run the band
    # was never measured on, and carries the ``far`` band instead (``project.trust.factors``).
    seq_max: int = field(default=0, metadata=q(
        Kind.COUNT, "longest sequence of the runs the efficiencies were fitted on (0: not recorded)", zero_ok=True))
    world_max: int = field(default=0, metadata=q(
        Kind.COUNT, "most GPUs of a run the efficiencies were fitted on (0: not recorded)", zero_ok=True))
    far_low: float = field(default=0.0, metadata=q(
        Kind.NUMBER, "low end of the band beyond what the fit saw (runs of a source projected by fits on the "
                     "other sources); 0: the band above", zero_ok=True))
    far_high: float = field(default=0.0, validator=_far_ordered, metadata=q(
        Kind.NUMBER, "high end of the band beyond what the fit saw; 0: the band above", zero_ok=True))
    # What else the fit saw, comma-separated (empty: not recorded, nothing is judged beyond it)
    kinds: str = field(default="", validator=_listed_in(PROVENANCE_KINDS), metadata=q(
        Kind.TEXT, "model architectures of the runs the efficiencies were fitted on (dense, moe, hybrid)"))
    precisions: str = field(default="", validator=_listed_in(PROVENANCE_PRECISIONS), metadata=q(
        Kind.TEXT, "GEMM precisions of those runs (bf16, fp8 per-tensor, fp8 mxfp8/blockwise/rowwise, fp4)"))
    stacks: str = field(default="", validator=_listed_in(None), metadata=q(
        Kind.TEXT, "training software of those runs (megatron-core, torchtitan, automodel, ...)"))
    archs: str = field(default="", validator=_listed_in(None), metadata=q(
        Kind.TEXT, "GPU architectures of those runs (hopper, blackwell, cdna3, ...): a profile pooled from "
                   "runs on others carries the far band on a GPU of another"))
    host_bound: str = field(default="", validator=_listed_in((*PROVENANCE_KINDS, "none")), metadata=q(
        Kind.TEXT, "model architectures of the runs whose projections the host bounds, every vendor's (`none`: no "
                   "such run): what `host_launch` is measured on; a host-bound candidate of another carries the "
                   "far band"))


@frozen
class Gpu:
    name: str = field(metadata=q(Kind.TEXT, "the profile's name"))
    vendor: str = field(metadata=q(Kind.ENUM, "vendor (picks NCCL or RCCL, GPU resource name)", VENDORS))
    peak_bf16: float = field(metadata=q(Kind.FLOPS, "dense BF16 peak"))
    hbm_capacity: int = field(metadata=q(Kind.BYTES, "HBM capacity visible to the program"))
    hbm_bandwidth: float = field(metadata=q(Kind.BANDWIDTH, "HBM bandwidth"))
    scale_up_bandwidth: float = field(
        metadata=q(Kind.BANDWIDTH, "per-GPU one-way bandwidth inside the scale-up domain")
    )
    peak_fp8: float = field(default=0.0, metadata=q(Kind.FLOPS, "dense FP8 peak (0: no FP8)"))
    peak_fp4: float = field(default=0.0, metadata=q(Kind.FLOPS, "dense FP4 peak (0: no FP4)"))
    scale_up_domain: int = field(default=8, metadata=q(Kind.COUNT, "GPUs sharing the scale-up fabric"))
    scale_up_spans_nodes: bool = field(default=False, metadata=q(
        Kind.FLAG, "the scale-up fabric joins GPUs of several nodes (an NVL72 rack of 4-GPU trays); otherwise "
        "it ends at the node, so a node of fewer GPUs than `scale_up_domain` is a domain of its own"))
    # a rack-scale part's node is its compute tray: a space that chooses the GPU plans it on such nodes
    # (``space.cluster_at``), not on the nodes another GPU's cluster declares
    node_gpus: int = field(default=0, metadata=q(
        Kind.COUNT, "GPUs one node of this part holds where it comes in one shape only (a GB200 compute tray: 4); "
        "a space that chooses the GPU (`gpu = ...`, `gpu : ...`) plans it on nodes of that many; 0: any"))
    scale_up_topology: str = field(
        default="switch", metadata=q(Kind.ENUM, "switched (NVSwitch) or full mesh (xGMI)", ("switch", "mesh"))
    )
    scale_up_latency: float = field(default=3.0e-6, metadata=q(Kind.TIME, "per-hop latency in the domain", zero_ok=True))
    fp8_layouts: str = field(default="tn", metadata=q(
        Kind.ENUM, "operand layouts the FP8 tensor cores take: tn (a per-tensor FP8 operand read transposed "
        "needs a transposed copy) or any (it is read in place)", FP8_LAYOUTS))
    # A kernel library's fact, not a fitted efficiency: the profile's ``attention`` is read on the
    # framework's fused kernel (Transformer Engine's), and FlashAttention-2's kernels (PyTorch SDPA's
    # flash backend, flash-attn v2) reach this share of its rate; 1 where FA2 is the tuned kernel
    fa2_attention: float = field(default=1.0, metadata=q(
        Kind.FRACTION, "FlashAttention-2's attention rate as a share of the fused kernel's (`attention = fa2`)"))
    nic_bandwidth: float = field(default=50.0e9, metadata=q(Kind.BANDWIDTH, "scale-out NIC bandwidth per GPU"))
    nic_latency: float = field(default=8.0e-6, metadata=q(Kind.TIME, "per-hop latency across NICs", zero_ok=True))
    # PCIe Gen5 x16, one way (32 GT/s x 16 lanes): what an HGX part copies to its host at
    host_bandwidth: float = field(default=64.0e9, metadata=q(
        Kind.BANDWIDTH, "GPU-to-host-memory bandwidth per GPU, one way, all GPUs copying at once (activation offloading)"))
    reserved_memory: int = field(
        default=3 * 2**30, metadata=q(Kind.BYTES, "runtime context and collective-library buffers", zero_ok=True)
    )
    efficiency: Efficiency = field(factory=Efficiency, metadata=q(Kind.BLOCK, "efficiency parameters"))
    provenance: Provenance = field(factory=Provenance, metadata=q(
        Kind.BLOCK, "where the efficiencies come from and the error band they give a projection"))
    confidence: str = field(default="high", metadata=q(Kind.ENUM, "how well the numbers are verified", CONFIDENCE))
    source: str = field(default="", metadata=q(Kind.TEXT, "where the numbers come from"))
    # What the user pays, never a built-in fact: the stdlib's profiles leave it 0
    arch: str = field(default="", validator=_listed_in(None), metadata=q(
        Kind.TEXT, "the GPU's architecture (ampere, hopper, blackwell, cdna3, cdna4; empty: not said)"))
    price_per_hour: float = field(default=0.0, metadata=q(
        Kind.NUMBER, "what one GPU-hour costs you, in your currency (0: not given; `cost` needs it)", zero_ok=True))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))

    @property
    def nvfp4(self) -> bool:
        """Whether the part runs Transformer Engine's NVFP4 recipe: NVIDIA FP4 tensor cores (AMD's
        FP4 is MXFP4, another format)."""
        return self.vendor == "nvidia" and self.peak_fp4 > 0

    def fp8_transposes(self, recipe: str) -> bool:
        """Whether an FP8 GEMM operand that a backward GEMM reads transposed is written a second
        time: always for block-scaled recipes (their scales run along the other axis, so the
        column-wise copy is quantized on its own), and for per-tensor recipes (delayed, tensorwise)
        where the tensor cores take FP8 in the TN layout only. Transformer Engine creates no transpose
        where ``nvte_is_non_tn_fp8_gemm_supported()`` holds (compute capability 10.x and 13+: B200, B300,
        GB200, GB300; not 12.x) and its quantizer then sets ``create_transpose`` false."""
        return fp8_transposes(recipe, self.fp8_layouts)

    def peak(self, dtype: str) -> float:
        """Dense peak for ``bf16``/``fp8``/``fp4``; FP8 on a part without FP8 runs at BF16 speed."""
        if dtype == "fp8" and self.peak_fp8 > 0:
            return self.peak_fp8
        if dtype == "fp4" and self.peak_fp4 > 0:
            return self.peak_fp4
        return self.peak_bf16


@frozen
class Cluster:
    """Nodes of one GPU profile and the links between them (within a node's scale-up domain and across)."""

    name: str = field(metadata=q(Kind.TEXT, "the cluster's name"))
    gpu: Gpu = field(metadata=q(Kind.REF, "the accelerator profile"))
    nodes: int = field(metadata=q(Kind.COUNT, "nodes (GB200/GB300: 4-GPU trays)"))
    gpus_per_node: int = field(metadata=q(Kind.COUNT, "GPUs per node"))
    nics_per_node: int = field(default=0, metadata=q(Kind.COUNT, "scale-out NICs per node (0: one per GPU)"))
    nic_bandwidth: float = field(
        default=0.0, metadata=q(Kind.BANDWIDTH, "bandwidth of one NIC (0: the GPU profile's)")
    )
    scale_up_domain: int = field(
        default=0, metadata=q(Kind.COUNT, "GPUs per scale-up domain (0: the GPU profile's)")
    )
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))

    @property
    def world(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def domain(self) -> int:
        """GPUs that talk over the scale-up fabric (at least a node, at most the world): the cluster's
        ``scale_up_domain`` where it sets one, else the GPU's, which ends at the node unless the fabric
        spans nodes (an 8-GPU board's NVLink does not reach a second node of 4)."""
        size = self.scale_up_domain or self.gpu.scale_up_domain
        if not self.scale_up_domain and not self.gpu.scale_up_spans_nodes:
            size = min(size, self.gpus_per_node)
        return max(self.gpus_per_node, min(size, self.world))

    @property
    def nic_bandwidth_per_gpu(self) -> float:
        if self.nic_bandwidth <= 0 and self.nics_per_node <= 0:
            return self.gpu.nic_bandwidth
        per_nic = self.nic_bandwidth if self.nic_bandwidth > 0 else self.gpu.nic_bandwidth
        nics = self.nics_per_node if self.nics_per_node > 0 else self.gpus_per_node
        return per_nic * nics / self.gpus_per_node


def with_fields(base: Cluster, **fields: Any) -> Cluster:
    """``base`` with ``fields`` replaced (a space's `FIELD = value` or a point of its cluster axes). A node
    of another GPU count keeps as many NICs per GPU as ``base`` has, unless ``nics_per_node`` is given
    too, so each GPU keeps its scale-out bandwidth (eight NICs left on a node of four GPUs would give
    each GPU two); a count that does not divide evenly becomes one NIC per GPU of the bandwidth a GPU had."""
    gpus = fields.get("gpus_per_node")
    if isinstance(gpus, int) and "nics_per_node" not in fields and base.nics_per_node > 0:
        nics, left = divmod(base.nics_per_node * gpus, base.gpus_per_node)
        if not left and nics > 0:
            fields = {**fields, "nics_per_node": nics}
        else:
            own = attrs.evolve(base, **{k: v for k, v in fields.items() if k not in ("gpus_per_node", "name")})
            fields = {**fields, "nics_per_node": 0, "nic_bandwidth": own.nic_bandwidth_per_gpu}
    return attrs.evolve(base, **fields)
