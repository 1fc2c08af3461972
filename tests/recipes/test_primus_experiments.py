"""A Primus experiment as Primus reads it (its presets, its launchers' defaults, its own settings), and
its launch on each target: what the model preset says beyond the card reaches the launch, what only
Primus reads stays off the megatron target. Experiments are written in the shape of Primus's own
examples (AMD-AGI/Primus examples/megatron/configs/<GPU>/*.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit, left_out
from primus_lang.ir import Recompute, Space
from primus_lang.lower import load_space


def experiment(tmp_path: Path, model: str, overrides: str, *extra: str,
               name: str = "exp-BF16-pretrain.yaml") -> tuple[Path, Space]:
    """Write an experiment over Primus's ``model`` preset with ``overrides`` (YAML lines), import it on
    MI300X (one node unless ``extra`` says otherwise), and load the space."""
    exp = tmp_path / name
    body = "".join(f"      {line}\n" for line in overrides.strip().splitlines())
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   f"    model: {model}\n    overrides:\n{body}      mock_data: true\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", *(extra or ("--nodes", "1")), "--out", str(out)]) == 0
    return out, load_space(out)


def primus_overrides(space: Space) -> dict[str, Any]:
    cand = baseline_point(space)
    assert cand is not None
    over: dict[str, Any] = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"][
        "pre_trainer"]["overrides"]
    return over


DSV2_LITE = "micro_batch_size: 1\nglobal_batch_size: 256\nseq_length: 4096\nmax_position_embeddings: 4096\n" \
            "expert_model_parallel_size: 8"


def test_an_experiment_that_turns_its_presets_mla_off_gets_a_card_of_its_own(tmp_path: Path) -> None:
    # Primus's DeepSeek-V2-Lite examples set multi_latent_attention: false over an MLA preset: a card
    # derived from the stdlib's MLA card would keep MLA, and the launch would build another model
    out, space = experiment(tmp_path, "deepseek_v2_lite.yaml", DSV2_LITE + "\nmulti_latent_attention: false")
    assert space.model.mla is None and space.model.moe is not None
    assert "_model = deepseek_v2_lite" not in out.read_text()  # not derived from the MLA card
    assert not primus_overrides(space).get("multi_latent_attention", False)


def test_a_preset_that_extends_another_names_its_model(tmp_path: Path) -> None:
    # Primus's llama3.3_70B.yaml extends llama3_70B.yaml; the stdlib has no Llama 3.3 card, and Llama 2
    # 70B has the same shape: the tokenizer hides the vocabulary, the preset's lineage does not
    out, space = experiment(tmp_path, "llama3.3_70B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                            "seq_length: 8192\nmax_position_embeddings: 8192\ntensor_model_parallel_size: 8")
    assert space.model.vocab == 128256 and "= llama3_70b" in out.read_text()


def test_a_model_presets_settings_beyond_the_card_reach_the_launch(tmp_path: Path) -> None:
    # Primus's deepseek_v2_lite preset routes with a pre-softmax (the card's, since 7 Dec 2026) and scales YaRN's
    # attention (mscale, carried as the experiment's own settings are)
    _out, space = experiment(tmp_path, "deepseek_v2_lite.yaml", DSV2_LITE)
    carried = dict(space.passthrough)
    assert space.model.moe is not None and space.model.moe.router_pre_softmax
    assert "moe_router_pre_softmax" not in carried and carried["mscale"] == 0.707
    assert not any(k.startswith("tokenizer") for k in carried)  # the vocabulary is the card's
    # a setting of Primus's own, which its generic card defines (null) and its dual RoPE reads
    # (primus/backends/megatron/core/transformer/dual_rope.py): the preset's value is carried too
    assert carried["original_max_position_embeddings"] == 4096
    over = primus_overrides(space)
    assert over["moe_router_pre_softmax"] is True and over["mscale"] == 0.707


def test_primus_own_model_settings_reach_the_launch(tmp_path: Path) -> None:
    """Grok 2's preset caps its router logits at 30 (`router_logit_softcapping`, a setting of Primus's own that
    its MoE router reads: primus/backends/megatron/core/transformer/moe/router.py); the launch, over Primus's
    generic card, routed without it (a new user's trial)."""
    _out, space = experiment(tmp_path, "grok2.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                             "expert_model_parallel_size: 8\npipeline_model_parallel_size: 8",
                             "--nodes", "8", "--vocab-size", "32768")
    assert dict(space.passthrough)["router_logit_softcapping"] == 30
    assert primus_overrides(space)["router_logit_softcapping"] == 30


def test_a_list_setting_reaches_a_primus_launch_as_a_list(tmp_path: Path) -> None:
    # Primus's MI355X experiments profile ranks [0] (Megatron's --profile-ranks takes a list)
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                             "profile_ranks: [0, 1]")
    assert primus_overrides(space)["profile_ranks"] == [0, 1]
    cand = baseline_point(space)
    assert cand is not None and "--profile-ranks 0 1" in emit(space, cand, "megatron+slurm")["node.sh"]


