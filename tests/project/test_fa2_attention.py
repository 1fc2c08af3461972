"""FlashAttention-2's kernels (``attention = fa2``: torchtitan's SDPA, llm-foundry's flash-attn) run the
same work as the fused kernel at the part's ``fa2_attention`` share of its rate, keep the same memory,
and are what a run of those stacks is read as."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml

from primus_lang.emit import emit
from primus_lang.ir import Candidate, Gpu, Settings
from primus_lang.lower.load import loads_program
from primus_lang.memory import account
from primus_lang.project import Attention, SimulateOracle, project
from primus_lang.validate.runs import load_runs
from primus_lang.validate.trust import attention_of
from tests.emit.ir_cases import CASES

from .fixtures import LLAMA3_1_8B, MI325X, cluster
from .test_memory_verdicts import row


def _stdlib_gpu(name: str) -> Gpu:
    text = f"import hardware.nvidia_spec ({name})\ngpu part = {name} {{ confidence = high }}\n"
    return loads_program(text).gpus[0]


def test_the_stdlib_parts_carry_the_published_kernel_ratios() -> None:
    assert _stdlib_gpu("h100_sxm_spec").fa2_attention == pytest.approx(0.62)
    assert _stdlib_gpu("b200_spec").fa2_attention == pytest.approx(0.35)
    assert MI325X.fa2_attention == 1.0  # ROCm's flash-attn is the CK kernels Transformer Engine runs too


@pytest.mark.parametrize("backward", [False, True])
def test_the_kernel_runs_the_same_work_at_the_ratio(backward: bool) -> None:
    gpu = _stdlib_gpu("h100_sxm_spec")
    oracle = SimulateOracle(cluster(gpu, nodes=1))
    fused = Attention(1, 32, 8192, 8192, 128, 128, backward=backward)
    fa2 = attrs.evolve(fused, fa2=True)
    assert fa2.flops == fused.flops and fa2.key != fused.key
    overhead = gpu.efficiency.gemm_knee_flops / (gpu.peak_bf16 * gpu.efficiency.gemm_max)
    assert oracle.compute(fa2) - overhead == pytest.approx((oracle.compute(fused) - overhead) / 0.62)


def test_a_step_slows_where_the_ratio_is_below_one_and_keeps_its_memory() -> None:
    cand = Candidate(mbs=1, gbs=64, seq_len=32768, cp=1)
    fa2 = attrs.evolve(cand, attention="fa2")
    h100 = cluster(_stdlib_gpu("h100_sxm_spec"), nodes=1)
    slow, fast = project(LLAMA3_1_8B, h100, fa2), project(LLAMA3_1_8B, h100, cand)
    assert slow.step_time > fast.step_time
    # the model's FLOPs are the same: only the time moves
    assert slow.tflops_per_gpu * slow.step_time == pytest.approx(fast.tflops_per_gpu * fast.step_time)
    amd = cluster(MI325X, nodes=1)
    assert project(LLAMA3_1_8B, amd, fa2).step_time == pytest.approx(project(LLAMA3_1_8B, amd, cand).step_time)
    assert account(LLAMA3_1_8B, h100, fa2, Settings()).peak == account(LLAMA3_1_8B, h100, cand, Settings()).peak


@pytest.mark.parametrize("framework,notes,kernel", [
    ("torchtitan", "", "fa2"), ("torchtitan (torchao float8 / mx_formats)", "", "fa2"),
    ("MosaicML LLM Foundry", "", "fa2"), ("NeMo 2.0 (Megatron-Core)", "", "flash"),
    ("Megatron-Bridge (Megatron-Core)", "", "flash"), ("Primus (Megatron-LM backend)", "", "flash"),
    ("NeMo AutoModel (PyTorch FSDP2)", "kernel optimizations: te + deepep + torchsdpa.", "fa2"),
    ("NeMo AutoModel (PyTorch FSDP2)", "kernel optimizations: te + deepep.", "flash"), ("", "", "flash"),
])
def test_a_run_is_read_with_its_stacks_kernel(framework: str, notes: str, kernel: str) -> None:
    assert attention_of(framework, notes) == kernel


def test_a_corpus_row_of_torchtitan_projects_fa2(tmp_path: Path) -> None:
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([row("titan", framework="torchtitan"), row("nemo", framework="NeMo (Megatron-Core)")]))
    runs = {r.id: r for r in load_runs(path)}
    assert runs["titan"].cand is not None and runs["titan"].cand.attention == "fa2"
    assert runs["nemo"].cand is not None and runs["nemo"].cand.attention == "flash"


def test_megatron_launches_ask_for_the_flash_attn_backend() -> None:
    space, cand = CASES["llama3_8b_h100_fp8cs"]
    node = emit(space, attrs.evolve(cand, attention="fa2"), "megatron+slurm")["node.sh"]
    assert "--attention-backend flash" in node
    assert "--attention-backend auto" in emit(space, cand, "megatron+slurm")["node.sh"]


@pytest.mark.parametrize("backend,kernel", [("flash", "fa2"), ("fused", None), ("auto", None)])
def test_megatrons_backend_names_import_as_the_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      backend: str, kernel: str | None) -> None:
    from primus_lang.cli import main
    from tests.recipes.test_bad_recipes import LLAMA8B

    recipe = tmp_path / "args.txt"
    recipe.write_text(LLAMA8B + f"--attention-backend {backend}", encoding="utf-8")
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "h100", "--out", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text()
    # the fused kernel is the default and is not written; FlashAttention-2 is
    assert ("attention = fa2" in text) == (kernel == "fa2")


@pytest.mark.parametrize("value", ["1e-9", "5e-324"])
def test_a_vanishing_share_is_refused_where_it_is_written(value: str) -> None:
    from primus_lang.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        loads_program(f"import hardware.nvidia_spec (h100_sxm_spec)\ngpu part = h100_sxm_spec {{ fa2_attention = {value} }}\n")
    assert err.value.diagnostics[0].code.id == "P3009" and "at least 0.0001" in err.value.diagnostics[0].message


def test_sdpas_cudnn_backend_is_the_fused_kernel() -> None:
    assert attention_of("NeMo AutoModel", "pytorch sdpa with the cudnn backend") == "flash"


def test_bridge_names_the_knob_it_cannot_force() -> None:
    from primus_lang.diagnostics import CompileError

    space, cand = CASES["llama3_8b_h100_fp8cs"]
    with pytest.raises(CompileError) as err:
        emit(space, attrs.evolve(cand, attention="fa2"), "bridge+slurm")
    assert "`attention = fa2` (backend `flash`)" in err.value.diagnostics[0].message


def test_explain_says_what_the_kernel_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    space = tmp_path / "s.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.nvidia (h100_x8)\n"
                     "space s on h100_x8 {\n  model = llama3_1_8b\n  gbs = 512\n  attention : flash | fa2\n}\n")
    main(["explain", str(space), "--point", "attention=fa2"])
    said = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "FlashAttention-2's kernels, timed at 0.62 of the fused kernel's rate on h100_sxm" in said
    main(["explain", str(space), "--point", "attention=flash"])
    assert "FlashAttention-2" not in capsys.readouterr().out


@pytest.mark.parametrize("card,why", [("deepseek (deepseek_v3)", "MLA's 192-wide query and key heads"),
                                      ("gpt_oss (gpt_oss_120b)", "learnable attention sinks")])
def test_fa2_is_illegal_where_flash_attn_v2_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       card: str, why: str) -> None:
    from primus_lang.cli import main

    name = card.split("(")[1].rstrip(")")
    space = tmp_path / "s.prx"
    space.write_text(f"import models.{card}\nimport clusters.nvidia (h100_x8)\n"
                     f"space s on h100_x8 {{\n  model = {name}\n  gbs = 512\n  attention = fa2\n}}\n")
    assert main(["check", str(space)]) == 1
    err = capsys.readouterr().err
    assert "P4043" in err and why in err


def test_a_torchtitan_run_of_an_mla_model_keeps_the_fused_kernel(tmp_path: Path) -> None:
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([row("titan", framework="torchtitan", model_card="deepseek_v2_lite",
                                        parallel={"tp": 1, "pp": 1, "cp": 1, "ep": 8})]))
    [run] = load_runs(path)
    assert run.cand is not None and run.cand.attention == "flash", run.skip
