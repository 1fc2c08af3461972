from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from primus_lang.cli import main

SPACE = """
import hardware.nvidia (h200)
model micro {
  num_layers = 4; hidden = 64; ffn_hidden = 128; heads = 4; kv_heads = 2; head_dim = 16
  vocab = 256; seq_len = 64; max_position_embeddings = 128
}
cluster c { gpu = h200; nodes = 1; gpus_per_node = 4 }
space s on c {
  model = micro; seq_len = 64; gbs = 16
  tp : 1 | 2
  mbs : 1 | 2
}
"""


def test_bench_profiles_a_space_then_finds_everything_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not hasattr(importlib.import_module("primus_lang.check"), "legal_points"):
        pytest.skip("the checker (check.legal_points) has not landed")
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    db = tmp_path / "p.sqlite"
    assert main(["bench", str(space), "--db", str(db)]) == 0
    first = capsys.readouterr().out
    assert " 0 cached" in first and "4 candidates" in first
    assert main(["bench", str(space), "--db", str(db)]) == 0
    second = capsys.readouterr().out
    assert " 0 measured" in second
    assert main(["bench", str(space), "--db", str(db), "--blocks", "--limit", "1"]) == 0
    assert "layer blocks: 1 measured now" in capsys.readouterr().out


def test_bench_with_a_bad_device_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--check", "--device", "tpu", "--db", str(tmp_path / "p.sqlite")]) == 1
    assert "P6802" in capsys.readouterr().err
