"""`import-recipe` of Megatron-Bridge launches: two performance recipes (fixtures written by hand from
Megatron-Bridge 067f987, each naming its source; every recipe of the release: test_bridge_recipes.py) become spaces whose baseline is the recipe; `emit
bridge` gives back every stated setting, override by override; the baseline projects within the GPU
profile's cross-validated error of the throughput the corpus publishes for it; bad launches get
diagnostics with spans."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.check import baseline_point, legality
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit, target_warnings
from primus_lang.emit.bridge import COMM_OVERLAP_PATHS
from primus_lang.emit.bridge_recipes import comm_overlap_of
from primus_lang.frameworks import bridge
from primus_lang.ir import Candidate, Space
from primus_lang.lower import load_space, loads_program
from primus_lang.recipes import read_recipe
from primus_lang.recipes.bridge import hydra_scalar
from primus_lang.resources import data_dir
from primus_lang.search.plan import prepare, space_baseline

FIXTURES = Path(__file__).parent / "fixtures" / "bridge"
CASES = [
    # (fixture, the baseline's label, the corpus row of its published throughput)
    # the recipe's own precision config gathers FP8 weights and reduces gradients in BF16 (its
    # MixedPrecisionConfig, which setup writes over ddp's: frameworks/bridge)
    # and Transformer Engine's cross-entropy (the recipes' model.cross_entropy_fusion_impl)
    ("llama3_8b_h100_fp8cs.sh", "precision=fp8,recompute=full(5,block),sequence_parallel=false,cross_entropy=te,"
     "fp8_param_gather=true,main_grad_dtype=bf16", "mbridge_287"),
    ("llama3_8b_gb200_fp8cs.sh", "mbs=2,precision=fp8,sequence_parallel=false,cross_entropy=te,cuda_graph=full,"
     "fp8_param_gather=true,main_grad_dtype=bf16", "mbridge_266"),
]


def imported(tmp_path: Path, fixture: str, *extra: str) -> Path:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(FIXTURES / fixture), *extra, "--out", str(out)]) == 0
    return out


def launch_words(text: str) -> tuple[str, dict[str, str]]:
    """The recipe and the ``KEY=VALUE`` overrides of a launch, by key."""
    words = shlex.split(text, comments=True)
    rest = words[next(i for i, w in enumerate(words) if w.endswith("run_recipe.py")) + 1:]
    recipe = rest[rest.index("--recipe") + 1]
    return recipe, dict(w.split("=", 1) for w in rest if "=" in w and not w.startswith("-"))


def emitted_words(node_sh: str) -> tuple[str, dict[str, str]]:
    block = re.search(r"^ARGS=\(\n(.*?)^\)", node_sh, re.MULTILINE | re.DOTALL)
    assert block is not None
    words = shlex.split(block.group(1))
    return words[words.index("--recipe") + 1], dict(w.split("=", 1) for w in words if "=" in w)


def published(row_id: str) -> float:
    rows = yaml.safe_load((data_dir("validation") / "published_runs.yaml").read_text(encoding="utf-8"))
    row = next(r for r in rows if r["id"] == row_id)
    return float(row["measured"]["tokens_per_sec_per_gpu"])


@pytest.mark.parametrize(("fixture", "label", "row"), CASES, ids=[c[0] for c in CASES])
def test_baseline_is_the_recipe_and_emission_gives_it_back(tmp_path: Path, fixture: str, label: str,
                                                           row: str) -> None:
    space = load_space(imported(tmp_path, fixture))
    cand = baseline_point(space)
    assert cand is not None and cand.label() == label
    assert legality(space, cand) == []
    assert space.settings.target == "bridge+slurm"
    trial = space_baseline(space, (prep := prepare(space)).land, prep.evaluator)
    assert trial is not None and trial.candidate == cand and trial.evaluation is not None
    assert trial.memory_peak is not None and trial.memory_peak > 0
    # the published throughput of this layout (validation/published_runs.yaml), within the error the
    # GPU's fitted profile was cross-validated to (h100_sxm 15.1%, gb200 9.4% in calibrated.prx)
    measured, projected = published(row), trial.evaluation.tokens_per_gpu
    provenance = space.cluster.gpu.provenance
    assert provenance is not None
    assert abs(projected - measured) / measured <= provenance.error, (projected, measured)
    # every stated override comes back, key by key
    stated_recipe, stated = launch_words((FIXTURES / fixture).read_text(encoding="utf-8"))
    recipe, written = emitted_words(emit(space, cand, space.settings.target)["node.sh"])
    assert recipe == stated_recipe
    moved = {f"model.{dest}": path for dest, path in COMM_OVERLAP_PATHS.items()} \
        if comm_overlap_of(recipe) else {}
    for key, value in stated.items():
        # the recipe's CommOverlapConfig writes over model.tp_comm_overlap: the value goes into it
        key = moved.get(key, key)
        assert key in written, f"{key} is not in the launch files"
        assert hydra_scalar(written[key]) == hydra_scalar(value), f"{key}: {value} became {written[key]}"


def test_the_megatron_target_reads_the_same_run_and_says_what_it_drops(tmp_path: Path) -> None:
    space = load_space(imported(tmp_path, "llama3_8b_gb200_fp8cs.sh"))
    cand = baseline_point(space)
    assert cand is not None
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--cuda-graph-impl local" in sh and "--train-iters 50" in sh and "--fp8-recipe tensorwise" in sh
    assert "bridge__" not in sh and "run_recipe" not in sh
    warnings = target_warnings(space, "megatron+slurm")
    assert [w.code.id for w in warnings] == ["W7020"] and "bridge__recipe" in warnings[0].message
    assert target_warnings(space, "bridge+slurm") == []


def test_overrides_change_the_recipe(tmp_path: Path) -> None:
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_bf16_config "
                      "-tp 2 model.sequence_parallel=true model.context_parallel_size=1 "
                      "model.moe_router_dtype=fp32 +comm_overlap.tp_comm_bootstrap_backend=nccl "
                      "optimizer.min_lr=3e-05\n")
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "s.prx")]) == 0
    text = (tmp_path / "s.prx").read_text()
    assert "tp = 2" in text  # the baseline's, among the axis around it
    assert 'bridge__comm_overlap__tp_comm_bootstrap_backend = "nccl"' in text
    space = load_space(tmp_path / "s.prx")
    cand = baseline_point(space)
    assert cand is not None and (cand.tp, cand.cp, cand.sp, cand.precision) == (2, 1, True, "bf16")
    _, written = emitted_words(emit(space, cand, "bridge+local")["node.sh"])
    assert written["comm_overlap.tp_comm_bootstrap_backend"] == "nccl" and written["model.moe_router_dtype"] == "fp32"
    assert written["optimizer.min_lr"] == "3e-05"  # a number, as Hydra reads it, not the text "3e-05"
    # the recipe's own precision object stays; another precision is named
    assert "mixed_precision" not in written
    assert (cand.main_grad_dtype, cand.fp8_param_gather) == ("bf16", False)  # the recipe's precision config's
    mxfp8 = attrs.evolve(cand, precision="fp8", fp8_recipe="mxfp8", fp8_format="e4m3")
    # MXFP8 needs Blackwell's MX tensor cores (P4048): the same recipe's emission, on a B200
    b200 = loads_program("import hardware.nvidia (b200)\ngpu b200_here = b200 { }\n", "<gpu>").gpus[0]
    space = attrs.evolve(space, cluster=attrs.evolve(space.cluster, gpu=b200))
    # the registered MXFP8 recipe reduces in FP32 and gathers FP8 weights, and its fields take no override
    with pytest.raises(CompileError) as err:
        emit(space, mxfp8, "bridge+local")
    assert "`main_grad_dtype = fp32`" in str(err.value.diagnostics[0].message)
    # a registered recipe named brings its own formats: the default hybrid is not refused (every MXFP8 plan
    # would be), it launches the recipe's E4M3
    _, written = emitted_words(emit(space, attrs.evolve(mxfp8, main_grad_dtype="fp32", fp8_param_gather=True,
                                                        fp8_format="hybrid"), "bridge+local")["node.sh"])
    assert written["mixed_precision"] == "bf16_with_mxfp8_mixed" and "mixed_precision.fp8" not in written
    _, written = emitted_words(emit(space, attrs.evolve(mxfp8, main_grad_dtype="fp32", fp8_param_gather=True),
                                    "bridge+local")["node.sh"])
    assert written["mixed_precision"] == "bf16_with_mxfp8_mixed" and "mixed_precision.fp8_param_gather" not in written


def test_a_count_the_recipes_name_implies_is_named_when_contradicted(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config\n")
    assert main(["import-recipe", str(launch), "--nodes", "4"]) == 1
    err = capsys.readouterr().err
    assert "`--nodes 4` contradicts the recipe's number of nodes, 1 (the recipe name's 2gpu)" in err
    assert "`gpus_per_node` in the space written" in err
    # the recipe does not fit on the two GPUs its name gives: the way out is the space's cluster, not `--nodes`
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "s.prx")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "W5002" in err and "changing the cluster's `nodes` in the space written (the count is the recipe name's " \
        "2gpu, which `--nodes` cannot change)" in err


def test_dataset_mock_runs_mock_data_whatever_the_recipe_names(tmp_path: Path) -> None:
    """run_recipe.py's `--dataset mock` replaces the recipe's dataset with its mock one."""
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config "
                      "--mode pretrain --dataset mock train.global_batch_size=128\n")
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "s.prx")]) == 0
    assert "mock_data = true" in (tmp_path / "s.prx").read_text()
    space = load_space(tmp_path / "s.prx")
    cand = baseline_point(space)
    assert cand is not None
    _, written = emitted_words(emit(space, cand, "bridge+local")["node.sh"])
    assert written["dataset.mock"] == "true"


@pytest.mark.parametrize(("line", "code", "needle"), [
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config model.tensor_model_paralel_size=2",
     "P3141", "model.tensor_model_parallel_size"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config --tensor-parallel 2", "P3141", "run_recipe.py"),
    # Bridge's own migration guide spells it as Megatron-LM does; the hint had offered
    # `model.original_max_position_embeddings`
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config model.max_position_embeddings=4096",
     "P3141", "write `model.seq_length=4096`"),
    ("run_recipe.py --recipe-source performance --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config", "P3141",
     "an option added since is not read"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config \\ ", "P3142", "delete the space after"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_confg", "P3140", "llama3_8b_pretrain_8gpu_h100_fp8cs_config"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config ~model.seq_length", "P3142", "deletes"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config --mode sft", "P3142", "pretraining"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config mixed_precision=fp16_mixed", "P3125",
     "FP16 training"),
    # Bridge reads every hyphen as an underscore, so a spelling it accepts is read, and only FP16 refused
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config mixed_precision=fp16-with-mxfp8-mixed",
     "P3125", "FP16 training"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config mixed_precision=bf16_with_fp9_mixed", "P3141",
     "no precision recipe Bridge registers"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config model.tensor_model_parallel_size=$TP",
     "P3132", "--set TP=VALUE"),
    ("run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config train.micro_batch_size=1 "
     "train.micro_batch_size=2", "P3124", "contradicts"),
    ("setup_experiment.py -m llama -mr llama3_8b -g h100", "P3140", "-ng"),
    ("setup_experiment.py -mr llama3_8b -ng 8 -g h100 -c fp8_cs --tokenizer_type HuggingFaceTokenizer", "P3142",
     "--tokenizer_type"),
    ("setup_experiment.py -mr llama3_8b -ng 8 -g h100 -c fp8_cs --nccl_ub maybe", "P3123", "no true/false"),
    # it runs the model's library recipe in place of the performance recipe the line names
    ("setup_experiment.py -mr llama3_8b -ng 8 -g h100 -c fp8_cs --use_recipes", "P3142", "--use_recipes"),
    ("setup_experiment.py -mr llama3_8b -ng 8 -g h100 -c fp8_cs --re 2", "P3123", "prefix of several"),
    ("setup_experiment.py -mr llama3_9b -ng 8 -g h100 -c fp8_cs", "P3140", "llama3_8b_pretrain_8gpu_h100_fp8cs_config"),
])
def test_bad_launches_get_diagnostics_with_spans(tmp_path: Path, line: str, code: str, needle: str) -> None:
    launch = tmp_path / "launch.sh"
    launch.write_text(line + "\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    first = err.value.diagnostics[0]
    assert first.code.id == code
    assert first.span is not None and first.span.line == 1
    assert needle in first.message + (first.help or "")


def test_a_bridge_field_the_record_lacks_is_refused_at_emission(tmp_path: Path) -> None:
    text = imported(tmp_path, "llama3_8b_h100_fp8cs.sh").read_text()
    text = text.replace("  passthrough {\n", "  passthrough {\n    bridge__model__no_such_field = 3\n")
    (tmp_path / "bad.prx").write_text(text)
    space = load_space(tmp_path / "bad.prx")
    cand = baseline_point(space)
    assert cand is not None
    with pytest.raises(CompileError) as err:
        emit(space, cand, "bridge+slurm")
    assert [d.code.id for d in err.value.diagnostics] == ["P7020"]


def test_the_performance_launcher_names_its_recipe_by_parts(tmp_path: Path) -> None:
    launch = tmp_path / "perf.sh"
    launch.write_text("uv run python scripts/performance/setup_experiment.py --account acct --partition batch "
                      "-i nvcr.io/nvidia/nemo:26.04 -m llama -mr llama3_8b -ng 8 -g h100 -c fp8_cs "
                      "model.recompute_num_layers=4 -tp 2 -gb 256\n")
    recipe = read_recipe(launch)
    assert recipe.entries["bridge__recipe"].value == "llama3_8b_pretrain_8gpu_h100_fp8cs_config"
    assert recipe.entries["tensor_model_parallel_size"].value == 2
    assert recipe.entries["sequence_parallel"].value is True  # the launcher's -tp turns it on above TP 1
    assert recipe.entries["global_batch_size"].value == 256 and recipe.entries["recompute_num_layers"].value == 4
    assert (recipe.placement.fields, recipe.placement.notes) == (
        (("partition", "batch"), ("account", "acct"), ("time_limit", 1800.0), ("runtime", "pyxis"),
         ("image", "nvcr.io/nvidia/nemo:26.04")), ())  # the launcher's own 30 minutes where `-t` is not given
    assert recipe.nodes is not None and recipe.gpus_per_node is not None
    assert (recipe.nodes.value, recipe.gpus_per_node.value) == ("1", "8")


def test_the_performance_launchers_own_options_are_read_as_it_applies_them(tmp_path: Path) -> None:
    """Options of the launcher's parser beyond the recipe's shape (`--cuda_graph_impl`, `--recompute_modules`,
    `--use_megatron_fsdp`, ...) were P3142 and their values a second P3142 each: they are read as its
    set_user_overrides applies them, what only watches or profiles the job is noted, and a unique prefix of an
    option is that option (its parser keeps argparse's abbreviations)."""
    launch = tmp_path / "perf.sh"
    launch.write_text("python scripts/performance/setup_experiment.py -m llama -mr llama3_8b -ng 8 -g h100 "
                      "-c fp8_cs --cuda_graph_impl transformer_engine --cuda_graph_scope attn,mlp "
                      "--recompute_modules mlp,layernorm --use_megatron_fsdp true --nccl_ub false "
                      "--enable_nsys --profiling_start_step 5 --gpus_per 8 -s 4096\n")
    recipe = read_recipe(launch)
    settings = {k: e.value for k, e in recipe.entries.items()}
    assert settings["recompute_granularity"] == "selective"
    assert settings["cuda_graph_impl"] == "transformer_engine" and settings["cuda_graph_scope"] == ("attn", "mlp")
    assert settings["seq_length"] == 4096 and settings["recompute_modules"] == ("mlp", "layernorm")
    assert settings["use_megatron_fsdp"] is True and "bridge__ddp__nccl_ub" not in settings
    assert any("`--profiling_start_step` is a launcher or site setting" in n for n in recipe.notes)
    assert any("`--gpus_per` is read as `--gpus_per_node`" in n for n in recipe.notes)


def test_a_gpu_count_without_a_recipe_runs_the_largest_one_scaled(tmp_path: Path) -> None:
    """The performance launcher's own answer (utils/utils.py get_perf_optimized_recipe; overrides.py
    set_post_overrides): the same model, GPU and precision at its largest count, its batch scaled."""
    launch = tmp_path / "perf.sh"
    launch.write_text("python scripts/performance/setup_experiment.py -m llama -mr llama3_8b -ng 16 -g h100 "
                      "-c fp8_cs\n")
    recipe = read_recipe(launch)
    assert recipe.entries["bridge__recipe"].value == "llama3_8b_pretrain_8gpu_h100_fp8cs_config"
    assert recipe.entries["global_batch_size"].value == 2 * 128
    assert recipe.nodes is not None and recipe.nodes.value == "2"
    assert any("scaled from 8 to 16 GPUs" in n for n in recipe.notes)


def test_plan_never_writes_less_than_the_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 29: a short search on the imported recipe found layouts slower than the recipe and wrote one.
    The plan writes a candidate other than the recipe only when it projects ahead of it by more than the
    profile's paired band; else the recipe's own launch, saying so."""
    import html
    import json
    import re

    space = imported(tmp_path, "llama3_8b_h100_fp8cs.sh")
    out = tmp_path / "out"
    assert main(["plan", str(space), "--budget", "10", "--out", str(out), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    baseline, written = plan["baseline"], plan["explanation"]
    header = next(line for line in (out / "node.sh").read_text().splitlines() if "candidate" in line)
    launched = header.rsplit("candidate ", 1)[1].rstrip(".")
    # the report plan writes names the same winner (issue 33: it settled the tie again, without the recipe)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert re.search(r"<div class='card winner'>.*?<code>(.*?)</code>", page).group(1) == html.escape(launched)
    if launched == baseline["label"]:
        assert any("the launch files are the recipe's own" in line for line in written)
    else:
        best = next(r for r in plan["ranked"] if r["label"] == launched)
        assert best["score"] > baseline["score"] * (1 + plan["provenance"]["paired"])


def test_an_override_of_the_models_shape_is_refused_and_a_restatement_kept(tmp_path: Path) -> None:
    """A user's trial: `model.num_layers=16` on a Llama 3 8B recipe was carried to the launch while the
    account and projection kept the card's 32 layers."""
    line = ("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config "
            "model.num_layers={layers} model.hidden_size=4096")
    launch = tmp_path / "run.sh"
    launch.write_text(line.format(layers=16))
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    [diag] = err.value.diagnostics
    assert diag.code.id == "P3125" and "model.num_layers=16" in diag.message
    launch.write_text(line.format(layers=32))  # the card's own values: nothing changes
    assert read_recipe(launch).card is not None


def test_bridges_train_sh_launcher_is_read_with_its_cluster_options(tmp_path: Path) -> None:
    """scripts/training/train.sh runs setup_experiment.py, which takes the Slurm job's options and forwards
    the rest to run_recipe.py (a new user's trial: `the script runs no training command`)."""
    launch = tmp_path / "train.sh"
    launch.write_text("./scripts/training/train.sh --nodes 2 --gpus-per-node 8 --account A --partition P "
                      "--container-image /i.sqsh --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config "
                      "--mode pretrain --wait train.global_batch_size=256\n")
    recipe = read_recipe(launch)
    assert recipe.nodes is not None and recipe.nodes.value == "2"
    assert recipe.gpus_per_node is not None and recipe.gpus_per_node.value == "8"
    assert recipe.entries["global_batch_size"].value == 256
    assert any("train.sh's own" in n for n in recipe.notes)


def test_a_slurm_script_s_own_allocation_is_the_cluster(tmp_path: Path) -> None:
    """Bridge's Slurm examples ask `#SBATCH --nodes=4` and srun the recipe a task a GPU: they had been read
    on the GPU count the recipe's name was written for (one node of an `_8gpu_` recipe)."""
    launch = tmp_path / "slurm_pretrain.sh"
    launch.write_text("#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
                      "srun --mpi=pmix bash -c \"python scripts/training/run_recipe.py "
                      "--recipe llama3_8b_pretrain_8gpu_h100_bf16_config\"\n")
    recipe = read_recipe(launch)
    assert recipe.nodes is not None and (recipe.nodes.value, recipe.nodes.written) == ("4", "#SBATCH --nodes=4")
    assert recipe.gpus_per_node is not None and recipe.gpus_per_node.value == "8"


def test_the_performance_launchers_deterministic_switch_is_applied(tmp_path: Path) -> None:
    launch = tmp_path / "perf.sh"
    line = "python scripts/performance/setup_experiment.py -m llama3 -mr llama3_70b -ng 64 -g h100 -c bf16"
    launch.write_text(line + " --deterministic\n")
    recipe = read_recipe(launch)
    assert recipe.entries["tp_comm_overlap"].value is False
    assert recipe.entries["cross_entropy_loss_fusion"].value is False


def test_a_readme_placeholder_read_as_a_redirection_is_named(tmp_path: Path) -> None:
    launch = tmp_path / "perf.sh"
    launch.write_text("python scripts/performance/setup_experiment.py --account <account> --partition <partition> "
                      "--gpu h100 -mr llama3_70b -ng 64\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    assert any("is a redirection in bash" in n for d in err.value.diagnostics for n in d.notes)


def test_a_precision_change_inside_the_recipes_own_config_is_refused(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`mixed_precision.fp8=e4m3` on a performance recipe whose precision is its own config was carried to
    the launch while the space projected BF16; restating the recipe's own value is fine."""
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_b200_bf16_config "
                      "mixed_precision.fp8=e4m3 mixed_precision.fp8_recipe=mxfp8\n")
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "a.prx")]) == 1
    err = capsys.readouterr().err
    assert err.count("P3125") == 2 and "`mixed_precision.fp8=e4m3` changes the GEMM precision" in err
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_b200_fp8cs_config "
                      "mixed_precision.fp8_recipe=tensorwise\n")
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "b.prx")]) == 0, capsys.readouterr().err


