"""Framework knowledge as generated data (frameworks/, tools/framework_knowledge.py) and the settings of
real recipes it lets primusc read: every flag a Megatron-LM version has is modelled or carried, one it
lacks names the versions that have it; Primus experiments read by Primus's own merge rules; what
published recipes use (FP8 primary weights, BF16 gradient reduction, recomputation of 0 layers, Primus
Turbo's DeepEP, a schedule in samples, NullTokenizer) modelled and written back so the launch starts.

The scripts are written here in the shape of Megatron-LM's example scripts (variables, arrays,
conditionals) with our own values; none is a copy of a framework's file."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.check import baseline_point, legality
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit, left_out
from primus_lang.frameworks import megatron, primus
from primus_lang.ir import Candidate, Space
from primus_lang.lower import load_space
from primus_lang.memory import account
from primus_lang.recipes import read_recipe
from primus_lang.recipes.megatron import read_command_text

LLAMA = textwrap.dedent("""\
    #!/bin/bash
    GPUS_PER_NODE=8
    NUM_NODES=${NUM_NODES:-1}
    TP_SIZE=1
    DTYPE="fp8"
    CHECKPOINT_PATH=${1:-"checkpoints/llama3_8b"}
    DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES)
    MODEL_ARGS=(
        --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336
        --num-attention-heads 32 --group-query-attention --num-query-groups 8 --kv-channels 128
        --seq-length 8192 --max-position-embeddings 8192 --position-embedding-type rope
        --rotary-base 500000 --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights
        --disable-bias-linear --attention-dropout 0.0 --hidden-dropout 0.0
    )
    TRAINING_ARGS=(
        --micro-batch-size 1 --global-batch-size 128
        --train-samples 100000 --lr-decay-samples 90000 --lr-warmup-samples 1000
        --lr 0.0003 --decoupled-lr 5.0e-4 --decoupled-min-lr 4.5e-5
        --bf16 --grad-reduce-in-bf16 --empty-unused-memory-level 1
    )
    DTYPE_ARGS=()
    if [[ "$DTYPE" == "fp8" ]]; then
        DTYPE_ARGS+=("--fp8-format hybrid" "--fp8-amax-history-len 1024" "--fp8-param-gather")
    fi
    PARALLEL_ARGS=(--tensor-model-parallel-size $TP_SIZE --use-distributed-optimizer --overlap-grad-reduce
                   --overlap-param-gather)
    DATA_ARGS=(--mock-data --tokenizer-type NullTokenizer --vocab-size 128256 --tiktoken-pattern v2)
    torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${DTYPE_ARGS[@]} \\
        ${PARALLEL_ARGS[@]} ${DATA_ARGS[@]} --save "$CHECKPOINT_PATH"
