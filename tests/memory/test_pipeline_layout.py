"""An explicit pipeline layout (``pipeline_layout``) through memory and projection: the account and the
pre-filter agree byte for byte, and both place layers, MTP and the head where the layout says."""

from __future__ import annotations

import itertools

from memory_models import DSV3_SMALL, LLAMA70B, X64

from primus_lang.ir import Candidate, Recompute, Settings
from primus_lang.ir.pipeline import Split, problems
from primus_lang.memory import account, prefilter
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.layout import stage_layers
from primus_lang.project.build import stage_ops
from primus_lang.project.projection import project
from primus_lang.validate.runs import stdlib_definitions

S = Settings()
# DSV3_SMALL: 7 decoder layers (the first dense), one MTP layer
LAYOUTS = {
    (2, 1): ("", "Ettt|ttttmL", "Et*6|tmL"),
    (2, 2): ("Ett|tt|tt|tmL", "Ett|tt|tttm|L", "E|t*4|t*3|mL"),
    (4, 1): ("Et|tt|tt|ttmL", "Et*4|t|t|tmL"),
}


def _cands() -> list[Candidate]:
    out = []
    for (pp, vpp), layouts in LAYOUTS.items():
        for layout, mbs, rc in itertools.product(layouts, (1, 2), (Recompute(), Recompute("full", 1),
                                                                     Recompute("selective"))):
            out.append(Candidate(tp=2, pp=pp, vpp=vpp, ep=2, mbs=mbs, gbs=64, seq_len=2048, recompute=rc,
                                 schedule="interleaved" if vpp > 1 else "1f1b", pipeline_layout=layout,
                                 last_stage_layers=0 if layout or pp == 1 else 3))
    return out


def test_the_layouts_are_ones_megatron_builds() -> None:
    for (pp, vpp), layouts in LAYOUTS.items():
        for layout in filter(None, layouts):
            assert not problems(Split(DSV3_SMALL.num_layers, pp, vpp, layout=layout), DSV3_SMALL.mtp_layers)


def test_prefilter_equals_account_with_layouts_mixed_in() -> None:
    cands = _cands()
    # a layout whose stage count does not match PP x VPP (refused by the checker) stays defined too
    cands.append(Candidate(tp=2, pp=4, vpp=1, ep=2, gbs=64, seq_len=2048, pipeline_layout="Ett|tt|tt|tmL"))
    peaks = prefilter(DSV3_SMALL, X64, cands, S)
    assert [int(p) for p in peaks] == [account(DSV3_SMALL, X64, c, S).peak.total for c in cands]
    # and one candidate of each layout alone, as the pre-filter's own batch
    firsts = {(c.pipeline_layout, c.pp, c.vpp): c for c in reversed(cands)}
    assert len(firsts) == 9
    for c in firsts.values():
        assert int(prefilter(DSV3_SMALL, X64, [c], S)[0]) == account(DSV3_SMALL, X64, c, S).peak.total


def test_prefilter_equals_account_with_op_and_layouts_mixed_in() -> None:
    # op is refused on MoE models (P4027), so a dense model: the same batch holds op and other recompute
    # kinds, with and without a layout, at more than one (PP, VPP)
    layouts = {(2, 1): ("", "Et*38|t*42L"), (4, 1): ("", "Et*19|t*20|t*20|t*21L"),
               (2, 2): ("", "Et*19|t*20|t*20|t*21L")}
    cands = [
        Candidate(tp=8, pp=pp, vpp=vpp, mbs=mbs, gbs=64, seq_len=4096, recompute=rc, pipeline_layout=layout,
                  schedule="interleaved" if vpp > 1 else "1f1b")
        for (pp, vpp), options in layouts.items()
        for layout, mbs, rc in itertools.product(options, (1, 2), (Recompute(), Recompute("op"),
                                                                     Recompute("full", 2)))
    ]
    for c in cands:
        if c.pipeline_layout:
            assert not problems(Split(LLAMA70B.num_layers, c.pp, c.vpp, layout=c.pipeline_layout))
    peaks = prefilter(LLAMA70B, X64, cands, S)
    assert [int(p) for p in peaks] == [account(LLAMA70B, X64, c, S).peak.total for c in cands]
    # the layouts move layers, so the peaks differ from the knob split's where they are set
    plain = {(c.pp, c.vpp, c.mbs, c.recompute): int(p) for c, p in zip(cands, peaks, strict=True) if not c.pipeline_layout}
    assert any(int(p) != plain[c.pp, c.vpp, c.mbs, c.recompute]
               for c, p in zip(cands, peaks, strict=True) if c.pipeline_layout)