def test_a_recipe_for_a_gpu_without_a_stdlib_profile_says_which_it_has(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Megatron-Bridge v0.6 has Vera Rubin recipes; primusc has no VR200 profile. It said `did you mean
    h200?` at a line of the space it wrote, which the user never sees."""
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_70b_pretrain_64gpu_vr200_bf16_config\n")
    assert main(["import-recipe", str(launch)]) == 1
    err = capsys.readouterr().err
    assert "the recipe is written for `vr200`, which has no GPU profile in the stdlib" in err
    assert "gb300" in err and "pass `--gpu NAME`" in err
    assert main(["import-recipe", str(launch), "--gpu", "gb300", "--out", str(tmp_path / "s.prx")]) == 0
    # a VR200 node holds 4 GPUs, as a GB300 tray does (Bridge's performance launcher): 64 GPUs are 16 of them
    assert "nodes = 16; gpus_per_node = 4" in (tmp_path / "s.prx").read_text()


def test_a_recipe_setting_whose_cost_is_left_out_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NVIDIA's DeepSeek-V3 recipe on 256 GB300 stashes its MoE activations in paged buffers; the importer
    read no such field and dropped it silently, so the space's memory account described another run."""
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe deepseek_v3_pretrain_256gpu_gb300_fp8mx_config\n")
    assert main(["import-recipe", str(launch), "--out", str(tmp_path / "s.prx")]) == 0
    err = capsys.readouterr().err
    assert "`moe_paged_stash` = true is carried to the launch, not modelled" in err
    assert "moe_paged_stash = true" in (tmp_path / "s.prx").read_text()
    # a setting at its off value says nothing
    assert "num_distributed_optimizer_instances` = 1" not in err


def test_the_indexed_dataset_preset_reads_the_corpus_its_line_names(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-Bridge's data-preparation guide launches --dataset megatron-indexed dataset.data_path=PREFIX
    line = ("torchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
            "--dataset megatron-indexed")
    given = tmp_path / "given.sh"
    given.write_text(line + " dataset.data_path=/data/corpus_text_document\n")
    assert main(["import-recipe", str(given), "--gpu", "h100", "--out", str(tmp_path / "a.prx")]) == 0
    assert "megatron-indexed` reads the indexed corpus" in capsys.readouterr().err
    bare = tmp_path / "bare.sh"
    bare.write_text(line + "\n")
    assert main(["import-recipe", str(bare), "--gpu", "h100", "--out", str(tmp_path / "b.prx")]) == 1
    assert "names no corpus" in capsys.readouterr().err


def test_a_recipe_without_data_runs_mock_data_on_every_target(tmp_path: Path) -> None:
    # megatron-core computes its dataset config's `mock` (true where no blend names data); the recipe
    # table's `dataset.mock: False` is that field before it is computed, not the recipe's choice: carried,
    # it made the megatron and primus launches write no data source, and megatron-core stops at start
    space = load_space(imported(tmp_path, "llama3_8b_h100_fp8cs.sh"))
    assert all(key != "mock_data" for key, _ in space.passthrough)
    cand = baseline_point(space)
    assert cand is not None
    assert "--mock-data" in emit(space, cand, "megatron+slurm")["node.sh"]
    exp = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])
    assert exp["modules"]["pre_trainer"]["overrides"]["mock_data"] is True