""")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- the generated tables -----------------------------------------------------------------------


def test_the_megatron_table_covers_the_releases_and_the_pins() -> None:
    names = megatron.version_names()
    for release in ("core_v0.14", "core_v0.15", "core_v0.16", "core_v0.17", "core_v0.18", "core_v0.19"):
        assert release in names and len(megatron.flags(release)) > 450
    assert {"primus_v26.5", "bridge_v0.6"} <= set(names)
    for v in megatron.versions():
        assert len(v.commit) == 40 and v.ref  # each table names where it came from
    tp = megatron.flags("core_v0.16")["--tensor-model-parallel-size"]
    assert (tp.dest, tp.type, tp.default, tp.arity) == ("tensor_model_parallel_size", "int", 1, megatron.VALUE)
    assert megatron.flags("core_v0.16")["--disable-bias-linear"].dest == "add_bias_linear"
    assert megatron.flags("core_v0.16")["--recompute-modules"].arity == megatron.LIST


def test_bridges_launcher_table_covers_its_releases() -> None:
    """The Slurm launchers' options, read from their parsers at every release the recipes table holds: the
    import takes their spellings and fallbacks from here, not from a hand list."""
    from primus_lang.frameworks import bridge

    for version in bridge.version_names():
        train = {o.dest: o for o in bridge.launcher_options("train.sh", version)}
        assert (train["time"].default, train["container_image"].env, train["account"].env) == \
            ("04:00:00", "CONTAINER_IMAGE", "SLURM_ACCOUNT")
        assert not train["wait"].takes_value and "--gpus_per_node" in train["gpus_per_node"].options
        perf = {o.dest: o for o in bridge.launcher_options("performance", version)}
        assert perf["time_limit"].options == ("-t", "--time_limit") and perf["time_limit"].default == "00:30:00"


def test_versions_are_named_as_a_reader_wants_them() -> None:
    assert megatron.describe(megatron.versions_with("--pipeline-model-parallel-split-rank")) == \
        "core_v0.12 to core_v0.13"
    assert megatron.versions_with("--no-gradient-reduce-in-fp32") == ()
    for flag in ("--decoupled-lr", "--decoupled-min-lr", "--grad-reduce-in-bf16", "--empty-unused-memory-level",
                 "--tiktoken-pattern", "--fp8-param-gather"):
        assert "core_v0.16" in megatron.versions_with(flag), flag


def test_primus_substitutes_and_types_as_primus_does() -> None:
    assert primus.substitute("${PRIMUS_MODEL:deepseek_v3}.yaml", {}) == ("deepseek_v3.yaml", ("PRIMUS_MODEL",))
    assert primus.substitute("${PRIMUS_TP:1}", {}) == (1, ("PRIMUS_TP",))
    assert primus.substitute("${PRIMUS_TP:1}", {"PRIMUS_TP": "4"})[0] == 4
    assert primus.substitute("${X:true}", {})[0] is True and primus.substitute("${X:1e-5}", {})[0] == 1e-5
    assert primus.substitute("${X:[a}", {})[0] == "[a"  # never YAML: a default is text
    assert primus.substitute("unchanged 12", {}) == ("unchanged 12", ())  # no substitution: no typing
    assert isinstance(primus.substitute("${X}", {})[0], primus.Unset)


def test_primus_merges_presets_by_its_rules() -> None:
    module = primus.preset("modules", "pre_trainer", "v26.5")
    model = primus.preset("models", "deepseek_v3.yaml", "v26.5")
    assert module is not None and model is not None
    assert module["use_distributed_optimizer"] is True and module["stderr_sink_level"]  # module_base.yaml
    assert model["num_layers"] == 61 and model["multi_latent_attention"] is True  # deepseek_v3_base.yaml
    merged, origin = primus.module_config({"a": 1, "b": {"x": 1}}, {"a": 2, "c": 3}, {"b": {"y": 2}})
    assert merged == {"a": 1, "b": {"x": 1, "y": 2}, "c": 3}  # the module preset wins a key both have
    assert origin == {"a": "module", "b": "overrides", "c": "model"}
    assert primus.megatron_version("v26.5") == "primus_v26.5"


# ---- import-recipe reads every flag -------------------------------------------------------------


def test_a_script_of_variables_arrays_and_conditions_reads_whole(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write(tmp_path / "train_llama3_8b_h100_fp8.sh", LLAMA)
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(recipe), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "cluster  1 x 8 h100" in err and "the file's name names" in err
    text = out.read_text()
    for carried in ("decoupled_lr", "decoupled_min_lr", "empty_unused_memory_level", "tiktoken_pattern",
                    "train_samples", "save = \"checkpoints/llama3_8b\""):
        assert carried in text, carried
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None and legality(space, cand) == []
    assert (cand.precision, cand.fp8_param_gather, cand.main_grad_dtype) == ("fp8", True, "bf16")


def test_a_flag_the_version_lacks_names_the_versions_that_have_it() -> None:
    with pytest.raises(CompileError) as err:
        read_command_text("pretrain_gpt.py --num-layers 2 --pipeline-model-parallel-split-rank 1", "run.sh")
    [d] = err.value.diagnostics
    assert d.code.id == "P3122" and "core_v0.12 to core_v0.13 have it" in d.message
    assert "--megatron-version core_v0.13" in (d.help or "")
    read = read_command_text("pretrain_gpt.py --num-layers 2 --pipeline-model-parallel-split-rank 1", "run.sh",
                             version="core_v0.13")
    assert read.version == "core_v0.13" and read.entries["pipeline_model_parallel_split_rank"].value == "1"


def test_a_misspelt_flag_is_matched_among_the_versions_own_flags() -> None:
    with pytest.raises(CompileError) as err:
        read_command_text("pretrain_gpt.py --grad-reduce-in-bf61", "run.sh")
    [d] = err.value.diagnostics
    assert d.code.id == "P3122" and "`--grad-reduce-in-bf16`" in (d.help or "")


def test_a_flag_only_a_newer_release_has_reads_the_recipe_there() -> None:
    newer = [o for o in megatron.flags("core_v0.19") if o not in megatron.flags("core_v0.16")
             and megatron.flags("core_v0.19")[o].arity == megatron.SWITCH]
    read = read_command_text(f"pretrain_gpt.py --num-layers 2 {newer[0]}", "run.sh")
    assert read.version != megatron.DEFAULT_VERSION and read.version in megatron.versions_with(newer[0])
    assert any("read as Megatron-LM" in n for n in read.notes)


def test_a_script_a_release_first_ships_reads_the_recipe_there() -> None:
    """Megatron-LM's Mamba example runs pretrain_hybrid.py (core_v0.18 on) with flags core_v0.17 has:
    read at core_v0.17, its launch ran pretrain_mamba.py beside the script's hybrid layer spec."""
    read = read_command_text("torchrun ../../pretrain_hybrid.py --num-layers 2", "run.sh")
    assert read.version == megatron.SCRIPT_SINCE["pretrain_hybrid.py"] == "core_v0.18"
    assert any("`pretrain_hybrid.py` first ships in core_v0.18" in n for n in read.notes)
    named = read_command_text("torchrun pretrain_hybrid.py --num-layers 2", "run.sh", version="core_v0.16")
    assert named.version == "core_v0.16"  # the user's word stands


