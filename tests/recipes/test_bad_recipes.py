"""Bad recipes get diagnostics with spans, and nothing is executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.lower import loads_program
from primus_lang.recipes import read_recipe
from primus_lang.recipes.megatron import read_command_text
from primus_lang.recipes.shell import launch_of

LLAMA8B = ("--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
           "--group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm "
           "--position-embedding-type rope --rotary-base 500000 --untie-embeddings-and-output-weights "
           "--disable-bias-linear --seq-length 8192 --max-position-embeddings 8192 --vocab-size 128256 "
           "--hidden-dropout 0 --attention-dropout 0 --micro-batch-size 1 --global-batch-size 128 --bf16 ")


def codes_of(err: pytest.ExceptionInfo[CompileError]) -> list[str]:
    return [d.code.id for d in err.value.diagnostics]


def test_unknown_flag_points_at_it_with_the_nearest() -> None:
    with pytest.raises(CompileError) as err:
        read_command_text("pretrain_gpt.py \\\n  --num-layers 2 \\\n  --tensor-model-paralel-size 8\n", "run.sh")
    d = err.value.diagnostics[0]
    assert d.code.id == "P3122"
    assert d.span is not None and (d.span.line, d.span.column) == (3, 3)
    assert "--tensor-model-parallel-size" in d.help


def test_what_only_a_running_shell_knows_is_named_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --seed $(touch {marker}) | tee log\n"
    with pytest.raises(CompileError) as err:
        read_command_text(text, "run.sh")
    [d] = err.value.diagnostics  # the modelled TP is refused; the unmodelled seed is left out with a warning
    assert d.code.id == "P3132" and "`TP`" in d.message and "--set TP=VALUE" in (d.help or "")
    assert d.span is not None and d.span.column == text.index("$TP") + 1
    recipe = read_command_text(text, "run.sh", given={"TP": "4"})
    assert recipe.entries["tensor_model_parallel_size"].value == "4" and "seed" not in recipe.entries
    [w] = recipe.warnings
    assert w.code.id == "W3133" and "command substitution" in w.message
    assert not marker.exists()


def test_an_example_scripts_placeholder_is_not_carried() -> None:
    # a new user's trial: Megatron-LM's gpt-oss example sets CHECKPOINT_PATH="NO_VALUE_PROVIDED", and the launch
    # wrote `--save NO_VALUE_PROVIDED --tensorboard-dir NO_VALUE_PROVIDED/tensorboard`
    text = ('CKPT="NO_VALUE_PROVIDED"\ntorchrun pretrain_gpt.py --save $CKPT --tensorboard-dir "$CKPT/tb" '
            '--data-path /path/to/data --seed 3 --data-cache-path /scratch/cache\n')
    recipe = read_command_text(text, "run.sh")
    assert "seed" in recipe.entries and recipe.entries["data_cache_path"].value == "/scratch/cache"
    assert not {"save", "tensorboard_dir", "data_path"} & set(recipe.entries)
    said = [w.message for w in recipe.warnings if w.code.id == "W3133"]
    assert len(said) == 3 and "`NO_VALUE_PROVIDED`" in said[0] and "`/path/to/`" in said[2]
    # real values that look alike are carried: special tokens, a bucket's `path/to`, a lower-case `your_`
    real = read_command_text("torchrun pretrain_gpt.py --tiktoken-special-tokens '<unk>' '<s>' '</s>' "
                             "--data-path s3://bucket/path/to/data --wandb-project your_project", "run.sh")
    assert {"tiktoken_special_tokens", "data_path", "wandb_project"} <= set(real.entries)
    assert not [w for w in real.warnings if w.code.id == "W3133"]
    # Megatron-LM's detoxify example: DATA_PATH=your_own_data_path, --load your_own_output_path/checkpoints
    own = read_command_text("torchrun pretrain_gpt.py --seed 3 --data-path your_own_data_path --load "
                            "your_own_output_path/checkpoints", "run.sh")
    assert not {"data_path", "load"} & set(own.entries)


def test_line_continuations_and_quotes_read_as_a_shell_would() -> None:
    launch = launch_of("torchrun pretrain_gpt.py --a \\\n  'b c' \"d\"e # note\n", "x")
    assert [w.text for w in launch.words] == ["torchrun", "pretrain_gpt.py", "--a", "b c", "de"]
    assert (launch.words[3].span.line, launch.words[3].span.column) == (2, 3)


def test_tp_not_dividing_heads_points_at_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "args.txt"
    recipe.write_text(LLAMA8B + "\n--tensor-model-parallel-size 3\n", encoding="utf-8")
    assert main(["import-recipe", str(recipe), "--nodes", "1", "--gpus-per-node", "6", "--gpu", "h100"]) == 1
    err = capsys.readouterr().err
    assert "P3129" in err and f"{recipe}:2:1" in err


def test_a_split_the_pipeline_refuses_is_helped_in_the_recipe_s_own_spelling(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 32 layers over PP 6: the help named `last_stage_layers`, the space's knob, to a user holding flags
    recipe = tmp_path / "args.txt"
    recipe.write_text(LLAMA8B + "\n--pipeline-model-parallel-size 6\n", encoding="utf-8")
    assert main(["import-recipe", str(recipe), "--nodes", "1", "--gpus-per-node", "6", "--gpu", "h100"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "`last_stage_layers` is `--decoder-last-pipeline-num-layers`" in err


def test_yaml_that_is_not_a_primus_experiment(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n", encoding="utf-8")
    with pytest.raises(CompileError) as err:
        read_recipe(job)
    assert codes_of(err) == ["P3127"] and err.value.diagnostics[0].span is not None


def test_fp16_and_contradictions(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        from primus_lang.recipes import interpret

        interpret(read_command_text(LLAMA8B + "--fp16 --fp8-format hybrid --fp4-format e2m1", "f"))
    assert codes_of(err) == ["P3125", "P3124"]
    # FP16 is refused with what to do: its projection is BF16's
    assert "`--bf16` for `--fp16`" in (err.value.diagnostics[0].help or "")
    with pytest.raises(CompileError) as err:
        read_command_text("--micro-batch-size 1 --micro-batch-size 2", "f")
    assert codes_of(err) == ["P3124"]
    with pytest.raises(CompileError) as err:
        read_command_text("--micro-batch-size --global-batch-size 8", "f")
    assert codes_of(err) == ["P3123"]
    # a value an older release refuses and a newer takes names the releases (a new user's trial: the help
    # said only to fix the recipe), the newest as an unknown flag's help does (another trial: one run's helps
    # named core_v0.14 and core_v0.19)
    with pytest.raises(CompileError) as err:
        read_command_text("--cuda-graph-impl full_iteration", "f")
    assert codes_of(err) == ["P3123"]
    assert "give `--megatron-version core_v0.19`" in (err.value.diagnostics[0].help or "")
    assert read_command_text("--cuda-graph-impl full_iteration", "f", "core_v0.18")


def test_the_gpu_is_asked_for_and_the_node_count_is_the_fewest_that_holds_the_recipe(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "args.txt"
    # TP 2 with the distributed optimizer: Llama 3 8B at 8k tokens fits one node of H100s
    recipe.write_text(LLAMA8B + "--use-distributed-optimizer --tensor-model-parallel-size 2 --sequence-parallel",
                      encoding="utf-8")
    assert main(["import-recipe", str(recipe), "--nodes", "1", "--gpus-per-node", "8"]) == 1
    assert "P3126" in capsys.readouterr().err
    assert main(["import-recipe", str(recipe), "--gpu", "h100"]) == 0
    captured = capsys.readouterr()
    assert "nodes = 1; gpus_per_node = 8" in captured.out
    assert "8 GPUs a node" in captured.err and "does not say how many nodes: 1" in captured.err


def test_a_new_model_card_when_no_stdlib_card_matches(tmp_path: Path) -> None:
    recipe = tmp_path / "args.txt"
    recipe.write_text(LLAMA8B.replace("--num-layers 32", "--num-layers 30"), encoding="utf-8")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(recipe), "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100",
                 "--out", str(out)]) == 0
    text = out.read_text()
    assert "model args_model {" in text and "num_layers = 30" in text
    matched = tmp_path / "m.txt"
    matched.write_text(LLAMA8B, encoding="utf-8")
    assert main(["import-recipe", str(matched), "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100",
                 "--out", str(tmp_path / "m.prx")]) == 0
    assert "import models.llama3 (llama3_8b)" in (tmp_path / "m.prx").read_text()  # the first card of that shape


def test_primus_presets_and_env_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "MI300X" / "exp.yaml"
    exp.parent.mkdir()
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: minimax_m2.5.yaml\n    overrides:\n      global_batch_size: 8\n", encoding="utf-8")
    # MiniMax-M2.5's shape comes from Primus's own preset; only the vocabulary its tokenizer hides is missing
    # (no stdlib card is of MiniMaxAI/MiniMax-M2.5)
    assert main(["import-recipe", str(exp), "--nodes", "1", "--gpus-per-node", "8"]) == 1
    err_text = capsys.readouterr().err
    assert "P3126" in err_text and "vocab_size" in err_text
    # Grok-1's tokenizer is Mixtral 8x22B's, a stdlib card's model: its vocabulary is that card's
    exp.write_text(exp.read_text().replace("minimax_m2.5.yaml", "grok1.yaml").replace("size: 8", "size: 64"),
                   encoding="utf-8")
    assert main(["import-recipe", str(exp), "--nodes", "1", "--gpus-per-node", "8"]) == 0
    assert "32,768 tokens as the stdlib card `mixtral_8x22b` has them" in " ".join(capsys.readouterr().out.split())
    exp.write_text(exp.read_text().replace("grok1.yaml", "llama3.1_8b.yaml").replace("size: 64", "size: 8"),
                   encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        read_recipe(exp)
    [d] = raised.value.diagnostics
    assert d.code.id == "P3128" and "llama3.1_8B.yaml" in (d.help or "")
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      global_batch_size: 64\n"
                   "      tensor_model_parallel_size: ${PRIMUS_TP:2}\n      pipeline_model_parallel_size: ${PRIMUS_PP}\n",
                   encoding="utf-8")
    with pytest.raises(CompileError) as err:
        read_recipe(exp)
    assert codes_of(err) == ["P3121"]
    exp.write_text(exp.read_text().replace("${PRIMUS_PP}", "1"), encoding="utf-8")
    recipe = read_recipe(exp)
    assert [w.code.id for w in recipe.warnings] == ["W3130"] and recipe.entries["tensor_model_parallel_size"].value == 2
    assert main(["import-recipe", str(exp), "--nodes", "1", "--gpus-per-node", "8"]) == 0
    assert "W3130" in capsys.readouterr().err


def test_python_is_not_read(tmp_path: Path) -> None:
    bridge = tmp_path / "recipe.py"
    bridge.write_text("import os\nos.system('true')\n", encoding="utf-8")
    with pytest.raises(CompileError) as err:
        read_recipe(bridge)
    assert codes_of(err) == ["P3120"]


def test_a_primus_null_default_is_no_value(tmp_path: Path) -> None:
    """Primus assigns the string "null" as None (set_value_by_key): an environment default of null leaves
    the data path unset, and the experiment's mock data stands."""
    exp = tmp_path / "MI300X" / "exp.yaml"
    exp.parent.mkdir()
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      global_batch_size: 64\n      mock_data: true\n"
                   "      train_data_path: ${PRIMUS_TOKENIZED_DATA_PATH:null}\n", encoding="utf-8")
    recipe = read_recipe(exp)
    assert "train_data_path" not in recipe.entries and recipe.entries["mock_data"].value is True
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(exp), "--nodes", "1", "--out", str(out)]) == 0
    assert main(["emit", str(out), "--point", "baseline", "--target", "primus+local", "--out", str(tmp_path / "e")]) == 0
    emitted = (tmp_path / "e" / "experiment.yaml").read_text()
    assert "mock_data: true" in emitted and "train_data_path" not in emitted


