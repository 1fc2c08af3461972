"""Hostile inputs of the fourth review (issue 34), each at the layer that owns it: import chains and
inheritance chains deeper than Python's stack, control characters in YAML, numbers of thousands of
digits on command lines and in JSON, a trace naming points its space cannot have, fmt and check
disagreeing on a second byte-order mark, a campaign folder planted as a link, an unwritable report
found after the search, subnormal step times, warm-up options read as Python slices, and name
suggestions that scanned every name for every unknown one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from primus_lang.bench.logs import parse_log
from primus_lang.cli import main
from primus_lang.datafiles import DataCodes, loads_yaml, parse_json, read_count
from primus_lang.diagnostics import CompileError
from primus_lang.diagnostics import codes_import as C
from primus_lang.diagnostics.suggest import SCAN, NameIndex
from primus_lang.lower import load_program, loads_program

EXAMPLE = Path(__file__).parents[2] / "examples" / "llama3_1_8b_mi325x.prx"
HUGE = "9" * 5001
CODES = DataCodes(C.CONFIG_UNREADABLE, C.CONFIG_UNREADABLE, C.CONFIG_TOO_LARGE, C.CONFIG_TOO_DEEP,
                  C.CONFIG_TOO_DEEP, C.CONFIG_NUMBER)


def _space_text() -> str:
    return "\n".join(line for line in EXAMPLE.read_text().splitlines() if not line.startswith("#"))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # an option refused while parsing the command line
        code = int(stop.code or 0)
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "Traceback" not in out and "P9001" not in out, out
    return code, out


# 1 -------------------------------------------------------------------------------------------------
def test_a_chain_of_a_thousand_imports_loads(tmp_path: Path) -> None:
    count = 1000
    for i in range(1, count):
        (tmp_path / f"f{i}.prx").write_text(f'import "./f{i + 1}.prx" (*)\n' if i + 1 < count else "")
    (tmp_path / f"f{count - 1}.prx").write_text("import models.llama3 (llama3_1_8b)\nmodel deep = llama3_1_8b { }\n")
    for i in range(count - 2, 0, -1):  # each file passes `deep` on by defining its own name over it
        (tmp_path / f"f{i}.prx").write_text(f'import "./f{i + 1}.prx" (*)\nmodel deep{i} = deep{i + 1} {{ }}\n'
                                            .replace(f"deep{count - 1}", "deep"))
    top = tmp_path / "top.prx"
    top.write_text(_space_text().replace("import models.llama3 (llama3_1_8b)", 'import "./f1.prx" (deep1)')
                   .replace("model = llama3_1_8b", "model = deep1"))
    program = load_program(top)
    assert program.spaces[0].model.num_layers == 32


def test_a_chain_of_definitions_deeper_than_the_stack_lowers() -> None:
    chain = "".join(f"model m{i} = m{i - 1} {{ }}\n" for i in range(1, 3000))
    text = "import models.llama3 (llama3_1_8b)\nmodel m0 = llama3_1_8b { num_layers = 16 }\n" + chain
    program = loads_program(text, "chain.prx")
    assert len(program.models) == 3000 and program.models[-1].num_layers == 16


def test_a_cycle_through_a_long_chain_is_still_named() -> None:
    chain = "".join(f"model m{i} = m{i - 1} {{ }}\n" for i in range(1, 2000))
    with pytest.raises(CompileError) as err:
        loads_program("model m0 = m1999 { }\n" + chain, "cycle.prx")
    assert {d.code.id for d in err.value.diagnostics} == {"P2011"}


def test_a_broken_file_imported_twice_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "broken.prx").write_text("model x = {\n")
    (tmp_path / "a.prx").write_text('import "./broken.prx" (*)\n')
    (tmp_path / "b.prx").write_text('import "./broken.prx" (*)\n')
    (tmp_path / "top.prx").write_text('import "./a.prx" (*)\nimport "./b.prx" (*)\n')
    with pytest.raises(CompileError) as err:
        load_program(tmp_path / "top.prx")
    assert len(err.value.diagnostics) == 1 and err.value.diagnostics[0].span is not None
    assert err.value.diagnostics[0].span.file.endswith("broken.prx")


# 2 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1b", "\x7f", "\x86", "\x9f", "\ufffe"])
def test_a_control_character_in_yaml_is_a_diagnostic_at_its_place(char: str) -> None:
    with pytest.raises(CompileError) as err:
        loads_yaml(f"a: 1\n# a comment {char} here\nb: 2\n", "x.yaml", CODES, "a config")
    d = err.value.diagnostics[0]
    assert d.code is C.CONFIG_UNREADABLE and "control character" in d.message
    assert d.span is not None and (d.span.line, d.span.column) == (2, 13)


def test_a_primus_experiment_with_a_control_character_is_refused(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "exp.yaml"
    recipe.write_text("work_group: x\n# \x01\nmodules:\n  pre_trainer:\n    framework: megatron\n")
    code, out = _run(["import-recipe", str(recipe), "--out", str(tmp_path / "s.prx")], capsys)
    assert code == 1 and "control character U+0001" in out


def test_a_binary_value_is_refused_at_its_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Primus override `!!binary` was carried to the launch as `b'...'`, Python's repr of bytes."""
    with pytest.raises(CompileError) as err:
        loads_yaml("a: 1\nb: !!binary aGVsbG8=\n", "x.yaml", CODES, "a config")
    d = err.value.diagnostics[0]
    assert d.code is C.CONFIG_UNREADABLE and "!!binary" in d.message
    assert d.span is not None and d.span.line == 2
    recipe = tmp_path / "exp.yaml"
    recipe.write_text("work_group: x\nmodules:\n  pre_trainer:\n    framework: megatron\n    overrides:\n"
                      "      data_path: !!binary aGVsbG8=\n")
    code, out = _run(["import-recipe", str(recipe), "--out", str(tmp_path / "s.prx")], capsys)
    assert code == 1 and "!!binary" in out and "b'" not in out