def test_a_list_of_other_values_is_carried_as_text(tmp_path: Path) -> None:
    # YAML types 2024-01-01 as a date: the list is carried as the text of its items, not a crash
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nwandb_exp_name: [2024-01-01, x]")
    assert dict(space.passthrough)["wandb_exp_name"] == '["2024-01-01", "x"]'


# Primus's Llama 3.1 70B examples (examples/megatron/configs/MI300X/llama3.1_70B-BF16-pretrain.yaml): every
# layer recomputed at MBS 3 under torch FSDP2, Transformer Engine's cross-entropy
TORCH_FSDP2_70B = ("micro_batch_size: 3\nglobal_batch_size: 24\nseq_length: 8192\nrecompute_granularity: full\n"
                   "recompute_method: block\nrecompute_num_layers: 80\nuse_torch_fsdp2: true\n"
                   "use_distributed_optimizer: false\ngradient_accumulation_fusion: false\nckpt_format: torch_dist\n"
                   "cross_entropy_loss_fusion: true\ncross_entropy_fusion_impl: te")


def test_a_primus_experiment_runs_one_node_as_primus_launchers_do(tmp_path: Path) -> None:
    # Primus's examples/run_pretrain.sh runs NNODES=1 unless told otherwise; an experiment names no count
    out, _space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64",
                             "--gpus-per-node", "8")
    text = out.read_text()
    assert "nodes = 1;" in text and "as Primus's launchers run it" in text


def test_the_space_offers_fewer_recomputed_layers_mbs_1_and_the_optimizer_beside_fsdp(tmp_path: Path) -> None:
    # Primus's 70B examples recompute every layer at MBS 3 under torch FSDP2; what fits with a quarter
    # of the layers recomputed, at MBS 1, or with PP under the distributed optimizer must be in reach
    _out, space = experiment(tmp_path, "llama3.1_70B.yaml", TORCH_FSDP2_70B)
    axes = {a.name: [str(v) for v in a.domain.values] for a in space.axes}
    assert axes["recompute"][:3] == ["full(80,block)", "full(40,block)", "full(20,block)"]
    assert axes["mbs"] == ["1", "3", "6"] and axes["sharding"] == ["fsdp", "dist_opt"] and axes["pp"] == ["1", "2"]


