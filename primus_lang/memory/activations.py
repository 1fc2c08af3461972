"""Bytes each layer saves for backward, per micro-batch and per rank, tensor by tensor.

Every item is one saved tensor (``count`` of them), so allocator rounding can be applied per tensor.
The unfused path is checked byte for byte against megatron-core on CPU (tests/memory), its softmax
as Transformer Engine's unfused attention runs it (``softmax_kernel_runs``); the
flash path is TransformerEngine's (q, k, v, output and an FP32 log-sum-exp per head and token). Symbols:
``s`` the CP-local sequence, ``b`` the micro-batch, ``T = s·b`` tokens, ``Tsp = T / tp`` with sequence
parallelism (else ``T``), heads ``a`` and query groups ``g`` per TP rank, ``gin`` the bytes of a saved
GEMM input per value (2 in BF16, 1 with FP8, 9/16 with NVFP4: half a byte and an E4M3 scale per 16
values; the scales' tile padding is not counted).
"""

from __future__ import annotations

from attrs import frozen

from primus_lang.ir import Model, Settings, derived
from primus_lang.memory.dual import Num, cdiv, logical_and, logical_not, where
from primus_lang.memory.knobs import MODULE_BITS, Knobs

# Items other stages name: the score square only an unfused kernel keeps, and the v a flash kernel
# copies when it saves its own inputs (``memory.explain`` offers recomputation by them)
SCORES = "attention softmax output"
V_COPY = "v copied contiguous for the flash kernel"


@frozen
class Item:
    name: str
    formula: str
    bytes: Num  # of one tensor
    count: int = 1


@frozen
class Dims:
    s: Num
    b: Num
    T: Num
    Tsp: Num
    h: int
    a: Num
    g: Num
    gin16: Num  # ``gin`` in sixteenths of a byte, so that NVFP4's 9/16 stays an integer


def saved_input(d: Dims, values: Num) -> Num:
    """Bytes of ``values`` GEMM-input values saved in the GEMM's precision (``gin``·values)."""
    return d.gin16 * values // 16


