"""Hostile data files found by the third review (issue 22): a Primus experiment's `${VAR:default}` read
by an unbounded loader, an empty override name, a `--moe-layer-freq` repetition built as a list, a
training log cut mid-line read whole, and runs-file fields coerced (`tp: true` as 1, `mbs: 2.5` as 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from primus_lang.bench.logs import parse_log
from primus_lang.cli import main

FIXTURES = Path(__file__).parents[1] / "recipes" / "fixtures"
EXPERIMENT = FIXTURES / "MI300X" / "llama3.1_8B-BF16-pretrain.yaml"
BOMB = "[" + ", ".join(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ["1"] * 9) + "]" for i in range(9)) + "]"


def _import(tmp_path: Path, recipe: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code = main(["import-recipe", str(recipe), "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100",
                 "--out", str(tmp_path / "space.prx"), *extra])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "P9001" not in err, err
    return err


# Primus substitutes a `${VAR:default}` as text and types it only as a boolean or a number
# (primus/core/config/yaml_loader.py): a tag, a list or a mapping there is a string, never YAML
@pytest.mark.parametrize(("line", "code", "says"), [
    ('      micro_batch_size: "${X:!!python/object/apply:os.system [echo hi]}"', "P3123", "whole number"),
    ('      micro_batch_size: "${X:[a}"', "P3123", "whole number"),
    ('      micro_batch_size: "${MBS:{a: 1}}"', "P3123", "whole number"),
    (f"      micro_batch_size: '${{MBS:{BOMB}}}'", "P3123", "whole number"),
    ('      "": 5', "P3122", "not an argument name"),
])
def test_a_primus_override_that_is_no_value_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       line: str, code: str, says: str) -> None:
    key = line.split(":", 1)[0]
    kept = [old for old in EXPERIMENT.read_text().splitlines() if old.split(":", 1)[0] != key]
    text = "\n".join(kept).replace("      seq_length:", line + "\n      seq_length:") + "\n"
    recipe = tmp_path / "MI300X" / "exp.yaml"
    recipe.parent.mkdir()
    recipe.write_text(text)
    err = _import(tmp_path, recipe, capsys)
    assert f"[{code}]" in err and says in err and f"{recipe}:" in err


def test_a_moe_layer_freq_repetition_is_counted_not_built(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    for count in ("150000000", "999999999999", "9" * 5000):
        recipe = tmp_path / "run.sh"
        recipe.write_text((FIXTURES / "megatron_deepseek_v3.sh").read_text()
                          .replace("([0]*3+[1]*58)", f"([0]*3+[1]*{count})"))
        err = _import(tmp_path, recipe, capsys)
        assert "P3123" in err and "one entry per layer (61)" in err
        assert len(err) < 2000  # the value is shown cut short


def test_a_log_cut_mid_line_leaves_its_last_line_out_however_it_is_read(tmp_path: Path) -> None:
    line = (" [2025-01-01 00:00:00] iteration {i:8d}/     100 | consumed samples: {s:d} | "
            "elapsed time per iteration (ms): {ms} | global batch size:   128 |\n")
    text = "".join(line.format(i=i, s=128 * i, ms="1500.0") for i in (1, 2)) + line.format(i=3, s=384, ms="15")
    text = text.removesuffix("\n")
    path = tmp_path / "train.log"
    path.write_text(text)
    from primus_lang.datafiles import read_lines

    streamed = parse_log(read_lines(path, *(None,) * 2, "log"), str(path))  # type: ignore[arg-type]
    whole = parse_log(text, str(path))
    for log in (streamed, whole):
        assert log.cut_line == 3 and [it.seconds for it in log.iterations] == [1.5, 1.5]
    assert parse_log(text + "\n").cut_line == 0


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("parallel.tp", True, "value out of range: `tp` is True, not a whole number"),
    ("mbs", 2.5, "value out of range: `mbs` is 2.5, not a whole number"),
    ("seq_len", True, "value out of range: `seq_len` is True, not a whole number"),
    ("measured.tokens_per_sec_per_gpu", True, "value out of range: `measured.tokens_per_sec_per_gpu` is True"),
    ("parallel", 0, "wrong type: `parallel` is int `0`, not a mapping"),
    ("precision", ["BF16"], "wrong type: `precision` is list `['BF16']`, not text"),
    ("hardware", "x", "wrong type: `hardware` is str `x`, not a mapping"),
    ("model_card", [1], "wrong type: `model_card` is list `[1]`, not text"),
])
def test_a_runs_field_of_the_wrong_kind_skips_its_row_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, reason: str) -> None:
    rows = yaml.safe_load((Path(__file__).parents[1] / "project" / "data" / "runs.yaml").read_text())
    good = next(r for r in rows if r["id"] == "t_dense_bf16")
    bad = json.loads(json.dumps(good))
    bad["id"] = "t_bad"
    *parents, last = field.split(".")
    holder = bad
    for name in parents:
        holder = holder[name]
    holder[last] = value
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump([good, bad]))
    assert main(["validate", "--runs", str(path), "--json", "--no-memory"]) == 0
    captured = capsys.readouterr()
    out = {r["id"]: r for r in json.loads(captured.out)["rows"]}
    assert out["t_dense_bf16"]["projected"] > 0
    assert out["t_bad"]["skipped"].startswith(reason), out["t_bad"]["skipped"]
    assert "W6011" in captured.err and "`t_bad`" in captured.err and "Error:" not in captured.err
