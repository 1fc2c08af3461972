"""What a new user's review of the bridge target found (issue 19): the overlap a recipe's
CommOverlapConfig would write over the candidate's, a recipe of another card named in the passthrough,
a data path Bridge would split, launches of the library aliases import-recipe could not read back,
and a card without a recipe told Megatron-LM's reasons."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import attrs
import pytest

from primus_lang.check import baseline_point, parse_point
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import EmitContext, emit
from primus_lang.emit.bridge import BRIDGE_MODELS, COMM_OVERLAP_PATHS
from primus_lang.emit.bridge_recipes import comm_overlap_of, recipes
from primus_lang.frameworks import bridge
from primus_lang.ir import Candidate, Space
from primus_lang.lower import load_space, stdlib_cards
from primus_lang.recipes import read_recipe
from tests.emit.harness import write


def _space(tmp_path: Path, card: str, extra: str = "") -> Path:
    module = stdlib_cards()[card][0]
    path = tmp_path / f"{card}.prx"
    path.write_text(f"import {module} ({card})\nimport clusters.nvidia (h100_x8)\n\n"
                    f"space s_{card} on h100_x8 {{\n  model = {card}\n  gbs = 64\n{extra}"
                    "  target bridge + local\n}\n")
    return path


def _words(node_sh: str) -> dict[str, str]:
    block = re.search(r"^ARGS=\(\n(.*?)^\)", node_sh, re.MULTILINE | re.DOTALL)
    assert block is not None
    return dict(w.split("=", 1) for w in shlex.split(block.group(1)) if "=" in w)


def _refusals(space_path: Path, point: str, target: str = "bridge+local", ctx: EmitContext | None = None) -> str:
    space = load_space(space_path)
    with pytest.raises(CompileError) as err:
        emit(space, parse_point(space, point), target, ctx)
    return " ".join(f"{d.code.id} {d.message}" for d in err.value.diagnostics)


def test_every_library_alias_says_whether_it_sets_a_comm_overlap_config() -> None:
    # GPT-3 175B has performance recipes alone (recipes/gpt/<gpu>/gpt3_175b.py), no library one
    aliases = {f"{stem}_pretrain_config": card for card, stem in BRIDGE_MODELS.items() if card != "gpt3_175b"}
    for version in bridge.version_names():
        known = recipes(version)
        assert set(aliases) <= set(known)
        with_config = sorted(aliases[n] for n in aliases if comm_overlap_of(n, version))
        # read at Megatron-Bridge v0.6.0 and 067f987: the TP-overlap ones are the 70B/405B Llamas; Qwen3
        # 30B-A3B's config asks for TP overlap too, which setup turns off at the recipe's TP 1
        assert with_config == ["deepseek_v2", "deepseek_v2_lite", "deepseek_v3", "kimi_k2", "llama2_7b",
                               "llama3_1_405b", "llama3_1_70b", "llama3_70b", "nemotron_3_nano_30b_a3b",
                               "qwen3_30b_a3b"]
        assert sorted(aliases[n] for n in aliases if known[n].settings["model.tp_comm_overlap"]) == \
            ["llama3_1_405b", "llama3_1_70b", "llama3_70b"]
        qwen = known["qwen3_30b_a3b_pretrain_config"].settings
        assert qwen["model.tensor_model_parallel_size"] == 1 and qwen["model.tp_comm_overlap"] is False


@pytest.mark.parametrize(("card", "point", "config"), [
    ("llama3_70b", "tp=8,pp=2,sequence_parallel=true,tp_comm_overlap=false", True),  # dense, TP overlap
    ("llama3_8b", "tp=2,sequence_parallel=true,tp_comm_overlap=true", False),  # no config: the model's field holds
    ("llama2_7b", "tp=2,sequence_parallel=true,tp_comm_overlap=true", True),  # a config without TP overlap
])
def test_the_candidates_overlap_goes_into_the_recipes_comm_overlap(tmp_path: Path, card: str, point: str,
                                                                   config: bool) -> None:
    space = load_space(_space(tmp_path, card))
    cand = parse_point(space, point)
    words = _words(emit(space, cand, "bridge+local")["node.sh"])
    tp_overlap = "true" if cand.tp_comm_overlap else "false"
    grad = "true" if cand.overlap_grad_reduce else "false"
    assert words["ddp.overlap_grad_reduce"] == grad
    if config:
        assert words["comm_overlap.tp_comm_overlap"] == tp_overlap and "model.tp_comm_overlap" not in words
        assert words["comm_overlap.overlap_grad_reduce"] == grad
        assert words["comm_overlap.overlap_param_gather"] == words["ddp.overlap_param_gather"]
    else:
        assert words["model.tp_comm_overlap"] == tp_overlap and not any(k.startswith("comm_overlap.") for k in words)


def test_a_moe_recipes_config_gets_the_expert_overlap(tmp_path: Path) -> None:
    space = load_space(_space(tmp_path, "qwen3_30b_a3b"))
    cand = parse_point(space, "tp=1,ep=8")
    words = _words(emit(space, cand, "bridge+local")["node.sh"])
    assert words["comm_overlap.overlap_moe_expert_parallel_comm"] == ("true" if cand.ep_comm_overlap else "false")
    assert "model.overlap_moe_expert_parallel_comm" not in words
    assert set(COMM_OVERLAP_PATHS.values()) <= set(words)


def test_a_passthrough_recipe_of_another_card_is_refused(tmp_path: Path) -> None:
    path = _space(tmp_path, "llama3_8b", '  passthrough { bridge__recipe = "qwen3_235b_a22b_pretrain_config" }\n')
    message = _refusals(path, "tp=1")
    assert "P7001" in message and "another model" in message and "llama3_8b_pretrain_config" in message
    own = _space(tmp_path, "llama3_8b", '  passthrough { bridge__recipe = "llama3_8b_pretrain_8gpu_h100_bf16_config" }\n')
    space = load_space(own)
    assert "llama3_8b_pretrain_8gpu_h100_bf16_config" in emit(space, parse_point(space, "tp=1"), "bridge+local")[
        "node.sh"]


def test_a_data_path_with_a_space_is_refused_on_bridge_only(tmp_path: Path) -> None:
    path = _space(tmp_path, "llama3_8b")
    ctx = EmitContext(variables={"data_path": "/data/my corpus/x", "tokenizer_model": "meta-llama/Meta-Llama-3-8B"})
    message = _refusals(path, "tp=1", ctx=ctx)
    assert "P7001" in message and "splits dataset.data_path on whitespace" in message
    space = load_space(path)
    node = emit(space, parse_point(space, "tp=1"), "megatron+local", ctx)["node.sh"]
    assert "'/data/my corpus/x'" in node


def test_a_card_without_a_recipe_is_told_only_that(tmp_path: Path) -> None:
    message = _refusals(_space(tmp_path, "gemma3_27b"), "tp=1")
    assert "Bridge builds the model from its recipe" in message and "geglu" not in message.lower()
    assert "megatron" not in message.split("stdlib cards")[1]  # megatron cannot build Gemma 3 either
    message = _refusals(_space(tmp_path, "mistral_7b"), "tp=1")
    assert "`--target megatron+...`" in message and message.count("P7001") == 1


@pytest.mark.parametrize(("card", "point"), [("llama3_8b", "tp=2,sequence_parallel=true,mbs=1"), ("qwen3_30b_a3b", "tp=1,ep=8,sequence_parallel=false")])
def test_emit_then_import_gives_the_same_baseline(tmp_path: Path, card: str, point: str) -> None:
    space = load_space(_space(tmp_path, card))
    cand = parse_point(space, point)
    folder = write(emit(space, cand, "bridge+local"), tmp_path / "out")
    dry = subprocess.run(["bash", str(folder / "node.sh"), "--dry-run"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, timeout=60, check=True)
    line = next(x for x in dry.stdout.splitlines() if x.startswith("node 0:"))
    launch = tmp_path / "launch.sh"
    launch.write_text(line.split("&&", 1)[1] + "\n")
    out = tmp_path / "imported.prx"
    assert main(["import-recipe", str(launch), "--out", str(out)]) == 0
    imported = load_space(out)
    back = baseline_point(imported)
    assert back is not None and attrs.asdict(back) == attrs.asdict(cand)
    assert imported.cluster.world == space.cluster.world


def test_a_huge_number_in_an_override_is_refused_at_the_override(tmp_path: Path) -> None:
    launch = tmp_path / "launch.sh"
    for key, digits in (("logger.log_interval", 29), ("comm_overlap.bucket_size", 29), ("train.exit_interval", 5000)):
        launch.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_bf16_config "
                          f"{key}={'9' * digits}\n")
        with pytest.raises(CompileError) as err:
            read_recipe(launch)
        first = err.value.diagnostics[0]
        assert first.code.id == "P3123" and key in first.message
        assert first.span is not None and first.span.file == str(launch)
    assert recipes()["llama3_8b_pretrain_config"].card == "llama3_8b"


# settings every Primus example writes (eod_mask_loss) or its Llama 3.1 ones do, which no hand table named:
# each lives in the one field of its name that frameworks/bridge records, in the dataset or the model
CARRIED = "eod_mask_loss = true; attention_softmax_in_fp32 = true; masked_softmax_fusion = false"


@pytest.mark.parametrize(("version", "model", "more"), [
    ("v0.6", "model", "; rotary_scaling_factor = 8.0"),
    # 067f987's Llama recipes build BridgeGPTModelConfig, which nests these and names the RoPE factor otherwise
    ("067f987", "model.transformer", ""),
])
def test_a_megatron_setting_goes_to_the_field_of_its_name(tmp_path: Path, version: str, model: str,
                                                           more: str) -> None:
    space = load_space(_space(tmp_path, "llama3_1_8b", f"  passthrough {{ {CARRIED}{more} }}\n"))
    words = _words(emit(space, parse_point(space, "tp=1"), "bridge+local",
                        EmitContext(variables={"bridge_version": version}))["node.sh"])
    assert words["dataset.eod_mask_loss"] == "true"
    assert words[f"{model}.attention_softmax_in_fp32"] == "true" and words[f"{model}.masked_softmax_fusion"] == "false"
    assert words.get("model.rotary_scaling_factor") == ("8.0" if more else None)


def test_a_setting_no_field_holds_is_still_refused(tmp_path: Path) -> None:
    message = _refusals(_space(tmp_path, "llama3_1_8b", "  passthrough { moe_use_legacy_grouped_gemm = true }\n"),
                        "tp=1")
    assert "P7001" in message and "`moe_use_legacy_grouped_gemm`: no field of Megatron-Bridge v0.6's" in message
    # a name two sections have says which: primusc will not guess
    message = _refusals(_space(tmp_path, "llama3_1_8b", "  passthrough { make_vocab_size_divisible_by = 128 }\n"),
                        "tp=1")
    assert "P7001" in message and "`model.make_vocab_size_divisible_by`, `tokenizer.make_vocab_size_divisible_by`" \
        in message


def test_a_launch_without_a_checkpoint_folder_saves_and_loads_nothing(tmp_path: Path) -> None:
    """An audit's find: the library recipes save under ./nemo_experiments every few hundred iterations and
    at the end, and resume from there; a throughput launch without `checkpoint_dir` must do neither."""
    space = load_space(_space(tmp_path, "llama3_8b", "  tp = 2\n"))
    point = parse_point(space, "tp=2")
    words = _words(emit(space, point, "bridge+local")["node.sh"])
    assert (words["checkpoint.save"], words["checkpoint.load"]) == ("null", "null")
    kept = _words(emit(space, point, "bridge+local", EmitContext(variables={"checkpoint_dir": "/ck"}))["node.sh"])
    assert (kept["checkpoint.save"], kept["checkpoint.load"]) == ("/ck", "/ck")


def test_an_imported_save_folder_gives_way_to_the_launchs_checkpoints(tmp_path: Path) -> None:
    """A trial's find: an imported Bridge script's `checkpoint.save` (named for its own layout, tp4) was
    written after the launch's (and its `train.eval_iters` over the launch's `validation.eval_iters`), so with `checkpoint_dir` the run saved where it did not load from, and
    without it saved where the projection never counts a save."""
    carried = ('  passthrough { bridge__checkpoint__save = "/workspace/results/recipe_tp4_cp2"; '
               'bridge__train__eval_iters = 10 }\n')
    space = load_space(_space(tmp_path, "llama3_8b", "  tp = 2\n" + carried))
    point = parse_point(space, "tp=2")
    for ctx, folder in ((None, "null"), (EmitContext(variables={"checkpoint_dir": "/ck"}), "/ck")):
        node_sh = emit(space, point, "bridge+local", ctx)["node.sh"]
        assert node_sh.count("checkpoint.save=") == node_sh.count("checkpoint.load=") == 1
        words = _words(node_sh)
        assert (words["checkpoint.save"], words["checkpoint.load"]) == (folder, folder)
        # nor does its deprecated train.eval_iters, which Bridge copies over validation.eval_iters at start
        assert "train.eval_iters" not in words and words["validation.eval_iters"] == "0"


@pytest.mark.parametrize("target", ["bridge+local", "megatron+local"])
def test_a_recipes_megatron_named_save_folder_gives_way_too(tmp_path: Path, target: str) -> None:
    """The same for a script's `--save` carried under Megatron's name (`save`, which both targets read): a
    re-trial found `checkpoint.save=/ckpt/llama3_8b_tp4_cp2` in a TP 2 launch, and `--var checkpoint_dir`
    losing to it."""
    carried = '  passthrough { save = "/ckpt/llama3_8b_tp4_cp2"; save_interval = 50 }\n'
    space = load_space(_space(tmp_path, "llama3_8b", "  tp = 2\n" + carried))
    point = parse_point(space, "tp=2")
    node_sh = emit(space, point, target, EmitContext(variables={"checkpoint_dir": "/ck"}))["node.sh"]
    assert "/ckpt/llama3_8b_tp4_cp2" not in node_sh and "/ck" in node_sh
    # without a folder of the launch's own the script's stays, as on every target: a trial's launch had saved
    # nothing where the user's Bridge line saved every 1,000 iterations (its `checkpoint.save` written null)
    own = emit(space, point, target)["node.sh"]
    if target.startswith("bridge"):
        words = _words(own)
        assert words["checkpoint.save"] == "/ckpt/llama3_8b_tp4_cp2" and "checkpoint.load" not in words
    else:
        assert "--save /ckpt/llama3_8b_tp4_cp2" in own.replace("'", "") and "--load" not in own


def test_a_recipe_that_fine_tunes_keeps_its_pretrained_source(tmp_path: Path) -> None:
    """A reviewer's case: `--load /pre/ckpt --finetune` with `--var checkpoint_dir` had become
    `--finetune --load /ck`: the pretrained weights lost, and every restart reset to iteration 0. The launch's
    folder is where it saves; the recipe's is where its weights come from."""
    carried = '  passthrough { load = "/pre/ckpt"; finetune = true; save = "/out/ckpt"; save_interval = 50 }\n'
    space = load_space(_space(tmp_path, "llama3_8b", "  tp = 2\n" + carried))
    point = parse_point(space, "tp=2")
    node_sh = emit(space, point, "megatron+local", EmitContext(variables={"checkpoint_dir": "/ck"}))["node.sh"]
    assert "--load /pre/ckpt" in node_sh and "--save /ck" in node_sh and "--finetune" in node_sh
    assert "/out/ckpt" not in node_sh