def test_a_value_the_parser_refuses_is_refused_with_its_choices() -> None:
    with pytest.raises(CompileError) as err:
        read_command_text("pretrain_gpt.py --recompute-granularity most", "run.sh")
    [d] = err.value.diagnostics
    assert d.code.id == "P3123" and "full, selective" in d.message


# ---- what real recipes use, modelled ------------------------------------------------------------


def test_fp8_primary_weights_hold_one_byte_and_need_a_sharded_optimizer(tmp_path: Path) -> None:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(write(tmp_path / "train_h100.sh", LLAMA)), "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    on = account(space.model, space.cluster, cand, space.settings).peak
    off = account(space.model, space.cluster, cand.replace(fp8_param_gather=False), space.settings).peak
    terms = {t.name: t.bytes for t in on.terms}
    # the GEMM weights as FP8 parameters (one byte) and their transposes only, not BF16 weights and two copies
    assert "fp8 weight transposes" in terms and "parameters (fp8 gemm weights)" in terms
    # BF16 weights and two copies (4 bytes a GEMM weight) against an FP8 weight and its transpose (2):
    # equal up to the allocator's 2 MiB segments of the buffers
    assert abs(off.total - on.total - 2 * terms["fp8 weight transposes"]) <= 4 * 2**20
    assert "fp8-param-gather" in [v.rule for v in legality(space, cand.replace(sharding="none"))]
    assert [v.rule for v in legality(space, cand.replace(precision="bf16"))] == ["fp8-param-gather"]


def test_the_launch_keeps_the_samples_schedule_and_the_null_tokenizers_vocabulary(tmp_path: Path) -> None:
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(write(tmp_path / "train_h100.sh", LLAMA)), "--out", str(out)]) == 0
    space = load_space(out)
    cand = baseline_point(space)
    assert cand is not None
    node = emit(space, cand, "megatron+local")["node.sh"]
    assert "--train-samples 100000" in node and "--train-iters" not in node and "--lr-warmup-iters" not in node
    assert "--tokenizer-type NullTokenizer" in node and "--vocab-size 128256" in node
    assert "--fp8-param-gather" in node and "--grad-reduce-in-bf16" in node
    assert "--use-precision-aware-optimizer" not in node  # BF16 gradients alone need no precision-aware optimizer


EXPERIMENT = textwrap.dedent("""\
    work_group: ${PRIMUS_TEAM:amd}
    modules:
      pre_trainer:
        framework: megatron
        config: pre_trainer.yaml
        model: ${PRIMUS_MODEL:mixtral_8x7B_v0.1}.yaml
        overrides:
          train_iters: 10
          micro_batch_size: 2
          global_batch_size: 256
          seq_length: ${PRIMUS_SEQ:4096}
          max_position_embeddings: 4096
          tensor_model_parallel_size: ${PRIMUS_TP:1}
          expert_model_parallel_size: 8
          recompute_granularity: full
          recompute_num_layers: 0
          norm_epsilon: 1.0e-6
          enable_primus_turbo: true
          use_turbo_deepep: true
          moe_router_dtype: fp32
          moe_shared_expert_overlap: false
          mock_data: true
          turbo_deepep_num_cuu: 32
""")


def test_a_primus_experiment_reads_as_primus_loads_it(tmp_path: Path) -> None:
    recipe = read_recipe(write(tmp_path / "MI355X" / "mixtral.yaml", EXPERIMENT))
    assert recipe.version == "v26.5" and recipe.entries["num_layers"].value == 32  # the model preset
    assert recipe.entries["num_layers"].preset and not recipe.entries["micro_batch_size"].preset
    warnings = {d.code.id: d for d in recipe.warnings}
    assert "PRIMUS_MODEL" in warnings["W3130"].message and len(warnings["W3130"].notes) == 3
    unread = [d.message for d in recipe.warnings if d.code.id == "W3134"]
    assert any("`norm_epsilon`" in m and "layernorm_epsilon" in m for m in unread)  # the pinned parser's dest
    # what the run then uses, which the space keeps: Megatron's default
    [dest] = [d for d in recipe.warnings if d.code.id == "W3134" and "`norm_epsilon`" in d.message]
    assert dest.notes == ("the run takes Megatron's default, 1e-05, and so does the space this import writes",)
    assert any("`turbo_deepep_num_cuu`" in m for m in unread)  # a misspelling nothing reads


