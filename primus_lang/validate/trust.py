"""How sure a projection is: the band its profile's provenance gives it, when two candidates are
tied, which of a tied group changes numerics least, and the warnings a user must see.

A projection of T tokens/s/GPU on a profile whose provenance measured ``low``/``high`` is expected
between ``low·T`` and ``high·T`` for ``coverage`` of the runs (``ir.Provenance``). Two candidates of
one space are compared by the ratio of their projections, which errs less than either figure (the
same model on the same GPU shares most of its error): they are *tied* when that ratio is within the
profile's ``paired`` band of 1, and then the search's order between them is not evidence.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from attrs import frozen

from primus_lang.diagnostics import Diagnostic
from primus_lang.diagnostics.codes_projection import BEYOND_EVIDENCE, DISPATCHER_GAIN, IMPLAUSIBLE, SPEC_SHEET
from primus_lang.ir import Candidate, Gpu, Model, Provenance, Space, provenance_items


class _Row(Protocol):
    """What ``host_bound_kinds`` reads of a corpus row (``runs.Run``, which imports this module)."""

    @property
    def id(self) -> str: ...

    @property
    def model(self) -> Model | None: ...

# The highest model-FLOP utilisation (in the GEMMs' own dtype) any of the corpus's published runs
# measured (Llama 3.1 405B, FP8, on GB300; tests/project/test_corpus_mfu.py recomputes it). A
# projection 12 points above the best anyone has measured says the profile's efficiencies are wrong,
# not that the recipe is that good.
CORPUS_MFU_MAX = 0.529
MFU_CEILING = 0.65

BASIS_WORDS = {
    "spec": "no efficiencies fitted to measured runs (the spec sheet's band)",
    "pooled": "its vendor's efficiencies, pooled over other GPUs' runs (too few runs of its own to fit)",
    "fitted": "fitted on measured runs of this GPU",
}


@frozen
class Band:
    """The interval a projection's provenance gives it, at ``coverage``."""

    basis: str
    coverage: float
    tokens_low: float
    tokens_high: float
    step_low: float
    step_high: float
    paired: float  # relative error of a ratio of two projections on this profile
    beyond: tuple[str, ...] = ()  # how the candidate lies beyond the fit's runs (its band then widened)


def band(gpu: Gpu, tokens_per_gpu: float, step_time: float, cand: Candidate | None = None, world: int = 0,
         model: Model | None = None, stack: str = "", host: float = 0.0) -> Band:
    """The band of a projection of ``cand`` of ``model`` on ``world`` GPUs under the training software
    ``stack`` (``cand`` omitted: the profile's own band; ``host``: its ``host_share``)."""
    p = gpu.provenance
    low, high, why = bounds(p, cand, world, model, stack, gpu.arch, host) if cand is not None else (p.low, p.high, ())
    return banded(p, tokens_per_gpu, step_time, low, high, why)


def band_on(space: Space, cand: Candidate, figures: Any) -> Band:
    """``band`` of a projection of ``cand`` on ``space``'s cluster, model and target (``figures``: a
    ``Projection`` or a search's evaluation, whose host share it reads): what project, plan and a
    plan across clusters show beside it."""
    cluster = space.cluster
    return band(cluster.gpu, figures.tokens_per_gpu, figures.step_time, cand, cluster.world, space.model,
                target_stack(space.settings.target), host_share(figures))


def banded(p: Provenance, tokens_per_gpu: float, step_time: float, low: float, high: float,
           why: tuple[str, ...] = ()) -> Band:
    """The band of one projection between measured-over-projected bounds ``low`` and ``high``: the
    tokens/s scaled by them, the step time by their inverses."""
    return Band(p.basis, p.coverage, tokens_per_gpu * low, tokens_per_gpu * high,
                step_time / high, step_time / low, p.paired, why)


def architecture(model: Model) -> str:
    """The kind of model a profile's evidence is counted in: its layers' compute differs in kind."""
    return "hybrid" if model.mamba is not None else "moe" if model.moe is not None else "dense"


# FP8 recipes that scale a whole tensor by one factor run the same GEMM kernels and casts (delayed
# scaling reads its factor from an amax history, current scaling from the tensor): one kind of evidence
_PER_TENSOR = ("delayed", "tensorwise")


