"""A space too large to count or walk is P4190 within a second and a few MiB, not a P9001 from a
petabyte allocation, an int64 overflow in the walk, or minutes and gigabytes holding millions of
candidates (found by hand: `tp : 1 .. 100000` with `pp` and `cp` alike; the 10^8-point space the
enumeration test counts made `check` walk 9.7 million legal points and die at 3 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main

HEAD = "import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\nspace big on mi325x_x8 {\n"
RULE_TABLE = (
    "  model = llama3_1_8b\n  gbs = 64\n  tp : 1 .. 100000\n  pp : 1 .. 100000\n  cp : 1 .. 100000\n}\n"
)
# every rule's table is small, the whole space is 2.5 million points with 1.6 million legal
MANY_LEGAL = (
    "  model = llama3_1_8b\n  gbs : 64 .. 100000 step 64\n  mbs : 1 | 2\n  tp : 1 | 2 | 4 | 8\n"
    "  precision : bf16 | fp8\n  sharding : none | dist_opt | fsdp\n  recompute : none | selective | full(layers: 1 .. 32)\n}\n"
)
# 10^9 slots to walk: conditional axes whose values are never taken
NEVER = (
    "  model = llama3_1_8b\n  gbs = 64\n"
    + "".join(f"  {k} : 1 .. 1000 when false\n" for k in ("first_stage_layers", "last_stage_layers", "mbs"))
    + "}\n"
)


def _run(tmp_path: Path, body: str, *argv: str) -> int:
    path = tmp_path / "big.prx"
    path.write_text(HEAD + body)
    return main([*argv[:1], str(path), *argv[1:], "--error-format", "short"])


@pytest.mark.parametrize(
    "argv", [("check",), ("project", "--top", "1"), ("plan", "--no-emit", "--budget", "5")]
)
def test_a_rule_over_huge_axes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    assert (
        _run(tmp_path, RULE_TABLE, *argv, *(["--out", str(tmp_path / "o")] if argv[0] == "plan" else [])) == 1
    )
    err = capsys.readouterr().err
    assert "P4190" in err and "Traceback" not in err and "P9001" not in err


@pytest.mark.parametrize("body", [MANY_LEGAL, NEVER])
def test_a_search_over_too_many_points_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    assert _run(tmp_path, body, "project", "--top", "1") == 1
    assert "P4190" in capsys.readouterr().err


@pytest.mark.slow
def test_check_keeps_the_counts_and_says_what_it_did_not_walk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, MANY_LEGAL, "check") == 0
    out = capsys.readouterr().out
    assert "legal points    1,593,240" in out
    assert "warning P4190: memory not checked" in out
