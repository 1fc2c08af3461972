"""Megatron-LM's start-up refusals as generated data (frameworks/megatron/rules.json, read from validate_args
by tools/validate_args_rules.py): an imported recipe's setting that the launch's Megatron-LM refuses beside a
candidate of its space is left out and said (W7025); primusc's own settings never break a rule.

The script is written here in the shape of Megatron-LM's Megatron-FSDP example scripts, with our own values."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from primus_lang.check import baseline_point, legal_points, legality, parse_point
from primus_lang.cli import main
from primus_lang.emit import emit, left_out, unsupported
from primus_lang.emit.profiles import profile_for
from primus_lang.frameworks.rules import broken, describe, implied, rules
from primus_lang.lower import load_program, load_space, pick_space
from primus_lang.resources import data_dir

ROOT = Path(__file__).resolve().parents[2]

MEGATRON_FSDP = textwrap.dedent("""\
    #!/bin/bash
    MODEL_ARGS=(
        --num-layers 16 --hidden-size 2048 --ffn-hidden-size 8192 --num-attention-heads 16
        --group-query-attention --num-query-groups 4 --seq-length 4096 --max-position-embeddings 4096
        --position-embedding-type rope --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights
        --disable-bias-linear
    )
    TRAINING_ARGS=(--micro-batch-size 1 --global-batch-size 64 --train-iters 200 --lr 0.0002 --bf16)
    FSDP_ARGS=(
        --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --no-gradient-accumulation-fusion
        --ckpt-format fsdp_dtensor --use-nccl-ub --fsdp-manual-registration
    )
    DATA_ARGS=(--mock-data --tokenizer-type NullTokenizer --vocab-size 32000)
    torchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${FSDP_ARGS[@]} ${DATA_ARGS[@]}
