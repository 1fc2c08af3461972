"""A script that trains through Primus's own launchers is read as the experiment it runs with the overrides
it adds: the example launchers that take the experiment from `EXP` (`bash examples/run_slurm_pretrain.sh
--micro_batch_size 4 ...`, how Primus's MoE package and customer package scripts launch) and `primus-cli
... train pretrain --config FILE`. Scripts are written in the shape of those examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.lower import load_space
from primus_lang.recipes.read import _cli_value, read_recipe

EXPERIMENT = """\
modules:
  pre_trainer:
    framework: megatron
    config: pre_trainer.yaml
    model: ${PRIMUS_MODEL:llama3.1_8B}.yaml
    overrides:
      micro_batch_size: 1
      global_batch_size: 64
      seq_length: 8192
      max_position_embeddings: 8192
      tensor_model_parallel_size: 1
      pipeline_model_parallel_size: 1
      mock_data: true
"""


def checkout(tmp_path: Path, script: str) -> Path:
    """A Primus checkout holding the experiment and ``script`` under examples/my_package/."""
    exp = tmp_path / "examples" / "megatron" / "configs" / "MI355X" / "llama3.1_8B-BF16-pretrain.yaml"
    exp.parent.mkdir(parents=True)
    exp.write_text(EXPERIMENT)
    run = tmp_path / "examples" / "my_package" / "run.sh"
    run.parent.mkdir(parents=True)
    run.write_text(script)
    return run


LAUNCHER = """\
#!/bin/bash
export EXP="examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml"
export NNODES=2
export HSA_NO_SCRATCH_RECLAIM=1
MBS=${MBS:-4}
PP=2
LAYOUT="'Et*8|t*8|t*8|t*8,L'"
bash ./examples/run_slurm_pretrain.sh \\
    --micro_batch_size "$MBS" \\
    --global_batch_size 256 \\
    --pipeline_model_parallel_size "$PP" \\
    --pipeline_model_parallel_layout "$LAYOUT" \\
    --use_distributed_optimizer True \\
    --train_iters 10 2>&1 | tee log.txt
"""


def test_an_example_launcher_runs_the_exported_experiment_with_the_script_overrides(tmp_path: Path) -> None:
    recipe = read_recipe(checkout(tmp_path, LAUNCHER))
    assert recipe.kind == "primus"
    values = {k: e.value for k, e in recipe.entries.items()}
    # the script's words over the experiment's own values, read as Primus's launcher reads them
    assert values["micro_batch_size"] == 4 and values["global_batch_size"] == 256
    assert values["pipeline_model_parallel_size"] == 2 and values["seq_length"] == 8192
    # a quoted Python string literal is its text (Primus evaluates override values)
    assert values["pipeline_model_parallel_layout"] == "Et*8|t*8|t*8|t*8,L"
    # the launcher sizes the job from the environment the script exports
    assert recipe.nodes is not None and recipe.nodes.value == "2"
    assert any(n.startswith("read through") and "run_slurm_pretrain.sh" in n and "`micro_batch_size=4`" in n
               for n in recipe.notes)
    assert any("`MBS`" in n for n in recipe.notes)  # the script's default taken for MBS, said


def test_the_imported_space_launches_the_layout_the_script_ran(tmp_path: Path) -> None:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(checkout(tmp_path, LAUNCHER)), "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    assert (cand.pp, cand.vpp, cand.mbs, cand.gbs) == (2, 2, 4, 256)
    assert space.cluster.nodes == 2


def test_primus_cli_runs_its_config_with_the_words_after_it(tmp_path: Path) -> None:
    run = checkout(tmp_path, """\
EXP=examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml
./primus-cli direct --numa -- train pretrain --config "$EXP" --global_batch_size=512 --mock_data \\
    --lr 2.2e-4 --tensor_model_parallel_size 2