def gemm_precision(cand: Candidate) -> str:
    """The GEMMs' precision as a provenance's ``precisions`` lists it: ``fp8`` for per-tensor scaling,
    ``fp8 <recipe>`` for the finer-grained recipes, whose scales and kernels differ."""
    if cand.precision != "fp8" or cand.fp8_recipe in _PER_TENSOR:
        return cand.precision
    return f"fp8 {cand.fp8_recipe}"


# The words of a framework's name that say which training software ran it, in the order they are
# tried: Megatron-DeepSpeed is DeepSpeed's, Primus runs a Megatron-LM or a TorchTitan backend, NeMo
# AutoModel is not Megatron-Core
_STACK_WORDS = (("deepspeed", "deepspeed"), ("torchtitan", "torchtitan"), ("automodel", "automodel"),
                ("foundry", "llm-foundry"),
                ("megatron", "megatron-core"), ("nemo", "megatron-core"), ("primus", "megatron-core"),
                ("bridge", "megatron-core"))


def stack_of(framework: str) -> str:
    """The training software of a framework's name (a corpus row's ``framework``, a target's
    framework), by its words: Megatron-Core for Megatron-LM, NeMo, Megatron-Bridge and Primus'
    Megatron backend; else the name's first word, lower-case, in the form a provenance's ``stacks``
    lists (``MaxText (JAX)``: ``maxtext``); empty for a name without one (not judged)."""
    words = re.findall(r"[^\W_]+", framework.lower())
    found = next((stack for word, stack in _STACK_WORDS if word in words), None)
    if found is not None:
        return found
    return next((w.strip("()[]{},;:'\"") for w in framework.lower().split() if w.strip("()[]{},;:'\"")), "")


# The attention kernel a stack runs where its row does not say, when it is not the fused kernel the
# profiles' `attention` is read on: torchtitan calls F.scaled_dot_product_attention, whose flash
# backend (FlashAttention-2) PyTorch picks on Hopper and Blackwell while cuDNN's stays opt-in
# (pytorch/pytorch#138522, #141133: cuDNN again first only from a bundled cuDNN above 9.15);
# llm-foundry's `attn_impl: flash` calls the flash-attn package's v2 kernels.
STACK_ATTENTION = {"torchtitan": "fa2", "llm-foundry": "fa2"}


def attention_of(framework: str, notes: str = "", model: Model | None = None) -> str:
    """The candidate's ``attention`` for a run of ``framework`` whose notes (lower-case) are
    ``notes``: FlashAttention-2 where the stack runs it or the notes name PyTorch's SDPA as the
    attention kernel (NeMo AutoModel's "TE + DeepEP + TorchSDPA"), else the fused kernel, which is
    also what the stack falls back to where flash-attn v2 cannot run ``model``'s attention."""
    if "sdpa" in notes and "cudnn" not in notes:  # SDPA's cuDNN backend is the fused kernel
        kernel = "fa2"
    else:
        kernel = STACK_ATTENTION.get(stack_of(framework), "flash")
    return "flash" if kernel == "fa2" and model is not None and model.fa2_unsupported else kernel


def target_stack(target: str) -> str:
    """The training software a space's launch target runs (``megatron+slurm``: Megatron-Core)."""
    return stack_of(target.split("+")[0]) if target else ""


# A projection whose host time is this share of its step or more is host-bound: its step moves with
# `host_launch`, which only such runs measure (calibrate fits it on what the host exposes).
HOST_BOUND = 0.10
# A dense op's launch over the one host cost the corpus fits (mostly on MoE layers' launches): 39-47 us split
# off on its own against 63-83 us together (docs/projection.md, Host launches and CUDA graphs, 5 Dec 2026)
DENSE_LAUNCH_SHARE = 0.6


def host_share(figures: Any) -> float:
    """The share of a projection's step (a ``Projection`` or a search's evaluation) the host exposes."""
    step = float(getattr(figures, "step_time", 0.0) or 0.0)
    host = dict(getattr(figures, "breakdown", None) or ()).get("host", 0.0)
    return float(host) / step if step > 0 else 0.0