def test_a_layout_moves_layers_between_stages() -> None:
    even = Candidate(tp=2, pp=2, ep=2, gbs=64, seq_len=2048, pipeline_layout="Ettt|ttttmL")
    heavy = even.replace(pipeline_layout="Et*6|tmL")
    k_even, k_heavy = from_candidate(even, X64.world), from_candidate(heavy, X64.world)
    assert [stage_layers(DSV3_SMALL, k_even, s) for s in range(2)] == [3, 4]
    assert [stage_layers(DSV3_SMALL, k_heavy, s) for s in range(2)] == [6, 1]
    a, b = account(DSV3_SMALL, X64, even, S), account(DSV3_SMALL, X64, heavy, S)
    assert b.ranks[0].total > a.ranks[0].total and b.ranks[1].total < a.ranks[1].total


def _names(acc: object, stage: int) -> set[str]:
    return {t.name for t in acc.ranks[stage].terms}  # type: ignore[attr-defined]


def test_mtp_sits_where_the_layout_puts_it() -> None:
    # "Ett|tt|tttm|L" at PP 2 x VPP 2: the MTP layer on stage 0's last chunk, the loss alone on stage 1's;
    # "Ett|tt|ttt|mL" places the same decoder layers with the MTP layer beside the loss
    cand = Candidate(tp=2, pp=2, vpp=2, ep=2, gbs=64, seq_len=2048, schedule="interleaved",
                     pipeline_layout="Ett|tt|tttm|L")
    together = cand.replace(pipeline_layout="Ett|tt|ttt|mL")
    acc, acc2 = account(DSV3_SMALL, X64, cand, S), account(DSV3_SMALL, X64, together, S)
    assert acc.ranks[1].name == "stage 1 (last, output layer)"
    # parameter bytes: the MTP layer's move from stage 1 to stage 0 with the layout
    def params(a: object, stage: int) -> int:
        return sum(t.bytes for t in a.ranks[stage].terms if t.name.startswith("parameters"))  # type: ignore[attr-defined]

    assert params(acc, 0) > params(acc2, 0) and params(acc, 1) < params(acc2, 1)
    assert params(acc, 0) + params(acc, 1) == params(acc2, 0) + params(acc2, 1)
    assert any("logits" in n for n in _names(acc, 1)) and not any("logits" in n for n in _names(acc, 0))
    stages = stage_ops(DSV3_SMALL, X64, cand)
    names = [[b.name for b in chunk] for chunk in stages[0].chunks]
    assert "mtp_layer" in names[1] and "output" not in names[1]
    assert all("mtp_layer" not in b.name for chunk in stages[1].chunks for b in chunk)
    assert any(b.name == "output" for b in stages[1].chunks[1])


def test_deepseek_v3_at_pp4_vpp4_with_bridges_layout() -> None:
    models, gpus = stdlib_definitions()
    from primus_lang.ir import Cluster

    dsv3 = models["deepseek_v3"]
    cluster = Cluster(name="x", gpu=gpus["mi355x"], nodes=32, gpus_per_node=8)
    cand = Candidate(tp=2, pp=4, vpp=4, ep=16, etp=1, gbs=256, mbs=1, schedule="interleaved",
                     recompute=Recompute("full", 1), pipeline_layout="Et*4|(t*4|)*14tmL")
    acc = account(dsv3, cluster, cand, S)
    assert [r.name for r in acc.ranks] == ["stage 0 (first, embedding)", "stage 1", "stage 2",
                                           "stage 3 (last, output layer)"]
    assert any("logits" in n for n in _names(acc, 3)) and not any("logits" in n for n in _names(acc, 2))
    assert int(prefilter(dsv3, cluster, [cand], S)[0]) == acc.peak.total
    k = from_candidate(cand, cluster.world)
    assert [stage_layers(dsv3, k, s) for s in range(4)] == [16, 16, 16, 13]
    stages = stage_ops(dsv3, cluster, cand)
    last = [b.name for b in stages[3].chunks[3]]
    assert last.count("mtp_layer") == 1 and "output" in last
    assert sum(b.count for b in stages[3].chunks[3] if "_layer" in b.name and b.name != "mtp_layer") == 1
    for st in stages:  # memory and projection place the same decoder layers on every stage
        assert stage_layers(dsv3, k, st.index) == sum(b.count for chunk in st.chunks for b in chunk
                                                      if "_layer" in b.name and b.name != "mtp_layer")
    assert project(dsv3, cluster, cand).step_time > 0
