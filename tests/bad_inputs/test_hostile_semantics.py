"""Expressions past 64-bit arithmetic are P4192, not a silent wrap (issue 22, hostile inputs).

Found by hand: `require 9223372036854775807 * tp > 0` removed every point with TP > 1 (the product
wrapped negative), `let x = 2*2*...*2` (66 factors) read as 0 and emptied the space as P4100,
`1e300 * 1e300` read as infinity and kept every point: each decided the constraint against what it
said, with exit 0 or a misleading rule. The evaluator (check/evaluate.py) now refuses a result that
left 64-bit arithmetic at a point where the expression is read, as it refuses a zero divisor (P4039).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.cli import main

HEAD = (
    "import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
    "space s on mi325x_x8 {\n  model = llama3_1_8b\n  gbs = 128\n  tp : 1 | 2\n  pp : 1 | 2\n"
)
MAX = "9223372036854775807"


def _run(tmp_path: Path, body: str, *argv: str) -> int:
    path = tmp_path / "s.prx"
    path.write_text(HEAD + body + "\n}\n")
    extra = ["--out", str(tmp_path / "o")] if argv[0] == "plan" else []
    return main([argv[0], str(path), *argv[1:], *extra, "--error-format", "short"])


@pytest.mark.parametrize(
    "body",
    [
        f"  require {MAX} * tp > 0",  # wraps only where tp = 2
        f"  require {MAX} + 1 > 0",
        f"  require 0 - {MAX} - 2 < 0",
        f"  require (0 - {MAX} - 1) // (0 - 1) > 0",
        f"  require -(0 - {MAX} - 1) > 0",
        "  let x = " + "*".join(["2"] * 66) + "\n  require x > 0",
        "  let x = 1e300 * 1e300\n  require x > 0",  # infinity
        "  let x = 1e300 * 1e300 - 1e300 * 1e300\n  require x == x",  # NaN
        "  require 1e300 / 0.000000000000000000001 > 0",
        f"  vpp : 2 when {MAX} * pp > 0",
    ],
)
@pytest.mark.parametrize("argv", [("check",), ("project", "--top", "1", "--oracle", "simulate")])
def test_an_overflowing_expression_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, argv: tuple[str, ...]
) -> None:
    assert _run(tmp_path, body, *argv) == 1
    err = capsys.readouterr().err
    assert "P4192" in err and "Traceback" not in err and "P9001" not in err


def test_plan_refuses_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, f"  require {MAX} * tp > 0", "plan", "--budget", "5") == 1
    assert "P4192" in capsys.readouterr().err


@pytest.mark.parametrize(
    "body",
    [
        f"  require pp == 1 or {MAX} * (pp - 1) > 0",  # read only where pp > 1, where it does not wrap
        f"  require {MAX} - tp < {MAX}",
        f"  require (0 - {MAX} - 1) % (0 - 1) == 0",
        f"  require {MAX} // 0.0000000001 > 0",
    ],
)
def test_values_at_the_edge_that_do_not_overflow_still_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    assert _run(tmp_path, body, "check") == 0, capsys.readouterr().err


@pytest.mark.parametrize("argv", [("check",), ("project", "--top", "1", "--oracle", "simulate")])
def test_a_long_chain_of_lets_is_read_without_recursion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    """Each `let` reading the one before it, 2,000 deep: the frame derived a let by evaluating it,
    which derived the one it read, and so on, a RecursionError (P9001) past a few hundred."""
    lets = "  let x0 = tp\n" + "".join(f"  let x{i} = x{i - 1} + 1\n" for i in range(1, 2000))
    assert _run(tmp_path, lets + "  require x1999 >= 2000", *argv) == 0, capsys.readouterr().err
    assert _run(tmp_path, lets + "  require x1999 > 2000", *argv) == 0  # tp = 2 only
    err = capsys.readouterr()
    assert "P9001" not in err.err and "Traceback" not in err.err


@pytest.mark.parametrize("budget", ["budget 0 evals", "budget 1 ns", "budget 0 min"])
def test_a_budget_that_ends_before_the_first_evaluation_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    """The space's own budget of nothing: plan printed an empty table and exited 1 with no code."""
    path = tmp_path / "s.prx"
    path.write_text(HEAD + f"  {budget}\n}}\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "o"), "--error-format", "short"]) == 1
    err = capsys.readouterr().err
    assert "P8009" in err and f"{path}:8:" in err


@pytest.mark.parametrize("name", ["bf16", "zbv", "none", "true", "false"])
def test_a_let_may_not_hide_a_constant(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """`let bf16 = 4` turned every later `bf16` into 4 (`precision == bf16` a type error far from its
    cause); `let true = 0` was accepted and could never be read."""
    assert _run(tmp_path, f"  precision : bf16 | fp8\n  let {name} = 4", "check") == 1
    err = capsys.readouterr().err
    assert "P2007" in err and f"hides the constant `{name}`" in err