def host_bound_kinds(shares: Mapping[str, float], runs: Iterable[_Row]) -> str:
    """A provenance's ``host_bound``: the architectures of the runs among ``runs`` whose projections
    (``shares``: by row id, ``host_share``) are host-bound, or ``none``."""
    kinds = sorted({architecture(r.model) for r in runs if r.model is not None and shares.get(r.id, 0.0) >= HOST_BOUND})
    return ",".join(kinds) or "none"


def beyond(prov: Provenance, cand: Candidate, world: int, model: Model | None = None, stack: str = "",
           arch: str = "", host: float = 0.0) -> list[str]:
    """How ``cand`` of ``model`` on ``world`` GPUs of architecture ``arch`` under ``stack`` lies beyond
    the runs the profile was fitted on (empty: inside; a fact the profile or the caller does not record
    is not judged). ``host``: the share of the candidate's projected step its host exposes."""
    out = []
    archs = provenance_items(prov.archs)
    if archs and arch and arch not in archs:
        out.append(f"a GPU of the {arch} architecture, where the runs behind its efficiencies ran on "
                   f"{', '.join(archs)} GPUs")
    if prov.seq_max and cand.seq_len > prov.seq_max:
        out.append(f"sequence {cand.seq_len:,} beyond the longest of its runs ({prov.seq_max:,}): attention's share "
                   "of the step was never measured this large")
    if prov.world_max and world > prov.world_max:
        out.append(f"{world:,} GPUs beyond the most of its runs ({prov.world_max:,})")
    kinds = provenance_items(prov.kinds)
    if kinds and model is not None and architecture(model) not in kinds:
        out.append(f"a {architecture(model)} model, where its runs trained {', '.join(kinds)} models")
    precisions = provenance_items(prov.precisions)
    if precisions and gemm_precision(cand) not in precisions:
        out.append(f"{gemm_precision(cand)} GEMMs, which none of its runs used ({', '.join(precisions)})")
    stacks = provenance_items(prov.stacks)
    if stacks and stack and stack not in stacks:
        out.append(f"trained with {stack}, where its runs used {', '.join(stacks)}")
    hosted = provenance_items(prov.host_bound)
    if hosted and model is not None and host >= HOST_BOUND and architecture(model) not in hosted:
        which = ("no host-bound run" if hosted == ["none"] else
                 f"host-bound runs of {' and '.join(hosted)} models only, never of a {architecture(model)} one")
        out.append(f"host-bound ({host:.0%} of its step is the host launching work): the host's time per launch "
                   f"(`host_launch`) was measured on {which}")
    return out


def bounds(prov: Provenance, cand: Candidate, world: int, model: Model | None = None,
           stack: str = "", arch: str = "", host: float = 0.0) -> tuple[float, float, tuple[str, ...]]:
    """Measured-over-projected bounds for ``cand`` and why they are widened: the profile's band, or
    where the candidate lies beyond what the fit saw, the wider of it and the ``far`` band (runs of a
    source the fit never saw, projected by fits on the other sources: the nearest measured stand-in
    for a kind of run the fit never saw)."""
    why = tuple(beyond(prov, cand, world, model, stack, arch, host))
    low, high = far(prov) if why else (prov.low, prov.high)
    if any(w.startswith("host-bound") for w in why):
        # the host's time per launch a fit measured on MoE layers may overprice another model's: fitted on its
        # own, a dense op's launch came to about 0.6 of it (docs/projection.md, Host launches, 5 Dec 2026), and
        # the step would lose that much of the host time it exposes
        high = max(high, 1 / (1 - host * (1 - DENSE_LAUNCH_SHARE)))
    return low, high, why


def factors(prov: Provenance, cand: Candidate, world: int, model: Model | None = None,
            stack: str = "", arch: str = "", host: float = 0.0) -> tuple[float, float]:
    """``bounds`` without the reasons."""
    low, high, _ = bounds(prov, cand, world, model, stack, arch, host)
    return low, high


# what runs outside the corpus measured at long sequences (issue 30: a fresh set of published runs)
LONG_SEQUENCES = ("runs of 32k-64k tokens outside the corpus measured 24-58% slower than projected (issue 30), "
                  "beyond any band here: attention's efficiency as the sequence grows is the least measured part "
                  "of a step")


