"""Numeric `--var` values are ASCII digits in range: `str.isdigit` takes `²` and `١`, which `int`
refuses, and `float` takes `inf`, `nan` and `1_0`; each is a P7004 diagnostic, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.emit import EmitContext, emit
from primus_lang.emit.context import VARIABLES
from primus_lang.resources import data_dir
from tests.emit.ir_cases import CASES

WHOLE = ["train_iters", "save_interval", "eval_iters", "eval_interval", "log_interval", "master_port"]
NOT_WHOLE = ["\u00b2", "\u0661\u0662", "\uff11", "9" * 5000, "-1", "+5", " 5", "5 ", "0x10", "1_000", "1e3", "10000000000"]


@pytest.mark.parametrize("name", WHOLE)
@pytest.mark.parametrize("value", NOT_WHOLE)
def test_integer_variables_take_ascii_digits_in_range(name: str, value: str) -> None:
    space, cand = CASES["mixtral_h100"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", EmitContext(variables={name: value}))
    (diag,) = err.value.diagnostics
    assert diag.code.id == "P7004" and len(diag.message) < 200


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400", "1_0e-4", "\u0661e-4", "0x1p-4", " 1e-4",
                                   "-1", "0", "0.0", "1e-400"])
def test_the_learning_rate_is_a_finite_ascii_number(value: str) -> None:
    space, cand = CASES["mixtral_h100"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", EmitContext(variables={"lr": value}))
    assert [d.code.id for d in err.value.diagnostics] == ["P7004"]


@pytest.mark.parametrize(("name", "value"), [("train_iters", "1000000000"), ("eval_iters", "0"), ("master_port", "65535"),
                                             ("lr", "3.0e-4"), ("lr", "1e-4"), ("lr", ".0001"), ("lr", "2")])
def test_ordinary_values_still_pass(name: str, value: str) -> None:
    assert VARIABLES[name].check(value) is None


def test_the_command_line_gives_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = data_dir("examples") / "llama3_70b_h100.prx"
    point = "tp=4,pp=8,schedule=interleaved,vpp=5,cp=2,mbs=1,recompute=selective,precision=fp8"
    assert main(["--error-format", "short", "emit", str(example), "--point", point,
                 "--out", str(tmp_path / "out"), "--var", "train_iters=\u00b2"]) == 1
    err = capsys.readouterr().err
    assert "[P7004]" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["My Image:latest", "nvcr.io/nvidia/nemo:25.09 ", "-v/:/host", "img\tx"])
def test_a_container_image_no_runtime_can_start_is_refused(value: str) -> None:
    """A space or a leading `-` reaches the PyTorchJob or `--container-image` quoted, and the pod or
    container then fails to start (InvalidImageName, an unknown option): refused before anything is written."""
    space, cand = CASES["mixtral_h100"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", EmitContext(variables={"container_image": value}))
    assert [d.code.id for d in err.value.diagnostics] == ["P7004"]


@pytest.mark.parametrize("value", ["nvcr.io/nvidia/nemo:25.09", "nvcr.io#nvidia/nemo:25.09", "docker://rocm/primus:v26.5",
                                   "/shared/images/nemo.sqsh", "localhost:5000/team/img@sha256:" + "a" * 64])
def test_every_runtime_s_image_forms_pass(value: str) -> None:
    assert VARIABLES["container_image"].check(value) is None
