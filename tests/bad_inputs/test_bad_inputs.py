"""Every bad input gives its diagnostic code, span and hint (snapshot), and never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from primus_lang.check import summarize
from primus_lang.check.enumerate import require_legal
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError, Diagnostic, render
from primus_lang.lower import load_program
from primus_lang.syntax import parse

CASES = Path(__file__).parent / "cases"

EXPECTED = {
    "axis_in_model": "P3012",
    "bad_enum": "P3005",
    "budget_word_typo": "P1001",
    "budget_unknown_time_unit": "P1005",
    "dense_layers_over_layers": "P3009",
    "price_with_currency": "P1001",
    "price_with_currency_other": "P1001",
    "price_with_dollar_sign": "P1002",
    "train_tokens_without_suffix": "P3009",
    "train_tokens_lower_suffix": "P3007",
    "cost_required_without_price": "P3008",
    "count_suffix_after_fraction": "P1001",
    "trailing_bar": "P1001",
    "recompute_typo": "P3007",
    "repeated_value": "P3039",
    "run_time_in_hours": "P1005",
    "run_time_days_first": "P1005",  # the days before `time_to_train`: written the other way round
    "train_tokens_in_iterations": "P1005",
    "count_then_word": "P1001",  # `15T tokens`, not a statement named `tokens` failing at the next line
    "chained_comparison": "P1001",  # not blamed on the `15T` of the line before, as it was
    "unquoted_release": "P1001",
    "keyword_near_miss": "P1001",  # `maximise`: did you mean `maximize`?
    "requirement_without_require": "P1001",  # `gpus <= 16`: write `require gpus <= 16`
    "run_time_with_other_operator": "P1002",  # the days are right; `&&` is the slip
    "dotted_model_name": "P1001",  # not told to quote a card's name
    "top_keyword_near_miss": "P1001",  # `spce`, where it was told fields belong inside a definition
    "comments_only": "P1008",
    "condition_cycle": "P3015",
    "duplicate_definition": "P2006",
    "empty": "P1008",
    "empty_pow2": "P3006",
    "empty_range": "P3006",
    "equals_for_domain": "P1004",
    "fraction_over_one": "P3009",
    "kv_heads_not_dividing": "P3009",
    "top_k_over_experts": "P3009",
    "moe_layer_cycle_bad": "P3009",
    "moe_layer_cycle_too_long": "P3009",
    "moe_layer_cycle_in_hybrid": "P3009",
    "zero_nodes": "P3009",
    "fractional_count": "P3004",
    "full_without_layers": "P3013",
    "import_cycle_a": "P2004",
    "import_cycle_b": "P2004",
    "import_without_list": "P1011",
    "inheritance_cycle": "P2011",
    "keyword_as_name": "P1012",
    "knob_twice": "P2007",
    "missing_brace": "P1003",
    "unclosed_after_axis": "P1003",
    "missing_gbs": "P3008",
    "missing_import_name": "P2005",
    "missing_model_field": "P3008",
    "missing_name": "P1013",
    "missing_unit": "P3002",
    "missing_value": "P1006",
    "rule_combination": "P4099",
    "rule_heads_tp": "P4001",
    "rule_require": "P4100",
    "statement_outside": "P1007",
    "stray_character": "P1002",
    "unclosed_paren": "P1003",
    "unclosed_string": "P1014",
    "unit_on_count": "P3003",
    "unit_typo": "P1005",
    "unknown_field": "P2002",
    "unknown_function": "P2014",
    "unknown_knob": "P2009",
    "unknown_model": "P2001",
    "unknown_space_file": "P2003",
    "unknown_stdlib_module": "P2003",
    "unknown_variable": "P2010",
    "wrong_kind": "P2008",
    "wrong_unit": "P3001",
    "zero_step": "P3010",
    "type_error_arithmetic": "P3016",
    "type_error_condition": "P3016",
    "bad_setting": "P3005",
    "layout_unclosed": "P4028",
    "layout_repeat_without_count": "P4028",
    "layout_huge_repeat": "P4028",
    "layout_superscript_count": "P4028",
    "layout_stage_count": "P4028",
    "layout_zero_repeat": "P4028",
    "op_recompute_on_moe": "P4027",
    # numbers beyond what a literal, a field or an assumption can be (no OverflowError, no hour-long run)
    "huge_axis_value": "P1016",
    "infinite_literal": "P1016",
    "layers_too_many": "P3017",
    "full_layers_huge": "P3017",
    "vocab_too_large": "P3017",
    "nodes_too_many": "P3017",
    "world_too_large": "P3017",
    "bytes_infinite": "P3017",
    "moe_imbalance_huge": "P3017",
    "moe_imbalance_zero": "P3009",
    "divide_by_zero": "P4039",
    "divide_by_zero_at_a_point": "P4039",
    "negative_value": "P1018",
    "negative_token_count": "P1018",  # not "unknown unit `T`": the sign is what is wrong
    # P4011 used to say "0 micro-batches" when GBS is not a multiple of MBS·DP
    "interleave_partial_batch": "P4002",
}


def diagnostics_of(name: str) -> list[Diagnostic]:
    try:
        program = load_program(name)
        for space in program.spaces:
            require_legal(space, summarize(space))
    except CompileError as err:
        return err.diagnostics
    return []


def test_every_case_is_listed() -> None:
    assert sorted(p.stem for p in CASES.glob("*.prx")) == sorted(EXPECTED)
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_bad_input(case: str, snapshot: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)
    diags = diagnostics_of(f"{case}.prx")
    assert diags, f"{case} was accepted"
    assert diags[0].code.id == EXPECTED[case]
    assert all(d.help for d in diags), "every diagnostic carries a hint"
    text = render(diags, "short") + "\n" + "\n".join(f"help: {d.help}" for d in diags)
    spans = [
        (d.span.line, d.span.column, d.span.end_line, d.span.end_column) if d.span else None for d in diags
    ]
    assert {"text": text, "spans": spans} == snapshot


@pytest.mark.parametrize("case", ["missing_brace", "wrong_unit", "rule_require", "layout_huge_repeat"])
def test_cli_exit_code_is_1(
    case: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(CASES)
    assert main(["check", f"{case}.prx"]) == 1
    err = capsys.readouterr().err
    assert f"[{EXPECTED[case]}]" in err and "Traceback" not in err


def test_binary_junk(tmp_path: Path) -> None:
    junk = tmp_path / "junk.prx"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(CompileError) as err:
        load_program(junk)
    assert err.value.diagnostics[0].code.id == "P1009"


def test_nul_bytes_in_text() -> None:
    with pytest.raises(CompileError) as err:
        parse("model m {\x00}", "nul.prx")
    assert err.value.diagnostics[0].code.id == "P1009"


def test_ten_megabyte_file(tmp_path: Path) -> None:
    big = tmp_path / "big.prx"
    line = "# " + "x" * 98 + "\n"
    big.write_text(line * (10 * 2**20 // len(line) + 1))
    assert big.stat().st_size >= 10 * 2**20
    with pytest.raises(CompileError) as err:
        load_program(big)
    assert err.value.diagnostics[0].code.id == "P1010"


def test_missing_file_is_a_diagnostic(tmp_path: Path) -> None:
    assert main(["check", str(tmp_path / "nope.prx")]) == 1


@pytest.mark.parametrize("expr", [" + ".join(["tp"] * 300), " + ".join(["tp"] * 20_000), "-" * 3000 + "tp"])
def test_expression_too_deep(expr: str) -> None:
    # the deep expression sits on the third line: whichever limit stops it, the diagnostic points there
    text = f"space s on c {{\n  gbs = 8\n  require {expr} > 1\n}}\n"
    with pytest.raises(CompileError) as err:
        parse(text, "deep.prx")
    diag = err.value.diagnostics[0]
    assert diag.code.id == "P1015"
    assert diag.span is not None and diag.span.line == 3


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        # a point whose pipeline split Megatron refuses has no stages to account or project: the commands
        # that explain or emit one name the broken rule instead of failing inside the projection
        (["explain", "layout_unclosed.prx", "--point", "ep=32"], "P6003"),
        (["diff", "layout_stage_count.prx", "ep=32", "ep=32"], "P6003"),
        (["emit", "layout_unclosed.prx", "--point", "ep=32", "--out", "{out}"], "P7005"),
        (["emit", "rule_heads_tp.prx", "--point", "tp=3", "--out", "{out}"], "P7005"),
        (["project", "layout_huge_repeat.prx", "--point", "ep=32"], "P6003"),
        # a number Python's int() refuses (over 4,300 digits) had been an internal error, exit 2
        (["explain", "layout_unclosed.prx", "--point", "tp=" + "9" * 5000], "P1016"),
        (["project", "rule_heads_tp.prx", "--point", "tp=" + "9" * 20], "P1016"),
    ],
)
def test_commands_refuse_an_unbuildable_point(
    argv: list[str], code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(CASES)
    assert main([a.replace("{out}", str(tmp_path / "out")) for a in argv]) == 1
    err = capsys.readouterr().err
    assert f"[{code}]" in err and "P9001" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_check_explain_of_an_illegal_point_says_so(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(CASES)
    # the account is still printed (by the knobs' split), but the exit status and a line say it cannot run
    assert main(["check", "layout_unclosed.prx", "--explain", "--point", "ep=32"]) == 1
    out = capsys.readouterr().out
    assert "not a legal point" in out and "P4028" in out and "never closed" in out


@pytest.mark.parametrize("command", ["check", "fmt", "project"])
@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "{tmp}", "{tmp}/fifo.prx"])
def test_only_regular_files_are_read(command: str, path: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    # `/dev/zero` used to be read until memory ran out, and a named pipe blocked until written
    os.mkfifo(tmp_path / "fifo.prx")
    assert main([command, path.format(tmp=tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "[P1017]" in err and "Traceback" not in err


def test_a_huge_file_is_read_only_up_to_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "huge.prx"
    with big.open("wb") as f:  # sparse: 20 GB on paper, nothing on disk
        f.truncate(20 * 10**9)
    asked: list[int] = []
    real_fdopen = os.fdopen

    def spy(fd: int, *args: object, **kwargs: object) -> object:
        handle = real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]
        if os.fstat(fd).st_size == 20 * 10**9:
            read = handle.read
            handle.read = lambda n=-1: asked.append(n) or read(n)
        return handle

    monkeypatch.setattr(os, "fdopen", spy)
    with pytest.raises(CompileError) as err:
        load_program(big)
    assert err.value.diagnostics[0].code.id == "P1010"
    assert "20,000,000,000 bytes" in err.value.diagnostics[0].message
    assert asked and all(0 < n <= 4 * 2**20 + 1 for n in asked)


def test_an_import_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    (tmp_path / "dev.prx").write_text('import "zero.prx" (*)\n')
    (tmp_path / "zero.prx").symlink_to("/dev/zero")
    with pytest.raises(CompileError) as err:
        load_program(tmp_path / "dev.prx")
    assert err.value.diagnostics[0].code.id in ("P1017", "P2003")


def test_invalid_utf8_points_at_the_byte(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.prx"
    bad.write_bytes(b'model m {\n  source = "caf\xe9"\n}\n')
    with pytest.raises(CompileError) as err:
        load_program(bad)
    d = err.value.diagnostics[0]
    assert d.code.id == "P1009" and d.help and d.span is not None
    assert (d.span.line, d.span.column) == (2, 16)


@pytest.mark.parametrize("before", [0, 20_000])
def test_a_long_line_is_clipped_around_the_span(before: int, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # the caret line used to print the whole 20,000-character line
    long = tmp_path / "long.prx"
    long.write_text(f'model m {{ source = "{"x" * before}"; hidden = 2 GB/s }}  # {"y" * 20_000}\n')
    assert main(["check", str(long)]) == 1
    lines = capsys.readouterr().err.splitlines()
    shown = next(line for line in lines if line.startswith("1 | "))
    caret = next(line for line in lines if "^" in line)
    assert len(shown) < 120 and shown.endswith("…") and shown.startswith("1 | …") == (before > 0)
    start = caret.index("^")
    assert shown[start:start + len("2 GB/s")] == "2 GB/s" and caret[start:].strip() == "^" * len("2 GB/s")


def test_check_says_when_nothing_fits_and_how_many_nodes_would(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # `check` used to end on "legal points 1" for a space whose every point overflows memory
    space = tmp_path / "tight.prx"
    space.write_text(
        "import hardware.amd (mi325x)\nimport models.llama3 (llama3_1_70b)\n"
        "cluster c { gpu = mi325x { hbm_capacity = 150 GiB }; nodes = 1; gpus_per_node = 8 }\n"
        "space s on c { model = llama3_1_70b; gbs = 256; tp = 8; sharding = dist_opt }\n"
    )
    assert main(["check", str(space)]) == 0
    out = capsys.readouterr().out
    assert "warning: the only legal point does not fit in memory" in out and "150.0 GiB usable" in out
    assert "with 2 nodes (16 GPUs) at least one of its 1 legal point would fit" in out


def test_check_prints_no_memory_line_when_a_point_fits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(CASES.parent.parent.parent / "examples" / "llama3_70b_h100.prx")]) == 0
    assert "fits in memory" not in capsys.readouterr().out
