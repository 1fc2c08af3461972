"""The operators a training step is made of, as small frozen records an oracle can time.

Every op carries a hashable ``key`` (op name, shape, dtype) so an oracle, or the benchmark
database, can cache its timing: the same GEMM shape appears in many candidates.
"""

from __future__ import annotations

from attrs import field, frozen

PHASES = ("F", "B", "W")  # forward, backward input-gradient, backward weight-gradient
KINDS = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p")


@frozen
class Gemm:
    """``m x k`` times ``k x n``, ``batch`` independent copies (FLOPs ``2 m n k batch``)."""

    m: int
    n: int
    k: int
    dtype: str = "bf16"
    batch: int = 1

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch

    @property
    def key(self) -> tuple[object, ...]:
        return ("gemm", (self.m, self.n, self.k, self.batch), self.dtype)


@frozen
class GroupedGemm:
    """``groups`` GEMMs of one shape (local experts of a MoE layer), each with its own kernel."""

    groups: int
    m: int
    n: int
    k: int
    dtype: str = "bf16"

    @property
    def flops(self) -> float:
        return 2.0 * self.groups * self.m * self.n * self.k

    @property
    def key(self) -> tuple[object, ...]:
        return ("grouped_gemm", (self.groups, self.m, self.n, self.k), self.dtype)


@frozen
class Attention:
    """Flash-style attention core for one micro-batch on one rank.

    ``causal`` halves the score work; ``window`` > 0 limits each query to that many keys.
    ``backward`` marks the gradient kernel (2.5x the forward's matmul work: it recomputes the scores).
    ``fa2``: FlashAttention-2's kernel rather than the framework's fused one (same work, another rate).
    """

    batch: int
    heads: int
    seq_q: int
    seq_kv: int
    head_dim: int
    v_head_dim: int
    causal: bool = True
    window: int = 0
    backward: bool = False
    dtype: str = "bf16"
    sinks: bool = False
    fa2: bool = False

    @property
    def pairs(self) -> float:
        """Query-key pairs actually scored."""
        kv = self.seq_kv
        if self.window and self.window < kv:
            return float(self.seq_q) * self.window
        return self.seq_q * kv * (0.5 if self.causal else 1.0)

    @property
    def flops(self) -> float:
        forward = 2.0 * self.batch * self.heads * self.pairs * (self.head_dim + self.v_head_dim)
        return forward * (2.5 if self.backward else 1.0)

    @property
    def key(self) -> tuple[object, ...]:
        shape = (self.batch, self.heads, self.seq_q, self.seq_kv, self.head_dim, self.v_head_dim,
                 self.causal, self.window, self.backward, self.sinks, self.fa2)
        return ("attention", shape, self.dtype)


@frozen
class SsmScan:
    """Mamba-2's chunked SSD scan with the causal convolution and the gated group norm around it: the
    kernels of mamba_ssm (``mamba_split_conv1d_scan_combined``) and causal_conv1d for one
    micro-batch on one rank. ``chunks`` chunks of ``chunk`` tokens (over the micro-batch), ``heads``
    heads of width ``head_dim`` sharing B and C in ``groups`` groups of ``state`` values.

    Per head and chunk the intra-chunk term is structured masked attention (Dao & Gu 2024): C·Bᵀ
    under the causal decay mask times X, ``2·(state + head_dim)·chunk²/2`` FLOPs with an exponential
    per pair; the inter-chunk terms (the chunk's state Bᵀ·X, the output C·state) are
    ``2·2·state·head_dim·chunk``. The backward does twice the forward's model FLOPs; its kernels
    also recompute the convolution and the chunk states (the fused forward saves only its input).
    ``bytes`` is the HBM traffic besides the matmuls (convolution, FP32 chunk states passed between
    chunks, dt and its cumulative sums, the norm), ``kernels`` the launches."""

    chunks: int
    heads: int
    chunk: int
    state: int
    head_dim: int
    bytes: int
    kernels: int
    backward: bool = False

    @property
    def intra_flops(self) -> float:
        return 2.0 * self.chunks * self.heads * (self.state + self.head_dim) * self.chunk * self.chunk / 2

    @property
    def inter_flops(self) -> float:
        return 4.0 * self.chunks * self.heads * self.state * self.head_dim * self.chunk

    @property
    def flops(self) -> float:
        return (self.intra_flops + self.inter_flops) * (2.0 if self.backward else 1.0)

    @property
    def key(self) -> tuple[object, ...]:
        shape = (self.chunks, self.heads, self.chunk, self.state, self.head_dim, self.bytes, self.kernels, self.backward)
        return ("ssm", shape, "")


