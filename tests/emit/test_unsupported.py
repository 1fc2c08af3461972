"""What a target cannot express stops emission with a code; illegal candidates never reach a template."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.emit import TARGETS, EmitContext, emit
from primus_lang.ir import Moe, Recompute
from tests.emit.harness import all_cases, context


def codes(err: pytest.ExceptionInfo[CompileError]) -> list[str]:
    return [d.code.id for d in err.value.diagnostics]


@pytest.mark.parametrize("schedule", ["zero_bubble", "zbv"])
@pytest.mark.parametrize("launcher", ["slurm", "k8s", "local"])
def test_zero_bubble_on_plain_megatron(schedule: str, launcher: str) -> None:
    space, cand = all_cases()["llama8b_zbv"]
    with pytest.raises(CompileError) as err:
        # zero-bubble keeps one chunk per rank, ZBV two (legality requires it)
        emit(space, cand.replace(schedule=schedule, vpp=2 if schedule == "zbv" else 1), f"megatron+{launcher}", context())
    assert codes(err) == ["P7001"]
    assert schedule in err.value.diagnostics[0].message


def test_the_unsupported_hint_names_a_command_that_exists(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    space, cand = all_cases()["llama8b_zbv"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", context())
    hint = err.value.diagnostics[0].help
    assert hint == "see `primusc explain P7001`"
    assert main(hint.removeprefix("see `primusc ").removesuffix("`").split()) == 0
    assert "P7001" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "needle", "since"),
    [
        ({"ep_comm_overlap": True}, "`--overlap-moe-expert-parallel-comm`", "core_v0.14"),
        ({"fp8_recipe": "blockwise", "precision": "fp8"}, "`--fp8-recipe blockwise`", "core_v0.13"),
        ({"optimizer_dtype": "bf16"}, "`--exp-avg-dtype bf16`", "core_v0.13"),
    ],
)
def test_a_release_refuses_what_its_parser_lacks(change: dict[str, object], needle: str, since: str) -> None:
    """Refused from the release's own flag table, naming the release where the flag or value arrived; the
    release it arrived in launches it, though it borrows core_v0.12's profile (it had been refused there
    with core_v0.12's hand-written reasons)."""
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(ep_comm_overlap=False).replace(**change)
    emit(space, cand, "megatron+slurm", context())  # core_v0.16 expresses it
    emit(space, cand, "megatron+slurm", context(megatron_version=since))
    before = "core_v0.13" if since == "core_v0.14" else "core_v0.12"
    for version in {"core_v0.12", before}:
        with pytest.raises(CompileError) as err:
            emit(space, cand, "megatron+slurm", context(megatron_version=version))
        assert set(codes(err)) == {"P7001"}
        message = err.value.diagnostics[0].message
        assert needle in message and f"Megatron-LM {version} " in message and f"arrived in {since}" in message


def test_an_explicit_pipeline_layout_needs_core_v0_13() -> None:
    space, cand = all_cases()["deepseek_v3_layout"]
    text = emit(space, cand, "megatron+local", context())["node.sh"]
    # quoted for the shell: the layout holds `|`, `(` and `*`
    assert "--pipeline-model-parallel-layout 'Et*4|(t*4|)*14tmL'" in text
    experiment = emit(space, cand, "primus+local", context())["experiment.yaml"]
    assert "pipeline_model_parallel_layout: Et*4|(t*4|)*14tmL\n" in experiment
    assert "num_virtual_stages_per_pipeline_rank" not in experiment
    older = emit(space, cand, "megatron+local", context(megatron_version="core_v0.13"))["node.sh"]
    assert "--pipeline-model-parallel-layout 'Et*4|(t*4|)*14tmL'" in older
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+local", context(megatron_version="core_v0.12"))
    assert codes(err) == ["P7001"]
    assert "`--pipeline-model-parallel-layout` (it arrived in core_v0.13)" in err.value.diagnostics[0].message


def test_sliding_window_needs_core_v0_15() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    space = attrs.evolve(space, model=space.model.replace(sliding_window=128))
    text = emit(space, cand, "megatron+local", context())["node.sh"]
    assert "--window-size '(127,0)'" in text and "--window-attn-skip-freq 2" in text
    experiment = emit(space, cand, "primus+local", context())["experiment.yaml"]
    assert "window_size:\n      - 127\n      - 0\n" in experiment
    emit(space, cand, "megatron+local", context(megatron_version="core_v0.15"))
    for version in ("core_v0.12", "core_v0.14"):
        with pytest.raises(CompileError) as err:
            emit(space, cand, "megatron+local", context(megatron_version=version))
        assert codes(err) == ["P7001"]  # the two flags the window needs, in one
        assert (f"Megatron-LM {version} has no `--window-size` (it arrived in core_v0.15), "
                "`--window-attn-skip-freq` (it arrived in core_v0.15)") in err.value.diagnostics[0].message


def test_expert_bias_must_follow_linear_bias() -> None:
    space, cand = all_cases()["mixtral_h100"]
    moe = Moe(num_experts=8, top_k=2, ffn_hidden=14336, expert_bias=True)
    space = attrs.evolve(space, model=space.model.replace(moe=moe))
    for target in ("megatron+slurm", "primus+slurm"):
        with pytest.raises(CompileError) as err:
            emit(space, cand, target, context())
        assert codes(err) == ["P7001"]


def test_relu_has_no_megatron_flag() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    space = attrs.evolve(space, model=space.model.replace(activation="relu"))
    with pytest.raises(CompileError) as err:
        emit(space, cand, "primus+local", context())
    assert codes(err) == ["P7001"]