def test_a_primus_fine_tune_saves_where_the_launch_says(tmp_path: Path) -> None:
    """Primus saves under its workspace whatever `save` says: a fine-tune (load from the pretrained folder,
    save elsewhere) had kept ./output as its workspace, so neither `--var checkpoint_dir` nor the recipe's
    save folder was where it saved (a re-trial)."""
    import yaml

    carried = '  passthrough { load = "/pre/ckpt"; finetune = true; save = "/out/ckpt"; save_interval = 50 }\n'
    space = load_space(_space(tmp_path, "llama3_8b", "  tp = 2\n" + carried))
    point = parse_point(space, "tp=2")
    experiment = yaml.safe_load(emit(space, point, "primus+local", EmitContext(variables={"checkpoint_dir": "/ck"}))
                                ["experiment.yaml"])
    overrides = experiment["modules"]["pre_trainer"]["overrides"]
    assert experiment["workspace"] == "/ck" and overrides["save"].startswith("/ck/")
    assert overrides["load"] == "/pre/ckpt" and overrides["finetune"] is True


def _baseline_of(tmp_path: Path, line: str, *options: str) -> tuple[Space, Candidate]:
    """The space `import-recipe` writes from the launch ``line``, and its baseline."""
    launch = tmp_path / "launch.sh"
    launch.write_text(line + "\n")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(launch), *options, "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    return space, cand