def far(prov: Provenance) -> tuple[float, float]:
    """The band beyond what the fit saw: the wider of the profile's own and its ``far`` band."""
    if not prov.far_high:
        return prov.low, prov.high
    return min(prov.low, prov.far_low), max(prov.high, prov.far_high)


def tied(prov: Provenance, a: float, b: float) -> bool:
    """Whether two projections of one space (tokens/s/GPU, or step times) are inside the profile's
    paired band of each other: a margin below the typical error of a margin, so the measured order
    could go either way."""
    if a <= 0 or b <= 0:
        return a == b
    return abs(math.log(a / b)) <= math.log1p(prov.paired)


# FP8 recipes from the finest scaling to the coarsest: per-block scales track outliers best, a
# per-tensor scale computed from the current tensor next, and delayed scaling (an amax history from
# earlier steps) can lag a changing distribution.
_FP8 = {"mxfp8": 0, "blockwise": 0, "rowwise": 0, "tensorwise": 1, "delayed": 2}
_PRECISION = {"bf16": 0, "fp8": 1, "fp4": 2}
_STATE = {"fp32": 0, "bf16": 1}


def numerics_cost(c: Candidate) -> tuple[int, int, int, int]:
    """How far a recipe's arithmetic is from BF16 training with FP32 gradients and Adam moments, as
    an order (lower changes numerics less): GEMM precision first, then the FP8 scaling recipe, then
    how many of the gradient buffer, the optimizer's moments and the loss's logits are kept in BF16; last, among recipes
    alike in those, the layers whose activations go to host memory (traffic and host memory for
    nothing, where the projections tie)."""
    recipe = _FP8.get(c.fp8_recipe, 1) if c.precision == "fp8" else 0
    return (_PRECISION.get(c.precision, 0), recipe, _STATE.get(c.main_grad_dtype, 0) + _STATE.get(c.optimizer_dtype, 0)
            + _bf16_logits(c), c.offload_layers)


def _bf16_logits(c: Candidate) -> int:
    """1 where the loss reads the logits in BF16: Transformer Engine's fused cross-entropy does, Megatron's
    own kernels compute it in FP32."""
    return 1 if c.cross_entropy == "te" else 0


def numerics_changes(a: Candidate, b: Candidate) -> list[str]:
    """What ``b`` changes of the training's arithmetic that ``a`` does not, in ``numerics_cost``'s terms and
    order (both as launched), as phrases: "runs its GEMMs in FP8", "keeps its gradients in BF16"."""
    out = []
    if _PRECISION.get(b.precision, 0) > _PRECISION.get(a.precision, 0):
        out.append(f"runs its GEMMs in {b.precision.upper()}")
    elif b.precision == a.precision == "fp8" and _FP8.get(b.fp8_recipe, 1) > _FP8.get(a.fp8_recipe, 1):
        out.append(f"scales FP8 {b.fp8_recipe}, more coarsely")
    if _STATE.get(b.main_grad_dtype, 0) > _STATE.get(a.main_grad_dtype, 0):
        out.append(f"keeps its gradients in {b.main_grad_dtype.upper()}")
    if _STATE.get(b.optimizer_dtype, 0) > _STATE.get(a.optimizer_dtype, 0):
        out.append(f"keeps Adam's moments in {b.optimizer_dtype.upper()}")
    if _bf16_logits(b) > _bf16_logits(a):
        out.append("computes the loss on BF16 logits")
    if b.offload_layers > a.offload_layers:
        out.append(f"offloads {b.offload_layers} layers' activations")
    return out


# What a launch depends on beyond plain Megatron, each a way it can fail to start or behave otherwise on a
# site (CUDA graphs' capture and their memory, Transformer Engine's userbuffers, DeepEP's build), as a
# phrase of what a recipe does with it
_MACHINERY: tuple[tuple[Callable[[Candidate], bool], str], ...] = (
    (lambda c: c.cuda_graph != "none", "captures CUDA graphs"),
    (lambda c: c.tp_comm_overlap, "overlaps TP communication with its GEMMs (userbuffers)"),
    (lambda c: c.ep_comm_overlap, "overlaps the expert all-to-all with compute"),
    (lambda c: c.moe_dispatcher == "flex", "dispatches tokens through DeepEP (flex)"),
)


