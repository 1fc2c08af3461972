"""Published layouts whose layers do not split evenly map to the split knobs Megatron-Bridge used."""

from __future__ import annotations

from primus_lang.ir import Candidate, Cluster, Settings
from primus_lang.memory import account
from primus_lang.memory.knobs import from_candidate
from primus_lang.memory.layout import stage_dense_layers, stage_layers
from primus_lang.project.build import stage_ops
from primus_lang.project.projection import project
from primus_lang.validate.runs import pipeline_split, stdlib_definitions

MODELS, GPUS = stdlib_definitions()


def test_even_layouts_keep_megatrons_default() -> None:
    assert pipeline_split(MODELS["llama3_1_405b"], 2, 1) == {}  # 126 = 2 x 63
    assert pipeline_split(MODELS["qwen3_235b_a22b"], 2, 1) == {}  # 94 = 2 x 47


def test_deepseek_v3_takes_bridges_last_stage() -> None:
    dsv3 = MODELS["deepseek_v3"]
    assert pipeline_split(dsv3, 16, 1) == {"last_stage_layers": 1}
    assert pipeline_split(dsv3, 8, 1) == {"last_stage_layers": 5}
    assert pipeline_split(dsv3, 4, 1) == {"last_stage_layers": 13}
    # interleaved: Bridge's layouts, whose chunks of one stage differ
    assert pipeline_split(dsv3, 4, 4) == {"pipeline_layout": "Et*4|(t*4|)*14tmL"}
    assert pipeline_split(dsv3, 8, 2) == {"pipeline_layout": "Et*4|(t*4|)*14tmL"}
    assert pipeline_split(dsv3, 4, 2) == {"pipeline_layout": "Et*8|(t*8|)*6t*5mL"}
    reason = pipeline_split(dsv3, 8, 4)
    assert isinstance(reason, str) and "sets none" in reason


def test_a_published_pp_layout_wins_and_is_checked() -> None:
    dsv3 = MODELS["deepseek_v3"]
    recipe = {"recompute_granularity": "selective", "pp_layout": "Et*4|(t*4|)*14tmL"}
    assert pipeline_split(dsv3, 2, 8, recipe) == {"pipeline_layout": "Et*4|(t*4|)*14tmL"}
    bad = pipeline_split(dsv3, 4, 2, recipe)
    assert isinstance(bad, str) and bad.startswith("layout inconsistent") and "PP 4 x VPP 2 needs 8" in bad
    assert pipeline_split(dsv3, 4, 4, {"pp_layout": None}) == {"pipeline_layout": "Et*4|(t*4|)*14tmL"}


def test_large_dense_and_qwen3_moe_count_the_embedding_and_loss() -> None:
    both = {"account_for_embedding": True, "account_for_loss": True}
    assert pipeline_split(MODELS["llama3_1_405b"], 8, 8) == both  # 128 units, 2 a chunk
    assert pipeline_split(MODELS["qwen3_235b_a22b"], 4, 12) == both  # 96 units, 2 a chunk


def test_mapped_layouts_project_and_account_with_one_split() -> None:
    cluster = Cluster(name="x", gpu=GPUS["mi355x"], nodes=32, gpus_per_node=8)
    dsv3, qwen = MODELS["deepseek_v3"], MODELS["qwen3_235b_a22b"]
    cases = [
        (dsv3, Candidate(pp=16, ep=16, etp=1, gbs=256, mbs=1, **pipeline_split(dsv3, 16, 1))),  # type: ignore[arg-type]
        (dsv3, Candidate(pp=4, vpp=4, schedule="interleaved", ep=16, etp=1, gbs=256, mbs=1,
                         **pipeline_split(dsv3, 4, 4))),  # type: ignore[arg-type]
        (qwen, Candidate(pp=4, vpp=12, schedule="interleaved", ep=8, etp=1, gbs=512, mbs=1,
                         **pipeline_split(qwen, 4, 12))),  # type: ignore[arg-type]
    ]
    for model, cand in cases:
        assert project(model, cluster, cand).step_time > 0
        ranks = account(model, cluster, cand, Settings()).ranks
        assert len(ranks) == cand.pp and all(r.total > 0 for r in ranks)
        # memory and projection place the same layers, dense ones included, on every stage
        k = from_candidate(cand, cluster.world)
        for st in stage_ops(model, cluster, cand):
            blocks = [b for chunk in st.chunks for b in chunk]
            assert stage_layers(model, k, st.index) == sum(b.count for b in blocks if b.name.endswith("_layer")
                                                            and b.name != "mtp_layer")
            assert stage_dense_layers(model, k, st.index) == sum(b.count for b in blocks if b.name == "dense_layer")
