"""P4: Megatron legality rules and the user's `require` constraints.

Each rule is one code; ``primus_lang/check/rules.py`` implements it. Sources: Megatron-LM
(core_v0.15–0.19) argument validation and TransformerConfig checks, AMD Primus (split-wgrad
schedules), as summarised in REFERENCE.md.
"""

from primus_lang.diagnostics.core import register

WORLD_DIVISIBILITY = register(
    "P4001",
    "world-divisibility",
    "TP·PP·CP does not divide the number of GPUs",
    "Megatron computes DP = world / (TP·PP·CP) and requires the division to be exact. Example: 64 GPUs "
    "with TP 8, PP 3 leave 64 / 24 replicas. Choose sizes whose product divides the world.",
)
BATCH_DIVISIBILITY = register(
    "P4002",
    "batch-divisibility",
    "the global batch is not a multiple of micro-batch × DP",
    "Megatron splits GBS into M = GBS / (MBS·DP) micro-batches per replica; GBS % (MBS·DP) must be 0.",
)
HEADS_TP = register(
    "P4003",
    "heads-divisibility",
    "attention heads are not divisible by TP",
    "Each tensor-parallel rank holds heads/TP heads; heads % TP must be 0.",
)
QUERY_GROUPS_TP = register(
    "P4004",
    "query-groups-divisibility",
    "key/value heads (query groups) and TP do not split evenly",
    "With GQA each TP rank holds kv_heads/TP groups, so TP must divide kv_heads (Llama 3 70B: 8 groups, TP <= 8). "
    "From Megatron-LM core_v0.16 (and Primus's pins) TP may also be a multiple of kv_heads: each rank then "
    "keeps one key/value head, shared by TP/kv_heads ranks, from the QKV output gathered whole (Nemotron 3 "
    "Super: 2 groups, TP 8); core_v0.15 and older refuse it.",
)
TP_OVERLAP_NEEDS_SP = register(
    "P4005",
    "tp-overlap-needs-sp",
    "TP communication overlap without sequence parallelism",
    "`--tp-comm-overlap` overlaps the SP all-gather/reduce-scatter with GEMMs; it needs TP > 1 with "
    "sequence parallelism on.",
)
PIPELINE_SPLIT = register(
    "P4006",
    "pipeline-split",
    "the layers do not divide evenly over the pipeline stages",
    "With an even split, num_layers % PP must be 0 (80 layers: PP 1, 2, 4, 5, 8, 10, 16, 20, 40, 80). "
    "With first_stage_layers/last_stage_layers (Megatron's --decoder-first/last-pipeline-num-layers), "
    "the layers left must divide evenly over the other stages, and be none exactly when no stage is left. "
    "With account_for_embedding/account_for_loss, the layers plus those units must divide by PP.",
)
VIRTUAL_SPLIT = register(
    "P4007",
    "virtual-pipeline-split",
    "the layers of a stage do not divide over the virtual stages",
    "With interleaving, every stage's layer count must be divisible by VPP ((num_layers / PP) % VPP == 0 "
    "on an even split; the middle stages' count on an uneven one).",
)
INTERLEAVE_NEEDS_PP = register(
    "P4008",
    "interleave-needs-pp",
    "virtual pipeline stages without pipeline parallelism",
    "VPP > 1 (interleaving) needs PP > 1.",
)
SCHEDULE_VPP = register(
    "P4009",
    "schedule-vpp-mismatch",
    "the pipeline schedule and the number of virtual stages disagree",
    "`interleaved` runs with VPP > 1, `zbv` with exactly VPP = 2 (its V-shaped placement), `1f1b` and "
    "`zero_bubble` with VPP = 1. Set `schedule` and `vpp` together, e.g. `vpp : 2 | 4 when schedule == interleaved`.",
)
SCHEDULE_NEEDS_PP = register(
    "P4010",
    "schedule-needs-pp",
    "a pipeline schedule other than 1f1b without pipeline parallelism",
    "Interleaved, zero-bubble and ZBV schedules order the stages of a pipeline; with PP = 1 there is none.",
)
INTERLEAVE_MICROBATCHES = register(
    "P4011",
    "interleave-microbatches",
    "interleaving with a micro-batch count that is not a multiple of PP",
    "Megatron's interleaved schedule runs micro-batches in groups of PP (microbatch_group_size_per_vp_stage, "
    "megatron-core 0.16.1 schedules.py): M >= PP, and a final partial group smaller than PP is refused, "
    "so M % PP == 0.",
)
CP_SEQUENCE = register(
    "P4012",
    "cp-sequence-divisibility",
    "the sequence does not split into 2·CP chunks",
    "Context parallelism splits the sequence into 2·CP chunks for load balance: seq_len % (2·CP) must be 0.",
)
FULL_RECOMPUTE_LAYERS = register(
    "P4013",
    "full-recompute-layers",
    "full recomputation with no layers, more layers than a stage holds, or uniform groups that do not tile it",
    "`full(layers: N)` recomputes N layers per (virtual) pipeline stage. Megatron requires N >= 1 and "
    "documents N <= num_layers / PP; a larger N than one model chunk (num_layers / (PP·VPP)) behaves "
    "exactly like the chunk size, so such points duplicate others and are removed: "
    "1 <= N <= num_layers / (PP·VPP) (a recipe's larger block N is imported as the chunk size). The uniform "
    "method recomputes groups of N layers, [i, i + N), and megatron-core 0.16.1 indexes past a chunk's last "
    "layer where N does not divide it: N must divide every chunk, uneven first and last stages included. "
    "Use `none` for no recomputation.",
)
PARAM_GATHER_NEEDS_DIST_OPT = register(
    "P4014",
    "param-gather-needs-dist-opt",
    "overlapped parameter all-gather without the distributed optimizer",
    "`--overlap-param-gather` needs the distributed optimizer (or FSDP) and `--overlap-grad-reduce`.\n"
    "megatron-core asserts the first (param_and_grad_buffer.py); Megatron-LM's validate_args the second,\n"
    "which a Megatron-Bridge launch does not run (its DeepSeek-V3 H100 recipes gather parameters\n"
    "overlapped with the gradient reduction not overlapped), so for `target bridge` only the first holds.\n\n"
    "`overlap_param_gather` is true unless a space sets it, so an axis `overlap_grad_reduce : true | false`\n"
    "alone leaves `false` never legal. List both, and the checker keeps the pairs that hold:\n\n"
    "    overlap_grad_reduce : true | false\n"
    "    overlap_param_gather : true | false",
)
FSDP_RESTRICTIONS = register(
    "P4015",
    "fsdp-restrictions",
    "torch FSDP2 combined with pipeline or expert parallelism or tied embeddings",
    "`sharding = fsdp` shards parameters, gradients and optimizer state over DP. The primus target runs it\n"
    "as torch FSDP2 (`use_torch_fsdp2`, as Primus's own example configs do), which Megatron's\n"
    "validate_args (megatron/training/arguments.py, core_v0.16.1) accepts only with PP = 1, EP = 1 and\n"
    "untied embeddings; the megatron and bridge targets run Megatron-FSDP (`--use-megatron-fsdp`).\n"
    "Whatever the target, the rule keeps PP = 1 and untied embeddings with FSDP (a tied-embedding model\n"
    "such as Llama 3.2 or Qwen2.5 1.5B uses `dist_opt`); expert parallelism is refused only for\n"
    "`target primus`: Megatron-FSDP shards experts over their own data-parallel group,\n"
    "as Megatron-LM's Megatron-FSDP DeepSeek-V3 example and Bridge's DeepSeek-V3 FSDP recipes run it.\n\n"
    "    sharding = fsdp   pp = 2          # refused\n\n"
    "Fix: use `dist_opt` with pipeline or expert parallelism, or PP = 1 and EP = 1 with FSDP.",
)
EXPERTS_EP = register(
    "P4016",
    "experts-divisibility",
    "routed experts are not divisible by EP",
    "Each expert-parallel rank holds num_experts/EP experts; num_experts % EP must be 0.",
)
EP_NEEDS_MOE = register(
    "P4017",
    "ep-needs-moe",
    "expert parallelism on a dense model",
    "EP > 1 (and ETP other than TP) only mean something for a mixture-of-experts model.",
)
EXPERT_WORLD = register(
    "P4018",
    "expert-world-divisibility",
    "ETP·EP·PP does not divide the number of GPUs",
    "Megatron computes expert DP = world / (ETP·EP·PP); the division must be exact.",
)
MOE_BIAS_ETP = register(
    "P4019",
    "moe-bias-etp",
    "expert linear biases with expert tensor parallelism",
    "MoE layers with biases need ETP = 1.",
)
RECOMPUTE_SPLIT_WGRAD = register(
    "P4020",
    "recompute-split-wgrad",
    "activation recomputation with a zero-bubble or ZBV schedule",
    "Primus rejects recomputation with the split-weight-gradient schedules (zero-bubble, ZBV).",
)
EP_TP_NEEDS_SP = register(
    "P4021",
    "ep-tp-needs-sp",
    "expert and tensor parallelism without sequence parallelism",
    "Megatron: when using expert parallelism and tensor parallelism, sequence parallelism must be used.",
)
EP_OVERLAP_NEEDS_EP = register(
    "P4022",
    "ep-overlap-needs-ep",
    "EP communication overlap outside the settings Megatron supports",
    "`--overlap-moe-expert-parallel-comm` (megatron-core 0.16.1 TransformerConfig) needs an MoE model "
    "with EP > 1, the alltoall or flex dispatcher, no full recomputation, virtual pipeline stages when "
    "PP > 1, and at most one MTP layer, in which case PP > 1.",
)
UNEVEN_VPP = register(
    "P4023",
    "uneven-stage-vpp",
    "an uneven first/last stage layer count does not divide over the virtual stages",
    "Megatron (TransformerConfig): with VPP, first_stage_layers and last_stage_layers must be divisible by VPP; "
    "megatron-core 0.16.1 also fails (division by zero middle stages) with both set at PP 2.",
)
UNEVEN_NEEDS_PP = register(
    "P4024",
    "uneven-needs-pp",
    "first/last stage layer counts without pipeline parallelism",
    "first_stage_layers and last_stage_layers place layers on the first/last pipeline stage; they need "
    "PP > 1 (write `last_stage_layers : ... when pp > 1`).",
)
RECOMPUTE_MODULES_NEED_SELECTIVE = register(
    "P4025",
    "recompute-modules-need-selective",
    "recompute modules given without selective recomputation",
    "Megatron's --recompute-modules applies to --recompute-granularity selective only.",
)
SPLIT_KNOBS_EXCLUSIVE = register(
    "P4026",
    "split-knobs-exclusive",
    "first/last stage layer counts together with embedding/loss accounting",
    "Megatron (TransformerConfig): num_layers_in_first/last_pipeline_stage cannot be set together with "
    "account_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split.",
)
OP_RECOMPUTE_DENSE_ONLY = register(
    "P4027",
    "op-recompute-dense-only",
    "op-level checkpointing on a MoE or MLA model",
    "`recompute = op` models torchtitan's op-level selective activation checkpointing for Llama-style\n"
    "blocks (separate q, k, v, o and MLP linears, called in that order): every second `aten.mm` is\n"
    "recomputed, so what a layer keeps depends on the block's exact matmul sequence. MoE blocks (router\n"
    "mm, grouped-mm experts, shared experts) and MLA attention have other sequences that primusc does not\n"
    "model yet. Use `selective(...)` or `full(...)` for these models.",
)
PIPELINE_LAYOUT = register(
    "P4028",
    "pipeline-layout",
    "Megatron refuses the explicit pipeline layout",
    "`pipeline_layout` is Megatron's --pipeline-model-parallel-layout: virtual stages in model order,\n"
    "separated by `|`, of `E` (embedding), `t` (decoder layer), `m` (MTP layer) and `L` (loss), with\n"
    "`x*n` and `(...)*n` repeats (no nesting) and cosmetic commas. megatron-core 0.16.1 refuses a layout\n"
    "whose virtual stage count is not PP x VPP, whose `t` count is not num_layers or `m` count not the\n"
    "model's MTP layers, without `E` exactly once first and `L` exactly once last, with an MTP layer\n"
    "before a decoder layer or outside a rank's last virtual stage, and together with first/last stage\n"
    "layers or account_for_embedding/loss. primusc also refuses it under ZBV (Megatron places a layout's\n"
    "virtual stages in interleaved order only).",
)
CUDA_GRAPH_NEEDS_MOE = register(
    "P4029",
    "cuda-graph-needs-moe",
    "a MoE-router CUDA graph on a dense model",
    "`cuda_graph = moe_router` and `attn_moe_router` capture the MoE router and its preprocessing\n"
    "(Megatron's --cuda-graph-scope moe_router moe_preprocess). megatron-core 0.16.1 (TransformerConfig)\n"
    "refuses these scopes without routed experts: use `attn` or `layer` on a dense model.",
)
CUDA_GRAPH_LAYER_MOE = register(
    "P4030",
    "cuda-graph-layer-moe",
    "a whole-layer CUDA graph on a MoE model",
    "`cuda_graph = layer` captures whole transformer layers (--cuda-graph-impl transformer_engine with\n"
    "no scope). A dropless MoE layer copies its per-expert token counts to the host, which no graph can\n"
    "hold; megatron-core graphs a MoE layer only when it drops and pads tokens to a fixed capacity\n"
    "(its `moe` scope requires --moe-pad-expert-input-to-capacity), which primusc does not model.\n"
    "Use `attn_moe_router` (attention and router per layer), or `full` (the whole iteration) with\n"
    "HybridEP's token budget (P4047).",
)
CUDA_GRAPH_FULL_RECOMPUTE = register(
    "P4031",
    "cuda-graph-full-recompute",
    "full recomputation with a per-layer CUDA graph",
    "megatron-core 0.16.1 (TransformerConfig): \"full recompute is only supported with full iteration\n"
    "CUDA graph\". With `recompute = full(...)`, `cuda_graph` must be `none` or `full`.",
)
CUDA_GRAPH_MOE_RECOMPUTE = register(
    "P4032",
    "cuda-graph-moe-recompute",
    "selective recomputation of the MoE layer with a MoE-router CUDA graph",
    "megatron-core 0.16.1 (TransformerConfig): with the transformer_engine graphs, recomputing the `moe`\n"
    "module cannot be combined with the moe_router scope (the recomputed module would contain a graphed\n"
    "part). Drop `moe` from `selective(...)` (e.g. keep `moe_act`), or use `attn` or `full`.",
)
CUDA_GRAPH_DROPOUT_RECOMPUTE = register(
    "P4033",
    "cuda-graph-dropout-recompute",
    "graphed selective recomputation of a module with dropout",
    "megatron-core 0.16.1 (TransformerConfig): a graphed recomputed module cannot draw random numbers.\n"
    "With attention dropout, `core_attn` (the default module of `selective`) cannot be recomputed under\n"
    "an attention, whole-layer or full-iteration graph; with hidden dropout, `mlp` and `moe` cannot be\n"
    "recomputed under a whole-layer or full-iteration graph.",
)
CUDA_GRAPH_EP_OVERLAP = register(
    "P4034",
    "cuda-graph-ep-overlap",
    "EP communication overlap with the full-iteration CUDA graph",
    "megatron-core 0.16 and 0.17 (TransformerConfig): --overlap-moe-expert-parallel-comm takes only the\n"
    "transformer_engine graphs (attention and router scopes); the full-iteration graph\n"
    "(`cuda_graph = full`, --cuda-graph-impl local) is refused with it. From core_v0.18 the assert\n"
    "refuses only Transformer Engine graphs over the MLP or MoE, so the rule applies where the space's\n"
    "launch runs an older Megatron-LM: `assume megatron_version`, or the commit its Primus or\n"
    "Megatron-Bridge release pins (`assume bridge_version`).",
)
CUDA_GRAPH_FULL_MOE = register(
    "P4047",
    "cuda-graph-full-moe",
    "a full-iteration CUDA graph on a dropless MoE without HybridEP's token budget",
    "A dropless MoE layer sizes its dispatch by the tokens each expert received: the alltoall and\n"
    "allgather dispatchers and DeepEP copy those counts to the host mid-layer, which no graph capture can\n"
    "hold (megatron-core's MoE README: the dynamic shapes make MoE layers uncapturable). NVIDIA's recipes\n"
    "that graph a MoE's whole iteration (Megatron-Bridge's DeepSeek-V3, Qwen3 and gpt-oss performance\n"
    "recipes) dispatch with HybridEP and a static per-rank budget of routed tokens,\n"
    "--moe-expert-rank-capacity-factor 1.5 (core_v0.18 on; a rank's tokens past 1.5 times the even share\n"
    "are dropped). primusc's launch of `cuda_graph = full` on a MoE does the same, so it needs\n"
    "`moe_dispatcher = flex` on NVIDIA GPUs and a Megatron-LM that has the flag: `target bridge`, or\n"
    "`assume megatron_version = \"core_v0.18\"` or later. Elsewhere use `attn_moe_router` (attention and\n"
    "router graphs per layer) or no graph.",
)
FP4_NEEDS_NVFP4 = register(
    "P4035",
    "fp4-needs-nvfp4",
    "FP4 precision on a GPU without NVFP4 tensor cores",
    "`precision = fp4` is Megatron's --fp4-format e2m1 --fp4-recipe nvfp4: Transformer Engine's\n"
    "NVFP4BlockScaling recipe (megatron-core 0.16.1 TransformerConfig: \"NVFP4BlockScaling recipe for\n"
    "Blackwell+ architecture\"). It needs an NVIDIA GPU with FP4 tensor cores (`peak_fp4` > 0: B200,\n"
    "GB200, B300, GB300). AMD's MXFP4 is another format, not this recipe. Use `fp8` or `bf16` elsewhere.",
)
FP8_NEEDS_FP8 = register(
    "P4040",
    "fp8-needs-fp8",
    "FP8 precision on a GPU without FP8 tensor cores",
    "`precision = fp8` is Megatron's --fp8-format through Transformer Engine, which refuses to start on\n"
    "a part without FP8 tensor cores (it asks for compute capability 8.9 on NVIDIA: Ada, Hopper and\n"
    "later; CDNA3 and later on AMD). A GPU whose profile has no `peak_fp8` (0: no FP8) is such a part;\n"
    "a projection of FP8 there would price a run that cannot start. Use `bf16`, or give the profile its\n"
    "FP8 peak if the part has one.",
)
MXFP8_NEEDS_MX = register(
    "P4048",
    "mxfp8-needs-mx",
    "MXFP8 on a GPU whose tensor cores have no MX (block-scaled) formats",
    "`fp8_recipe = mxfp8` is Transformer Engine's MXFP8BlockScaling: FP8 with a power-of-two scale per\n"
    "32 elements, which the tensor cores apply themselves. Blackwell (B200, GB200, B300, GB300) and CDNA 4\n"
    "(MI355X) have them; Hopper, Ada and CDNA 3 do not, and Transformer Engine refuses the recipe there\n"
    "(its check asks for compute capability 10.0 on NVIDIA). Megatron-Bridge's \"FP8 alternative\n"
    "granularity\" on Hopper is 128x128 blockwise scaling: `fp8_recipe = blockwise`. A GPU whose profile\n"
    "names no `arch` is not refused.",
)
CHUNKED_ATTENTION = register(
    "P4049",
    "chunked-attention-too-short",
    "a sequence longer than the model's chunked local attention",
    "Llama 4's attention layers but every fourth attend only inside chunks of `attention_chunk` tokens\n"
    "(its Hugging Face config's `attention_chunk_size`). primusc projects and accounts full causal\n"
    "attention, and megatron-core 0.16.1 has no chunked attention to launch, so a card is exact only\n"
    "while the sequence fits in one chunk: longer sequences are refused rather than projected as a model\n"
    "they are not. Keep `seq_len` at most the chunk.",
)
LEARNED_POSITIONS = register(
    "P4041",
    "learned-positions-too-short",
    "a sequence longer than the model's learned position table",
    "A model with `position = learned` holds one embedding row per position, `max_position_embeddings`\n"
    "of them; a longer `seq_len` would read past the table (Megatron's --max-position-embeddings must be\n"
    "at least --seq-length). Rotary models have no table and take any length. Shorten `seq_len`, or\n"
    "give the card the longer table it was trained with.",
)
FP8_PARAM_GATHER = register(
    "P4042",
    "fp8-param-gather",
    "FP8 primary weights without FP8 training or a sharded optimizer",
    "`fp8_param_gather = true` is Megatron's --fp8-param-gather: Transformer Engine keeps the GEMM weights\n"
    "themselves in FP8 and the data-parallel all-gather sends FP8. It needs FP8 GEMMs (`precision = fp8`)\n"
    "and a sharded optimizer, since megatron/training/arguments.py asserts the distributed optimizer or\n"
    "FSDP beside it (core_v0.16.1). Turn it off, or choose `precision = fp8` with `sharding = dist_opt`\n"
    "or `fsdp`. A `target bridge` space needs FP8 GEMMs only: Megatron-Bridge does not run validate_args\n"
    "(its Kimi K2 FP8 recipes gather FP8 weights beside a non-distributed optimizer).",
)
MAMBA_TP = register(
    "P4036",
    "mamba-tp-divisibility",
    "Mamba heads or groups not split by TP and CP",
    "megatron-core 0.16.1's MambaMixer gives every tensor-parallel rank whole SSM heads and whole B/C\n"
    "groups: it asserts mamba heads % TP == 0 and mamba groups % TP == 0 (Nemotron 3: 8 groups, so\n"
    "TP <= 8 and a divisor of 8). Under context parallelism MambaContextParallel splits each rank's\n"
    "heads over CP (heads % (TP * CP) == 0) and its groups too, or repeats them when a rank holds fewer\n"
    "groups than there are CP ranks (then CP must be a multiple of them).",
)
HYBRID_SPLIT = register(
    "P4037",
    "hybrid-pipeline-split",
    "a pipeline split a hybrid (Mamba) model cannot take",
    "megatron-core 0.16.1's MambaStack splits the hybrid pattern evenly over pipeline stages (or with\n"
    "the first/last stage layer counts) and asserts that virtual pipelining is off: no VPP, no ZBV's\n"
    "two chunks, no explicit pipeline layout, and it ignores account_for_embedding/account_for_loss\n"
    "(so primusc refuses them rather than model a split Megatron would not build).",
)
HYBRID_OP_RECOMPUTE = register(
    "P4038",
    "hybrid-op-recompute",
    "op-level checkpointing on a hybrid (Mamba) model",
    "`recompute = op` is torchtitan's op-level selective activation checkpointing of dense\n"
    "transformer blocks; torchtitan has no Mamba layers. Use `selective(...)` or `full(...)`.",
)
REQUIRE_FAILED = register(
    "P4100",
    "require-failed",
    "a `require` constraint of the space is false for this point",
    'The space\'s own `require EXPR "message"` rejects the point; the message names the values of the '
    "expression's names.",
)
NO_LEGAL_POINT = register(
    "P4099",
    "no-legal-point",
    "every point of the space breaks some rule, though no single rule removes them all",
    "`primusc check` lists how many points each rule removes; widen the axes those rules involve. "
    "(`check` reports an empty space so; the commands that search report it as P8006, without the "
    "count of what each rule removes.)",
)
DIVISION_BY_ZERO = register(
    "P4039",
    "division-by-zero",
    "a `require`, `let` or `when` divides by zero at some point of the space",
    "`/`, `//` and `%` refuse a divisor that is 0 at a point where the expression is read, instead of\n"
    "reading as infinity or 0 and deciding the constraint silently. The right side of `and` is read only\n"
    "where the left is true (of `or`, where it is false), so a guard works:\n\n"
    "    require pp == 1 or layers // (pp - 1) >= 4\n\nor keep the divisor away from 0 with "
    "`max(pp - 1, 1)`.",
)
EXPRESSION_OVERFLOW = register(
    "P4192",
    "expression-overflow",
    "a `require`, `let` or `when` computes a value past 64-bit arithmetic at some point of the space",
    "Expressions are judged over whole frames of points in 64-bit numbers: a whole number past\n"
    "2^63 - 1 would wrap to a negative one and a decimal past about 1.8e308 become infinite (or NaN),\n"
    "deciding the constraint silently against what was meant (`require 9223372036854775807 * tp > 0`\n"
    "would remove every point with TP > 1). `+`, `-`, `*`, `/`, `//` and unary `-` refuse such a\n"
    "result at a point where the expression is read; the right side of `and` (`or`) is read only where\n"
    "the left is true (false), so a guard works. Keep the numbers to what the recipe can hold.",
)
CPU_OFFLOADING = register(
    "P4044",
    "cpu-offloading",
    "activation offloading where megatron-core refuses it",
    "`offload_layers = N` is Megatron-LM's --cpu-offloading-num-layers N (its arguments switch\n"
    "cpu_offloading on from the count; Megatron-Bridge's model.cpu_offloading): Transformer Engine's\n"
    "offload context copies the saved activations of the first N decoder layers to host memory during\n"
    "the forward and back for the backward. megatron-core (0.16.1, TransformerConfig) refuses it with\n"
    "pipeline parallelism, with activation recomputation and with CUDA graphs (from core_v0.18, and at\n"
    "the commits Megatron-Bridge pins, with all but the full-iteration graph), and takes at most one\n"
    "layer fewer than the model has; only its TransformerBlock enters the offload context, so a hybrid\n"
    "(Mamba) model's stack offloads nothing; and it refuses module-wise offloading or paged MoE stashes\n"
    "beside it (a passthrough `fine_grained_activation_offloading = true`, `moe_paged_stash = true`).\n"
    "Keep `pp = 1`, `recompute = none` and no CUDA graph on a transformer, or set `offload_layers = 0`.",
)
PRECISION_AWARE_NEEDS_DIST_OPT = register(
    "P4045",
    "precision-aware-needs-dist-opt",
    "BF16 Adam moments without the distributed optimizer",
    "`optimizer_dtype = bf16` is Megatron's precision-aware optimizer (--use-precision-aware-optimizer\n"
    "with BF16 exp_avg and exp_avg_sq), which megatron-core builds only with the distributed optimizer\n"
    "(megatron/core/optimizer/__init__.py: \"only supported with distributed optimizer\"). Megatron-FSDP\n"
    "(`sharding = fsdp` on the megatron and bridge targets) switches the distributed optimizer on itself;\n"
    "torch FSDP2 (`sharding = fsdp` on the primus target) runs without it, and so does `sharding = none`.\n"
    "Use `sharding = dist_opt`, or `optimizer_dtype = fp32`.",
)
FA2_UNSUPPORTED = register(
    "P4043",
    "fa2-unsupported",
    "FlashAttention-2's kernels for attention they cannot run",
    "`attention = fa2` asks for FlashAttention-2's kernels (Megatron's --attention-backend flash, the\n"
    "flash-attn package). flash-attn v2 takes one head width for queries, keys and values, at most 256,\n"
    "and has no learnable softmax offset: MLA (192-wide query/key heads beside 128-wide value heads) and\n"
    "gpt-oss's attention sinks leave Transformer Engine no backend it may use, and the launch fails\n"
    "at start. Use `attention = flash`, the fused kernel.",
)
RELEASE_REFUSED = register(
    "P4046",
    "release-refused",
    "a setting the launch's Megatron-LM release refuses at start beside the model",
    "Megatron-LM's validate_args refuses some settings at some releases only: Transformer Engine's\n"
    "fused cross entropy from core_v0.18 (`cross_entropy = te`: \"disabled due to stability issues\"),\n"
    "context parallelism beside MTP layers before core_v0.14. The rules are read from\n"
    "frameworks/megatron/rules.json (generated from arguments.py at each release) for the release the\n"
    "space's launch runs: `assume megatron_version` (or `--var megatron_version`), or the commit a\n"
    "Primus release pins. A Megatron-Bridge launch does not go through validate_args. Change the knob,\n"
    "or launch a release that runs it.",
)
SPACE_TOO_LARGE = register(
    "P4190",
    "space-too-large",
    "the space has more points than primusc can walk, or a rule reads axes with too many combinations",
    "Counting judges each rule over the product of the axes it reads, and `check`'s memory walk,\n"
    "`project` and `plan` visit the space's points one by one. A space whose walk would cover more than\n"
    "4,194,304 slots (its axes' values multiplied, a conditional axis counting one more), that holds\n"
    "more than 262,144 legal points for a search, or where one rule reads axes whose values multiply\n"
    "past 4,194,304, would take minutes and gigabytes to say anything. Fix more knobs, take fewer values\n"
    "on the widest axes (`pow2(...)` or a `step`), or split the space into several.",
)
SCHEDULE_TOO_LONG = register(
    "P4191",
    "schedule-too-long",
    "the point's pipeline schedule has more slots than primusc simulates",
    "The projection runs the pipeline schedule op by op: every (stage, virtual chunk, micro-batch)\n"
    "of the first four groups of PP micro-batches, after which the schedule repeats and the rest is\n"
    "extrapolated. A point needing more than 524,288 such slots (PP x VPP x min(micro-batches, 4 PP):\n"
    "PP above 256, or above 181 with VPP 2) would take minutes and gigabytes to project, far beyond\n"
    "any published pipeline (Llama 3.1 405B ran PP 16). Use a smaller PP, or fewer virtual stages.",
)