def test_a_megatron_release_for_a_bridge_recipe_is_said_to_be_the_launchs(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    imported(tmp_path, "llama3_8b_h100_fp8cs.sh", "--megatron-version", "core_v0.19")
    said = "".join(capsys.readouterr())
    assert "a Bridge recipe runs the megatron-core its release pins" in said
    assert "`--var megatron_version=core_v0.19`" in said


def test_the_users_tokenizer_replaces_the_recipes_null_one(tmp_path: Path) -> None:
    # the performance recipes run NullTokenizer; `--var tokenizer_model=...` with real data names a tokenizer:
    # the launch builds it (Megatron's NullTokenizer beside a model file stops at start wanting a vocabulary)
    out = imported(tmp_path, "llama3_8b_h100_fp8cs.sh")
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--out", str(tmp_path / "m"),
                 "--var", "data_path=/data/corpus_text_document", "--var", "tokenizer_model=/tok/hf"]) == 0
    sh = (tmp_path / "m" / "node.sh").read_text()
    assert "--tokenizer-type HuggingFaceTokenizer" in sh and "--tokenizer-model /tok/hf" in sh
    assert "NullTokenizer" not in sh


def test_a_recipe_with_graph_modules_gets_modules_not_a_scope(tmp_path: Path) -> None:
    """Megatron-Bridge's nemotron_3_nano recipes set model.cuda_graph_modules; the launch wrote the layers'
    scope beside it, which TransformerConfig refuses ("cuda_graph_scope and cuda_graph_modules cannot be
    set together"; a new user's trial, reproduced on megatron-core at Bridge's pin). The launch writes the
    modules and clears the scope, as Bridge's own set_cuda_graph_modules does."""
    space, cand = _launched(tmp_path, "python scripts/performance/setup_experiment.py -a acct -p batch -g b200 "
                            "-m nemotronh -mr nemotron_3_nano -ng 8 -c bf16", "nano")
    assert cand.cuda_graph != "none"
    script = emit(space, cand, "bridge+slurm")["node.sh"]
    assert "model.cuda_graph_scope=null" in script
    modules = re.search(r"model\.cuda_graph_modules=\[([a-z_,]+)\]", script)
    assert modules is not None and "attn" in modules.group(1).split(",")
    assert not re.search(r"model\.cuda_graph_scope=\[", script)


