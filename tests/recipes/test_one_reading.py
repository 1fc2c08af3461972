"""A run's recompute, sharding and CUDA-graph settings read one way on every reverse path: a recipe's
import, a published run of the corpus and a training log's arguments block ask ``frameworks.reading``.
Until 6 Dec 2026 each restated Megatron's rules: full recomputation of 0 layers was none, 1 layer and
an error; a missing method uniform, uniform and block; FSDP in a log the distributed optimizer."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.bench.logs import candidate_from_log, read_log
from primus_lang.frameworks import reading
from primus_lang.ir import Candidate, Recompute
from primus_lang.validate.runs import cuda_graph_of, recompute_of
from tests.recipes.test_megatron_scripts import LLAMA3_8B, imported

# (Megatron's granularity, method, layers), what they run
RECOMPUTE = [
    (("full", "uniform", 2), Recompute("full", 2, "uniform")),
    (("full", "block", 4), Recompute("full", 4, "block")),
    (("full", "block", 0), Recompute()),
    (("full", None, 4), Recompute("full", 4, "uniform")),
    (("selective", None, None), Recompute("selective")),
    ((None, None, None), Recompute()),
]


@pytest.mark.parametrize(("settings", "runs"), RECOMPUTE)
def test_the_three_readers_read_recomputation_alike(tmp_path: Path, settings: tuple[str | None, str | None, int | None],
                                                    runs: Recompute) -> None:
    granularity, method, layers = settings
    assert reading.recompute_of(granularity, method, layers)[0] == runs
    # the corpus's row fields
    assert recompute_of({"recompute_granularity": granularity, "recompute_method": method,
                         "recompute_num_layers": layers}) == runs
    # a log's arguments block, as Megatron prints it (None for an unset argument)
    block = "------------------------ arguments ------------------------\n" + "".join(
        f"  {name} {'.' * (48 - len(name))} {value}\n" for name, value in (
            ("recompute_granularity", granularity), ("recompute_method", method), ("recompute_num_layers", layers)))
    assert candidate_from_log(read_log(block), Candidate(), moe=False).recompute == runs
    # a Megatron-LM script's flags
    flags = "".join(f" --{name} {value}" for name, value in (
        ("recompute-granularity", granularity), ("recompute-method", method), ("recompute-num-layers", layers))
        if value is not None)
    _out, _space, cand = imported(tmp_path, f"{LLAMA3_8B} --global-batch-size 128{flags}")
    assert cand.recompute == runs


def test_what_megatron_core_refuses_at_start_is_read_and_said() -> None:
    rc, note = reading.recompute_of("full", None, None)
    assert rc == Recompute("full", 1, "uniform") and "`uniform`" in note and "1 layer" in note
    assert reading.recompute_of("selective", None, None, ())[0] == Recompute()  # an empty list recomputes nothing
    assert reading.recompute_of("selective", None, None, ("core_attn",))[0] == Recompute("selective")
    for bad in (("partial", None, None, None), ("full", "every", 2, None), ("selective", None, None, ("ffn",))):
        with pytest.raises(reading.Unread):
            reading.recompute_of(*bad)


def test_fsdp_in_a_log_is_fsdp() -> None:
    """A log printing `use_megatron_fsdp True` had read as the distributed optimizer, and calibrate-log then
    fitted an FSDP run against a projection of another recipe."""
    head = "------------------------ arguments ------------------------\n"
    for printed, sharding in ((("use_megatron_fsdp", "True"), ("use_distributed_optimizer", "False")), "fsdp"), \
            ((("use_torch_fsdp2", "True"),), "fsdp"), ((("use_distributed_optimizer", "True"),), "dist_opt"), \
            ((("use_distributed_optimizer", "False"),), "none"):
        block = head + "".join(f"  {n} {'.' * (48 - len(n))} {v}\n" for n, v in printed)
        assert candidate_from_log(read_log(block), Candidate(sharding="dist_opt"), moe=False).sharding == sharding
    assert reading.sharding_of({}) == ("none", False)
    assert reading.sharding_of({"use_torch_fsdp2": True}) == ("fsdp", True)


@pytest.mark.parametrize(("impl", "scope", "knob"), [
    ("transformer_engine", ("attn", "moe_router", "moe_preprocess"), "attn_moe_router"),
    ("transformer_engine", ("attn", "mamba", "moe_router"), "attn_moe_router"),  # a hybrid's mixers are `attn`
    ("transformer_engine", ("mamba",), "attn"),
    ("transformer_engine", ("full",), "layer"),
    ("local", (), "layer"),
    ("local", ("full_iteration",), "full"),
    ("full_iteration", (), "full"),
    ("none", ("attn",), "none"),
])
def test_cuda_graph_spellings_read_as_one_knob(impl: str, scope: tuple[str, ...], knob: str) -> None:
    assert reading.cuda_graph_of(impl, scope)[0] == knob
    assert cuda_graph_of({"cuda_graph_impl": impl, "cuda_graph_scope": list(scope)}) == knob


def test_every_knob_the_emitters_write_reads_back() -> None:
    for knob, (impl, scope) in reading.CUDA_GRAPH_SETTINGS.items():
        assert reading.cuda_graph_of(impl, scope) == (knob, "")
    # a hybrid model's launch graphs its Mamba mixers with the attention: said where a recipe graphs them alone
    assert reading.cuda_graph_of("transformer_engine", ("attn", "mamba")) == ("attn", "")
    assert "Mamba mixers alone" in reading.cuda_graph_of("transformer_engine", ("mamba",))[1]
    with pytest.raises(reading.Unread):
        reading.cuda_graph_of("transformer_engine", ("mlp",))


@pytest.mark.parametrize(("flags", "version", "code"), [
    ("--position-embedding-type yarn", "core_v0.19", "P3125"),  # a choice of the release primusc does not model
    ("--position-embedding-type relative", "core_v0.16", "P3125"),
    ("--position-embedding-type yarn", "core_v0.16", "P3123"),  # not a choice of that release
])
def test_a_choice_is_judged_against_the_release_s_own_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              flags: str, version: str, code: str) -> None:
    """A value the release's parser takes is not "bad" because primusc does not model it: the user is told
    it is unmodelled, not to fix a valid setting (the choices had been a list written by hand)."""
    from primus_lang.cli import main

    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA3_8B.replace('--position-embedding-type rope', '')}"
                      f" --global-batch-size 128 {flags}\n")
    assert main(["import-recipe", str(script), "--gpu", "h100", "--megatron-version", version,
                 "--out", str(tmp_path / "s.prx")]) == 1
    err = capsys.readouterr().err
    assert f"[{code}]" in err
    if code == "P3123":
        assert "core_v0.18 to core_v0.19" in err  # the releases that take it


def test_the_graph_modules_flag_of_core_v0_18_is_the_scope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """From core_v0.18 `--cuda-graph-modules` names what is graphed (`--cuda-graph-scope` its alias): read
    alike, not as whole-layer graphs with the modules carried past the plan (a reviewer's finding)."""
    from primus_lang.cli import main
    from primus_lang.lower import load_space

    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA3_8B} --global-batch-size 128 "
                      "--tensor-model-parallel-size 2 --cuda-graph-impl transformer_engine --cuda-graph-modules attn\n")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--megatron-version", "core_v0.19", "--out", str(out)]) == 0
    text = out.read_text()
    assert "cuda_graph_modules" not in text
    from primus_lang.check import baseline_point

    cand = baseline_point(load_space(out))
    assert cand is not None and cand.cuda_graph == "attn"


