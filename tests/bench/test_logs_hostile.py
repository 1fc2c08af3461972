"""Garbage training logs: `calibrate-log` answers each with a diagnostic naming the line (exit 1) or
a finite factor (exit 0), never a crash and never a recipe no run can have. Every log is generated
here, in tmp_path, from the Megatron fixture."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from primus_lang import datafiles
from primus_lang.cli import main

MEGATRON = (Path(__file__).parent / "logs" / "megatron_llama8b_tp2.log").read_text()

SPACE = """
import models.llama3 (llama3_1_8b)
import hardware.amd (mi325x)
cluster c {{ gpu = mi325x; nodes = {nodes}; gpus_per_node = 8 }}
space s on c {{ model = llama3_1_8b; seq_len = 8192; gbs = 128 }}
"""


def calibrate(tmp_path: Path, log_text: str | bytes, capsys: pytest.CaptureFixture[str],
              nodes: int = 1) -> tuple[int, str, str]:
    space = tmp_path / "s.prx"
    space.write_text(SPACE.format(nodes=nodes))
    log = tmp_path / "run.log"
    if isinstance(log_text, bytes):
        log.write_bytes(log_text)
    else:
        log.write_text(log_text)
    code = main(["--error-format", "json", "calibrate-log", str(log), "--warmup", "1", "--space", str(space), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def refused_at(tmp_path: Path, log_text: str, capsys: pytest.CaptureFixture[str], nodes: int = 1) -> tuple[str, int]:
    code, _, err = calibrate(tmp_path, log_text, capsys, nodes)
    assert code == 1
    (diag,) = json.loads(err)["diagnostics"]
    return diag["code"], (diag["span"] or {}).get("line", 0)


@pytest.mark.parametrize("value", ["0", "-18912.6", "1.2.3", "1\u00b2", "", "1e999", "nan", "inf"])
def test_a_bad_elapsed_time_names_its_line(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = MEGATRON.replace("(ms): 18912.6", f"(ms): {value}")
    assert refused_at(tmp_path, log, capsys) == ("P6012", line_of(MEGATRON, "(ms): 18912.6"))


@pytest.mark.parametrize(("arg", "value"), [
    ("tensor_model_parallel_size", "-4"), ("tensor_model_parallel_size", "0"),
    ("tensor_model_parallel_size", "\u00b2"), ("tensor_model_parallel_size", "\u0662"),  # Arabic-Indic 2
    ("pipeline_model_parallel_size", "0"), ("micro_batch_size", "0"), ("global_batch_size", "1.5"),
    ("seq_length", "9" * 5000), ("recompute_granularity", "full\n  recompute_num_layers .... x"),
])
def test_a_bad_argument_names_its_line(arg: str, value: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = re.sub(rf"({arg} \.+ ).*", lambda m: m.group(1) + value, MEGATRON, count=1)
    needle = "recompute_num_layers" if "recompute_num_layers" in value else arg
    assert refused_at(tmp_path, log, capsys) == ("P6012", line_of(log, needle))


def test_a_pipeline_that_does_not_divide_the_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """32 layers over PP 3 on 24 GPUs: every count divides but the layers, which Megatron refuses."""
    log = re.sub(r"(pipeline_model_parallel_size \.+ ).*", r"\g<1>3", MEGATRON)
    code, line = refused_at(tmp_path, log, capsys, nodes=3)
    assert (code, line) == ("P6012", line_of(log, "pipeline_model_parallel_size"))


def test_a_log_past_the_size_limit_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datafiles, "MAX_LOG_BYTES", len(MEGATRON) - 1)
    code, _, err = calibrate(tmp_path, MEGATRON, capsys)
    assert code == 1 and json.loads(err)["diagnostics"][0]["code"] == "P6013"


def test_undecodable_bytes_and_long_lines_are_read_past(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    noise = b"\xff\xfe garbage \x00\n" + b"x" * (3 * datafiles.MAX_LINE) + b"\n"
    code, out, _ = calibrate(tmp_path, noise + MEGATRON.encode(), capsys)
    assert code == 0 and json.loads(out)["runs"][0]["measured_s"] == pytest.approx(18.905)


GARBAGE = ["0", "-1", "1.2.3", "\u00b2", "1e400", "99999999999999999999", "abc", ""]


@pytest.mark.parametrize("value", GARBAGE)
def test_garbage_anywhere_is_a_diagnostic_or_a_finite_factor(value: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Each number of the log (arguments and iteration lines) replaced by garbage in turn."""
    numbers = list(re.finditer(r"(?<=\.\.\. )\d+|(?<=\(ms\): )[\d.]+|(?<=size: {3})\d+", MEGATRON))
    assert len(numbers) > 10
    for match in numbers:
        log = MEGATRON[:match.start()] + value + MEGATRON[match.end():]
        code, out, _ = calibrate(tmp_path, log, capsys)
        assert code in (0, 1)
        if code == 0:
            factor = json.loads(out)["factor"]
            assert math.isfinite(factor) and factor > 0