def test_the_manifest_names_the_iterations_and_learning_rate_the_launch_runs(tmp_path: Path) -> None:
    # the experiment's own train_iters and lr are carried to the launch, so they are its variables too
    out, space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                             "train_iters: 50\nlr: 1.0e-5")
    cand = baseline_point(space)
    assert cand is not None
    files = emit(space, cand, "primus+slurm")
    variables = json.loads(files["manifest.json"])["variables"]
    over = yaml.safe_load(files["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert (variables["train_iters"], float(variables["lr"])) == ("50", 1e-5) == (str(over["train_iters"]), over["lr"])
    # a run block decides over the experiment's values, in the launch as in the manifest
    text = out.read_text()
    head, brace, rest = text.partition("{\n  model = ")
    out.write_text(head + brace + rest.replace("\n  seq_len", "\n  run {\n    train_iters = 1000\n"
                                                                  "    lr = 3e-4\n  }\n  seq_len", 1))
    space = load_space(out)
    files = emit(space, cand, "primus+slurm")
    variables = json.loads(files["manifest.json"])["variables"]
    over = yaml.safe_load(files["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert (variables["train_iters"], over["train_iters"], float(variables["lr"]), over["lr"]) == ("1000", 1000, 3e-4, 3e-4)


def test_the_megatron_target_leaves_out_what_only_primus_reads(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's examples set its logger and Primus Turbo's switches, which no Megatron-LM parser has, name a
    # W&B project beside disable_wandb (Megatron-LM stops at start on a project without an experiment name),
    # write switches as 0 or 1, and name Primus's own tokenizer types
    out, space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nstderr_sink_level: DEBUG\n"
                            "use_turbo_attention: true\nwandb_project: Primus-llama\ndisable_wandb: true\n"
                            "virtual_pipeline_model_parallel_size: 2\ncreate_attention_mask_in_dataloader: 0\n"
                            "disable_delayed_scaling_patches: true\ntokenizer_type: Llama3Tokenizer\n"
                            "tokenizer_model: meta-llama/Llama-3.1-8B")
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--out", str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert "W7024" in err and "stderr_sink_level" in err
    assert "`wandb_project`: the experiment turns Weights & Biases off" in err
    sh = (tmp_path / "m" / "node.sh").read_text()
    for gone in ("--stderr-sink-level", "--wandb-project", "virtual-pipeline-model-parallel-size",
                 "delayed-scaling-patches", "turbo"):
        assert gone not in sh, gone
    assert "--no-create-attention-mask-in-dataloader" in sh
    assert "--tokenizer-type HuggingFaceTokenizer" in sh and "--tokenizer-model meta-llama/Llama-3.1-8B" in sh
    over = primus_overrides(space)  # the Primus target keeps them all, as the experiment wrote them
    assert over["stderr_sink_level"] == "DEBUG" and over["use_turbo_attention"] is True
    assert over["wandb_project"] == "Primus-llama" and over["disable_wandb"] is True


@pytest.mark.parametrize(("written", "logs"), [("", False), ("disable_wandb: false\n", True)])
def test_a_wandb_project_reaches_megatron_only_where_primus_would_log_to_it(tmp_path: Path, written: str,
                                                                            logs: bool) -> None:
    # an experiment that does not say keeps Primus's pre-trainer preset, whose disable_wandb is on (Primus's
    # own qwen2.5 and gpt-oss examples): no W&B run under Primus, and none under Megatron-LM either; one that
    # turns it on gets an experiment name, without which Megatron-LM stops at start
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", f"micro_batch_size: 1\nwandb_project: Primus-llama\n{written}")
    cand = baseline_point(space)
    assert cand is not None
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert ("--wandb-project Primus-llama" in sh) is logs
    assert ("--wandb-exp-name" in sh) is logs
    # and on Primus it runs as it ran: the experiment's own word, or its preset's
    over = primus_overrides(space)
    assert over.get("disable_wandb", True) is (not logs)


def test_another_target_judges_the_recipe_as_it_launches_it(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's 70B recipe fits one MI300X node under torch FSDP2 (BF16 gradients); the megatron target
    # runs Megatron-FSDP with FP32 gradients, which does not: no one ran that, so it is refused
    out, _space = experiment(tmp_path, "llama3.1_70B.yaml", TORCH_FSDP2_70B)
    capsys.readouterr()
    assert main(["emit", str(out), "--point", "baseline", "--out", str(tmp_path / "p")]) == 0
    assert "W5002" not in capsys.readouterr().err
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+slurm", "--out", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert "P5001" in err and "for megatron+slurm, which launches it otherwise than the space's own primus+slurm" in err
    # and says how
    assert "(FSDP as Megatron-FSDP where primus+slurm runs torch FSDP2; `main_grad_dtype` fp32 where it is bf16)" in err


def test_a_set_no_variable_reads_is_said_and_a_batch_that_breaks_the_rule_names_the_recipes_gbs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: ${PRIMUS_MBS:1}\nglobal_batch_size: 64",
               "--nodes", "1", "--set", "PRIMUS_MBS=2", "--set", "global_batch_size=48")
    err = capsys.readouterr().err
    assert "`--set global_batch_size=...` changed nothing" in err and "PRIMUS_MBS=...` changed" not in err
    exp = tmp_path / "exp-BF16-pretrain.yaml"
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "2", "--set", "PRIMUS_MBS=3",
                 "--set", "global_batch_size=48", "--out", str(tmp_path / "b.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3129" in err and "`--set global_batch_size=...` changed nothing" in err
    assert "give the recipe another global batch" in err


def test_an_experiment_that_extends_another_file_is_read_over_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's yaml_loader merges an experiment's `extends:` files under it (its LoRA SFT example extends
    # the SFT one); a file that is not there, or that extends itself, is said so
    (tmp_path / "base.yaml").write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
        "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 2\n      global_batch_size: 64\n"
        "      mock_data: true\n")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nmodules:\n  pre_trainer:\n    overrides:\n      micro_batch_size: 4\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(child), "--gpu", "mi300x", "--nodes", "1", "--out", str(out)]) == 0
    cand = baseline_point(load_space(out))
    assert cand is not None and (cand.mbs, cand.gbs) == (4, 64)
    # a variable only the extended file reads is read: its `--set` changes the recipe, and is not said unread
    (tmp_path / "base.yaml").write_text((tmp_path / "base.yaml").read_text().replace("global_batch_size: 64",
                                                                                       "global_batch_size: ${GBS:64}"))
    capsys.readouterr()
    assert main(["import-recipe", str(child), "--gpu", "mi300x", "--nodes", "1", "--set", "GBS=128",
                 "--out", str(tmp_path / "gbs.prx")]) == 0
    assert "changed nothing" not in capsys.readouterr().err
    cand = baseline_point(load_space(tmp_path / "gbs.prx"))
    assert cand is not None and cand.gbs == 128
    for text, code in (("extends: [missing.yaml]\n", "P3120"), ("extends: loop.yaml\nmodules: {}\n", "P3127")):
        loop = tmp_path / "loop.yaml"
        loop.write_text(text)
        capsys.readouterr()
        assert main(["import-recipe", str(loop), "--gpu", "mi300x", "--out", str(tmp_path / "x.prx")]) == 1
        assert code in capsys.readouterr().err


def test_a_preset_tokenizer_of_another_vocabulary_is_said(tmp_path: Path) -> None:
    # Primus's gpt_oss_20B preset extends deepseek_v2_base and tokenizes with DeepSeek-V2-Lite's tokenizer;
    # the launch runs NullTokenizer over gpt-oss's card (201,088 tokens), which the import says
    out, space = experiment(tmp_path, "gpt_oss_20B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64",
                            "--nodes", "1")
    text = out.read_text()
    assert "tokenizes with `DeepSeekV2Tokenizer` (`deepseek-ai/DeepSeek-V2-Lite`, 102,400 tokens" in text
    assert "vocabulary of 201,088" in text and space.model.vocab == 201088
    # a preset whose tokenizer is its own model's says nothing
    (tmp_path / "llama").mkdir()
    out, _ = experiment(tmp_path / "llama", "llama3.1_8B.yaml", "micro_batch_size: 1")
    assert "tokenizes with" not in out.read_text()


def test_axis_values_no_point_can_take_are_not_offered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # EP 8 on one node of 8 GPUs: with ETP following TP, every TP above 1 needs more GPUs than there are
    # (ETP x EP x PP divides the world); the space offers the TPs a point can take, and says why not the rest
    out, space = experiment(tmp_path, "deepseek_v2_lite.yaml", DSV2_LITE)
    assert all(a.name != "tp" for a in space.axes)
    said = "".join(capsys.readouterr())
    assert "`tp` 2, 4, 8 not offered: no legal point takes them (at tp = 2: ETP·EP·PP = 2·8·1 does not divide" in said
    assert "`primusc explain P4018`" in out.read_text()
    assert [a.name for a in space.axes] == ["mbs", "recompute"]


def test_a_presets_shared_expert_overlap_is_said_to_be_left_out(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 4's preset overlaps its shared expert with the dispatch; primusc runs it in line (account,
    # projection and launch alike), and says so instead of dropping the preset's setting silently
    experiment(tmp_path, "llama4_17B16E.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\nseq_length: 4096\n"
               "max_position_embeddings: 4096\nexpert_model_parallel_size: 8", "--nodes", "2")
    said = "".join(capsys.readouterr())
    assert "moe_shared_expert_overlap` (the shared experts overlapped with the dispatch) is not carried" in said


def test_an_experiment_one_node_cannot_hold_runs_on_the_fewest_that_can(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's launchers run one node unless NNODES says otherwise; a 70B at TP 2 x PP 4 does not fit on one
    # MI300X node by the account (the distributed optimizer shards its state over a DP of 1): the space is
    # planned on the fewest nodes that hold it, and says why
    _out, space = experiment(tmp_path, "llama3.1_70B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                             "seq_length: 8192\nmax_position_embeddings: 8192\ntensor_model_parallel_size: 2\n"
                             "pipeline_model_parallel_size: 4\nuse_distributed_optimizer: true",
                             "--gpus-per-node", "8")
    assert space.cluster.nodes == 4
    said = "".join(capsys.readouterr())
    assert "on which it does not fit" in said and "the fewest on which its layout is legal and it fits" in said


def test_the_users_data_replaces_the_experiments_mock_data(tmp_path: Path) -> None:
    # Primus's examples run `mock_data: true`; `--var data_path=...` names the corpus: the launch reads that
    # alone (Megatron-LM asserts a single data source), on the megatron and the primus target
    out, _space = experiment(tmp_path, "llama3.1_8B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                             "seq_length: 8192\nmax_position_embeddings: 8192")
    for target, folder in (("megatron+slurm", "m"), ("primus+slurm", "p")):
        assert main(["emit", str(out), "--point", "baseline", "--target", target, "--out", str(tmp_path / folder),
                     "--var", "data_path=/data/corpus_text_document", "--var", "tokenizer_model=/tok/hf"]) == 0
        written = "".join(f.read_text() for f in (tmp_path / folder).iterdir() if f.suffix in (".sh", ".yaml"))
        assert "/data/corpus_text_document" in written and "mock-data" not in written
        assert "mock_data: true" not in written


# Primus's MI355X DeepSeek-V3 experiment lists the layers it recomputes (recompute_layer_ids); here a
# Llama 3.1 8B at PP 4 x VPP 2 lists 12 of its 32 layers, and a model chunk holds 4
LISTED = "micro_batch_size: 1\nglobal_batch_size: 64\npipeline_model_parallel_size: 4\n" \
         "num_virtual_stages_per_pipeline_rank: 2\nrecompute_granularity: full\n" \
         "recompute_layer_ids: \"0,1,4,5,8,9,12,13,16,17,20,21\""


def test_listed_layers_are_read_per_model_chunk_and_a_launch_of_that_reading_runs_the_list(tmp_path: Path) -> None:
    """Read per stage, ignoring virtual stages, the list had been 3 layers a stage: 3 of each 4-layer chunk,
    24 layers, twice the list; and the launch wrote that count and method instead of the list (a new user's
    trial of Primus's DeepSeek-V3 experiment: 21 listed of 61, read as every layer)."""
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", LISTED, "--nodes", "2")
    cand = baseline_point(space)
    assert cand is not None and cand.recompute == Recompute("full", 2, "block")  # 12 over 8 chunks: 16 layers
    over = primus_overrides(space)
    assert over["recompute_layer_ids"] == "0,1,4,5,8,9,12,13,16,17,20,21"
    # Primus asserts no method beside its list; its preset leaves method and count unset
    assert "recompute_method" not in over and "recompute_num_layers" not in over


def test_a_candidate_that_recomputes_otherwise_runs_its_own_recomputation_without_the_list(tmp_path: Path) -> None:
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", LISTED, "--nodes", "2")
    base = baseline_point(space)
    assert base is not None
    other = base.replace(recompute=Recompute("full", 4, "block"))
    over = yaml.safe_load(emit(space, other, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    assert "recompute_layer_ids" not in over
    assert over["recompute_method"] == "block" and over["recompute_num_layers"] == 4
    said = left_out(space, other, "primus+slurm")
    assert [d.code.id for d in said] == ["W7025"] and "recompute_layer_ids" in said[0].message
    # the megatron target has no such setting: it runs the count, and leaves the list out as Primus's (W7024)
    assert "--recompute-num-layers 2" in emit(space, base, "megatron+slurm")["node.sh"]


def test_an_empty_list_is_primus_null_and_ids_beyond_the_model_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A review's findings: an empty `recompute_layer_ids` had read as a list of one layer a chunk and
    launched no method or count beside it (which Megatron refuses); ids beyond the model were imported and
    launched, and Primus refuses them at start."""
    empty = LISTED.replace('recompute_layer_ids: "0,1,4,5,8,9,12,13,16,17,20,21"',
                           "recompute_method: block\nrecompute_num_layers: 1\nrecompute_layer_ids: []")
    _out, space = experiment(tmp_path, "llama3.1_8B.yaml", empty, "--nodes", "2")
    cand = baseline_point(space)
    assert cand is not None and cand.recompute == Recompute("full", 1, "block")
    over = primus_overrides(space)
    assert "recompute_layer_ids" not in over and over["recompute_method"] == "block"
    beyond = tmp_path / "beyond"
    beyond.mkdir()
    exp = beyond / "exp-BF16-pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      recompute_granularity: full\n"
                   "      recompute_layer_ids: \"0,1,40\"\n      mock_data: true\n")
    capsys.readouterr()
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(beyond / "s.prx")]) == 1
    assert "P3123" in capsys.readouterr().err


def test_an_fp8_gather_under_torch_fsdp2_is_read_as_the_bf16_gather_megatron_runs(tmp_path: Path) -> None:
    """A Primus re-trial: validate_args turns `fp8_param_gather` off under torch FSDP2 on Transformer Engine
    2.0 and later (the pin's arguments.py), so the launch gathered BF16 weights the projection counted as FP8."""
    out, space = experiment(tmp_path, "llama3.1_70B.yaml", TORCH_FSDP2_70B + "\nfp8: hybrid\nfp8_param_gather: true",
                            name="exp-FP8-pretrain.yaml")
    cand = baseline_point(space)
    assert cand is not None and cand.sharding == "fsdp" and cand.precision == "fp8" and not cand.fp8_param_gather
    assert "`fp8_param_gather` under torch FSDP2" in out.read_text()
    with pytest.raises(CompileError) as refused:
        emit(space, cand.replace(fp8_param_gather=True), "primus+slurm")
    assert refused.value.diagnostics[0].code.id == "P7001"
    assert "`fp8_param_gather` = true with `sharding` = fsdp" in refused.value.diagnostics[0].message


def test_a_preset_of_a_subfolder_is_said_to_be_no_language_models(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A bulk trial: Primus's diffusion experiments were told Primus has no such preset (it has, in a subfolder)."""
    exp = tmp_path / "flux.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: diffusion/flux_535m.yaml\n    overrides:\n      micro_batch_size: 1\n")
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(tmp_path / "s.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3128" in err and "is one of Primus's `diffusion/` presets" in err and "has no model preset" not in err


def test_a_tokenizer_the_launch_carries_sizes_the_vocabulary(tmp_path: Path) -> None:
    """A bulk trial: Primus's MLPerf gpt-oss experiment tokenizes with Llama 3.1's tokenizer, which its launch
    carries and Megatron sizes the embedding by; the space had kept gpt-oss's 201,088 tokens, 4.8 GiB a GPU more."""
    out, space = experiment(tmp_path, "gpt_oss_20B.yaml", "micro_batch_size: 1\nglobal_batch_size: 64\n"
                            "tokenizer_type: Llama3Tokenizer\ntokenizer_model: meta-llama/Llama-3.1-8B")
    assert space.model.vocab == 128256
    assert "read as 128,256 tokens as the stdlib card `llama3_1_8b` has them, not the model card's 201,088" in \
        " ".join(out.read_text().split())
    assert dict(space.passthrough)["tokenizer_model"] == "meta-llama/Llama-3.1-8B"


def test_a_megatron_bridge_experiment_names_the_bridge_recipe_to_import(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Primus's megatron_bridge experiments (examples/megatron_bridge/configs) run a Bridge recipe, its `flavor`:
    the refusal says which, and how to plan it."""
    exp = tmp_path / "qwen3_8b_pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron_bridge\n    config: pretrain_trainer.yaml\n"
                   "    model: qwen3_8b.yaml\n    overrides:\n      flavor: qwen3_8b_pretrain_config\n")
    assert main(["import-recipe", str(exp), "--out", str(tmp_path / "s.prx")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "P3127" in err and "--recipe qwen3_8b_pretrain_config" in err
