"""`import-recipe` → `plan` → `emit` on published launch configurations: the plan reports the recipe
as its baseline, and the baseline's launch files give back every setting the recipe writes, flag by
flag. The fixtures are written by hand from the published values; each names its source."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from primus_lang.check import baseline_point, legality
from primus_lang.cli import main
from primus_lang.emit import emit, unsupported
from primus_lang.frameworks import megatron, primus
from primus_lang.ir import Candidate
from primus_lang.lower import load_space
from primus_lang.recipes import interpret, read_recipe
from primus_lang.recipes.megatron import read_command_text
from primus_lang.resources import data_dir
from primus_lang.search.plan import baseline_trial, prepare, space_baseline
from tests.emit.harness import all_cases, context

FIXTURES = Path(__file__).parent / "fixtures"
# Megatron's defaults primusc leaves unwritten where they change nothing: EP on a dense model
EMITTED_ONLY_WHEN_NOT_DEFAULT: dict[str, Any] = {"expert_model_parallel_size": 1}
CASES = [
    # (fixture, extra command-line arguments, the baseline's label)
    ("megatron_gpt3_175b.sh", ["--gpu", "h100"],
     "tp=8,pp=16,sharding=none,sequence_parallel=false,overlap_grad_reduce=false,overlap_param_gather=false"),
    # Primus's presets set sequence parallelism on (language_model.yaml); Primus Turbo's DeepEP at TP 1
    # runs Mixtral's MoE on the flex dispatcher whatever the preset's all-to-all says
    ("MI300X/llama3.1_8B-BF16-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"], "mbs=2"),
    ("MI325X/mixtral_8x7B_v0.1-BF16-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"],
     "ep=8,mbs=3,moe_dispatcher=flex"),
    ("MI355X/llama2_70B-FP8-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"],
     "mbs=7,precision=fp8,fp8_recipe=delayed,recompute=full(80,block),sharding=fsdp"),  # FSDP2 prefetches
    # --add-qkv-bias and --norm-epsilon read into the card (qwen2_5_7b as written), written back
    ("megatron_qwen2_5_7b.sh", ["--gpu", "h100"], "tp=2"),
    ("MI325X/llama3.1_8B-FP8-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"],
     "mbs=2,precision=fp8,fp8_recipe=delayed"),
    # multi-latent attention, shared experts (two of 1408 written as one of 2816), a dense first layer
    ("megatron_deepseek_v2_lite.sh", ["--gpu", "h100"], "ep=8,sequence_parallel=false"),
    # MLA with query compression, one MTP layer, sigmoid routing balanced by the expert bias
    ("megatron_deepseek_v3.sh", ["--gpu", "h100"],
     "tp=2,pp=8,first_stage_layers=7,last_stage_layers=6,ep=32,etp=1,recompute=full(1,uniform)"),
]
# fixture -> the corpus row (validation/published_runs.yaml) that measured its layout. The other
# Primus fixtures have none: the corpus's AMD rows are Llama 3.1 8B/70B FP8 and BF16 on MI325X, Mixtral
# 8x22B on MI355X and a DeepSeek-V4 proxy, none of them the MI300X Llama 3.1 8B BF16, MI325X Mixtral
# 8x7B BF16 or MI355X Llama 2 70B FP8 examples
PUBLISHED = {"MI325X/llama3.1_8B-FP8-pretrain.yaml": "primus_blog_002"}


def imported(tmp_path: Path, fixture: str, extra: list[str]) -> Path:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(FIXTURES / fixture), *extra, "--out", str(out)]) == 0
    return out


def _megatron_args(node_sh: str) -> dict[str, Any]:
    block = re.search(r"^ARGS=\(\n(.*?)^\)", node_sh, re.MULTILINE | re.DOTALL)
    assert block is not None
    recipe = read_command_text(block.group(1), "node.sh")
    return {dest: e.value for dest, e in recipe.entries.items()}


def _primus_overrides(experiment: str) -> dict[str, Any]:
    data = yaml.safe_load(experiment)
    overrides: dict[str, Any] = data["modules"]["pre_trainer"]["overrides"]
    return overrides


def _same(stated: Any, emitted: Any) -> bool:
    if isinstance(stated, tuple) or isinstance(emitted, (tuple, list)):
        return [str(x) for x in (stated if isinstance(stated, (tuple, list)) else str(stated).split())] == \
            [str(x) for x in (emitted if isinstance(emitted, (tuple, list)) else str(emitted).split())]
    if isinstance(stated, bool) or isinstance(emitted, bool):
        return bool(stated) == bool(emitted)
    if isinstance(stated, (int, float)) and isinstance(emitted, (int, float)):
        return float(stated) == float(emitted)
    if str(stated) != str(emitted):
        # a command line's number in another spelling (`1e-6` written back as `1e-06`)
        try:
            return float(str(stated)) == float(str(emitted))
        except ValueError:
            return False
    return True


@pytest.mark.parametrize(("fixture", "extra", "label"), CASES, ids=[c[0] for c in CASES])
def test_baseline_and_emission_reproduce_the_recipe(tmp_path: Path, fixture: str, extra: list[str],
                                                   label: str) -> None:
    path = imported(tmp_path, fixture, extra)
    space = load_space(path)
    cand = baseline_point(space)
    assert cand is not None and cand.label() == label
    assert legality(space, cand) == []
    # plan's baseline is the recipe, with its memory and projection
    trial = space_baseline(space, (prep := prepare(space)).land, prep.evaluator)
    assert trial is not None and trial.candidate == cand and trial.evaluation is not None
    assert trial.memory_peak is not None and trial.memory_peak > 0
    recipe = read_recipe(FIXTURES / fixture)
    files = emit(space, cand, space.settings.target)
    if recipe.kind == "megatron":
        emitted = _megatron_args(files["node.sh"])
    else:
        emitted = _primus_overrides(files["experiment.yaml"])
    for dest, entry in recipe.entries.items():
        if entry.span is None:
            continue  # a default the importer states (Primus's pre_trainer.yaml), not the recipe
        key = dest
        if recipe.kind == "primus":
            # an experiment writes Megatron's argparse dests (`fp8` for --fp8-format), as Primus hands them on
            flag = megatron.flags(primus.megatron_version(recipe.version)).get("--" + dest.replace("_", "-"))
            key = "train_data_path" if dest == "data_path" else flag.dest if flag is not None else dest
        if key not in emitted and EMITTED_ONLY_WHEN_NOT_DEFAULT.get(key) == entry.value:
            continue
        assert key in emitted, f"{entry.written} is not in the launch files"
        stated = entry.value
        if key == "sequence_parallel" and cand.tp == 1:
            stated = False  # Megatron's validate_args switches it off at TP 1; primusc writes what runs
        assert _same(stated, emitted[key]), f"{entry.written}: {stated!r} became {emitted[key]!r}"
    if recipe.kind == "megatron":
        # the launch files read back as the same recipe
        again = interpret(read_command_text(re.search(r"^ARGS=\(\n(.*?)^\)", files["node.sh"],
                                                      re.MULTILINE | re.DOTALL).group(1), "node.sh"),  # type: ignore[union-attr]
                          require_vocab=False)
        assert again.candidate == cand


@pytest.mark.parametrize(("fixture", "row"), sorted(PUBLISHED.items()))
def test_the_baseline_projects_within_the_profiles_error_of_its_measured_throughput(
        tmp_path: Path, fixture: str, row: str) -> None:
    extra = next(c[1] for c in CASES if c[0] == fixture)
    space = load_space(imported(tmp_path, fixture, extra))
    trial = space_baseline(space, (prep := prepare(space)).land, prep.evaluator)
    assert trial is not None and trial.evaluation is not None
    rows = yaml.safe_load((data_dir("validation") / "published_runs.yaml").read_text(encoding="utf-8"))
    measured = float(next(r for r in rows if r["id"] == row)["measured"]["tokens_per_sec_per_gpu"])
    # within the error the GPU's fitted profile was cross-validated to (calibrated.prx)
    provenance = space.cluster.gpu.provenance
    assert provenance is not None
    projected = trial.evaluation.tokens_per_gpu
    assert abs(projected - measured) / measured <= provenance.error, (projected, measured)


def test_plan_reports_the_recipe_first_and_the_winner_against_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = imported(tmp_path, "megatron_gpt3_175b.sh", ["--gpu", "h100"])
    capsys.readouterr()
    assert main(["plan", str(path), "--out", str(tmp_path / "plan")]) == 0
    out = capsys.readouterr().out
    first = out.index("baseline (the space's recipe): " + CASES[0][2])
    assert first < out.index("best of")
    assert "  memory  " in out and "  project " in out
    assert "Over the baseline:" in out


def test_a_space_without_baseline_keeps_the_planners(tmp_path: Path) -> None:
    from primus_lang.resources import data_dir

    space = load_space(data_dir("examples") / "llama3_1_8b_mi325x.prx")
    assert space.baseline is None and space.passthrough == ()
    prep = prepare(space)
    assert space_baseline(prep.space, prep.land, prep.evaluator) is None
    _ = baseline_trial  # the planner's baseline is unchanged (its own tests)


def test_passthrough_reaches_both_frameworks(tmp_path: Path) -> None:
    path = imported(tmp_path, "megatron_gpt3_175b.sh", ["--gpu", "h100"])
    space = load_space(path)
    cand = baseline_point(space)
    assert cand is not None
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--lr-warmup-fraction .001" in sh and "--rampup-batch-size 16 16 5859375" in sh
    assert "--mock-data" not in sh and "NullTokenizer" not in sh  # the recipe's corpus and tokenizer
    exp = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])
    over = exp["modules"]["pre_trainer"]["overrides"]
    assert over["lr"] == 6.0e-5 and over["train_iters"] == 500000 and over["split"] == "949,50,1"


def test_point_baseline_names_the_spaces_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.check import parse_point

    path = imported(tmp_path, "MI300X/llama3.1_8B-BF16-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"])
    space = load_space(path)
    assert parse_point(space, "baseline") == baseline_point(space)
    assert main(["emit", str(path), "--point", "baseline", "--out", str(tmp_path / "e")]) == 0
    exp = yaml.safe_load((tmp_path / "e" / "experiment.yaml").read_text())
    assert exp["modules"]["pre_trainer"]["overrides"]["micro_batch_size"] == 2
    from primus_lang.resources import data_dir

    capsys.readouterr()
    assert main(["emit", str(data_dir("examples") / "llama3_1_8b_mi325x.prx"), "--point", "baseline",
                 "--out", str(tmp_path / "f")]) == 1
    assert "P3131" in capsys.readouterr().err


@pytest.mark.parametrize("framework", ["megatron", "primus"])
@pytest.mark.parametrize("case", sorted(all_cases()))
def test_every_case_and_example_emitted_reads_back_to_its_candidate(tmp_path: Path, case: str,
                                                                     framework: str) -> None:
    """import-recipe of what primusc emits (the command line, the Primus experiment) gives back the
    candidate: the examples' and the emission cases' points, on both targets that write Megatron's
    arguments (a Bridge launch: tests/recipes/test_bridge_recipes.py)."""
    space, cand = all_cases()[case]
    target = f"{framework}+local"
    if unsupported(space, cand, target, context()):
        pytest.skip(f"{target} cannot express {case}")
    files = emit(space, cand, target, context())
    if framework == "megatron":
        node = files["node.sh"]
        block = re.search(r"^ARGS=\(\n(.*?)^\)", node, re.MULTILINE | re.DOTALL)
        script = re.search(r"^SCRIPT=(\S+)", node, re.MULTILINE)
        assert block is not None and script is not None
        recipe = tmp_path / "launch.sh"
        recipe.write_text(f"torchrun --nnodes {space.cluster.nodes} --nproc-per-node {space.cluster.gpus_per_node} "
                          f"{script.group(1)} {' '.join(block.group(1).split())}\n")
    else:
        recipe = tmp_path / "experiment.yaml"
        recipe.write_text(files["experiment.yaml"])
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(recipe), "--gpu", space.cluster.gpu.name, "--nodes", str(space.cluster.nodes),
                 "--gpus-per-node", str(space.cluster.gpus_per_node), "--out", str(out)]) == 0
    imported = load_space(out)
    back = baseline_point(imported)
    assert back is not None
    # and the model is the one launched (a hybrid read as a transformer once gave the same candidate)
    shape = ("num_layers", "hidden", "heads", "kv_heads", "ffn_hidden", "pattern", "mamba", "mla")
    assert {f: getattr(imported.model, f) for f in shape} == {f: getattr(space.model, f) for f in shape}
    assert (imported.model.moe is None) == (space.model.moe is None)

    def running(c: Candidate) -> dict[str, Any]:
        # as it runs: sequence parallelism needs TP > 1, ETP 0 means ETP = TP
        return attrs.asdict(attrs.evolve(c, sequence_parallel=c.sp, etp=c.etp or c.tp))

    assert running(back) == running(cand)


def test_a_multi_word_value_stays_one_argument_unless_its_flag_takes_a_list(tmp_path: Path) -> None:
    # a run name with spaces is one word; a data blend is --data-path's several (nargs='*')
    script = tmp_path / "run.sh"
    script.write_text(
        "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
        "--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
        "--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
        "--disable-bias-linear --seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 "
        "--global-batch-size 128 --tensor-model-parallel-size 2 --bf16 --tokenizer-type NullTokenizer "
        "--vocab-size 128256 --wandb-exp-name \"my run 1\" --data-path \"0.5 /data/a 0.5 /data/b\"\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--wandb-exp-name 'my run 1'" in sh
    assert "--data-path 0.5 /data/a 0.5 /data/b" in sh


def test_quick_geglu_reads_as_a_gated_mlp_and_is_written_back(tmp_path: Path) -> None:
    # Megatron-LM's gpt-oss example (examples/gptoss): --quick-geglu gates the MLP as --swiglu does
    script = tmp_path / "run.sh"
    script.write_text(
        "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 8 --hidden-size 2880 "
        "--ffn-hidden-size 2880 --num-attention-heads 64 --kv-channels 64 --group-query-attention "
        "--num-query-groups 8 --quick-geglu --glu-linear-offset 1.0 --activation-func-clamp-value 7.0 "
        "--normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
        "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 "
        "--tokenizer-type NullTokenizer --vocab-size 201088\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    m = space.model
    assert (m.activation, m.glu_offset, m.activation_clamp) == ("quick_geglu", 1.0, 7.0) and m.gated
    assert not any(k in ("quick_geglu", "glu_linear_offset", "activation_func_clamp_value")
                   for k, _ in space.passthrough)  # read into the card, not carried beside it
    cand = baseline_point(space)
    assert cand is not None
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--quick-geglu" in sh and "--swiglu" not in sh
    assert "--glu-linear-offset 1.0" in sh and "--activation-func-clamp-value 7.0" in sh


def test_an_experiment_that_turns_its_presets_mla_off_gets_a_card_of_its_own(tmp_path: Path) -> None:
    # Primus's DeepSeek-V2-Lite examples set multi_latent_attention: false over an MLA preset: a card
    # derived from the stdlib's MLA card would keep MLA, and the launch would build another model
    exp = tmp_path / "deepseek_v2_lite-BF16-pretrain.yaml"
    exp.write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: deepseek_v2_lite.yaml\n    overrides:\n      micro_batch_size: 4\n      global_batch_size: 256\n"
        "      seq_length: 4096\n      max_position_embeddings: 4096\n      expert_model_parallel_size: 8\n"
        "      multi_latent_attention: false\n      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    assert space.model.mla is None and space.model.moe is not None
    assert "_model = deepseek_v2_lite" not in out.read_text()  # not derived from the MLA card
    cand = baseline_point(space)
    assert cand is not None
    exp_out = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])
    assert not exp_out["modules"]["pre_trainer"]["overrides"].get("multi_latent_attention", False)


def test_a_preset_that_extends_another_names_its_model(tmp_path: Path) -> None:
    # Primus's llama3.3_70B.yaml extends llama3_70B.yaml; the stdlib has no Llama 3.3 card, and Llama 2
    # 70B has the same shape: the tokenizer hides the vocabulary, the preset's lineage does not
    exp = tmp_path / "llama3.3_70B-BF16-pretrain.yaml"
    exp.write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: llama3.3_70B.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 64\n"
        "      seq_length: 8192\n      max_position_embeddings: 8192\n      tensor_model_parallel_size: 8\n"
        "      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    assert load_space(out).model.vocab == 128256 and "= llama3_70b" in out.read_text()


def test_of_cards_of_one_shape_the_one_agreeing_in_rope_base_is_taken(tmp_path: Path) -> None:
    # a command line of Llama 3 70B's shape whose tokenizer hides the vocabulary: its RoPE base is Llama 3's
    script = tmp_path / "run.sh"
    script.write_text(
        "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 80 --hidden-size 8192 "
        "--ffn-hidden-size 28672 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
        "--swiglu --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 "
        "--untie-embeddings-and-output-weights --disable-bias-linear --seq-length 8192 "
        "--max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 8 "
        "--pipeline-model-parallel-size 1 --bf16 --tokenizer-type HuggingFaceTokenizer "
        "--tokenizer-model meta-llama/Meta-Llama-3-70B\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert load_space(out).model.vocab == 128256


def test_block_recomputation_beyond_a_chunk_reads_as_the_chunk(tmp_path: Path) -> None:
    # Primus's grok examples: 64 layers on PP 4 x VPP 4 (chunks of 4), full block recomputation of 8
    # layers, which megatron-core takes and runs as all 4 of each chunk
    script = tmp_path / "run.sh"
    script.write_text(
        "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 64 --hidden-size 4096 "
        "--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
        "--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
        "--disable-bias-linear --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
        "--global-batch-size 64 --pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 4 "
        "--recompute-granularity full --recompute-method block --recompute-num-layers 8 --bf16 "
        "--tokenizer-type NullTokenizer --vocab-size 32000\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    cand = baseline_point(load_space(out))
    assert cand is not None and (cand.recompute.layers, cand.recompute.method) == (4, "block")
    assert "model chunks of at most 4 recomputes all of them" in out.read_text()


def test_a_model_presets_settings_beyond_the_card_reach_the_launch(tmp_path: Path) -> None:
    # Primus's deepseek_v2_lite preset routes with a pre-softmax and scales YaRN's attention (mscale); the
    # launch builds on Primus's generic card, so they are carried as the experiment's own settings are
    exp = tmp_path / "deepseek_v2_lite-BF16-pretrain.yaml"
    exp.write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: deepseek_v2_lite.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 256\n"
        "      seq_length: 4096\n      max_position_embeddings: 4096\n      expert_model_parallel_size: 8\n"
        "      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    carried = dict(space.passthrough)
    assert carried["moe_router_pre_softmax"] is True and carried["mscale"] == 0.707
    assert not any(k.startswith("tokenizer") for k in carried)  # the vocabulary is the card's
    cand = baseline_point(space)
    assert cand is not None
    over = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert over["moe_router_pre_softmax"] is True and over["mscale"] == 0.707


def test_a_list_setting_reaches_a_primus_launch_as_a_list(tmp_path: Path) -> None:
    # Primus's MI355X experiments profile ranks [0] (Megatron's --profile-ranks takes a list)
    exp = tmp_path / "llama3.1_8B-BF16-pretrain.yaml"
    exp.write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 64\n"
        "      profile_ranks: [0, 1]\n      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    over = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert over["profile_ranks"] == [0, 1]
    assert "--profile-ranks 0 1" in emit(space, cand, "megatron+slurm")["node.sh"]


def test_a_primus_experiment_runs_one_node_as_primus_launchers_do(tmp_path: Path) -> None:
    # Primus's examples/run_pretrain.sh runs NNODES=1 unless told otherwise; an experiment names no count
    exp = tmp_path / "llama3.1_8B-BF16-pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 64\n"
                   "      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--out", str(out)]) == 0
    text = out.read_text()
    assert "nodes = 1;" in text and "as Primus's launchers run it" in text


def test_a_primus_experiment_reaches_the_megatron_target_without_primus_own_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's examples set its logger and Primus Turbo's switches, which no Megatron-LM parser has; a
    # preset key Primus drops (`original_max_position_embeddings`: no Megatron-LM it pins reads it) is not carried
    exp = tmp_path / "deepseek_v2_lite-BF16-pretrain.yaml"
    exp.write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: deepseek_v2_lite.yaml\n    overrides:\n      micro_batch_size: 1\n      global_batch_size: 256\n"
        "      seq_length: 4096\n      max_position_embeddings: 4096\n      expert_model_parallel_size: 8\n"
        "      stderr_sink_level: DEBUG\n      use_turbo_attention: true\n      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    space = load_space(out)
    carried = dict(space.passthrough)
    assert "original_max_position_embeddings" not in carried and "stderr_sink_level" in carried
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm",
                 "--out", str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert "W7024" in err and "stderr_sink_level" in err
    sh = (tmp_path / "m" / "node.sh").read_text()
    assert "--stderr-sink-level" not in sh and "--moe-router-pre-softmax" in sh
    cand = baseline_point(space)
    assert cand is not None
    over = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert over["stderr_sink_level"] == "DEBUG" and over["use_turbo_attention"] is True


def test_a_list_of_other_values_is_carried_as_text(tmp_path: Path) -> None:
    # YAML types 2024-01-01 as a date: the list is carried as the text of its items, not a crash
    exp = tmp_path / "llama3.1_8B-BF16-pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 1\n"
                   "      wandb_exp_name: [2024-01-01, x]\n      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    assert dict(load_space(out).passthrough)["wandb_exp_name"] == '["2024-01-01", "x"]'


def test_the_megatron_target_leaves_out_a_wandb_project_the_experiment_turned_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's MI355X experiments name a W&B project beside disable_wandb: true; Megatron-LM stops at start
    # on a project without an experiment name. Primus's generic card's virtual_pipeline_model_parallel_size
    # is no Megatron-LM argument either
    exp = tmp_path / "llama3.1_8B-BF16-pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 1\n      mock_data: true\n"
                   "      wandb_project: Primus-llama\n      disable_wandb: true\n"
                   "      virtual_pipeline_model_parallel_size: 2\n      create_attention_mask_in_dataloader: 0\n"
                   "      disable_delayed_scaling_patches: true\n      tokenizer_type: Llama3Tokenizer\n"
                   "      tokenizer_model: meta-llama/Llama-3.1-8B\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--out", str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert "W7024" in err and "`wandb_project`: the experiment turns Weights & Biases off" in err
    sh = (tmp_path / "m" / "node.sh").read_text()
    assert "--wandb-project" not in sh and "virtual-pipeline-model-parallel-size" not in sh
    # a switch written 0 is the switch off; a key of Primus's code alone (no preset holds it) is Primus's in
    # a space imported from Primus; Primus's Llama3Tokenizer is Megatron's Hugging Face tokenizer
    assert "--no-create-attention-mask-in-dataloader" in sh and "delayed-scaling-patches" not in sh
    assert "--tokenizer-type HuggingFaceTokenizer" in sh and "--tokenizer-model meta-llama/Llama-3.1-8B" in sh
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    over = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert over["wandb_project"] == "Primus-llama" and over["disable_wandb"] is True