""")


def _imported(tmp_path: Path) -> Path:
    script = tmp_path / "fsdp.sh"
    script.write_text(MEGATRON_FSDP)
    out = tmp_path / "fsdp.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    return out


def test_megatron_fsdp_settings_are_left_out_of_a_distributed_optimizer_launch(tmp_path: Path) -> None:
    space = load_space(_imported(tmp_path))
    cand = baseline_point(space)
    assert cand is not None and cand.sharding == "fsdp"
    sh = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "--fsdp-manual-registration" in sh and "--ckpt-format fsdp_dtensor" in sh  # the recipe, as it ran
    assert left_out(space, cand, "megatron+slurm") == []
    other = parse_point(space, "sharding=dist_opt")
    sh = emit(space, other, "megatron+slurm")["node.sh"]
    assert "--use-distributed-optimizer" in sh and "--use-megatron-fsdp" not in sh
    assert "--fsdp-manual-registration" not in sh and "fsdp_dtensor" not in sh
    said = left_out(space, other, "megatron+slurm")
    assert {d.code.id for d in said} == {"W7025"}
    text = " ".join(d.message + " ".join(d.notes) for d in said)
    assert "`--fsdp-manual-registration`" in text and "`--ckpt-format fsdp_dtensor`" in text
    assert "requires `use_megatron_fsdp` when `fsdp_manual_registration`" in text
    # why the recipe's setting cannot stay: what the launch has instead, and the knob that writes it
    assert "and this launch has `use_megatron_fsdp` false (`sharding = dist_opt`)" in text
    assert "FSDP manual registration is only supported with Megatron FSDP" in text and "arguments.py:" in text


def test_emit_says_what_it_leaves_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _imported(tmp_path)
    assert main(["emit", str(path), "--point", "sharding=dist_opt", "--target", "megatron+slurm",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "W7025" in err and "--fsdp-manual-registration" in err


def test_a_broken_rule_needs_both_sides_known() -> None:
    version = "core_v0.16"
    base = {"micro_batch_size": 1}  # what every launch writes (validate_args asserts it always)
    assert broken(base, version) == []
    keys = {r.key for r in broken({**base, "fsdp_manual_registration": True}, version)}
    assert "when fsdp_manual_registration: use_megatron_fsdp" in keys
    assert "when fsdp_manual_registration: nccl_ub" in keys
    fine = {**base, "fsdp_manual_registration": True, "use_megatron_fsdp": True, "nccl_ub": True, "ckpt_format": "fsdp_dtensor"}
    assert [r.key for r in broken(fine, version) if "fsdp" in r.key] == []
    # a recipe's number written as text is compared as a number; a list as a list
    ramp = broken({**base, "train_iters": "1000", "rampup_batch_size": ("16", "16", "1000")}, version)
    assert [r.requirement for r in ramp] == ["rampup_batch_size is None"]
    assert broken({**base, "train_samples": 1000, "train_iters": None}, version) == []
    # an argument no parser of the version has is not judged
    assert broken({**base, "no_such_argument": True}, version) == []


def test_each_version_cites_where_megatron_asserts_it() -> None:
    from primus_lang.frameworks import megatron

    for version in megatron.version_names():
        assert rules(version), version
        for rule in rules(version):
            assert rule.line > 0 and describe(rule.require) == rule.requirement
    (fsdp,) = [r for r in rules("core_v0.16") if r.key == "when fsdp_manual_registration: use_megatron_fsdp"]
    assert fsdp.cite("core_v0.16") == "megatron/training/arguments.py:694 at core_v0.16"
    # computed arguments (`use_dist_ckpt`) have no parser default: a rule reading one is never judged broken
    assert not any("use_dist_ckpt" in r.reads for r in broken({"micro_batch_size": 1, "use_distributed_optimizer": True,
                                                               "enable_gloo_process_groups": False}, "core_v0.12"))


def _extractor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validate_args_rules", ROOT / "tools" / "validate_args_rules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_extractor_reads_asserts_under_simple_tests_only() -> None:
    source = textwrap.dedent("""\
        def validate_args(args, defaults={}):
            for key in defaults:
                setattr(args, key, defaults[key])
            if args.alpha:
                assert args.beta, "alpha needs beta"
            elif args.gamma == "x":
                assert args.delta is None, f"gamma x needs no delta"
            else:
                assert not args.epsilon
            if args.world_size > compute():
                assert args.zeta, "under a test of something else: not read"
            args.eta = 3
            if args.theta:
                assert args.eta > 2, "reads an argument validate_args assigns: not read"
            assert args.iota in ["a", "b"], "always"
    """)
    helpers = textwrap.dedent("""\
        def validate_args(args, defaults={}):
            load_retro_args(args)
            fill(args)
            if args.retro:
                assert args.train_samples is not None, "set by a helper: not read"
            if args.kappa:
                assert args.mu, "read"
        def fill(a):
            a.kappa = 1
    """)
    module = _extractor()
    assert [r["message"] for r in module.rules(helpers, lambda m: None)] == ["set by a helper: not read"]
    helpers = "from megatron.training.retro import load_retro_args\n" + helpers
    assert [r["message"] for r in module.rules(helpers, lambda m: "def load_retro_args(x):\n    x.train_samples = 3\n"
                                               if m == "megatron.training.retro" else None)] == []
    found = module.rules(source)
    assert [(describe(r["when"]), describe(r["require"]), r["message"]) for r in found] == [
        ("alpha", "beta", "alpha needs beta"),
        ("(not (alpha)) and (gamma == 'x')", "delta is None", "gamma x needs no delta"),
        ("(not (alpha)) and (not (gamma == 'x'))", "not (epsilon)", ""),
        ("always", "iota in ['a', 'b']", "always"),
    ]


@pytest.mark.parametrize(("target", "release"), [("megatron+slurm", None), ("primus+slurm", None),
                                                  ("megatron+slurm", "core_v0.19"), ("megatron+slurm", "core_v0.12")])
def test_no_example_candidate_breaks_a_rule_of_its_launch(target: str, release: str | None) -> None:
    # what `plan --var megatron_version=...` ranks, `emit` at that release launches: the checker's legality
    # holds each release's start-up refusals of primusc's own settings (TE's cross entropy from core_v0.18)
    from primus_lang.commands._options import launched_space

    for path in sorted(data_dir("examples").glob("*.prx")):
        space = pick_space(load_program(str(path)))
        if release is not None:
            space = launched_space(space, target, {"megatron_version": release})
        for cand in list(legal_points(space))[::97]:
            problems = [p for p in unsupported(space, cand, target) if "refuses at start" in p]
            assert problems == [], (path.name, cand.label(), problems)


def test_a_switch_carried_under_its_flags_name_is_read_with_its_polarity() -> None:
    from primus_lang.emit.launch_rules import arguments, settle
    from primus_lang.emit.profiles import profile_for

    profile = profile_for("core_v0.16")
    # `--no-gradient-accumulation-fusion` stores false in `gradient_accumulation_fusion`
    assert arguments({"use_torch_fsdp2": True, "no_gradient_accumulation_fusion": True}, profile) == \
        {"use_torch_fsdp2": True, "gradient_accumulation_fusion": False}
    settings = {"micro_batch_size": 1, "use_torch_fsdp2": True, "ckpt_format": "torch_dist",
                "untie_embeddings_and_output_weights": True, "no_gradient_accumulation_fusion": True}
    own = {k: v for k, v in settings.items() if k != "no_gradient_accumulation_fusion"}
    left, problems = settle(settings, own, frozenset({"no_gradient_accumulation_fusion"}), profile)
    assert (left, problems) == ([], []) and settings["no_gradient_accumulation_fusion"] is True


def test_a_carried_setting_whose_leaving_out_mends_nothing_is_kept_and_the_launch_refused() -> None:
    from primus_lang.emit.launch_rules import settle
    from primus_lang.emit.profiles import profile_for

    # torch FSDP2 refuses gradient-accumulation fusion, which is on by default: leaving out the recipe's
    # explicit `true` would change nothing, so it stays and the rule is the problem
    settings = {"micro_batch_size": 1, "use_torch_fsdp2": True, "ckpt_format": "torch_dist",
                "untie_embeddings_and_output_weights": True, "gradient_accumulation_fusion": True}
    own = {k: v for k, v in settings.items() if k != "gradient_accumulation_fusion"}
    left, problems = settle(settings, own, frozenset({"gradient_accumulation_fusion"}), profile_for("core_v0.16"))
    assert left == [] and settings["gradient_accumulation_fusion"] is True
    assert len(problems) == 1 and "requires `not (gradient_accumulation_fusion)` when `use_torch_fsdp2`" in problems[0]


def test_a_primus_launch_is_checked_over_primus_preset_and_writes_its_iterations_null(tmp_path: Path) -> None:
    import yaml

    # Megatron-LM's Llama 3 examples count training in samples; Primus's pre-trainer preset sets train_iters
    # 1000 and lr_warmup_iters beneath the experiment, which Megatron refuses beside them
    script = tmp_path / "samples.sh"
    script.write_text(MEGATRON_FSDP.replace("--train-iters 200", "--train-samples 12800 --lr-warmup-samples 64"))
    out = tmp_path / "samples.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    cand = parse_point(space, "sharding=dist_opt")
    assert [p for p in unsupported(space, cand, "primus+slurm") if "refuses at start" in p] == []
    over = yaml.safe_load(emit(space, cand, "primus+slurm")["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    # Primus hands a null on as None: each at Megatron-LM's own default, which its asserts expect
    assert over["train_samples"] == 12800 and over["train_iters"] is None and over["lr_warmup_iters"] == 0


def test_launches_that_leave_out_the_same_settings_share_one_warning(tmp_path: Path) -> None:
    # a campaign's jobs: the distributed-optimizer launches all leave out the FSDP settings for one reason
    space = load_space(_imported(tmp_path))
    cands = [parse_point(space, p) for p in ("sharding=dist_opt", "sharding=dist_opt,tp=2", "sharding=fsdp")]
    said = left_out(space, cands, "megatron+slurm")
    assert len(said) == 2  # the checkpoint format, the manual registration
    for d in said:
        assert d.message.startswith(f"the launches of `{cands[0].label()}` and `{cands[1].label()}` leave out")
    assert [d.message for d in said] != [d.message for d in left_out(space, cands[0], "megatron+slurm")]


def test_a_target_that_launches_fsdp_as_torch_fsdp2_says_so(tmp_path: Path) -> None:
    # the primus target runs `sharding = fsdp` as torch FSDP2: Megatron-FSDP's settings go, and the warning
    # says why a candidate that reads as FSDP has `use_megatron_fsdp` false
    space = load_space(_imported(tmp_path))
    cand = baseline_point(space)
    assert cand is not None and cand.sharding == "fsdp"
    said = " ".join(d.message for d in left_out(space, cand, "primus+slurm"))
    assert "this launch has `use_megatron_fsdp` false (`sharding = fsdp`, launched as torch FSDP2)" in said


def test_a_release_that_refuses_a_kernel_makes_it_illegal_where_its_validate_args_runs() -> None:
    # the checker reads the table: TE's fused cross entropy is refused from core_v0.18 (and at the Megatron-LM
    # Bridge v0.6 pins), not before, and a Bridge launch does not go through validate_args at all
    from primus_lang.commands._options import launched_space

    space = load_space(ROOT / "examples" / "llama3_1_8b_mi325x.prx")
    for target, release, legal in [("megatron+slurm", "core_v0.16", True), ("megatron+slurm", "core_v0.18", False),
                                   ("megatron+slurm", "core_v0.19", False), ("primus+slurm", None, True),
                                   ("bridge+slurm", None, True)]:
        given = {} if release is None else {"megatron_version": release}
        at = launched_space(space, target, given)
        codes = [v.code for v in legality(at, parse_point(at, "cross_entropy=te"))]
        assert codes == ([] if legal else ["P4046"]), (target, release)
        assert legality(at, parse_point(at, "cross_entropy=native")) == []


def test_a_refusal_names_the_knobs_that_set_what_its_rule_reads() -> None:
    # core_v0.19 refuses Transformer Engine's cross entropy fused into the loss: `cross_entropy` sets both
    from primus_lang.emit.launch_rules import problem

    [rule] = [r for r in rules("core_v0.19") if r.reads == {"cross_entropy_loss_fusion", "cross_entropy_fusion_impl"}]
    assert problem(rule, "core_v0.19").endswith("; the knobs that set it: `cross_entropy`")


def test_a_value_a_rule_leaves_no_choice_of_is_written_from_the_rule_not_restated() -> None:
    # Megatron-FSDP asserts the fsdp_dtensor checkpoint format; its releases before core_v0.14 have no such rule
    assert implied({"use_megatron_fsdp": True}, "core_v0.16") == {"ckpt_format": "fsdp_dtensor"}
    assert implied({"use_megatron_fsdp": True, "ckpt_format": "fsdp_dtensor"}, "core_v0.16") == {}
    assert implied({"use_distributed_optimizer": True}, "core_v0.19") == {}
    assert implied({"use_megatron_fsdp": True}, "core_v0.12") == {}
    # a rule against a knob's value refuses the candidate; the launch never changes a knob to obey it
    assert profile_for("core_v0.19").implied({"use_torch_fsdp2": True, "pipeline_model_parallel_size": 2}) == {}


@pytest.mark.parametrize("framework", ["megatron", "bridge"])
def test_a_megatron_fsdp_launch_writes_the_format_its_release_asserts(framework: str) -> None:
    space = pick_space(load_program(str(data_dir("examples") / "llama3_70b_gb200.prx")))
    cand = next(c for c in legal_points(space) if c.sharding == "fsdp")
    files = emit(space, cand, f"{framework}+local")
    assert any("fsdp_dtensor" in text for text in files.values())