def test_all_problems_are_reported_at_once() -> None:
    space, cand = all_cases()["llama8b_zbv"]
    space = attrs.evolve(space, model=space.model.replace(activation="relu"))
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+local", context(megatron_version="core_v0.12"))
    assert codes(err) == ["P7001", "P7001"]


@pytest.mark.parametrize("target", ["megatron", "megatron+", "torchtitan+slurm", "megatron+ray", "slurm+megatron"])
def test_unknown_target(target: str) -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, target, context())
    assert codes(err) == ["P7002"]


def test_target_spelling_with_spaces() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    assert emit(space, cand, "megatron + slurm", context()) == emit(space, cand, "megatron+slurm", context())


def test_unknown_variable() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", context(data_pth="/data"))
    assert codes(err) == ["P7003"]


@pytest.mark.parametrize("target", ["megatron+k8s", "primus+k8s"])
def test_kubernetes_needs_an_image(target: str) -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, target, EmitContext())
    assert codes(err) == ["P7004"]


def test_slurm_container_needs_an_image() -> None:
    space, cand = all_cases()["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", EmitContext(variables={"container": "pyxis"}))
    assert codes(err) == ["P7004"]


@pytest.mark.parametrize("target", TARGETS)
def test_illegal_candidate_is_refused(target: str) -> None:
    pytest.importorskip("primus_lang.check")
    space, cand = all_cases()["llama70b_mi325x"]
    with pytest.raises(CompileError) as err:
        emit(space, cand.replace(tp=3), target, context())  # 64 heads do not split over TP 3
    assert codes(err) == ["P7005"]
    assert any(note.startswith("P4") for note in err.value.diagnostics[0].notes)


@pytest.mark.parametrize("framework", ["megatron", "primus"])
def test_op_level_checkpointing_is_refused_with_the_bracketing_megatron_settings(framework: str) -> None:
    space, cand = all_cases()["llama8b_zbv"]
    cand = cand.replace(schedule="1f1b", vpp=1, recompute=Recompute("op"))
    with pytest.raises(CompileError) as err:
        emit(space, cand, f"{framework}+slurm", context())
    assert codes(err) == ["P7001"]
    message = err.value.diagnostics[0].message
    assert "`recompute` = op" in message and "torchtitan" in message
    assert "`selective(layernorm, mlp)` keeps less" in message
    emit(space, cand.replace(recompute=Recompute("selective", modules=("layernorm", "mlp"))), f"{framework}+slurm",
         context())


@pytest.mark.parametrize("version", ["core_v0.16", "core_v0.12"])
def test_a_hybrid_model_with_mtp_is_refused(version: str) -> None:
    """megatron-core 0.16.1's MambaModel builds no MTP layers (they came with --mtp-hybrid-override-pattern
    in 0.17), so Nemotron 3 Super with its MTP layer cannot be launched on these versions; core_v0.12 also
    lacks LatentMoE, which the written refusal of MTP no longer hides."""
    from tests.emit.ir_cases import NEMOTRON_SUPER

    space, cand = all_cases()["nemotron_super_b200"]
    with pytest.raises(CompileError) as err:
        emit(attrs.evolve(space, model=NEMOTRON_SUPER), cand, "megatron+slurm", context(megatron_version=version))
    assert set(codes(err)) == {"P7001"}
    text = " ".join(d.message for d in err.value.diagnostics)
    assert "`mtp_hybrid_override_pattern` = *E" in text and "MambaModel builds no MTP layers" in text
    assert f"Megatron-LM {version} has no `--mtp-hybrid-override-pattern` (it arrived in core_v0.17)" in text
    assert ("`--moe-latent-size` (it arrived in core_v0.16)" in text) == (version == "core_v0.12")


def test_a_hybrid_model_with_mtp_launches_where_the_flag_arrived() -> None:
    """core_v0.17 borrows core_v0.16's profile: the refusal of hybrid MTP holds only where the release's
    parser lacks --mtp-hybrid-override-pattern (it had been refused at core_v0.17 too)."""
    from tests.emit.ir_cases import NEMOTRON_SUPER

    space, cand = all_cases()["nemotron_super_b200"]
    text = emit(attrs.evolve(space, model=NEMOTRON_SUPER), cand, "megatron+slurm",
                context(megatron_version="core_v0.17"))["node.sh"]
    assert "--mtp-hybrid-override-pattern" in text and "--mtp-num-layers 1" in text


# mistral_7b: no Bridge library recipe at Megatron-Bridge 067f987 (emit/bridge.py BRIDGE_MODELS)
@pytest.mark.parametrize(("card", "target"), [("gemma2_2b", "megatron+slurm"), ("mistral_7b", "bridge+local")])
def test_plan_refuses_a_model_the_framework_cannot_build_before_searching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], card: str, target: str
) -> None:
    """A model-level refusal does not depend on the candidate: plan says it before any search, and
    leaves no trace behind that would make the next plan into the same folder need --force."""
    from primus_lang.cli import main

    module = "gemma" if card.startswith("gemma") else "mistral"
    space = tmp_path / "s.prx"
    space.write_text(f"import models.{module} ({card})\nimport clusters.nvidia (h100_x8)\n\n"
                     f"space s on h100_x8 {{\n  model = {card}\n  gbs = 64\n  tp : 1 | 2\n  target {target}\n}}\n")
    out = tmp_path / "out"
    assert main(["plan", str(space), "--out", str(out), "--budget", "5"]) == 1
    err = capsys.readouterr().err
    assert "P7001" in err and "legal points" not in err
    assert not out.exists()