@pytest.mark.parametrize("granularity", ["full", None])
def test_a_module_list_that_is_no_list_is_not_an_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               granularity: str | None) -> None:
    from primus_lang.cli import main
    from tests.recipes.primus_files import experiment

    overrides: dict[str, object] = {"recompute_modules": 5}
    if granularity:
        overrides |= {"recompute_granularity": granularity, "recompute_method": "block", "recompute_num_layers": 2}
    code = main(["import-recipe", str(experiment(tmp_path, overrides)), "--out", str(tmp_path / "s.prx")])
    assert "P9001" not in capsys.readouterr().err and code in (0, 1)
    assert main(["import-recipe", str(experiment(tmp_path, {"recompute_granularity": "selective", "recompute_modules": 5})),
                 "--out", str(tmp_path / "t.prx")]) == 1
    assert "[P3123]" in capsys.readouterr().err


def test_a_corpus_row_whose_graphs_no_knob_holds_is_skipped_not_read_as_none() -> None:
    assert cuda_graph_of({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": "attn moe_router"}) == \
        "attn_moe_router"  # a scope written as one text
    assert cuda_graph_of({"cuda_graph_impl": "transformer_engine", "cuda_graph_modules": ["attn"]}) == "attn"
    with pytest.raises(reading.Unread):
        cuda_graph_of({"cuda_graph_impl": "transformer_engine", "cuda_graph_scope": ["mlp"]})


def test_a_log_that_leaves_the_method_out_keeps_the_block_s() -> None:
    block = "------------------------ arguments ------------------------\n" \
            "  recompute_granularity ........................... full\n" \
            "  recompute_method ................................ None\n" \
            "  recompute_num_layers ............................ None\n"
    base = Candidate(recompute=Recompute("full", 3, "block"))
    assert candidate_from_log(read_log(block), base, moe=False).recompute == Recompute("full", 3, "block")


def test_primus_listed_layers_are_one_reading_for_a_recipe_and_a_log() -> None:
    # 12 listed layers over 8 model chunks: 2 per chunk (16) comes nearer 12 than 1 (8) or 3 (24)
    assert reading.recompute_of("full", None, None, layer_ids="0,1,4,5,8,9,12,13,16,17,20,21", chunks=8)[0] \
        == Recompute("full", 2, "block")
    assert reading.listed_layers([3, 1, 1]) == (1, 3) and reading.listed_layers("null") == ()
    assert reading.recompute_of("full", "block", 2, layer_ids=None)[0] == Recompute("full", 2, "block")
    with pytest.raises(reading.Unread):
        reading.listed_layers("0,1,x")
    # a log of the run prints the list in its arguments block (pp 4, vpp 2)
    block = "------------------------ arguments ------------------------\n" + "".join(
        f"  {name} {'.' * (48 - len(name))} {value}\n" for name, value in (
            ("pipeline_model_parallel_size", 4), ("num_virtual_stages_per_pipeline_rank", 2),
            ("recompute_granularity", "full"), ("recompute_method", None), ("recompute_num_layers", None),
            ("recompute_layer_ids", "0,1,4,5,8,9,12,13,16,17,20,21")))
    assert candidate_from_log(read_log(block), Candidate(), moe=False).recompute == Recompute("full", 2, "block")