# 3 -------------------------------------------------------------------------------------------------
def test_one_count_reader_refuses_what_int_takes_or_chokes_on() -> None:
    assert read_count(" 42 ") == 42
    for text in ("-1", "²", "1_000", "", HUGE, "1" * 19):
        with pytest.raises(ValueError):
            read_count(text)
    with pytest.raises(ValueError, match="more than 100 digits"):
        parse_json('{"a": ' + HUGE + "}")


@pytest.mark.parametrize("argv", [
    ["import-recipe", "x.yaml", "--nodes", HUGE], ["plan", "s.prx", "--budget", HUGE],
    ["plan", "s.prx", "--budget", f"{HUGE}min"], ["plan", "s.prx", "--budget", ","],
    ["plan", "s.prx", "--seed", "-1"], ["project", "s.prx", "--top", HUGE], ["learn", "c", "--warmup", "-3"],
    ["calibrate-log", "x.log", "--space", "s.prx", "--skip", "-1"],
])
def test_a_count_on_the_command_line_is_read_by_its_meaning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.prx").write_text(_space_text())
    code, out = _run(argv, capsys)
    assert code == 1 and ("P2017" in out or "P8009" in out), out


def test_learn_refuses_a_manifest_with_a_huge_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_text('{"format": ' + HUGE + "}")
    code, out = _run(["learn", str(tmp_path)], capsys)
    assert code == 1 and "more than 100 digits" in out


# 4 -------------------------------------------------------------------------------------------------
def test_report_refuses_a_trace_whose_winner_the_space_cannot_have(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "s.prx"
    space.write_text(_space_text())
    assert main(["plan", str(space), "--budget", "4", "--out", str(tmp_path / "o"), "--no-emit"]) == 0
    capsys.readouterr()
    events = [json.loads(line) for line in (tmp_path / "o" / "trace.jsonl").read_text().splitlines()]
    for e in events:
        if e.get("event") == "evaluation":
            e["candidate"] |= {"pp": 7, "tp": 0}
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out = _run(["report", str(edited), "--space", str(space), "--out", str(tmp_path / "r.html")], capsys)
    assert code == 1 and "P8002" in out and "no legal point" in out
    assert not (tmp_path / "r.html").exists()


# 5 -------------------------------------------------------------------------------------------------
def test_fmt_refuses_a_second_byte_order_mark_as_check_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.prx"
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + _space_text().encode())
    before = path.read_bytes()
    for argv in (["check", str(path)], ["fmt", "--write", str(path)], ["fmt", str(path)]):
        code, out = _run(argv, capsys)
        assert code == 1 and "P1002" in out, argv
    assert path.read_bytes() == before