def test_data_parallel_overlap_follows_the_launchs_gpu_count(tmp_path: Path) -> None:
    """Llama 3 70B's library recipe is written for 32 GPUs, where its CommOverlapConfig leaves DP 1 and
    the gradient overlap off; launched on 64 (DP 2) Bridge turns it on, and the launch wrote it off (a
    new user's trial; training/comm_overlap.py)."""
    def baseline(nodes: int) -> Candidate:
        return _launched(tmp_path, f"torchrun --nnodes={nodes} --nproc_per_node=8 scripts/training/run_recipe.py "
                         "--recipe llama3_70b_pretrain_config --mode pretrain --dataset mock", f"r{nodes}")[1]

    at_32, at_64 = baseline(4), baseline(8)
    assert not at_32.overlap_grad_reduce and not at_32.overlap_param_gather
    assert at_64.overlap_grad_reduce and at_64.overlap_param_gather


def _launched(tmp_path: Path, line: str, name: str) -> tuple[Space, Candidate]:
    """A launch line imported: its space and baseline."""
    launch = tmp_path / f"{name}.sh"
    launch.write_text(line + "\n")
    out = tmp_path / f"{name}.prx"
    assert main(["import-recipe", str(launch), "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    return space, cand


def test_a_bridge_recipes_fused_attention_is_said_as_launched(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The nemotron_3_nano recipes set attention_backend fused, which a Bridge launch leaves as it is; the note
    said the launch wrote `auto`, which only the megatron and primus targets do."""
    _launched(tmp_path, "python scripts/performance/setup_experiment.py -a acct -p batch -g b200 -m nemotronh "
              "-mr nemotron_3_nano -ng 8 -c bf16", "nano")
    said = capsys.readouterr()
    out = " ".join((said.out + said.err).split())
    assert "read as `attention = flash`" in out and "a Bridge launch keeps the recipe's own `fused`" in out


@pytest.mark.parametrize(("name", "precision", "fp8_recipe"), [
    ("bf16_with_fp8_current_scaling_mixed", "fp8", "tensorwise"),
    # the NeMo 2 spellings Bridge registers beside each name, and any mix of the two, which its
    # get_mixed_precision_config reads as the underscored one (these were P3125)
    ("bf16-with-fp8-current-scaling-mixed", "fp8", "tensorwise"),
    ("bf16-with_fp8-current-scaling_mixed", "fp8", "tensorwise"),
    ("bf16-mixed", "bf16", "tensorwise"),
    ("bf16-with-nvfp4-mixed", "fp4", "tensorwise"),
    # a model family's registered recipes, read by their fields: nanov2's "current scaling" scales blockwise
    ("nemotron_h_bf16_with_fp8_current_scaling_mixed", "fp8", "tensorwise"),
    ("nanov2_bf16_with_fp8_current_scaling_mixed", "fp8", "blockwise"),
    ("nanov2-bf16-with-fp8-current-scaling-mixed", "fp8", "blockwise"),
    ("nemotron_3_super_bf16_with_nvfp4_mixed", "fp4", "tensorwise"),
])
def test_every_spelling_bridge_accepts_imports_as_its_fields_say_and_emits_a_registered_name(
        tmp_path: Path, name: str, precision: str, fp8_recipe: str) -> None:
    space, cand = _launched(tmp_path, "python scripts/performance/run_recipe.py --recipe "
                            f"llama3_8b_pretrain_8gpu_b200_bf16_config mixed_precision={name}", "p")
    assert (cand.precision, cand.fp8_recipe) == (precision, fp8_recipe)
    fields = bridge.precisions()[name.replace("-", "_")]
    # the precision's fields its setup writes over ddp's are the candidate's
    assert cand.fp8_param_gather == bool(fields["fp8_param_gather"])
    assert cand.main_grad_dtype == ("fp32" if fields["grad_reduce_in_fp32"] else "bf16")
    _, written = emitted_words(emit(space, cand, "bridge+local")["node.sh"])
    if precision == "bf16":
        # the launched recipe's own config is BF16 already, and stays
        assert "mixed_precision" not in written
        return
    named = written["mixed_precision"]
    # Bridge's canonical spelling, a plain bf16 recipe wherever one has the candidate's fields
    assert named in bridge.precisions() and "-" not in named
    assert named.startswith("bf16_") or name.startswith("nanov2")
    back = bridge.precisions()[named]
    assert (back["fp8"], back["fp8_recipe"], back["fp4"]) == (fields["fp8"], fields["fp8_recipe"], fields["fp4"])
    assert bool(back["fp8_param_gather"]) == cand.fp8_param_gather


def test_a_layouts_virtual_stages_are_written_and_what_needs_ep_overlap_goes_with_it(tmp_path: Path) -> None:
    """A re-trial against Bridge's own run_recipe.py: DeepSeek-V3's performance recipe with its pipeline
    layout stopped at start (`virtual_pipeline_model_parallel_size=null` beside the layout fails
    CommOverlapConfig's EP-overlap assert), and turning EP overlap off left its delay_wgrad_compute on (an
    assert of the same class)."""
    launch = tmp_path / "perf.sh"
    launch.write_text("python scripts/performance/setup_experiment.py --account acct -i nvcr.io/nvidia/nemo:26.04 "
                      "--partition batch -m deepseek -mr deepseek_v3 --num_gpus 256 --gpus_per_node 4 -t 00:15:00 "
                      "-g gb300 -c fp8_mx\n")
    space_file = tmp_path / "space.prx"
    assert main(["import-recipe", str(launch), "--out", str(space_file)]) == 0
    space = load_space(space_file)
    cand = baseline_point(space)
    assert cand is not None and cand.pipeline_layout and cand.vpp == 8 and cand.ep_comm_overlap
    # the recipe's FP8 attention, which the launch runs by naming the recipe, is said (a bulk trial)
    assert "`mixed_precision.fp8_dot_product_attention` = true is run by the launch, not modelled" in \
        " ".join(space_file.read_text().split())

    def words(c: Candidate) -> list[str]:
        return shlex.split(emit(space, c, "bridge+slurm")["node.sh"], comments=True)

    written = words(cand)
    assert "model.virtual_pipeline_model_parallel_size=8" in written
    assert "model.virtual_pipeline_model_parallel_size=null" not in written
    assert not any(w.startswith("comm_overlap.delay_wgrad_compute") for w in written)  # the recipe's own stands
    off = words(cand.replace(ep_comm_overlap=False))
    assert "comm_overlap.overlap_moe_expert_parallel_comm=false" in off and "comm_overlap.delay_wgrad_compute=false" in off


def test_a_save_folder_or_run_name_of_the_runs_own_is_left_out_as_a_megatron_scripts_is(tmp_path: Path) -> None:
    """A bulk trial: Bridge's own scripts name their save folder and runs under `$SLURM_JOB_ID`, which no
    import can know; the Megatron-LM reader leaves such a flag out with W3133, the Bridge reader refused."""
    launch = tmp_path / "run.sh"
    launch.write_text("torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                      "--mode pretrain --dataset mock train.global_batch_size=128 checkpoint.save=$SAVE_DIR/llama3_8b "
                      "logger.wandb_exp_name=run_${SLURM_JOB_ID}\n")
    recipe = read_recipe(launch)
    assert [d.code.id for d in recipe.warnings] == ["W3133", "W3133"]
    assert "`checkpoint.save=${SAVE_DIR}/llama3_8b` reads `SAVE_DIR`" in recipe.warnings[0].message
    assert recipe.entries["global_batch_size"].value == 128
    # what primusc models still needs its value
    launch.write_text("torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                      "model.tensor_model_parallel_size=$TP\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    assert [d.code.id for d in err.value.diagnostics] == ["P3132"]
    # so does the model's shape, which the recipe's card owns; a field Bridge does not have is said as such
    # (a re-trial: both had become W3133)
    for override, code in (("model.num_layers=$NL", "P3132"), ("train.micro_batch_sise=$MBS", "P3141"),
                           ("--dataset megatron-indexed dataset.data_path=$DATA", "P3132")):
        launch.write_text("torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe "
                          f"llama3_8b_pretrain_config {override}\n")
        with pytest.raises(CompileError) as err:
            read_recipe(launch)
        assert [d.code.id for d in err.value.diagnostics] == [code], override


@pytest.mark.parametrize(("blend", "words"), [
    ('[["/data/dclm_01_01_text_document"],null]', ("/data/dclm_01_01_text_document",)),
    ("[[/data/a, /data/b], [0.3, 0.7]]", ("0.3", "/data/a", "0.7", "/data/b")),
])
def test_an_indexed_corpus_given_as_a_blend_is_read_as_its_prefixes(tmp_path: Path, blend: str,
                                                                    words: tuple[str, ...]) -> None:
    launch = tmp_path / "run.sh"
    launch.write_text("torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                      f"--dataset megatron-indexed {shlex.quote('dataset.blend=' + blend)}\n")
    recipe = read_recipe(launch)
    assert recipe.entries["data_path"].value == words
    assert any("reads the indexed corpus `dataset.blend` names" in n for n in recipe.notes)
    launch.write_text("torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                      "--dataset megatron-indexed 'dataset.blend=[[/data/a], [0.3, 0.7]]'\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    assert "is no blend primusc can read" in err.value.diagnostics[0].message


def test_a_recipe_primusc_does_not_read_is_the_reason_before_its_own_fields(tmp_path: Path) -> None:
    """A bulk trial: Bridge's Gemma 3 VL fine-tuning script was told its dataset field is no field (and offered
    another), where the reason is the recipe, a vision model's fine-tuning."""
    launch = tmp_path / "sft.sh"
    launch.write_text("torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe gemma3_vl_4b_sft_config "
                      "dataset.source.dataset_name=cord_v2 train.global_batch_size=32\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    assert [d.code.id for d in err.value.diagnostics] == ["P3140"]
    assert "`gemma3_vl_4b_sft_config` is not a pretraining recipe" in err.value.diagnostics[0].message
    # a pretraining recipe's misspelt field is still said as such
    launch.write_text("torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                      "train.global_batch_sise=32\n")
    with pytest.raises(CompileError) as err:
        read_recipe(launch)
    assert [d.code.id for d in err.value.diagnostics] == ["P3141"]


@pytest.mark.parametrize(("options", "graph"), [
    ("--cuda_graph_scope full_iteration", None),  # the recipe's implementation is none: Bridge ignores the scope
    ("--cuda_graph_impl local --cuda_graph_scope full_iteration", "full_iteration"),  # its documented pairing
    ("--cuda_graph_impl transformer_engine --cuda_graph_scope full_iteration", "P3123"),
])
def test_a_cuda_graph_scope_is_read_against_the_implementation(tmp_path: Path, options: str, graph: str | None) -> None:
    """A trial's `--cuda_graph_scope full_iteration` alone turned on a graph Bridge would not (the recipe's
    implementation is none), and Bridge's own `local` + `full_iteration` pairing was refused as a contradiction."""
    launch = tmp_path / "perf.sh"
    launch.write_text(f"python scripts/performance/setup_experiment.py -m llama -mr llama3_8b -ng 8 -g h100 -c fp8_cs "
                      f"{options}\n")
    if graph == "P3123":
        with pytest.raises(CompileError) as err:
            read_recipe(launch)
        assert err.value.diagnostics[0].code.id == "P3123"
        return
    recipe = read_recipe(launch)
    settings = {k: e.value for k, e in recipe.entries.items()}
    assert settings.get("cuda_graph_impl") in ((graph,) if graph else (None, "none"))
    if graph is None:
        assert any("is not read: the graph implementation is none" in n for n in recipe.notes)


@pytest.mark.parametrize(("name", "aliased", "card"), [
    # Bridge's recipes/llama/llama3.py imports its full-form recipes under these names
    ("llama3_8b_128k_pretrain_config", "llama3_8b_pretrain_64gpu_h100_bf16_128k_config", "llama3_8b"),
    ("llama3_70b_16k_pretrain_config", "llama3_70b_pretrain_32gpu_h100_bf16_16k_config", "llama3_70b"),
    # recipes/gpt/h100/gpt3_175b.py: a provider of the stdlib card's shape
    ("gpt3_175b_pretrain_32gpu_h100_bf16_config", "", "gpt3_175b"),
])
def test_a_library_alias_and_a_provider_built_model_of_a_card_import(name: str, aliased: str, card: str) -> None:
    """A bulk trial of Bridge v0.6's recipes: the aliases with a qualifier before `_pretrain` were refused as
    models without a card (the card was Llama 3's), and GPT-3 175B, whose card the stdlib has."""
    from primus_lang.emit.bridge_recipes import recipes

    found = recipes()[name]
    assert found.card == card
    if aliased:
        assert found.gpus == recipes()[aliased].gpus and aliased in found.gpus_from