def machinery(c: Candidate) -> list[str]:
    """The mechanisms beyond plain Megatron a recipe's launch depends on, as phrases: among tied recipes
    alike in numerics, the one that depends on fewer has fewer ways to fail, for a gain no projection can
    show."""
    return [said for uses, said in _MACHINERY if uses(c)]


def tie_order(c: Candidate) -> tuple[tuple[int, int, int, int], int]:
    """The order ``tie_group`` puts a tied group in: numerics first, then machinery."""
    return numerics_cost(c), len(machinery(c))


T = TypeVar("T")


def tie_group(ranked: Sequence[T], prov: Provenance, value: Callable[[T], float],
              cand: Callable[[T], Candidate], prefer: str = "numerics") -> tuple[list[T], list[T]]:
    """Split ``ranked`` (best first) into the group tied with the first and the rest. With ``prefer``
    ``numerics`` the tied group is ordered by ``tie_order`` (the search's order breaks ties
    within it); with ``speed`` it keeps the search's order. Returns (tied group, the rest)."""
    if not ranked:
        return [], []
    best = value(ranked[0])
    group: list[T] = []
    rest: list[T] = []
    for r in ranked:
        (group if tied(prov, value(r), best) else rest).append(r)
    if prefer == "numerics":
        group.sort(key=lambda r: tie_order(cand(r)))  # stable: the search's order within an order
    return group, rest


def describe(gpu: str, p: Provenance) -> str:
    """One line: where the profile ``gpu``'s efficiencies come from (``p``) and what its band says."""
    evidence = BASIS_WORDS.get(p.basis, p.basis)
    if p.basis == "fitted":
        evidence = f"fitted on {p.rows} measured runs of this GPU"
    line = (f"profile `{gpu}`: {evidence}; {p.coverage:.0%} of runs it never saw measured "
            f"{p.low:.2f}-{p.high:.2f}x the projection (mean error {p.error:.0%}); the ratio of two candidates' "
            f"projections erred by more than ±{p.paired:.1%} for {1 - p.paired_coverage:.0%} of measured pairs")
    # where the band came from, which may be weaker evidence than the basis suggests (another vendor's
    # transfer, a band kept from the profile a site fit started at)
    return f"{line}\n  band measured: {p.note}" if p.note else line


def _fitted_on(gpu: Gpu) -> str:
    """Whose runs a profile's efficiencies were fitted on: its own, or (pooled) its vendor's."""
    if gpu.provenance.basis == "pooled":
        return f"behind `{gpu.name}` (its vendor's, pooled: it has too few of its own)"
    return f"`{gpu.name}` was fitted on"


def dispatcher_warning(shown: Sequence[Candidate], model: Model | None) -> list[Diagnostic]:
    """W6015 where candidates shown beside each other run the flex dispatcher and another one, with
    experts spread over ranks: the projection orders them with only part of the gain measured for flex."""
    if model is None or model.moe is None:
        return []
    used = {c.moe_dispatcher for c in shown if c.ep > 1}
    if "flex" not in used or len(used) < 2:
        return []
    other = sorted(used - {"flex"})[0]
    return [Diagnostic(
        DISPATCHER_GAIN, f"the flex dispatcher and `{other}` are compared with only part of flex's measured gain: "
        "DeepEP's transfer kernels and fewer host synchronizations are not projected",
        notes=("DeepEP behind the flex dispatcher measured 10.7-13.0% faster than the all-to-all at EP 8 inside one "
               "MI355X node (Primus's MoE package; validation/sweeps.yaml), where primusc projects 3-4% on those runs "
               "(the all-to-all dispatcher's second permutation and its count and probability exchanges; less "
               "where a rank holds few experts, none with one)",),
        help="measure both on your cluster (`primusc calibrate --runs`), or fix `moe_dispatcher` in the space "
             "(`primusc explain W6015`)")]