def test_a_vpp_megatron_computes_is_named_with_the_setting_it_computes_it_from(tmp_path: Path) -> None:
    # Primus's gpt_oss_120B experiment sets `virtual_pipeline_model_parallel_size: ${PRIMUS_VP:2}`, which
    # validate_args sets again from num_virtual_stages_per_pipeline_rank: it had been carried in silence
    text = EXPERIMENT + "      pipeline_model_parallel_size: 2\n      virtual_pipeline_model_parallel_size: 2\n"
    recipe = read_recipe(write(tmp_path / "MI355X" / "vp.yaml", text))
    [vp] = [d for d in recipe.warnings if d.code.id == "W3134" and "virtual_pipeline" in d.message]
    assert vp.help == "write `num_virtual_stages_per_pipeline_rank: 2`"
    assert "virtual_pipeline_model_parallel_size" not in recipe.entries
    fixed = read_recipe(write(tmp_path / "MI355X" / "vp2.yaml", text.replace(
        "virtual_pipeline_model_parallel_size", "num_virtual_stages_per_pipeline_rank")))
    assert not [d for d in fixed.warnings if "virtual" in d.message]


def _imported_overrides(tmp_path: Path, name: str, text: str,
                        **changes: Any) -> tuple[Space, Candidate, dict[str, Any]]:
    """A Primus experiment imported, and its baseline (with ``changes``) emitted: (space, point, overrides)."""
    write(tmp_path / "MI355X" / f"{name}.yaml", text)
    assert main(["import-recipe", str(tmp_path / "MI355X" / f"{name}.yaml"), "--out", str(tmp_path / f"{name}.prx")]) == 0
    space = load_space(tmp_path / f"{name}.prx")
    base = baseline_point(space)
    assert base is not None
    cand = base.replace(**changes)
    return space, cand, _overrides(space, cand)


def _overrides(space: Space, cand: Candidate) -> dict[str, Any]:
    experiment = yaml.safe_load(emit(space, cand, "primus+local")["experiment.yaml"])
    return dict(experiment["modules"]["pre_trainer"]["overrides"])


def test_primus_turbo_deepep_and_no_recomputed_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space, cand, overrides = _imported_overrides(tmp_path, "mixtral", EXPERIMENT)
    err = capsys.readouterr().err
    assert "recomputes nothing" in err and "flex dispatcher" in err and "how many nodes: 1" in err
    assert cand.recompute.kind == "none" and cand.moe_dispatcher == "flex"
    assert overrides["use_turbo_deepep"] is True and "norm_epsilon" not in overrides
    # the recipe's point with the all-to-all dispatcher: beside the recipe's `use_turbo_deepep` Primus would
    # run DeepEP whatever the dispatcher says, so the launch switches it off and says so (W7025)
    a2a = cand.replace(moe_dispatcher="alltoall")
    overrides = _overrides(space, a2a)
    assert overrides["use_turbo_deepep"] is False and overrides["moe_token_dispatcher_type"] == "alltoall"
    [said] = [d for d in left_out(space, a2a, "primus+local") if "use_turbo_deepep" in d.message]
    assert said.code.id == "W7025" and "flex dispatcher" in said.message
    # sync-free MoE from stage 2 sets use_turbo_deepep itself; stage 1 keeps the fused router and permutation,
    # which need no DeepEP
    staged = EXPERIMENT.replace("use_turbo_deepep: true", "turbo_sync_free_moe_stage: 2\n      use_turbo_grouped_gemm: true")
    _, _, overrides = _imported_overrides(tmp_path, "stage2", staged, moe_dispatcher="alltoall")
    assert overrides["turbo_sync_free_moe_stage"] == 1 and overrides.get("use_turbo_deepep") is not True
    # at TP 2 Primus Turbo does not patch the dispatcher: the preset's all-to-all stands, and the recipe's own
    # baseline is launched as written, its switches kept and nothing said (a reviewer's finding)
    space2, tp2, overrides = _imported_overrides(tmp_path, "mixtral_tp2", EXPERIMENT.replace("${PRIMUS_TP:1}", "2"))
    assert tp2.moe_dispatcher == "alltoall" and overrides["use_turbo_deepep"] is True
    assert not [d for d in left_out(space2, tp2, "primus+local") if "DeepEP" in d.message]
