"""What a new user meets importing a recipe: torchrun's defaults taken as torchrun takes them, one
diagnostic per cause, a value too large said to be too large, an experiment written as JSON read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.ir.model import card_fields
from primus_lang.lower import stdlib_cards
from primus_lang.recipes import interpret, read_recipe
from primus_lang.recipes.megatron import read_command_text
from tests.recipes.test_bad_recipes import LLAMA8B, codes_of

BRIDGE = "scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_bf16_config"


def test_torchrun_without_nnodes_runs_on_one_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "run.sh"
    recipe.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B, encoding="utf-8")
    assert main(["import-recipe", str(recipe), "--gpu", "h100"]) == 0
    err = capsys.readouterr().err
    assert "cluster  1 x 8 h100" in err and "torchrun's default" in err
    # the same line given `--nodes 2` contradicts torchrun's one node, as an explicit `--nnodes 1` would
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--nodes", "2"]) == 1
    assert "P3124" in capsys.readouterr().err


def test_bridge_torchrun_without_nnodes_runs_on_one_node(tmp_path: Path) -> None:
    recipe = read_recipe(_write(tmp_path / "b.sh", f"torchrun --nproc-per-node 8 {BRIDGE} -tp 2"))
    assert recipe.nodes is not None and recipe.nodes.value == "1"
    assert any("torchrun's default" in n for n in recipe.notes)


def test_a_flags_file_without_torchrun_still_asks_for_the_nodes(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    recipe = read_command_text(LLAMA8B, "args.txt")
    assert recipe.nodes is None
    recipe = read_command_text("python pretrain_gpt.py " + LLAMA8B, "args.txt")
    assert recipe.nodes is None


def test_a_refused_value_is_not_reported_missing_again(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        # refused where the override is read, so interpretation never asks for it again
        interpret(read_recipe(_write(tmp_path / "b.sh", f"{BRIDGE} train.global_batch_size=1e400")),
                  _llama3_8b(), fill_all=True)
    assert codes_of(err) == ["P3123"] and "too large" in err.value.diagnostics[0].message
    # a value the flag's type refuses is refused where it is read, as Megatron's parser would
    text = LLAMA8B.replace("--global-batch-size 128", "--global-batch-size 0").replace("--num-layers 32",
                                                                                      "--num-layers x")
    with pytest.raises(CompileError) as err:
        read_command_text(text, "f")
    assert codes_of(err) == ["P3123"] and "whole number" in err.value.diagnostics[0].message
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(text.replace("--num-layers x", "--num-layers 32"), "f"))
    assert codes_of(err) == ["P3123"] and "--global-batch-size" in err.value.diagnostics[0].message


def test_a_missing_setting_is_named_as_the_recipe_writes_it(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(LLAMA8B.replace("--global-batch-size 128", ""), "f"))
    assert codes_of(err) == ["P3126"] and "`--global-batch-size`" in err.value.diagnostics[0].message
    bridge = read_recipe(_write(tmp_path / "b.sh", BRIDGE))
    del bridge.entries["global_batch_size"]
    with pytest.raises(CompileError) as err:
        interpret(bridge, _llama3_8b(), fill_all=True)
    message = err.value.diagnostics[-1].message
    assert "`train.global_batch_size`" in message and "--" not in message


@pytest.mark.parametrize("text", ["", "# a comment only\n", "torchrun --nproc-per-node 8 pretrain_gpt.py\n"])
def test_nothing_to_read_is_one_diagnostic(tmp_path: Path, text: str) -> None:
    with pytest.raises(CompileError) as err:
        read_recipe(_write(tmp_path / "run.sh", text))
    assert codes_of(err) == ["P3120"] and "nothing to read" in err.value.diagnostics[0].message


def test_an_empty_yaml_is_one_diagnostic(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        read_recipe(_write(tmp_path / "e.yaml", ""))
    assert codes_of(err) == ["P3127"] and "empty" in err.value.diagnostics[0].message


def test_a_count_past_the_irs_ceiling_is_too_large_not_a_non_number() -> None:
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(LLAMA8B.replace("--num-layers 32", "--num-layers 100000000000000000000"), "f"))
    d = err.value.diagnostics[0]
    assert codes_of(err) == ["P3123"] and "too large: at most 4,096" in d.message and "whole number" not in d.message
    with pytest.raises(CompileError) as err:
        interpret(read_command_text(LLAMA8B.replace("--num-layers 32", "--num-layers 5000"), "f"))
    assert "too large" in err.value.diagnostics[0].message


@pytest.mark.parametrize("name", ["exp.json", "exp.txt"])
def test_a_primus_experiment_written_as_json_is_read(tmp_path: Path, name: str) -> None:
    text = ('{"modules": {"pre_trainer": {"model": "llama3.1_8B.yaml", "overrides": '
            '{"global_batch_size": 64, "micro_batch_size": 1, "seq_length": 8192}}}}')
    recipe = read_recipe(_write(tmp_path / name, text))
    assert recipe.kind == "primus" and recipe.entries["global_batch_size"].value == 64
    span = recipe.entries["global_batch_size"].span
    assert span is not None and span.column == text.index("global_batch_size") + 1


def test_a_primus_experiment_under_another_name_is_read_as_yaml(tmp_path: Path) -> None:
    recipe = read_recipe(_write(tmp_path / "exp.cfg", "modules:\n  pre_trainer:\n    model: llama3.1_8B.yaml\n"))
    assert recipe.kind == "primus"


def test_invalid_yaml_says_what_a_yaml_recipe_is(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        read_recipe(_write(tmp_path / "d.yaml", "a: [1, 2\n"))
    assert codes_of(err) == ["P3120"] and err.value.diagnostics[0].help == "a Primus experiment is a YAML file"


def _llama3_8b() -> dict[str, Any]:
    return card_fields(stdlib_cards()["llama3_8b"][1])


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_scripts_arguments_are_given_with_set_by_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--set 1=VALUE` gives $1, as the warning for a script's argument says."""
    recipe = _write(tmp_path / "run.sh", f"torchrun --nproc-per-node 8 pretrain_gpt.py {LLAMA8B} --data-path $1\n")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(out)]) == 0
    assert "W3133" in capsys.readouterr().err and "data_path" not in out.read_text()
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--set", "1=/data/x", "--out", str(out),
                 "--force"]) == 0
    assert "W3133" not in capsys.readouterr().err and 'data_path = "/data/x"' in out.read_text()