def warnings(gpu: Gpu, mfu: Sequence[tuple[str, float]], fix: str,
             shown: Sequence[tuple[Candidate, int, float]] = (), model: Model | None = None,
             stack: str = "") -> list[Diagnostic]:
    """W6002 when ``gpu`` has no fitted efficiencies, W6003 for projections above ``MFU_CEILING``
    (``mfu``: (label, MFU) of the projections shown), W6012 for candidates of ``shown`` (with their
    GPU counts and ``host_share``) beyond the runs the profile was fitted on. ``fix`` names the command
    or import that gives the space a fitted profile."""
    out = []
    outside = [(c, reasons, world, host) for c, world, host in shown
               if (reasons := beyond(gpu.provenance, c, world, model, stack, gpu.arch, host))]
    if outside:
        cand, reasons, world, host = outside[0]
        p = gpu.provenance
        low, high, _why = bounds(p, cand, world, model, stack, gpu.arch, host)
        hosted = " (its upper side as far as a dense launch's cost takes the host's time)" if high > far(p)[1] else ""
        band = (f"the first's band is {low:.2f}-{high:.2f}x, the wider of the profile's and the errors of runs of a "
                f"source projected by fits on the other sources{hosted}; no run of this kind has measured it"
                if p.far_high else
                (f"the first's band is {low:.2f}-{high:.2f}x: the profile's, its upper side as far as a dense launch's "
                 "cost takes the host's time (the profile records no far band); no run of this kind has measured it"
                 if high > p.high else
                 f"the first's band stays the profile's {low:.2f}-{high:.2f}x: the profile records no far band, and no run "
                 "of this kind has measured it"))
        out.append(Diagnostic(
            BEYOND_EVIDENCE, f"{len(outside)} projection(s) lie beyond the runs {_fitted_on(gpu)}; "
            f"the first, `{cand.label()}`: {'; '.join(reasons)}",
            notes=(band,
                   *((LONG_SEQUENCES,) if cand.seq_len > p.seq_max > 0 else ())),
            help="measure one such run and fit it (`primusc calibrate --runs my_runs.yaml --out site.prx`), or read "
                 "the projection as a rough guide"))
    out += dispatcher_warning([c for c, _world, _host in shown], model)
    if gpu.provenance.basis == "spec":
        p = gpu.provenance
        band = (f"on the published runs, spec-sheet projections measured {p.low:.2f}-{p.high:.2f}x "
                f"({p.coverage:.0%} of runs; mean error {p.error:.0%})")
        out.append(Diagnostic(
            SPEC_SHEET, f"`{gpu.name}`'s efficiencies are not fitted to any measured run: its projections carry "
            "the spec sheet's band", notes=(p.note, band) if p.note else (band,), help=fix))
    over = [(label, m) for label, m in mfu if m > MFU_CEILING]
    if over:
        label, worst = max(over, key=lambda x: x[1])
        out.append(Diagnostic(
            IMPLAUSIBLE, f"{len(over)} projection(s) exceed {MFU_CEILING:.0%} MFU, up to {worst:.1%} (`{label}`)",
            notes=(f"no published run in primusc's corpus measured more than {CORPUS_MFU_MAX:.0%} MFU in its GEMMs' dtype",),
            help=fix))
    return out


def fix_for(gpu: Gpu) -> str:
    """The import or command that gives a space a fitted profile for ``gpu``: the stdlib's plain name
    for the part when it has one (``hardware.nvidia (h200)``), else a calibration of one's own runs."""
    own = "fit the efficiencies to your own runs: `primusc calibrate --runs my_runs.yaml --out site.prx`"
    base = gpu.name.removesuffix("_spec").removesuffix("_calibrated")
    module = _fitted_modules().get(base)
    if module is None:
        return own
    return f"build the cluster on `import {module} ({base})`, the best-informed profile primusc has; or {own}"


@functools.lru_cache(maxsize=1)
def _fitted_modules() -> dict[str, str]:
    """The stdlib's best-informed profiles: plain part name -> the module that defines it."""
    from primus_lang.lower import load_program
    from primus_lang.resources import data_dir

    out = {}
    for path in sorted((data_dir("stdlib") / "hardware").glob("*.prx")):
        if path.stem == "calibrated" or path.stem.endswith("_spec"):
            continue
        for g in load_program(str(path)).gpus:
            out[g.name] = f"hardware.{path.stem}"
    return out