# 6, 7 ----------------------------------------------------------------------------------------------
def test_a_campaign_folder_planted_as_a_link_is_refused_before_the_search(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    space, out, elsewhere = tmp_path / "s.prx", tmp_path / "o", tmp_path / "elsewhere"
    space.write_text(_space_text())
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text('{"keep": 1}')
    (out / "campaign").symlink_to(elsewhere)
    code, text = _run(["plan", str(space), "--budget", "4", "--out", str(out), "--shortlist", "2", "--force"], capsys)
    assert code == 1 and "symbolic link" in text
    assert sorted(p.name for p in elsewhere.iterdir()) == ["manifest.json"]
    assert (elsewhere / "manifest.json").read_text() == '{"keep": 1}'
    assert not (out / "trace.jsonl").exists()


@pytest.mark.parametrize("report", ["afile/r.html", "afile/deeper/r.html"])
def test_an_unwritable_report_is_refused_before_the_search(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          report: str) -> None:
    space, out = tmp_path / "s.prx", tmp_path / "o"
    space.write_text(_space_text())
    (tmp_path / "afile").write_text("")
    code, text = _run(["plan", str(space), "--budget", "4", "--out", str(out), "--report", str(tmp_path / report)],
                      capsys)
    assert code == 1 and "P8010" in text and "not a folder" in text
    assert not out.exists()


# 8, 9, 10 ------------------------------------------------------------------------------------------
LINE = " [x] iteration {i:>8}/      10 | elapsed time per iteration (ms): {ms} | global batch size:   128 |\n"
ARGS = Path(__file__).parents[1] / "bench" / "logs" / "megatron_llama8b_tp2.log"


def _log(tmp_path: Path, ms: str, count: int = 4) -> Path:
    head = "".join(line for line in ARGS.read_text().splitlines(True) if "iteration" not in line)
    path = tmp_path / "run.log"
    path.write_text(head + "".join(LINE.format(i=i, ms=ms) for i in range(1, count + 1)))
    return path


@pytest.mark.parametrize("ms", ["1e-320", "0.0000001", "0", "1e400", "nan"])
def test_a_step_time_no_run_takes_is_refused(tmp_path: Path, ms: str) -> None:
    with pytest.raises(CompileError) as err:
        parse_log(_log(tmp_path, ms).read_text(), "run.log")
    assert err.value.diagnostics[0].code.id == "P6012"


def test_skip_past_the_logged_iterations_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "s.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\nimport hardware.amd (mi325x)\n"
                     "cluster c { gpu = mi325x; nodes = 1; gpus_per_node = 8 }\n"
                     "space s on c { model = llama3_1_8b; seq_len = 8192; gbs = 128 }\n")
    log = tmp_path / "run.log"
    shutil.copy(ARGS, log)
    code, out = _run(["calibrate-log", str(log), "--space", str(space), "--skip", "99"], capsys)
    assert code == 1 and "no steady iteration among the 4 it logs, after 99 iteration(s) of warm-up per run or restart" in out
    assert main(["calibrate-log", str(log), "--space", str(space), "--skip", "3"]) == 0


# 16 ------------------------------------------------------------------------------------------------
def test_suggestions_search_a_bounded_neighbourhood() -> None:
    names = [f"model_{i}" for i in range(20_000)]
    index = NameIndex(names)
    assert index.closest("modle_19999") == "model_19999"  # a typo inside the name
    assert index.closest("xodel_1234") == "model_1234"  # a typo at its start
    small = NameIndex(["llama3_8b", "llama3_70b", "mixtral"])
    assert small.closest("llama3_7b") == "llama3_70b" and len(small.names) <= SCAN


def test_check_of_thousands_of_unknown_names_reports_each_with_a_hint() -> None:
    text = "import models.llama3 (llama3_1_8b)\n" + "".join(f"model m_{i} = base_{i} {{ }}\n" for i in range(3000))
    with pytest.raises(CompileError) as err:
        loads_program(text, "many.prx")
    assert len(err.value.diagnostics) == 3000 and all(d.code.id == "P2001" for d in err.value.diagnostics)


@pytest.mark.parametrize("fmt", [["--error-format", "json"], ["--error-format=json"]])
def test_a_usage_error_honours_the_error_format_asked_for(fmt: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # argparse refuses the value before any option is parsed: the format is read from the words
    with pytest.raises(SystemExit) as stop:
        main(["plan", str(EXAMPLE), *fmt, "--jobs", "-1"])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    diag = json.loads(err)["diagnostics"][0]
    assert diag["code"] == "P2017" and "--jobs" in diag["message"]


def test_standard_error_under_the_json_format_is_json_lines(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # a plan's plain `note:` line had followed the diagnostics document: no JSON reader took it whole
    assert main(["--error-format", "json", "plan", str(EXAMPLE), "--budget", "20", "--strategy", "auto", "--json",
                 "--no-emit", "--out", str(tmp_path / "p")]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    lines = [json.loads(line) for line in captured.err.splitlines()]
    assert lines and all(isinstance(doc, dict) and ("note" in doc or "diagnostics" in doc) for doc in lines)
    assert any(doc.get("note", "").startswith("auto: no LLM configured") for doc in lines)


def test_a_mistyped_command_is_named_with_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["chek", "x.prx"])
    assert stop.value.code == 1
    assert "did you mean `check`?" in capsys.readouterr().err