@pytest.mark.parametrize(("recipe", "kept"), [("qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config", True),
                                              ("llama3_8b_pretrain_config", False)])
def test_a_recipes_precision_aware_optimizer_on_fp32_state_is_kept(tmp_path: Path, recipe: str, kept: bool) -> None:
    """Qwen3's performance recipes run the precision-aware optimizer on FP32 state, the candidate's: its launch
    turned it off (`use_precision_aware_optimizer=false`), a different optimizer path than the benchmark's."""
    space, cand = _baseline_of(tmp_path, f"./scripts/training/train.sh --nodes 2 --gpus-per-node 8 --recipe {recipe}",
                               "--gpu", "h100")
    assert cand.optimizer_dtype == "fp32"
    words = _words(emit(space, cand, "bridge+local")["node.sh"])
    assert ("optimizer.use_precision_aware_optimizer" not in words) == kept, words


def test_selective_recomputation_clears_the_recipes_layer_count(tmp_path: Path) -> None:
    """Llama 3 8B's H100 performance recipe recomputes 5 layers in blocks; a selective candidate's launch left
    both behind, and megatron-core stops at start ("recompute_num_layers must be None")."""
    space, cand = _baseline_of(tmp_path, "python scripts/performance/setup_experiment.py -m llama -mr llama3_8b "
                               "-ng 8 -g h100 -c fp8_cs --recompute_modules core_attn")
    assert cand.recompute.kind == "selective"
    words = _words(emit(space, cand, "bridge+slurm")["node.sh"])
    assert words["model.recompute_granularity"] == "selective"
    assert words["model.recompute_num_layers"] == "null" and words["model.recompute_method"] == "null"


def test_a_card_with_performance_recipes_alone_says_to_import_one(tmp_path: Path) -> None:
    """GPT-3 175B: Bridge has its performance recipes and no `gpt3_175b_pretrain_config`; a plain space on the
    bridge target is told to import one rather than that the release lacks a recipe it never had."""
    from primus_lang.check import legal_points
    from primus_lang.emit import emit
    from primus_lang.lower import loads_program

    space = loads_program("import models.gpt3 (gpt3_175b)\nimport clusters.nvidia (h100_x8)\n"
                          "space g on h100_x8 { model = gpt3_175b; gbs = 512; tp = 8; pp = 8 }\n", "g.prx").spaces[0]
    with pytest.raises(CompileError) as err:
        emit(space, next(iter(legal_points(space))), "bridge+slurm")
    assert "`gpt3_175b` without an imported recipe: Megatron-Bridge has no library recipe" in str(err.value)
