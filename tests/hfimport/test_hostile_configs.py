"""Hostile config.json files: a diagnostic and exit 1, never a traceback, and never a card that
`primusc check` would refuse. Every file is generated here, in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from primus_lang.cli import main
from primus_lang.datafiles import MAX_BYTES

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(stem: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{stem}.json").read_text())
    return data


def refused(config: Path, capsys: pytest.CaptureFixture[str], out: Path | None = None) -> list[dict[str, Any]]:
    args = ["--error-format", "json", "import-hf", str(config)] + (["--out", str(out)] if out else [])
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    diags: list[dict[str, Any]] = json.loads(err)["diagnostics"]
    return diags


def test_a_config_nested_2000_deep_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "x": ' + "[" * 2000 + "]" * 2000 + "}")
    assert [d["code"] for d in refused(path, capsys)] == ["P3110"]
    # deeper than the limit but shallow enough for the parser: refused the same way
    path.write_text('{"model_type": "llama", "x": ' + '{"a": ' * 80 + "1" + "}" * 80 + "}")
    assert [d["code"] for d in refused(path, capsys)] == ["P3110"]


def test_a_5000_digit_integer_is_refused_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    text = json.dumps(fixture("llama3_1_70b"), indent=2)
    path.write_text(text.replace('"hidden_size": 8192', '"hidden_size": ' + "9" * 5000))
    (diag,) = refused(path, capsys)
    assert diag["code"] == "P3111"
    line = next(i for i, row in enumerate(text.splitlines(), 1) if '"hidden_size"' in row)
    assert diag["span"]["line"] == line


def test_a_config_past_the_size_limit_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    with path.open("wb") as f:
        f.truncate(MAX_BYTES + 1)
    assert [d["code"] for d in refused(path, capsys)] == ["P3109"]


def test_a_config_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"model_type": "llama\xff"}')
    assert [d["code"] for d in refused(path, capsys)] == ["P3101"]


@pytest.mark.parametrize("key", ["rope_theta", "router_aux_loss_coef"])
@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN"])
def test_non_finite_numbers_are_bad_values(key: str, value: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fixture("mixtral_8x7b") | {key: "X"}).replace('"X"', value))
    out = tmp_path / "card.prx"
    diags = refused(path, capsys, out)
    assert [d["code"] for d in diags] == ["P3106"] and f"`{key}` is {value}" in diags[0]["message"]
    assert not out.exists()


@pytest.mark.parametrize(("stem", "change"), [
    ("mixtral_8x7b", {"num_experts_per_tok": 9}),
    ("qwen3_235b_a22b", {"num_experts_per_tok": 129}),
    ("deepseek_v3", {"num_experts_per_tok": 300}),
])
def test_more_experts_per_token_than_experts_writes_no_card(
        stem: str, change: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fixture(stem) | change))
    out = tmp_path / "card.prx"
    (diag,) = refused(path, capsys, out)
    assert diag["code"] == "P3112" and "cannot exceed `num_experts`" in diag["message"]
    assert not out.exists()


def test_more_dense_layers_than_layers_writes_no_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: `first_k_dense_replace: 100` on DeepSeek-V3's 61 layers was written and checked."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fixture("deepseek_v3") | {"first_k_dense_replace": 100}))
    out = tmp_path / "card.prx"
    (diag,) = refused(path, capsys, out)
    assert diag["code"] == "P3112" and "`dense_layers` (100) leaves none of the 61 layers a MoE layer" in diag["message"]
    assert not out.exists()


SPACE = """import "./card.prx" ({name})
import hardware.amd (mi325x)
cluster c {{ gpu = mi325x; nodes = 1; gpus_per_node = 8 }}
space s on c {{ model = {name}; seq_len = 4096; gbs = 64; tp = 1; pp = 1 }}
"""


@pytest.mark.parametrize("stem", sorted(p.stem for p in FIXTURES.glob("*.json") if p.stem != "jamba_hybrid"))
def test_every_card_import_hf_writes_passes_check(stem: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    card = tmp_path / "card.prx"
    assert main(["import-hf", str(FIXTURES / f"{stem}.json"), "--out", str(card), "--name", "imported"]) == 0
    space = tmp_path / "space.prx"
    space.write_text(SPACE.format(name="imported"))
    assert main(["check", str(space)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(("pattern", "layers", "said"), [
    ("NaN", None, "pattern holds 'N', 'a'"),
    ("4", None, "pattern holds '4'"),
    (None, 2**31, "num_layers is 2147483648"),
])
def test_a_hybrid_pattern_that_disagrees_is_a_bad_value(pattern: str | None, layers: int | None, said: str,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the card's own consistency check (ir/model.py) raised ValueError past import-hf: P9001
    data = fixture("nemotron_3_nano_30b_a3b")
    if pattern is not None:
        data["hybrid_override_pattern"] = pattern
    if layers is not None:
        data["num_hidden_layers"] = layers
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data, indent=2))
    (diag,) = refused(config, capsys)
    assert diag["code"] == "P3106" and said in diag["message"]
    assert diag["span"]["line"] > 1