@frozen
class MemoryOp:
    """Memory-bound kernels (norms, activations, residuals, casts, optimizer) moving ``bytes`` in
    ``kernels`` launches (each launch pays the profile's fixed per-kernel cost)."""

    name: str
    bytes: int
    kernels: int = 1

    @property
    def flops(self) -> float:
        return 0.0

    @property
    def key(self) -> tuple[object, ...]:
        return ("memory", (self.name, self.bytes, self.kernels), "")


@frozen
class Group:
    """Where a communicator's ranks sit: ``size`` ranks, ``per_domain`` of them per scale-up domain.

    ``per_domain == size`` means the whole group talks over the scale-up fabric.
    """

    size: int
    per_domain: int

    @property
    def domains(self) -> int:
        return max(1, self.size // max(1, self.per_domain))


@frozen
class Collective:
    """``bytes`` is the full buffer: the all-reduced tensor, the gathered output, the reduce-scatter
    input, a rank's whole all-to-all send buffer, or one point-to-point message. A de-duplicating
    MoE dispatcher (DeepEP/HybridEP) sends a token once per remote domain: ``remote_bytes``."""

    kind: str
    bytes: int
    group: Group
    remote_bytes: int = -1  # all-to-all only: bytes that leave the domain, if not the even share

    @property
    def flops(self) -> float:
        return 0.0

    @property
    def key(self) -> tuple[object, ...]:
        return ("collective", (self.kind, self.bytes, self.group.size, self.group.per_domain, self.remote_bytes), "")


Compute = Gemm | GroupedGemm | Attention | SsmScan | MemoryOp
Op = Compute | Collective


@frozen
class Task:
    """One op in a block: which pass it runs in, what it is accounted as, how often it runs.

    ``times`` may be fractional (half the layers of a sliding-window model use the window).
    ``model_flops`` says whether the op counts toward model FLOPs (recomputation does not).
    ``routed`` marks work on routed experts: the busiest expert rank gates it, so the projection
    scales it by the space's ``moe_imbalance`` when experts are spread over ranks.
    ``hides_under`` names the kind of compute this communication overlaps with ("" none,
    "attention", "gemm" or "block"); the projection decides per candidate whether it may.
    ``model_share`` is the part of the op's FLOPs that are model FLOPs (unfused causal attention
    computes the whole score square, the model needs half).
    ``part`` is the piece of the layer a CUDA graph scope can capture ("attn", "mlp", "router" or
    "moe"; "" for the rest of the layer: norms and residuals, FSDP gathers).
    """

    op: Op
    phase: str
    kind: str = "compute"
    times: float = 1.0
    model_flops: bool = True
    routed: bool = False
    hides_under: str = ""
    model_share: float = 1.0
    part: str = ""

    # The copy a layer's builder makes, spelled out: ``attrs.evolve`` costs ten times as much, and a
    # space's layers are built by the thousand.
    def again(self) -> Task:
        """This forward task run again in the backward (recomputation): no model FLOPs."""
        return Task(self.op, "B", self.kind, self.times, False, self.routed, self.hides_under, self.model_share,
                    self.part)

    @property
    def launches(self) -> float:
        """Kernels the host launches for this task: Transformer Engine's grouped GEMM issues one GEMM
        per local expert (a loop over streams), a memory op its ``kernels``, everything else one."""
        op = self.op
        n = op.groups if isinstance(op, GroupedGemm) else op.kernels if isinstance(op, MemoryOp) else 1
        return n * self.times


@frozen
class Block:
    """A repeated piece of a stage: ``count`` identical layers (or the embedding, or the head)."""

    name: str
    tasks: tuple[Task, ...]
    count: int = 1


@frozen
class Stage:
    """One pipeline rank: its virtual chunks (one unless interleaved/V schedules) and the work
    done once per step (gradient reduction, parameter gathers, optimizer)."""

    index: int
    chunks: tuple[tuple[Block, ...], ...]
    step_tasks: tuple[Task, ...] = field(default=())
    p2p: Collective | None = None  # the activation sent to the next stage, per micro-batch and chunk
