"""Hostile runs and model-card files: each is a diagnostic (exit 1) or a skipped row, never a crash,
a traceback or gigabytes of memory. Every file is generated here, in tmp_path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.cli import main
from primus_lang.datafiles import MAX_BYTES

DATA = Path(__file__).parent / "data"


def good_row() -> dict[str, Any]:
    rows = yaml.safe_load((DATA / "runs.yaml").read_text())
    row: dict[str, Any] = next(r for r in rows if r["id"] == "t_dense_bf16")
    return row


def refused(path: Path, capsys: pytest.CaptureFixture[str], command: str = "validate") -> str:
    """The one diagnostic code ``command`` refuses ``path`` with (exit 1, no traceback)."""
    args = ["calibrate", "--runs", str(path), "--folds", "2"] if command == "calibrate" else [
        "validate", "--runs", str(path), "--error-format", "json"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if command == "calibrate":
        return err.split("[", 1)[1].split("]", 1)[0]
    diags = json.loads(err)["diagnostics"]
    assert len(diags) == 1
    code: str = diags[0]["code"]
    return code


# Nine lines, each naming its predecessor nine times: 9^9 values once expanded.
BOMB = "".join(f"- &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n" for i in range(9))


@pytest.mark.parametrize("field", ["notes", "id", "parallel", "model_card"])
def test_an_alias_bomb_in_any_field_is_refused(field: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    row = yaml.safe_dump([{**good_row(), field: "BOMB"}]).replace("BOMB", "*a8")
    path = tmp_path / "runs.yaml"
    path.write_text("bombs:\n" + "".join("  " + line + "\n" for line in BOMB.splitlines()) + "rows:\n"
                    + "".join("  " + line + "\n" for line in row.splitlines()))
    assert refused(path, capsys) == "P6008"
    # and at the top level of the file, as the list of rows itself
    path.write_text(BOMB)
    assert refused(path, capsys) == "P6008"


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.yaml"
    path.write_text("- &row {id: x, notes: [*row]}\n")
    assert refused(path, capsys) == "P6008"


def test_aliases_within_the_limit_still_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Anchors are ordinary YAML: a file that shares one mapping between rows is read as before."""
    row = good_row()
    path = tmp_path / "runs.yaml"
    text = yaml.safe_dump([{**row, "id": "a", "parallel": "P"}, {**row, "id": "b", "parallel": "Q"}])
    parallel = json.dumps(row["parallel"])
    path.write_text(text.replace("parallel: P", f"parallel: &p {parallel}").replace("parallel: Q", "parallel: *p"))
    assert main(["validate", "--runs", str(path), "--json", "--no-memory"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["skipped"] for r in rows] == [None, None]


@pytest.mark.parametrize("where", ["runs", "cards"])
def test_lists_nested_1000_deep_are_refused(where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * 1000 + "]" * 1000
    runs = tmp_path / "runs.yaml"
    if where == "runs":
        runs.write_text(f"- id: x\n  notes: {deep}\n")
    else:
        runs.write_text(yaml.safe_dump([good_row()]))
        (tmp_path / "model_cards.yaml").write_text(f"card: {deep}\n")
    assert refused(runs, capsys) == "P6009"


@pytest.mark.parametrize("where", ["runs", "cards"])
def test_a_file_that_is_not_utf8_is_refused(where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.yaml"
    bad = b"- id: caf\xe9\n"
    if where == "runs":
        runs.write_bytes(bad)
    else:
        runs.write_text(yaml.safe_dump([good_row()]))
        (tmp_path / "model_cards.yaml").write_bytes(b"card:\n  note: " + bad)
    assert refused(runs, capsys) == "P6010"
    assert refused(runs, capsys, "calibrate") == "P6010"


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.yaml"
    with runs.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: costs no disk, and is never read past the limit
    assert refused(runs, capsys) == "P6007"


def test_a_5000_digit_integer_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.yaml"
    runs.write_text(yaml.safe_dump([good_row()]).replace("gbs: ", "gbs: " + "9" * 5000 + " #", 1))
    assert refused(runs, capsys) == "P6011"


@pytest.mark.parametrize("text", ["- id: [unclosed\n", "- date: 2024-13-45\n", "- id: *nowhere\n"])
def test_yaml_that_does_not_read_is_p6001(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.yaml"
    runs.write_text(text)
    assert refused(runs, capsys) == "P6001"


def variant(row: dict[str, Any], rid: str, path: str, value: object) -> dict[str, Any]:
    out = copy.deepcopy(row)
    out["id"] = rid
    *parents, key = path.split(".")
    target = out
    for name in parents:
        target = target.setdefault(name, {})
    target[key] = value
    return out


OUT_OF_RANGE = [
    ("gbs", 1.0e308, "`gbs` is 1e+308, above the largest it can be"),
    ("gbs", float("inf"), "`gbs` is inf, not a finite number"),
    ("seq_len", float("nan"), "`seq_len` is nan, not a finite number"),
    ("parallel.tp", -4, "`tp` is -4, below 1"),
    ("parallel.pp", 0, "`pp` is 0, below 1"),
    ("num_gpus", 10**30, "`num_gpus` is 1e+30, above the largest it can be"),
    ("gpus_per_node", 0, "`gpus_per_node` is 0, below 1"),
    ("mbs", 1e20, "`mbs` is 1e+20, above the largest it can be"),
    ("measured.memory_gib", 1e308, "`measured.memory_gib` is 1e+308, not a number above 0"),
    ("measured.tokens_per_sec_per_gpu", float("inf"), "`measured.tokens_per_sec_per_gpu` is inf"),
    ("measured.tokens_per_sec_per_gpu", 0, "`measured.tokens_per_sec_per_gpu` is 0, not a number above 0"),
    ("recompute", {"recompute_granularity": "full", "recompute_num_layers": 1e300},
     "`recompute_num_layers` is 1e+300, above the largest it can be"),
]


def test_a_number_out_of_range_skips_its_row_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = good_row()
    rows = [good] + [variant(good, f"t_{i}", path, value) for i, (path, value, _) in enumerate(OUT_OF_RANGE)]
    runs = tmp_path / "runs.yaml"
    runs.write_text(yaml.safe_dump(rows))
    assert main(["validate", "--runs", str(runs), "--json", "--no-memory"]) == 0
    out = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert out["t_dense_bf16"]["projected"] > 0
    for i, (_, _, reason) in enumerate(OUT_OF_RANGE):
        assert out[f"t_{i}"]["skipped"].startswith(f"value out of range: {reason}"), out[f"t_{i}"]["skipped"]


def test_a_card_number_out_of_range_skips_its_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cards = yaml.safe_load((DATA / "model_cards.yaml").read_text())
    tiny = cards["tiny_moe"]
    cards |= {"inf_hidden": {**tiny, "hidden_size": float("inf")}, "huge_layers": {**tiny, "num_layers": 10**6}}
    (tmp_path / "model_cards.yaml").write_text(yaml.safe_dump(cards))
    good = good_row()
    runs = tmp_path / "runs.yaml"
    runs.write_text(yaml.safe_dump([good, *({**good, "id": name, "model_card": name}
                                            for name in ("inf_hidden", "huge_layers"))]))
    assert main(["validate", "--runs", str(runs), "--json", "--no-memory"]) == 0
    out = {r["id"]: r["skipped"] for r in json.loads(capsys.readouterr().out)["rows"]}
    assert out["t_dense_bf16"] is None
    assert out["inf_hidden"] == "model card `inf_hidden` cannot be read: `hidden_size` is inf, not a whole number"
    assert out["huge_layers"].startswith("model card `huge_layers` cannot be read: `num_layers` is 1,000,000")