""")
    values = {k: e.value for k, e in read_recipe(run).entries.items()}
    assert values["global_batch_size"] == 512 and values["tensor_model_parallel_size"] == 2
    assert values["lr"] == pytest.approx(2.2e-4) and values["mock_data"] is True


def test_an_override_only_the_running_script_knows_is_left_out_and_said(tmp_path: Path) -> None:
    run = checkout(tmp_path, """\
export EXP=examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml
bash examples/run_pretrain.sh --micro_batch_size "$(python pick_mbs.py)" --global_batch_size 128
""")
    recipe = read_recipe(run)
    values = {k: e.value for k, e in recipe.entries.items()}
    assert values["micro_batch_size"] == 1 and values["global_batch_size"] == 128  # the experiment's own MBS
    assert any("`--micro_batch_size` reads a value only the running script knows" in n for n in recipe.notes)


def test_an_experiment_the_script_names_but_the_checkout_lacks_says_what_to_import(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("export EXP=examples/megatron/configs/MI355X/missing.yaml\n"
                   "bash ./examples/run_slurm_pretrain.sh --micro_batch_size 2\n")
    with pytest.raises(CompileError) as err:
        read_recipe(run)
    diag = err.value.diagnostics[0]
    assert diag.code.id == "P3120" and "missing.yaml" in diag.message
    assert "primusc import-recipe examples/megatron/configs/MI355X/missing.yaml" in diag.help


def test_a_launcher_without_an_exported_experiment_is_no_training_command(tmp_path: Path) -> None:
    # bash hands a child only what is exported: Primus's launcher would stop with "EXP must be specified"
    run = tmp_path / "run.sh"
    run.write_text("EXP=exp.yaml\nbash ./examples/run_slurm_pretrain.sh --micro_batch_size 2\n")
    with pytest.raises(CompileError) as err:
        read_recipe(run)
    assert err.value.diagnostics[0].code.id == "P3121"


@pytest.mark.parametrize(("text", "value"), [
    ("True", True), ("false", False), ("None", None), ("4", 4), ("1e-5", 1e-5), ("2.2e-4", 2.2e-4),
    ("'Et|t,L'", "Et|t,L"), ("a2a", "a2a"), ("[1, 2]", [1, 2]), ("bf16", "bf16"), ("01", "01"),
])
def test_override_values_read_as_primus_reads_them(text: str, value: object) -> None:
    assert _cli_value(text) == value


def test_bash_running_primus_cli_is_primus_cli(tmp_path: Path) -> None:
    # AMD's start_training_*.sh scripts: `bash ./primus-cli direct -- train pretrain --config "$EXP" ...`
    run = checkout(tmp_path, """\
export EXP=examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml
bash ./primus-cli direct -- train pretrain --config "$EXP" --micro_batch_size 3
""")
    assert read_recipe(run).entries["micro_batch_size"].value == 3


def test_a_rule_a_script_word_breaks_points_at_the_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the experiment says PP 1; the script's word makes it 5, which 32 layers do not split into: the error
    # is about the script's word, where the user wrote it, not the YAML line that says otherwise
    run = checkout(tmp_path, """\
export EXP=examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml
bash ./examples/run_pretrain.sh --pipeline_model_parallel_size=5
""")
    assert main(["import-recipe", str(run), "--out", str(tmp_path / "s.prx")]) == 1
    assert f"--> {run}:2:" in capsys.readouterr().err


def test_a_computed_override_and_a_dotted_key_are_left_out_and_said(tmp_path: Path) -> None:
    run = checkout(tmp_path, """\
export EXP=examples/megatron/configs/MI355X/llama3.1_8B-BF16-pretrain.yaml
bash ./examples/run_pretrain.sh --global_batch_size $(python pick.py) --model.num_layers 26 --train_iters 5
""")
    recipe = read_recipe(run)
    assert recipe.entries["global_batch_size"].value == 64  # the experiment's own, which the launch keeps
    notes = " ".join(recipe.notes)
    assert "`--global_batch_size` reads a value only the running script knows: left out, so the experiment's own" \
        in notes and "(write the value in the script)" in notes
    assert "`--model.num_layers` names a nested setting" in notes
    assert recipe.entries["train_iters"].value == 5
