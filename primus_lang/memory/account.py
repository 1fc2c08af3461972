"""The exact per-rank memory account of one candidate."""

from __future__ import annotations

from primus_lang.ir import Candidate, Cluster, Model, Settings
from primus_lang.memory.knobs import Knobs, from_candidate
from primus_lang.memory.layout import head_stage
from primus_lang.memory.result import MemoryAccount, RankAccount, Term, not_counted
from primus_lang.memory.stage import LayerItems, activation_lines, layer_items
from primus_lang.memory.states import state_terms


def _stage_name(stage: int, pp: int, head: int) -> str:
    if pp == 1:
        return "stage 0 (only)"
    if stage == 0:
        return "stage 0 (first, embedding and output layer)" if head == 0 else "stage 0 (first, embedding)"
    if stage == head:
        return f"stage {stage} (last, output layer)"
    return f"stage {stage}"


def stage_account(model: Model, cluster: Cluster, cand: Candidate, k: Knobs, items: LayerItems,
                  stage: int) -> RankAccount:
    terms = [t for t in state_terms(model, k, stage)]
    for line in activation_lines(model, k, stage, cluster.gpu.reserved_memory, items):
        inputs = tuple((n, v if isinstance(v, float) else int(v)) for n, v in line.inputs)
        terms.append(Term(line.name, line.formula, inputs, int(line.bytes)))
    kept = tuple(t for t in terms if t.bytes != 0 or t.name.startswith("reserved"))
    return RankAccount(_stage_name(stage, cand.pp, int(head_stage(k))), stage, kept, sum(t.bytes for t in kept))


def account(model: Model, cluster: Cluster, cand: Candidate, settings: Settings) -> MemoryAccount:
    """Every pipeline stage's bytes, term by term; ``peak`` is the fullest stage.

    Ranks of one stage hold the same bytes: with expert parallelism every rank holds ``E/EP`` experts
    of every MoE layer beside its dense share, so a stage is the unit of difference.
    """
    cand = settings.as_launched(cand)
    k = from_candidate(cand, cluster.world, cluster.gpu.fp8_layouts == "any", settings.torch_fsdp2)
    items = layer_items(model, k, settings)
    ranks = tuple(stage_account(model, cluster, cand, k, items, i) for i in range(cand.pp))
    return MemoryAccount(ranks, cluster.gpu.hbm_capacity, not_counted(cand.cuda_graph))