def test_a_primus_own_setting_names_the_way_to_another_target(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "MI300X" / "exp.yaml"
    exp.parent.mkdir()
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      global_batch_size: 64\n      mock_data: true\n"
                   "      enable_primus_turbo: true\n", encoding="utf-8")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(exp), "--nodes", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    # Primus's own settings have no Megatron-LM flag: the megatron target leaves them out and says so,
    # as it does a Bridge recipe's own (W7020)
    assert main(["emit", str(out), "--point", "baseline", "--target", "megatron+local", "--out", str(tmp_path / "e")]) == 0
    err = capsys.readouterr().err
    assert "W7024" in err and "enable_primus_turbo" in err
    assert "--enable-primus-turbo" not in (tmp_path / "e" / "node.sh").read_text()


def test_a_space_is_not_read_as_a_recipe(tmp_path: Path) -> None:
    space = tmp_path / "space.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\n", encoding="utf-8")
    with pytest.raises(CompileError) as err:
        read_recipe(space)
    assert codes_of(err) == ["P3120"] and "primusc plan" in err.value.diagnostics[0].help


def test_baseline_block_refuses_what_is_not_a_knob() -> None:
    text = ("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
            "space s on mi325x_x8 {\n  model = llama3_1_8b\n  gbs = 64\n  baseline { tp = 2; nope = 1 }\n}\n")
    with pytest.raises(CompileError) as err:
        loads_program(text, "s.prx")
    assert codes_of(err) == ["P3131"]
    with pytest.raises(CompileError) as err:
        loads_program(text.replace("baseline { tp = 2; nope = 1 }", "passthrough { tp = 2 }"), "s.prx")
    assert codes_of(err) == ["P3131"]


