"""The split rules (P4006, P4007, P4023, P4024, P4026) say exactly what ir.pipeline.problems says, and
their counts agree with brute force."""

from __future__ import annotations

from collections import Counter

from primus_lang.check import legality, raw_points, summarize
from primus_lang.ir import Candidate, Recompute
from primus_lang.ir.pipeline import Split, problems

from .test_enumeration import brute, space_of

SPLIT_CODES = {"P4006", "P4007", "P4023", "P4024", "P4026"}

# 24 layers (test_enumeration's model) on 1-32 GPUs of 4 x 8
BODY = (
    "gbs = 64\npp : 1 | 2 | 3 | 4 | 5\nvpp : 1 | 2 | 3 when pp > 1\n"
    "schedule : 1f1b | interleaved when pp > 1\n"
    "first_stage_layers : 0 | 2 | 4 | 6\nlast_stage_layers : 0 | 3 | 4 | 7 when pp > 1\n"
    "account_for_embedding : false | true\naccount_for_loss : false | true when first_stage_layers == 0"
)


def test_split_rules_are_the_pipeline_function() -> None:
    space = space_of(BODY)
    seen: Counter[bool] = Counter()
    for cand in raw_points(space):
        codes = {v.code for v in legality(space, cand)}
        split = Split(24, cand.pp, cand.vpp, cand.first_stage_layers, cand.last_stage_layers,
                      cand.account_for_embedding, cand.account_for_loss)
        refused = bool(problems(split))
        assert bool(codes & SPLIT_CODES) == refused, (cand.label(), codes, problems(split))
        seen[refused] += 1
    assert seen[True] and seen[False]  # the space holds both kinds


def test_split_counts_match_brute_force() -> None:
    space = space_of(BODY)
    n, removed, legal = brute(space)
    s = summarize(space)
    assert (s.raw, s.legal) == (n, legal)
    per_code = Counter({r.code: r.removed for r in s.rules})
    assert +per_code == +Counter({k[:5]: v for k, v in removed.items()})
    assert {"P4006", "P4007", "P4023", "P4024", "P4026"} <= set(per_code)


def test_messages_name_the_rule() -> None:
    space = space_of("gbs = 64")
    cases = {
        "P4006": Candidate(pp=5, gbs=64),
        "P4007": Candidate(pp=2, vpp=5, schedule="interleaved", gbs=64),
        "P4023": Candidate(pp=4, vpp=2, schedule="interleaved", last_stage_layers=3, gbs=64),
        "P4024": Candidate(pp=1, last_stage_layers=3, gbs=64),
        "P4025": Candidate(recompute=Recompute("full", 1, "block", ("mlp",)), gbs=64),
        "P4026": Candidate(pp=2, last_stage_layers=11, account_for_loss=True, gbs=64),
    }
    for code, cand in cases.items():
        found = {v.code: v for v in legality(space, cand)}
        assert code in found, (code, sorted(found))
        assert found[code].message and found[code].help
    assert not legality(space, Candidate(recompute=Recompute("selective", modules=("mlp",)), gbs=64))


def test_layers_per_stage_is_the_fullest_stage_of_an_uneven_split() -> None:
    from primus_lang.check import environment
    from primus_lang.ir import Candidate
    from primus_lang.lower import load_space
    from primus_lang.resources import data_dir

    space = load_space(data_dir("examples") / "deepseek_v3_mi355x.prx")
    assert space.model.num_layers == 61
    # 61 layers at PP 4 with a last stage of 13: 16 on each of the other three stages
    uneven = environment(space, Candidate(pp=4, last_stage_layers=13))
    assert uneven["layers_per_stage"] == 16
    # PP 16 with a last stage of 1: 4 on each of the fifteen others
    assert environment(space, Candidate(pp=16, last_stage_layers=1))["layers_per_stage"] == 4
    # a first stage heavier than the rest sets the figure
    assert environment(space, Candidate(pp=4, first_stage_layers=25, last_stage_layers=12))["layers_per_stage"] == 25


def test_uniform_recomputation_groups_must_tile_every_chunk() -> None:
    # megatron-core's uniform method runs layers [i, i + N) of a chunk: N must divide every chunk, first
    # and last stages' uneven ones included (24 layers: 6 a stage at PP 4; 4 + 10 + 10 with first 4 at PP 3)
    space = space_of("gbs = 64\npp : 3 | 4\nfirst_stage_layers : 0 | 4 when pp == 3\n"
                     "recompute : full(layers: 1 | 2 | 3 | 5, method: uniform) | full(layers: 5, method: block)")
    for cand in raw_points(space):
        codes = {v.code for v in legality(space, cand)}
        if "P4006" in codes or "P4007" in codes:
            continue  # the split itself is refused
        split = Split(24, cand.pp, cand.vpp, cand.first_stage_layers, cand.last_stage_layers)
        chunks = [int(split.chunk_layers(s, 0)) for s in range(cand.pp)]
        rc = cand.recompute
        tiles = rc.method == "block" or all(c % rc.layers == 0 for c in chunks)
        assert ("P4013" in codes) == (not tiles or rc.layers > max(chunks)), (cand.label(), chunks, codes)
    _n, _removed, legal = brute(space)
    assert summarize(space).legal == legal


def test_no_recomputed_layers_is_said_so_whatever_the_method() -> None:
    space = space_of("gbs = 64\npp = 4")
    found = {v.code: v for v in legality(space, Candidate(pp=4, gbs=64, recompute=Recompute("full", 0, "uniform")))}
    assert "P4013" in found and "but a (virtual) stage holds at most" in found["P4013"].message
