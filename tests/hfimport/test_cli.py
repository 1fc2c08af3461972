"""`primusc import-hf` end to end: output file, no silent overwrite, exit codes, diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_writes_card_to_out(tmp_path: Path) -> None:
    out = tmp_path / "mixtral.prx"
    assert main(["import-hf", str(FIXTURES / "mixtral_8x7b.json"), "--out", str(out), "--name", "mx"]) == 0
    text = out.read_text()
    assert text.startswith("# Model card written by `primusc import-hf`")
    assert "model mx {" in text and "num_experts = 8" in text


def test_stdout_without_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-hf", str(FIXTURES / "deepseek_v3.json")]) == 0
    assert "kv_lora_rank = 512" in capsys.readouterr().out


def test_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "card.prx"
    out.write_text("# hand-edited\n")
    assert main(["import-hf", str(FIXTURES / "llama3_1_70b.json"), "--out", str(out)]) == 1
    assert "P3107" in capsys.readouterr().err
    assert out.read_text() == "# hand-edited\n"
    assert main(["import-hf", str(FIXTURES / "llama3_1_70b.json"), "--out", str(out), "--force"]) == 0
    assert "num_layers = 80" in out.read_text()


def test_bad_name_and_bad_seq_len(capsys: pytest.CaptureFixture[str]) -> None:
    config = str(FIXTURES / "llama3_1_70b.json")
    assert main(["import-hf", config, "--name", "3llama"]) == 1
    assert "P3108" in capsys.readouterr().err
    assert main(["import-hf", config, "--seq-len", "0"]) == 1
    assert "P3106" in capsys.readouterr().err


def test_hybrid_refusal_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--error-format", "short", "import-hf", str(FIXTURES / "jamba_hybrid.json")]) == 1
    err = capsys.readouterr().err
    assert "[P3104]" in err and "jamba_hybrid.json:" in err


def test_accepts_the_model_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "Mixtral-8x7B-v0.1"
    folder.mkdir()
    (folder / "config.json").write_text((FIXTURES / "mixtral_8x7b.json").read_text())
    assert main(["import-hf", str(folder)]) == 0
    assert "model mixtral_8x7b_v0_1 {" in capsys.readouterr().out


def test_an_out_that_is_a_folder_is_said_so_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cards"
    folder.mkdir()
    assert main(["import-hf", str(FIXTURES / "llama3_1_70b.json"), "--out", str(folder)]) == 1
    assert "is a folder where an output file goes" in capsys.readouterr().err