@pytest.mark.parametrize(("setting", "said"), [
    ("tensor_model_parallel_size = 4", "Megatron's name for the knob `tp`"),
    ("micro_batch_size = 8", "Megatron's name for the knob `mbs`"),
    ('fp8 = "hybrid"', "Megatron's name for the knob `precision`"),
    ('recompute_method = "uniform"', "Megatron's name for the knob `recompute`'s method"),
    ("grad_reduce_in_bf16 = true", "Megatron's name for the knob `main_grad_dtype`'s bf16_reduce"),
    ("hidden_size = 5", "Megatron's name for the model card's `hidden`"),
])
def test_a_passthrough_refuses_megatrons_name_for_what_the_launch_writes(setting: str, said: str) -> None:
    """A trial's passthrough `tensor_model_parallel_size = 4` launched TP 4 for a plan, memory proof and
    projection of TP 1, without a word."""
    text = ("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
            f"space s on mi325x_x8 {{\n  model = llama3_1_8b\n  gbs = 64\n  passthrough {{ {setting} }}\n}}\n")
    with pytest.raises(CompileError) as err:
        loads_program(text, "s.prx")
    assert codes_of(err) == ["P3131"] and said in err.value.diagnostics[0].message
    # a recipe's own setting, carried through, is still carried
    assert loads_program(text.replace(setting, "lr = 0.0003"), "s.prx") is not None


