"""Hostile sources found by the third review (issue 22): each was a P9001, a hang, a parse error on a
documented form, or a valid-looking file read as something else with exit 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from primus_lang.check import summarize
from primus_lang.check.enumerate import _merged
from primus_lang.cli import main
from primus_lang.lower import loads_program

HEAD = (
    "import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8, mi300x_x8)\n"
    "space s on mi325x_x8 {\n  model = llama3_1_8b\n  gbs = 128\n  tp : 1 | 2 | 4\n"
)


def _check(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str], text: str | None = None) -> tuple[int, str]:
    path = tmp_path / "s.prx"
    path.write_text(text if text is not None else HEAD + body + "\n}\n")
    code = main(["check", str(path), "--error-format", "short"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "P9001" not in captured.err
    return code, captured.out + captured.err


def _legal(body: str) -> int:
    return summarize(loads_program(HEAD + body + "\n}\n", "s.prx").spaces[0]).legal


@pytest.mark.parametrize("body", [
    '  pipeline_layout : "Et*32L" | ""\n  require pipeline_layout == 3',
    '  require pipeline_layout > 3',
    '  require -pipeline_layout < 0',
    '  let a = min(pipeline_layout, 4)\n  require a > 0',
])
def test_the_text_knob_in_arithmetic_is_a_type_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     body: str) -> None:
    code, out = _check(tmp_path, body, capsys)
    assert code == 1 and "P3016" in out


def test_the_text_knob_compares_with_text() -> None:
    axis = '  pipeline_layout : "Et*32L" | ""\n'
    assert _legal(axis) == 6
    assert _legal(axis + '  require pipeline_layout == "Et*32L"') == 3
    assert _legal(axis + '  require pipeline_layout in ("x", "")') == 3


@pytest.mark.parametrize("body", [
    '  precision : bf16 | fp8\n  mbs : 1 | 2 when precision == "fp9"',
    '  precision : bf16 | fp8\n  mbs : 1 | 2 when precision in ("fp9", "bf16")',
    '  require schedule == fp8',  # a value of another knob
    '  require "zbv" != precision',
])
def test_an_enum_knob_compared_with_a_name_it_never_takes_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str) -> None:
    code, out = _check(tmp_path, body, capsys)
    assert code == 1 and "P3016" in out and "is not a value of" in out


def test_the_remainder_operator_reads_after_a_number_and_formats_back() -> None:
    # `8 %` was lexed as the number 8 in percent, and fmt wrote `(8) % tp` as that
    assert _legal("  require 8 % tp == 0") == _legal("") == 3
    assert _legal("  require 6%tp == 0") == 2
    assert _legal("  mbs : 1 | 2 when 4 % tp == 0") == 6
    source = HEAD + "  require (6) % tp == 0\n  fits memory headroom 5%\n}\n"
    from primus_lang.syntax import format_source

    formatted = format_source(source, "s.prx")
    assert "require 6 % tp == 0" in formatted and "headroom 5%" in formatted
    assert loads_program(formatted, "s.prx").spaces[0] == loads_program(source, "s.prx").spaces[0]


def test_many_requires_over_the_same_axes_contract_as_one_table() -> None:
    # 1,000 `require tp <= ...` lines made einsum search a contraction order over 1,000 operands
    rng = np.random.default_rng(0)
    tp = [(("tp",), rng.integers(0, 2, 4)) for _ in range(300)]
    tp_pp = [(("pp", "tp"), rng.integers(0, 2, (3, 4))) for _ in range(300)]
    merged = _merged([*tp, *tp_pp], ["tp", "pp"])
    assert len(merged) == 1 and merged[0][0] == ("tp", "pp")
    expected = np.prod([t for _, t in tp], axis=0)[:, None] * np.prod([t.T for _, t in tp_pp], axis=0)
    assert np.array_equal(merged[0][1], expected)
    body = "".join(f"  require tp <= {8 + i}\n" for i in range(1000))
    assert _legal(body + "  require tp * 2 <= 4") == 2


def test_on_and_a_cluster_statement_naming_another_cluster_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(tmp_path, "  cluster = mi300x_x8", capsys)
    assert code == 1 and "P2007" in out and "on mi325x_x8" in out
    code, out = _check(tmp_path, "  cluster = mi325x_x8 { nodes = 2 }", capsys)
    assert code == 0 and "(16 GPUs)" in out


def test_a_file_with_lone_carriage_returns_keeps_every_line(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    second = HEAD.replace("space s ", "space s2 ") + "}\n"
    text = (HEAD + "}  # only up to TP 4\n" + second).replace("\n", "\r")
    code, out = _check(tmp_path, "", capsys, text)
    assert code == 0 and "2 spaces" in out


@pytest.mark.parametrize("nic", ["0 x 400 Gbps", "8 x 0 Gbps"])
def test_a_nic_of_nothing_is_refused_not_read_as_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              nic: str) -> None:
    text = HEAD.replace("space s on mi325x_x8 {", f"space s {{\n  cluster = mi325x_x8 {{ nic = {nic} }}") + "}\n"
    code, out = _check(tmp_path, "", capsys, text)
    assert code == 1 and "P3009" in out and "at least one NIC" in out


def test_learned_positions_hold_the_sequence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = ("gpu g { vendor = amd; peak_bf16 = 1000 TFLOP/s; hbm_capacity = 192 GB; hbm_bandwidth = 5 TB/s\n"
             "  scale_up_bandwidth = 400 GB/s }\ncluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n"
             "model m { num_layers = 2; hidden = 64; ffn_hidden = 64; heads = 4; vocab = 100; seq_len = 64\n"
             "  max_position_embeddings = 32; position = learned }\n")
    code, out = _check(tmp_path, "", capsys, model + "space s on c { model = m; gbs = 8; seq_len : 32 | 64 }\n")
    assert code == 0 and "P4041" in out
    code, out = _check(tmp_path, "", capsys, model + "space s on c { model = m; gbs = 8 }\n")
    assert code == 1 and "P4041" in out and "holds 32" in out
    rope = model.replace("position = learned", "position = rope")
    assert _check(tmp_path, "", capsys, rope + "space s on c { model = m; gbs = 8 }\n")[0] == 0


def test_an_import_of_a_file_that_is_not_a_source_is_refused_unread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:SECRET-HASH:20228\n")
    code, out = _check(tmp_path, "", capsys, f'import "{secret}" (x)\n')
    assert code == 1 and "P2003" in out and "SECRET" not in out