def dims(model: Model, k: Knobs) -> Dims:
    s = k.seq // k.cp
    tsp = where(k.sp, k.tp, 1)
    return Dims(
        s=s,
        b=k.mbs,
        T=s * k.mbs,
        Tsp=(s // tsp) * k.mbs,
        h=model.hidden,
        a=derived.heads_per_rank(model.heads, k.tp),
        g=derived.heads_per_rank(model.kv_heads, k.tp),
        gin16=where(k.fp8, 16, where(k.fp4, 9, 32)),
    )


def softmax_kernel_runs(d: Dims) -> Num:
    """Whether unfused attention's scale-mask-softmax runs the fused kernel, which saves its 16-bit
    output only; otherwise the torch fallback saves an FP32 softmax and its 16-bit cast.

    primusc's ``attention = unfused`` is Transformer Engine's UnfusedDotProductAttention (what
    ``--attention-backend unfused`` selects): its FusedScaleMaskSoftmax (``softmax.py``,
    ``is_kernel_available``) takes the kernel for ``16 < sk < 16384``, ``sk % 8 == 0``, ``sq % 4 == 0``,
    ``b·heads % 4 == 0`` and ``sq`` a multiple of the kernel's rows per block (8 up to 128 keys, else
    4), and builds the fallback with ``softmax_in_fp32=True``. With ``sq = sk = s`` the rule reduces to
    the three conditions below.
    """
    return logical_and(logical_and(d.s > 16, d.s < 16384), logical_and(d.s % 8 == 0, (d.b * d.a) % 4 == 0))


def _if(cond: Num, value: Num) -> Num:
    return where(cond, value, 0)


def recomputes(k: Knobs, module: str) -> Num:
    """Whether selective recomputation recomputes ``module`` (one of Megatron's --recompute-modules)."""
    return (k.recompute_modules & MODULE_BITS[module]) != 0


def _keep(k: Knobs, module: str, value: Num) -> Num:
    return where(recomputes(k, module), 0, value)


def _norm_stats(model: Model) -> int:
    return 2 if model.norm == "layernorm" else 1


def norm_items(model: Model, d: Dims, which: str) -> list[Item]:
    return [
        Item(f"{which} input", "2·Tsp·h", 2 * d.Tsp * d.h),
        Item(f"{which} statistics fp32", "4·Tsp", 4 * d.Tsp, _norm_stats(model)),
    ]


def attention_items(model: Model, k: Knobs, d: Dims, mlp_input: bool = True) -> list[Item]:
    """A self-attention block's saved tensors; with ``mlp_input`` (a transformer layer) also the
    second norm's and the MLP's input, which a hybrid model's attention-only layer does not have."""
    selective = recomputes(k, "core_attn")
    unfused = logical_not(k.flash)
    rope = model.position == "rope"
    out = norm_items(model, d, "norm1")
    out.append(Item("qkv input", "gin·Tsp·h", _keep(k, "layernorm", saved_input(d, d.Tsp * d.h))))
    if model.mla is not None:
        m = model.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            out.append(Item("q down-projection output", "2·T·q_lora", 2 * d.T * m.q_lora_rank))
            out.append(Item("q norm statistics fp32", "4·T", 4 * d.T, _norm_stats(model)))
            out.append(Item("q norm output", "2·T·q_lora", 2 * d.T * m.q_lora_rank))
        kv_down = m.kv_lora_rank + m.qk_rope_head_dim
        out.append(Item("kv down-projection output", "2·T·(kv_lora+rope_dim)", 2 * d.T * kv_down))
        out.append(Item("kv norm statistics fp32", "4·T", 4 * d.T, _norm_stats(model)))
        out.append(Item("kv norm output", "2·T·kv_lora", 2 * d.T * m.kv_lora_rank))
        # Recomputing the up-projections (mla_up_proj) frees q, k, v; the latents stay.
        out.append(Item("q", "2·T·a·(nope+rope)", _keep(k, "mla_up_proj", 2 * d.T * d.a * qk)))
        out.append(Item("k", "2·T·a·(nope+rope)", _keep(k, "mla_up_proj", 2 * d.T * d.a * qk)))
        out.append(Item("v", "2·T·a·v_dim", _keep(k, "mla_up_proj", 2 * d.T * d.a * m.v_head_dim)))
        dv = m.v_head_dim
    else:
        dh = model.head_dim
        # a rank expands k and v where it holds more query heads than key/value ones: not past TP = kv_heads
        # with TP = heads, one query head over its one key/value head
        grouped = model.heads != model.kv_heads
        gqa = d.a != d.g
        # past TP = kv_heads the rank's q|k|v are views of the QKV output gathered whole (all heads)
        mixed = where(derived.qkv_gathered(model.kv_heads, k.tp),
                      2 * d.T * derived.qkv_width(model.heads, model.kv_heads, dh, 1), 2 * d.T * (d.a + 2 * d.g) * dh)
        boundary = logical_and(unfused, logical_not(selective))
        boundary = logical_not(boundary)  # q, k, v saved as they enter core attention
        # Inside the local core attention GQA expands k and v to every head (repeat_interleave), so
        # the expanded copies are saved instead; the fused QKV output stays alive while a view of it is.
        saved_mixed = where(boundary, mixed, mixed if not rope else where(gqa, 0, mixed))
        # A flash kernel that saves its own inputs (no core_attn checkpoint) gets RoPE's new q and k
        # and v as a strided view of the fused buffer, a layout Transformer Engine does not take:
        # its get_qkv_layout makes all three contiguous, so v is saved as a copy of its g heads and
        # the fused buffer is freed (torchtitan's separate wv linear saves the same v). A checkpoint
        # saves the views themselves, which keep the buffer; so does the local unfused path.
        kernel_copies = logical_and(k.flash, logical_not(selective)) if rope else False
        out.append(Item("qkv output (fused q|k|v)", "2·T·(a+2g)·dh (all heads gathered where TP > kv_heads)", where(kernel_copies, 0, saved_mixed)))
        if rope:
            out.append(Item("q after rope", "2·T·a·dh", 2 * d.T * d.a * dh))
            out.append(Item("k after rope", "2·T·g·dh", where(boundary, 2 * d.T * d.g * dh, where(gqa, 0, 2 * d.T * d.g * dh))))
            out.append(Item(V_COPY, "2·T·g·dh",
                            _if(kernel_copies, 2 * d.T * d.g * dh)))
            out.append(Item("rope cos/sin (unfused rope)", "2·s·dh", _if(unfused, 2 * d.s * dh), 4))
        if grouped:
            expanded = _if(logical_and(logical_not(boundary), gqa), 2 * d.T * d.a * dh)
            out.append(Item("k expanded to all heads (GQA)", "2·T·a·dh", expanded))
            out.append(Item("v expanded to all heads (GQA)", "2·T·a·dh", expanded))
        dv = dh
    scores = logical_and(unfused, logical_not(selective))
    a_s2b = d.a * d.s * d.s * d.b
    fused = softmax_kernel_runs(d)
    out.append(Item(SCORES, "2·a·s²·b fused kernel, 4·a·s²·b fp32 fallback",
                    _if(scores, where(fused, 2, 4) * a_s2b)))
    if model.attention_dropout > 0:
        out.append(Item("attention dropout mask", "a·s²·b", _if(scores, a_s2b)))
    # What the second batched matmul saves: the fused kernel's own output unless dropout made a new
    # tensor of it; the FP32 fallback's 16-bit cast always is one.
    separate = True if model.attention_dropout > 0 else logical_not(fused)
    out.append(Item("attention probabilities (bmm input)", "2·a·s²·b", _if(logical_and(scores, separate), 2 * a_s2b)))
    out.append(Item("flash softmax statistics fp32", "4·a·s·b",
                    _if(logical_and(k.flash, logical_not(selective)), 4 * d.a * d.s * d.b)))
    out.append(Item("recompute mask-type flag", "4", _if(selective, 4)))
    out.append(Item("attention output (proj input)", "2·T·a·dv", 2 * d.T * d.a * dv))
    out.append(Item("proj input quantized copy", "gin·T·a·dv", _if(d.gin16 < 32, saved_input(d, d.T * d.a * dv))))
    if model.dropout > 0:
        out.append(Item("attention residual dropout mask", "Tsp·h", d.Tsp * d.h))
    if mlp_input:
        out += mlp_input_items(model, k, d)
    return out


def mlp_input_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    """The pre-MLP norm and the MLP's (or MoE's) input."""
    out = [*norm_items(model, d, "norm2"),
           Item("mlp input", "gin·Tsp·h", _keep(k, "layernorm", saved_input(d, d.Tsp * d.h)))]
    if model.norm_placement == "sandwich":
        # Gemma 2/3 also normalize each sublayer's output: each norm saves its input and statistics
        # (a post-norm-only layer, OLMo 2, moves its two norms without adding any)
        out += norm_items(model, d, "post-attention norm") + norm_items(model, d, "post-mlp norm")
    return out


def mamba_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    """A Mamba-2 layer on megatron-core's memory-efficient path: the norm and in_proj inputs (TE's
    LayerNormLinear), what mamba_ssm's fused ``mamba_split_conv1d_scan_combined`` saves (its input
    z|x|B|C|dt and the ungated scan output ``out_x``; the convolution, chunk states and C·Bᵀ are
    recomputed), the gated group norm's input and FP32 statistics, and out_proj's input."""
    m = model.mamba
    assert m is not None
    inner = m.inner // k.tp
    groups = derived.heads_per_rank(m.groups, k.tp)
    zxbcdt = 2 * inner + 2 * groups * m.state_dim + derived.heads_per_rank(m.heads, k.tp)
    return [
        *norm_items(model, d, "mamba norm"),
        Item("in_proj input", "gin·Tsp·h", _keep(k, "layernorm", saved_input(d, d.Tsp * d.h))),
        Item("in_proj output (z|x|B|C|dt)", "2·T·(2·di + 2·G·N + H)/tp", 2 * d.T * zxbcdt),
        Item("scan output before gating (out_x)", "2·T·di/tp", 2 * d.T * inner),
        Item("gated scan output (norm input)", "2·T·di/tp", 2 * d.T * inner),
        Item("gated norm statistics fp32", "4·T·G/tp", 4 * d.T * groups),
        Item("out_proj input", "gin·T·di/tp", saved_input(d, d.T * inner)),
    ]


def _gated(model: Model) -> int:
    return 2 if model.gated else 1


def mlp_items(model: Model, k: Knobs, d: Dims, prefix: str, tokens: Num, ffn: int, split: Num,
              whole: str, act: str | None = None) -> list[Item]:
    """FC1 output and activation output; ``whole`` recomputes both, ``act`` only the activation."""
    f = ffn // split
    fc1 = _keep(k, whole, 2 * _gated(model) * tokens * f)
    out = saved_input(d, tokens * f)
    out = _keep(k, whole, _keep(k, act, out) if act else out)
    return [
        Item(f"{prefix}fc1 output", f"2·{_gated(model)}·tokens·ffn/tp", fc1),
        Item(f"{prefix}activation output", "gin·tokens·ffn/tp", out),
    ]


def dense_mlp_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    out = mlp_items(model, k, d, "", d.T, model.ffn_hidden, k.tp, "mlp")
    if model.dropout > 0:
        out.append(Item("mlp residual dropout mask", "Tsp·h", d.Tsp * d.h))
    return out


def routed_tokens(model: Model, k: Knobs, d: Dims, settings: Settings) -> Num:
    """Token copies one rank's experts process: Tsp·etp·top_k, times the busiest rank's imbalance.
    Each rank routes its sequence-parallel share; the all-to-all spreads them over the EP group and,
    with ETP > 1, an all-gather over the ETP group hands every rank of it the others' (megatron-core's
    MoEAlltoAllTokenDispatcher), so at ETP = TP it is T·top_k and at ETP 1 < TP a TP-th of that, as
    ``project.build`` counts the grouped GEMMs' rows."""
    assert model.moe is not None
    milli = round(settings.moe_imbalance * 1000)
    return cdiv(d.Tsp * k.etp * model.moe.top_k * milli, 1000)


def moe_mlp_items(model: Model, k: Knobs, d: Dims, settings: Settings) -> list[Item]:
    """A routed-expert MLP with the all-to-all dispatcher (megatron-core's MoELayer).

    The router keeps its top-k indices and probabilities; the permutation keeps the routing map, the
    probabilities spread over experts and the sort index; each expert keeps its input tokens, its FC1
    output with the per-token probability (the weighted SwiGLU's inputs) and its FC2 input.
    """
    moe = model.moe
    assert moe is not None
    e, topk = moe.num_experts, moe.top_k
    tr = routed_tokens(model, k, d, settings)
    routed = [
        Item("router top-k indices", "8·Tsp·k", 8 * d.Tsp * topk),
        Item("router top-k probabilities fp32", "4·Tsp·k", 4 * d.Tsp * topk),
        Item("routing map", "E·Tsp", e * d.Tsp),
        Item("routing probabilities over experts", "2·E·Tsp", 2 * e * d.Tsp),
        Item("permutation index", "8·Tsp·k", 8 * d.Tsp * topk),
        Item("dispatched tokens", "gin·Tr·h", saved_input(d, tr * d.h)),
        Item("dispatched token probabilities", "2·Tr", 2 * tr),
    ]
    routed += mlp_items(model, k, d, "expert ", tr, moe.ffn_hidden, k.etp, "moe", "moe_act")
    # Recomputing the whole MoE block (moe) keeps only its input, the mlp input above.
    out = [Item(i.name, i.formula, _keep(k, "moe", i.bytes), i.count) for i in routed]
    if moe.shared_experts:
        width = moe.shared_experts * (moe.shared_ffn_hidden or moe.ffn_hidden)
        shared = mlp_items(model, k, d, "shared expert ", d.T, width, k.tp, "shared_experts")
        out += [Item(i.name, i.formula, _keep(k, "moe", i.bytes), i.count) for i in shared]
    if model.dropout > 0:
        out.append(Item("mlp residual dropout mask", "Tsp·h", d.Tsp * d.h))
    return out


def checkpoint_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    """What a fully recomputed layer (or group of layers) keeps: its input hidden states."""
    return [Item("recomputed layer input", "2·Tsp·h", 2 * d.Tsp * d.h)]


def checkpoint_shared_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    """Kept once per micro-batch by full recompute: the RoPE frequencies are a checkpoint argument."""
    if model.position != "rope" or model.mla is not None:
        return []
    return [Item("rope frequencies fp32 (recompute argument)", "4·s·dh", 4 * d.s * model.head_dim)]


def op_items(model: Model, k: Knobs, d: Dims) -> tuple[list[Item], list[Item]]:
    """What a layer keeps under torchtitan's op-level selective activation checkpointing (``op``).

    torchtitan (torchtitan/distributed/activation_checkpoint.py) wraps each block in its own
    checkpoint whose policy saves the outputs of ``aten.mm``, the SDPA kernels (output and FP32
    log-sum-exp), ``_c10d_functional.reduce_scatter_tensor`` and ``aten.max``, except every second
    ``aten.mm`` of the block in forward order; everything else is recomputed in backward. A Llama
    block calls wq, wk, wv, wo, w1, w3, w2 (w3 only with a gated MLP), so mm 1, 3, 5, 7 are saved.
    Linears with a bias run ``aten.addmm``, not in the list: their outputs are recomputed. torchao's
    FP8 linears call ``aten.mm`` on float8 tensor subclasses, and the policy's dispatch mode sees that
    ``aten.mm`` before the subclass turns it into ``torch._scaled_mm`` (modes run before subclasses),
    so FP8 keeps the same BF16 outputs (torchtitan's FP8 rows measure 5.6 GiB below BF16, not the
    23 GiB that recomputing every matmul would free). The unfused path (math SDPA) is recomputed
    whole. ``aten.max`` under FP8 tensorwise scaling keeps 0-dim amax tensors (a few KiB a layer),
    left out.

    Returns (kept tensors the plain layer saves too, kept tensors it does not): the backward
    transient is the plain layer less the first list only.
    """
    dh = model.head_dim
    f = model.ffn_hidden // k.tp
    mms: list[tuple[str, str, Num]] = [
        ("wq", "2·T·a·dh", 2 * d.T * d.a * dh),
        ("wk", "2·T·g·dh", 2 * d.T * d.g * dh),
        ("wv", "2·T·g·dh", 2 * d.T * d.g * dh),
        ("wo", "2·T·h", 2 * d.T * d.h),
        ("w1", "2·T·ffn/tp", 2 * d.T * f),
    ]
    if model.gated:
        mms.append(("w3", "2·T·ffn/tp", 2 * d.T * f))
    mms.append(("w2", "2·T·h", 2 * d.T * d.h))
    shared = [Item("op SAC: layer input (checkpoint input)", "2·Tsp·h", 2 * d.Tsp * d.h)]
    extra: list[Item] = []
    if not model.bias:
        for i, (name, formula, nbytes) in enumerate(mms):
            if i % 2:
                continue
            item = Item(f"op SAC: {name} output (mm {i + 1})", formula, nbytes)
            # wo and w2 outputs are partial sums the plain layer never keeps; the others are (views
            # of) tensors it saves, so recomputing the layer does not allocate them again.
            (extra if name in ("wo", "w2") else shared).append(item)
    shared.append(Item("op SAC: sdpa output", "2·T·a·dh (flash)", _if(k.flash, 2 * d.T * d.a * dh)))
    shared.append(Item("op SAC: sdpa logsumexp fp32", "4·a·s·b (flash)", _if(k.flash, 4 * d.a * d.s * d.b)))
    # Row-parallel wo and w2 under TP with SP end in a reduce-scatter (in the save list).
    extra.append(Item("op SAC: reduce-scatter output (wo, w2)", "2·Tsp·h (SP)", _if(k.sp, 2 * d.Tsp * d.h), 2))
    return shared, extra


def embedding_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    # A vocabulary-parallel embedding (TP > 1) keeps which tokens fall outside its shard and the
    # shifted token ids for its backward.
    out = [
        Item("embedding out-of-shard mask", "T (TP > 1)", _if(k.tp > 1, d.T)),
        Item("embedding shard-local token ids", "8·T (TP > 1)", _if(k.tp > 1, 8 * d.T)),
    ]
    if model.dropout > 0:
        out.append(Item("embedding dropout mask", "Tsp·h", d.Tsp * d.h))
    return out


def head_items(model: Model, k: Knobs, d: Dims) -> list[Item]:
    """The last stage's final norm, output layer and vocabulary-parallel cross-entropy (one micro-batch)."""
    v = derived.vocab_per_rank(model.vocab, k.tp)
    return [
        *norm_items(model, d, "final norm"),
        # megatron-core's output layer is a plain ColumnParallelLinear outside the FP8/FP4 context
        Item("output layer input", "2·Tsp·h", 2 * d.Tsp * d.h),
        # Megatron's cross-entropy (fused or not) saves the softmax in FP32; Transformer Engine's saves the
        # BF16 logits, overwritten by their gradient, and each token's max, sum and target logit per TP rank
        Item("logits fp32 (cross-entropy)", "4·T·V/tp", _if(logical_not(k.te_cross_entropy), 4 * d.T * v)),
        Item("logits bf16 (TE cross-entropy)", "2·T·V/tp (te)", _if(k.te_cross_entropy, 2 * d.T * v)),
        Item("cross-entropy max, sum, target logit fp32", "12·T·tp (te)", _if(k.te_cross_entropy, 12 * d.T * k.tp)),
        Item("cross-entropy target mask", "T", d.T),
        Item("cross-entropy target index", "8·T", 8 * d.T),
    ]


def total(items: list[Item]) -> Num:
    return sum((i.bytes * i.count for i in items), start=0)


def round_slack(items: list[Item]) -> Num:
    """Bytes the caching allocator adds by rounding each saved tensor up to 512 B."""
    return sum(((cdiv(i.bytes, 512) * 512 - i.bytes) * i.count for i in items), start=0)