@pytest.mark.parametrize(("script", "family"), [
    ("pretrain_bert.py", "BERT"),
    ("pretrain_t5.py", "T5"),
    ("/workspace/Megatron-LM/examples/multimodal/train.py", "multimodal"),
])
def test_a_script_of_another_model_family_is_one_refusal_at_the_script(script: str, family: str) -> None:
    """Megatron-LM's BERT and T5 examples read as GPTs (and launched pretrain_gpt.py); the multimodal one
    gave twenty unknown-flag errors. The flags after the script are not read."""
    with pytest.raises(CompileError) as err:
        read_command_text(f"torchrun --nproc-per-node 8 {script} " + LLAMA8B + "--encoder-num-layers 12 "
                          "--img-h 336", "run.sh")
    [d] = err.value.diagnostics
    assert d.code.id == "P3125" and family in d.message and d.span is not None and d.span.column == 29


def test_a_chosen_node_count_that_starves_the_pipeline_says_so(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Primus's Mixtral 8x22B experiment names no node count: the fewest that fits in memory (16) leaves
    each PP 4 pipeline 2 micro-batches, a 60% bubble, which the import said nothing of."""
    recipe = tmp_path / "args.txt"
    # 8B at PP 4 and GBS 16: one node fits, and its DP 2 leaves each pipeline 8 micro-batches; MBS 4 leaves 2
    recipe.write_text(LLAMA8B.replace("--global-batch-size 128", "--global-batch-size 16").replace(
        "--micro-batch-size 1", "--micro-batch-size 4") + "--pipeline-model-parallel-size 4", encoding="utf-8")
    assert main(["import-recipe", str(recipe), "--gpu", "h200"]) == 0
    err = capsys.readouterr().err
    assert "does not say how many nodes: 1" in err
    assert "each pipeline 2 micro-batches for 4 stages, a bubble of 60% of the step" in err


@pytest.mark.parametrize("setting", ["--experimental-attention-variant gated_delta_net --linear-attention-freq 4"])
def test_layers_of_another_kind_are_refused_not_read_as_attention(tmp_path: Path, setting: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # Qwen3-Next / Qwen3.5's gated delta net: three layers in four are linear attention
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA8B} {setting}\n")
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(tmp_path / "s.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3125" in err and "gated_delta_net" in err and not (tmp_path / "s.prx").exists()


def test_lfm2_short_convolutions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "lfm2.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      lfm_layer_types: [conv, full_attention]\n"
                   "      mock_data: true\n")
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--nodes", "1", "--out", str(tmp_path / "s.prx")]) == 1
    assert "P3125" in capsys.readouterr().err


def test_a_script_that_is_not_pretraining_is_refused_and_an_unknown_one_is_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rl = tmp_path / "rl.sh"
    rl.write_text(f"torchrun --nproc_per_node 8 train_rl.py {LLAMA8B}\n")
    assert main(["import-recipe", str(rl), "--gpu", "h100", "--out", str(tmp_path / "rl.prx")]) == 1
    assert "P3125" in capsys.readouterr().err
    own = tmp_path / "own.sh"
    own.write_text(f"torchrun --nproc_per_node 8 my_pretrain.py {LLAMA8B}\n")
    assert main(["import-recipe", str(own), "--gpu", "h100", "--out", str(tmp_path / "own.prx")]) == 0
    assert "`my_pretrain.py` is not one of Megatron-LM's pretraining scripts" in (tmp_path / "own.prx").read_text()


def test_a_post_training_experiment_says_which_trainer_it_runs(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "llama3_8B-BF16-sft.yaml"
    exp.write_text("modules:\n  post_trainer:\n    framework: megatron\n    config: sft_trainer.yaml\n"
                   "    model: llama3_8B.yaml\n    overrides:\n      micro_batch_size: 1\n")
    assert main(["import-recipe", str(exp), "--gpu", "mi300x", "--out", str(tmp_path / "s.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3125" in err and "modules.post_trainer" in err and "P3127" not in err


def test_a_recipe_that_fits_on_no_node_count_tried_is_written_on_the_fewest_legal_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 3 8B at TP 1 and 8k tokens without recomputation: its activations and gradients (which no
    # node count shards without the distributed optimizer) fit no H100 by the account; an arguments file
    # names no node count. A Primus example is such a one-node file: written, not refused
    script = tmp_path / "args.txt"
    script.write_text(LLAMA8B)
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(tmp_path / "s.prx")]) == 0
    err = capsys.readouterr().err
    assert "does not say how many nodes: 1, the fewest on which its layout is legal" in err
    assert "does not fit in memory on any count tried (1 to 16 nodes)" in err


def test_a_recipe_the_optimizer_shards_is_written_on_the_count_closest_to_fitting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # with the distributed optimizer more nodes hold less of its state: a count that fits nowhere is the
    # one that comes closest (Megatron-LM's Megatron-FSDP DeepSeek-V3 script, `--nodes=your_own_num_nodes`,
    # had been written on 1 node at 1.5 TiB a GPU), and W5002 says it does not fit where a note had
    script = tmp_path / "args.txt"
    script.write_text(LLAMA8B.replace("--micro-batch-size 1 ", "--micro-batch-size 2 ") + "--use-distributed-optimizer\n")
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(tmp_path / "s.prx")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "how many nodes: 8, the legal count on which it comes closest to fitting" in err
    assert "warning[W5002]: the recipe does not fit on 8 nodes by primusc's account" in err


def test_a_failed_reading_says_what_it_took_on_the_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's multimodal script exits when WORKSPACE is unset; its ModelOpt scripts source TP from a file
    exits = tmp_path / "exits.sh"
    exits.write_text('if [[ -z $WORKSPACE ]]; then\n    echo "set WORKSPACE"\n    exit 1\nfi\n'
                     f"torchrun pretrain_gpt.py {LLAMA8B}\n")
    assert main(["import-recipe", str(exits), "--gpu", "h100", "--out", str(tmp_path / "a.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3121" in err and "exits at 3:5" in err and "`WORKSPACE`" in err
    sourced = tmp_path / "sourced.sh"
    sourced.write_text(f"source conf/arguments.sh\ntorchrun pretrain_gpt.py {LLAMA8B} --tensor-model-parallel-size ${{TP}}\n")
    assert main(["import-recipe", str(sourced), "--gpu", "h100", "--out", str(tmp_path / "b.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3132" in err and "`source conf/arguments.sh` was not followed" in err


def test_the_gpu_is_read_from_a_folder_named_without_its_x(tmp_path: Path) -> None:
    # Primus's MLPerf configs sit in configs/MI355/
    folder = tmp_path / "configs" / "MI355"
    folder.mkdir(parents=True)
    exp = folder / "llama3.1_8B-BF16-pretrain.yaml"
    exp.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                   "    model: llama3.1_8B.yaml\n    overrides:\n      micro_batch_size: 1\n      mock_data: true\n")
    assert main(["import-recipe", str(exp), "--nodes", "1", "--out", str(tmp_path / "s.prx")]) == 0
    assert "import hardware.amd (mi355x)" in (tmp_path / "s.prx").read_text()


def test_a_quoted_unset_variable_is_one_empty_argument(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f'torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA8B} "${{MLM_EXTRA_ARGS}}"\n')
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(tmp_path / "a.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3132" in err and "one empty argument" in err and "W3135" not in err


def test_an_unset_variable_on_the_launch_line_reads_as_empty(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's ModelOpt scripts end their launch with ${MLM_EXTRA_ARGS}: no word when it is unset
    script = tmp_path / "run.sh"
    script.write_text(f"torchrun --nproc_per_node 8 pretrain_gpt.py {LLAMA8B} --use-distributed-optimizer "
                      "--tensor-model-parallel-size 2 --sequence-parallel ${MLM_EXTRA_ARGS}\n")
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(tmp_path / "a.prx")]) == 0
    assert "W3135" in capsys.readouterr().err
    assert main(["import-recipe", str(script), "--gpu", "h100", "--set", "MLM_EXTRA_ARGS=--train-iters 10",
                 "--out", str(tmp_path / "b.prx")]) == 0
    assert "W3135" not in capsys.readouterr().err and "train_iters = \"10\"" in (tmp_path / "b.prx").read_text()


def test_a_flag_of_nvidia_modelopt_says_the_launch_needs_it() -> None:
    # a new user's trial: Megatron-LM's gpt-oss example sets `--enable-gpt-oss`, which pretrain_gpt.py's parser
    # takes only where nvidia-modelopt is installed; the emitted launch failed to parse without it
    recipe = read_command_text("torchrun pretrain_gpt.py --seed 3 --enable-gpt-oss", "run.sh", "core_v0.16")
    [note] = [n for n in recipe.notes if "modelopt" in n]
    assert "`--enable-gpt-oss` is a flag of nvidia-modelopt" in note and "installed where it runs" in note
    assert not [n for n in read_command_text("torchrun pretrain_gpt.py --seed 3", "r.sh").notes if "modelopt" in n]


_LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2\n"


@pytest.mark.parametrize(("script", "said"), [
    ("f() { f; }\nf\n" + _LAUNCH, "functions call each other more than 16 deep"),
    ("f() { g; }\ng() { f; }\nf\n" + _LAUNCH, "functions call each other more than 16 deep"),
    ("if true; then\n" * 200 + _LAUNCH + "fi\n" * 200, "commands nested more than 64 deep"),
    ("A=xxxxxxxxxx\n" + 'A="$A$A"\n' * 27 + _LAUNCH, "a value longer than 1,048,576 characters"),
    ("A=x\n" + "A+=$A\n" * 30 + _LAUNCH, "a value longer than 1,048,576 characters"),
    ('A=(x)\n' + 'A=("${A[@]}" "${A[@]}")\n' * 30 + _LAUNCH, "more than 4,096 words"),
    ('set -- x\n' + 'set -- "$@" "$@"\n' * 30 + _LAUNCH, "more than 4,096 words"),
])
def test_a_script_that_recurses_nests_or_grows_without_bound_is_refused(script: str, said: str) -> None:
    """A trial's recursion ended in an internal error (RecursionError), and 24 doublings of a variable held
    3.4 GB before any use measured it: each is a diagnostic at once."""
    with pytest.raises(CompileError) as err:
        read_command_text(script, "run.sh")
    assert codes_of(err) == ["P3121"] and said in err.value.diagnostics[0].message


def test_import_recipe_warnings_follow_the_error_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's `--error-format json` gave W5002 as a note of prose, without its code."""
    import json

    script = tmp_path / "run.sh"
    script.write_text("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 80 --hidden-size 8192 "
                      "--ffn-hidden-size 28672 --num-attention-heads 64 --num-query-groups 8 --group-query-attention "
                      "--seq-length 8192 --max-position-embeddings 8192 --swiglu --normalization RMSNorm "
                      "--micro-batch-size 4 --global-batch-size 64 --bf16 --vocab-size 128256\n")
    assert main(["--error-format", "json", "import-recipe", str(script), "--gpu", "h100"]) == 0
    found = [d for line in capsys.readouterr().err.splitlines() if '"diagnostics"' in line
             for d in json.loads(line)["diagnostics"]]
    assert any(d["code"] == "W5002" and d["severity"] == "warning" for d in found)
