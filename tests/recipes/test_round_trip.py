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
from primus_lang.emit import emit, left_out, unsupported
from primus_lang.frameworks import megatron, primus
from primus_lang.ir import Candidate, Recompute
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
     "ep=8,mbs=3,cross_entropy=te,moe_dispatcher=flex"),
    ("MI355X/llama2_70B-FP8-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"],
     "mbs=7,precision=fp8,fp8_recipe=delayed,recompute=full(80,block),sharding=fsdp,cross_entropy=te"),  # FSDP2 prefetches
    # --add-qkv-bias and --norm-epsilon read into the card (qwen2_5_7b as written), written back
    ("megatron_qwen2_5_7b.sh", ["--gpu", "h100"], "tp=2"),
    ("MI325X/llama3.1_8B-FP8-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"],
     "mbs=2,precision=fp8,fp8_recipe=delayed,cross_entropy=te"),
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
    # what the recipe's own Megatron-LM would stop at start with, left out with a warning (W7025): Megatron-LM's
    # GPT-3 175B example ramps the batch size up under an iteration count, which validate_args refuses
    refused = {m.group(1).replace("-", "_") for d in left_out(space, cand, space.settings.target)
               for m in re.finditer(r"`--([a-z0-9-]+)", d.message)}
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
        if key not in emitted and (EMITTED_ONLY_WHEN_NOT_DEFAULT.get(key) == entry.value or key in refused):
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
    assert "--lr-warmup-fraction .001" in sh
    assert "--mock-data" not in sh and "NullTokenizer" not in sh  # the recipe's corpus and tokenizer
    # Megatron-LM's own GPT-3 175B example ramps its batch size up under --train-iters, which validate_args
    # refuses ("expected no batch-size rampup for iteration-based training"): left out, and said
    assert "--rampup-batch-size" not in sh
    (said,) = left_out(space, cand, "megatron+slurm")
    assert said.code.id == "W7025" and "`--rampup-batch-size 16 16 5859375`" in said.message
    assert "rampup_batch_size is None" in said.message and "arguments.py:" in said.notes[0]
    assert said.message.endswith("when `train_iters`, and this launch has `train_iters` 500000")
    exp = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])
    over = exp["modules"]["pre_trainer"]["overrides"]
    assert over["lr"] == 6.0e-5 and over["train_iters"] == 500000 and over["split"] == "949,50,1"
    assert "rampup_batch_size" not in over


def test_point_baseline_names_the_spaces_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.check import parse_point

    path = imported(tmp_path, "MI300X/llama3.1_8B-BF16-pretrain.yaml", ["--nodes", "1", "--gpus-per-node", "8"])
    space = load_space(path)
    base = baseline_point(space)
    assert base is not None and parse_point(space, "baseline") == base
    # the recipe with one change: every other knob stays the recipe's, not the space's default
    assert parse_point(space, "baseline,recompute=full(1,uniform)") == base.replace(recompute=Recompute("full", 1, "uniform"))
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
