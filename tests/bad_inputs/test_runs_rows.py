"""A user's runs file read the way a new user's mistakes need (found by a new user's trial): a field no row
has, a row without an id or with another's, a key written twice, a layout whose dp or node count disagrees,
a measurement no GPU can make or in other units, and a skipped row said without --json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.cli import main
from primus_lang.validate.runs import ROW_FIELDS

ROOT = Path(__file__).parents[2]
GOOD: dict[str, Any] = next(r for r in yaml.safe_load((ROOT / "tests" / "project" / "data" / "runs.yaml").read_text())
                            if r["id"] == "t_dense_bf16")


def _validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *rows: dict[str, Any],
              text: str | None = None) -> tuple[dict[str, dict[str, Any]], str]:
    path = tmp_path / "runs.yaml"
    path.write_text(text if text is not None else yaml.safe_dump([GOOD, *rows]))
    code = main(["validate", "--runs", str(path), "--json", "--no-memory"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    if code:
        return {}, captured.err
    return {r["id"]: r for r in json.loads(captured.out)["rows"]}, captured.err


def _variant(rid: str, **change: Any) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(json.dumps(GOOD))
    row["id"] = rid
    for path, value in change.items():
        *parents, last = path.split("__")
        holder = row
        for name in parents:
            holder = holder[name]
        holder[last] = value
    return row


def test_the_documented_fields_are_the_ones_read() -> None:
    table = (ROOT / "validation" / "published_runs.md").read_text().split("## A card")[0]
    documented = set(re.findall(r"^\| `([a-z0-9_().]+)` \|", table, re.M))
    known = set(ROW_FIELDS) | {f"{k}.{f}" for k, inner in ROW_FIELDS.items() for f in inner}
    assert documented == known


def test_a_misspelt_field_skips_its_row_and_says_what_was_meant(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    typo = _variant("t_typo")
    typo["parallell"] = typo.pop("parallel")
    inner = _variant("t_inner")
    inner["measured"]["tokens_per_sec_per_gpus"] = inner["measured"].pop("tokens_per_sec_per_gpu")
    rows, err = _validate(tmp_path, capsys, typo, inner)
    assert rows["t_typo"]["skipped"] == "unknown field `parallell` (did you mean `parallel`?)"
    assert "did you mean `measured.tokens_per_sec_per_gpu`" in rows["t_inner"]["skipped"]
    assert err.count("W6011") == 2 and rows["t_dense_bf16"]["projected"] > 0


def test_a_row_twice_or_without_an_id_is_set_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    again = _variant("t_dense_bf16")
    anonymous = _variant("x")
    del anonymous["id"]
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([GOOD, again, anonymous]))
    assert main(["validate", "--runs", str(path), "--json", "--no-memory"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)["rows"]
    assert [r["skipped"] or "" for r in rows] == ["", "duplicate id `t_dense_bf16`: row 1 has it too",
                                            "row not understood: the row has no `id`"]
    assert rows[2]["id"] == "#3 (no id)"  # named by its place in the file
    assert captured.err.count("W6011") == 2


def test_a_key_written_twice_is_refused_where_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = yaml.safe_dump([GOOD]).replace("  mbs: ", "  mbs: 4\n  mbs: ", 1)
    _, err = _validate(tmp_path, capsys, text=text)
    assert "holds the key `mbs` twice in one mapping" in err and "runs.yaml:" in err


def test_a_layout_that_disagrees_with_itself_is_said_without_json(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    world = GOOD["num_gpus"]
    dp = _variant("t_dp", parallel__dp=max(world // 2, 1) if world > 1 else 2)
    nodes = _variant("t_nodes", num_nodes=3)
    rows, err = _validate(tmp_path, capsys, dp, nodes)
    assert rows["t_dp"]["skipped"].startswith("layout inconsistent: dp")
    assert rows["t_nodes"]["skipped"].startswith("layout inconsistent: 3 nodes")
    assert err.count("W6013") == 2 and "`t_dp`" in err


@pytest.mark.parametrize(("scale", "says"), [(1000.0, "more than the GPU can do"), (0.0005, "check its units")])
def test_a_measurement_no_run_could_make_is_set_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      scale: float, says: str) -> None:
    measured = GOOD["measured"]["tokens_per_sec_per_gpu"] * scale
    rows, err = _validate(tmp_path, capsys, _variant("t_odd", measured__tokens_per_sec_per_gpu=measured))
    assert rows["t_odd"]["skipped"].startswith("measurement implausible:") and says in rows["t_odd"]["skipped"]
    assert "W6011" in err


def test_calibrate_refuses_a_gpu_it_has_nothing_to_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([GOOD]))
    assert main(["calibrate", "--runs", str(path), "--gpu", "h100", "--min-rows", "1", "--out",
                 str(tmp_path / "site.prx")]) == 1
    err = capsys.readouterr().err
    assert "P6002" in err and "--gpu `h100` has nothing to fit" in err and not (tmp_path / "site.prx").exists()


def test_validate_projects_on_a_sites_own_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what `calibrate --out` or `learn` wrote, named for the part it stands for: the rows of that GPU project on it
    site = tmp_path / "site.prx"
    site.write_text("import hardware.calibrated (h100_sxm_calibrated)\n"
                    "gpu h100_sxm_calibrated_site = h100_sxm_calibrated {\n  efficiency {\n    gemm_max = 0.2\n  }\n}\n")
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([GOOD]))
    projected = {}
    for flag in (["--calibrated"], ["--profiles", str(site)]):
        assert main(["validate", "--runs", str(path), "--json", "--no-memory", *flag]) == 0
        projected[flag[0]] = json.loads(capsys.readouterr().out)["rows"][0]["projected"]
    assert projected["--profiles"] < 0.7 * projected["--calibrated"]
    assert main(["validate", "--runs", str(path), "--no-memory", "--profiles", str(site)]) == 0
    assert "on the profiles of" in " ".join(capsys.readouterr().out.split())  # the table's title says which
    card = tmp_path / "card.prx"
    card.write_text("import models.llama3 (llama3_8b)\nmodel m = llama3_8b { }\n")
    assert main(["validate", "--runs", str(path), "--profiles", str(card)]) == 1
    assert "defines no GPU profile" in capsys.readouterr().err
    other = tmp_path / "other.prx"
    other.write_text("import hardware.calibrated (h100_sxm_calibrated)\ngpu my_gpu = h100_sxm_calibrated { }\n")
    assert main(["validate", "--runs", str(path), "--profiles", str(other)]) == 1
    assert "`my_gpu`, which stands for no GPU primusc knows" in capsys.readouterr().err


def test_a_count_written_as_text_is_the_rows_wrong_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `8k` used to read as a field left unset ("layout incomplete"), with no warning
    rows, err = _validate(tmp_path, capsys, _variant("t_text", seq_len="8k"))
    assert rows["t_text"]["skipped"] == "wrong type: `seq_len` is `8k`, not a whole number (write 8192, not 8k)"
    assert "W6011" in err