def test_sbatch_directives_give_the_nodes_a_launch_line_leaves_out(tmp_path: Path) -> None:
    text = "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\nsrun python pretrain_gpt.py " + LLAMA8B
    recipe = read_recipe(_write(tmp_path / "job.sbatch", text))
    assert recipe.nodes is not None and recipe.nodes.value == "4" and recipe.nodes.written == "#SBATCH --nodes=4"
    assert recipe.gpus_per_node is not None and recipe.gpus_per_node.value == "8"


HYBRID = ("--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 4096 "
          "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 "
          "--bf16 --spec megatron.core.models.mamba.mamba_layer_specs mamba_stack_spec ")


def test_a_hybrid_is_read_from_its_pattern_not_as_a_transformer(tmp_path: Path) -> None:
    recipe = read_recipe(_write(tmp_path / "h.sh", "torchrun --nproc-per-node 8 pretrain_mamba.py " + HYBRID +
                                "--hybrid-override-pattern 'M-M*M-M-' --mamba-num-groups 4"))
    model = interpret(recipe).model
    assert model["pattern"] == "M-M*M-M-" and model["num_layers"] == 8
    assert model["mamba"] is not None and (model["mamba"].heads, model["mamba"].groups) == (2 * 1024 // 64, 4)


@pytest.mark.parametrize(("ratios", "pattern"), [
    ("", "M" * 8),  # a pure Mamba model
    ("--hybrid-attention-ratio 0.25 ", "MM*MM*MM"),
    ("--hybrid-attention-ratio 0.25 --hybrid-mlp-ratio 0.25 ", "MM*-M*M-"),
])
def test_a_mamba_model_without_a_pattern_takes_the_layers_megatron_allots(tmp_path: Path, ratios: str,
                                                                         pattern: str) -> None:
    """Primus's Zebra-Llama and Mamba 370M presets give ratios (or nothing) for megatron-core to allot the layers
    by, not a pattern: they were refused; megatron-core's allotment is the pattern (frameworks.reading)."""
    recipe = read_recipe(_write(tmp_path / "m.sh", "torchrun --nproc-per-node 8 pretrain_mamba.py " + HYBRID +
                                ratios + "--mamba-state-dim 16 --is-hybrid-model"))
    imp = interpret(recipe)
    assert imp.model["pattern"] == pattern
    assert any(f"(no pattern given): {pattern}" in n for n in imp.notes)
    with pytest.raises(CompileError) as err:
        interpret(read_recipe(_write(tmp_path / "b.sh", "torchrun --nproc-per-node 8 pretrain_mamba.py " + HYBRID +
                                     "--hybrid-attention-ratio 0.8 --hybrid-mlp-ratio 0.5 --is-hybrid-model")))
    assert "P3123" in codes_of(err) and "at most 1" in str(err.value.diagnostics)


def test_the_allotment_is_megatron_cores() -> None:
    """frameworks.reading.hybrid_layers against megatron-core 0.16.1's own allotment, over layer counts and
    ratios."""
    pytest.importorskip("torch")
    allocation = pytest.importorskip("megatron.core.ssm.mamba_hybrid_layer_allocation")
    from primus_lang.frameworks.reading import hybrid_layers

    for total in range(1, 65):
        for attention in (0.0, 0.1, 0.125, 0.25, 0.33, 0.5, 1.0):
            for mlp in (0.0, 0.1, 0.25, 0.5):
                if attention + mlp <= 1.0:
                    assert hybrid_layers(total, attention, mlp) == "".join(
                        allocation.allocate_layers(total, attention, mlp)), (total, attention, mlp)


def test_a_vocabulary_a_tokenizer_hides_is_given_on_the_command_line(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    line = HYBRID.replace("--vocab-size 32000 ", "--tokenizer-type GPT2BPETokenizer ")
    recipe = _write(tmp_path / "v.sh", "torchrun --nproc-per-node 8 pretrain_mamba.py " + line +
                    "--hybrid-override-pattern 'M-M*M-M-'")
    assert main(["import-recipe", str(recipe), "--gpu", "h100"]) == 1
    assert "--vocab-size N" in capsys.readouterr().err
    # a tokenizer the recipe names (a Primus preset's MiniMaxAI/MiniMax-M2.5) is named, with what to measure of it
    named = _write(tmp_path / "n.sh", recipe.read_text().replace(
        "--tokenizer-type GPT2BPETokenizer ",
        "--tokenizer-type HuggingFaceTokenizer --tokenizer-model MiniMaxAI/MiniMax-M2.5 "))
    assert main(["import-recipe", str(named), "--gpu", "h100"]) == 1
    assert ('`MiniMaxAI/MiniMax-M2.5` (`len(AutoTokenizer.from_pretrained("MiniMaxAI/MiniMax-M2.5"))`)'
            in capsys.readouterr().err)
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--vocab-size", "50304", "--out", str(out)]) == 0
    assert "vocab = 50304" in out.read_text()


def test_a_node_count_read_at_its_default_names_the_variable(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron-LM's Mixtral example reads `NNODES=${SLURM_NNODES:-"1"}`: a layout that needs more
    # nodes names the variable to give, not a placeholder
    recipe = _write(tmp_path / "run.sh", 'NNODES=${SLURM_NNODES:-"1"}\n'
                    "torchrun --nproc-per-node 8 --nnodes $NNODES pretrain_gpt.py " + LLAMA8B
                    + "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4\n")
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(tmp_path / "s.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3129" in err and "give the count with `--set SLURM_NNODES=2`" in err and "--nodes 2" not in err
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--set", "SLURM_NNODES=2",
                 "--out", str(tmp_path / "s.prx")]) == 0
    # `--nodes` contradicts the count the script states (a new user's trial): the help names the variable
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--nodes", "16",
                 "--out", str(tmp_path / "t.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3124" in err and "give the count with `--set SLURM_NNODES=16`" in err
    # a default that only equals the count is not offered (a reviewer's finding: `MBS=${MBS:-1}`)
    literal = _write(tmp_path / "lit.sh", 'MBS=${MBS:-1}\ntorchrun --nproc-per-node 8 --nnodes 1 pretrain_gpt.py '
                     + LLAMA8B.replace("--micro-batch-size 1", "--micro-batch-size $MBS") + "\n")
    assert main(["import-recipe", str(literal), "--gpu", "h100", "--nodes", "4",
                 "--out", str(tmp_path / "u.prx")]) == 1
    err = capsys.readouterr().err
    assert "P3124" in err and "--set MBS" not in err


def test_a_quoted_value_bash_splits_is_one_diagnostic_naming_the_split() -> None:
    """An unquoted `${ARGS[@]}` splits a quoted element at its spaces (Megatron-LM's GPT-3 175B example
    script does this to `--step-batch-size-schedule`): one diagnostic, not one per word."""
    script = ("ARGS=(\n  " + LLAMA8B + '\n  --step-batch-size-schedule "0:16 2.4B:320 4.8B:624"\n)\n'
              "torchrun pretrain_gpt.py ${ARGS[@]}\n")
    with pytest.raises(CompileError) as err:
        read_command_text(script, "train.sh")
    assert codes_of(err) == ["P3123"]
    (diag,) = err.value.diagnostics
    assert "splits this quoted value into 3 words" in diag.message and "`2.4B:320` ..." in diag.message
    assert diag.span is not None and diag.span.line == 3 and '"${ARGS[@]}"' in diag.help
    # quoted, the element stays one word, as Megatron-LM's parser needs it
    quoted = read_command_text(script.replace("${ARGS[@]}", '"${ARGS[@]}"'), "train.sh")
    assert quoted.entries["step_batch_size_schedule"].value == "0:16 2.4B:320 4.8B:624"


def test_legacy_switches_are_read_as_the_settings_megatron_makes_of_them() -> None:
    """Megatron-LM's validate_args: `--recompute-activations` makes the granularity selective (over a
    `--recompute-granularity full` too), `--use-rotary-position-embeddings` the position embedding RoPE."""
    text = (LLAMA8B.replace("--position-embedding-type rope", "--use-rotary-position-embeddings")
            + " --recompute-granularity full --recompute-activations")
    imported = interpret(read_command_text(text, "f"))
    assert imported.candidate.recompute.kind == "selective"
    assert imported.model["position"] == "rope"
    carried = dict(imported.passthrough)
    assert "recompute_activations" not in carried and "use_rotary_position_embeddings" not in carried
    assert any("`--recompute-activations` sets recompute_granularity to selective over `--recompute-granularity` "
               "full" in n for n in imported.recipe.notes)
    # off, the switch says nothing
    plain = interpret(read_command_text(LLAMA8B, "f"))
    assert plain.candidate.recompute.kind == "none" and plain.model["position"] == "rope"


def test_a_neighbour_the_model_does_not_split_into_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: Megatron-LM's gpt-oss example (12 layers) at PP 4 offered `pp : 2 | 4` and said
    # nothing of PP 8; a value around the recipe's that its model or cluster does not split into is named
    text = LLAMA8B.replace("--num-layers 32", "--num-layers 12").replace("--global-batch-size 128", "--global-batch-size 12")
    recipe = tmp_path / "run.sh"
    recipe.write_text("torchrun --nproc-per-node 8 --nnodes 1 pretrain_gpt.py --pipeline-model-parallel-size 4 "
                      "--micro-batch-size 2 " + text.replace("--micro-batch-size 1 ", ""), encoding="utf-8")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "`pp` 8 not offered: 12 layers do not split over 8 stages" in err
    assert "`pp` 8 not offered" in out.read_text(encoding="utf-8")  # the space's header says it too
