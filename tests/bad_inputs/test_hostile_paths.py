"""Paths and option values that are not what a command expects (a loop of links, a named pipe,
``/dev/zero``, an output that is the input, a superscript digit, a negative seed; a language
client's malformed stream): a coded diagnostic and exit 1, never a hang, a traceback or an
input overwritten."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from primus_lang.cli import main
from tests.campaign.loop import SPACE

HF = Path(__file__).parents[1] / "hfimport" / "fixtures" / "mixtral_8x7b.json"
QWEN = Path(__file__).parents[1] / "recipes" / "fixtures" / "megatron_qwen2_5_7b.sh"
PERF = (
    "uv run python scripts/performance/setup_experiment.py --account acct --partition batch "
    "-i nvcr.io/nvidia/nemo:26.04 -m llama -mr llama3_8b -ng 8 -g h100 -c fp8_cs model.recompute_num_layers=4"
)


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        code = main(list(argv))
    except SystemExit as stop:  # a usage error, from argparse
        code = stop.code
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "P9001" not in err
    return err


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    (tmp_path / "a.prx").symlink_to(tmp_path / "b.prx")
    (tmp_path / "b.prx").symlink_to(tmp_path / "a.prx")
    return tmp_path / "a.prx"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "pipe")
    return tmp_path / "pipe"


@pytest.mark.parametrize("command", [["check"], ["dump"], ["project", "--top", "1"]])
def test_a_loop_of_links_as_the_source_is_unreadable(
    command: list[str], loop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Path.resolve() raised RuntimeError("Symlink loop") on Python 3.11: an internal error
    assert "[P2003]" in refused(capsys, *command, str(loop))


def test_a_loop_of_links_anywhere_is_a_file_diagnostic(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(
        capsys,
        "plan",
        str(SPACE),
        "--budget",
        "3",
        "--no-emit",
        "--out",
        str(tmp_path / "o"),
        "--resume",
        str(loop),
    )
    assert "[P2015]" in err and "loop of symbolic links" in err


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["import-hf"], "P3101"),
        (["import-recipe", "--gpu", "h100"], "P3120"),
        (["calibrate-log", "--space", str(SPACE)], "P6804"),
        (["dump", "--stage", "ast"], "P1017"),
    ],
)
def test_a_named_pipe_is_refused_not_waited_on(
    argv: list[str], code: str, fifo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each opened the pipe and blocked until a writer came, which none ever did
    assert f"[{code}]" in refused(capsys, *argv, str(fifo))


def test_dump_of_the_ast_reads_a_device_no_further_than_any_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `dump --stage ast /dev/zero` read without end (11 GB before it was stopped)
    assert "[P1017]" in refused(capsys, "dump", "--stage", "ast", "/dev/zero")


@pytest.mark.parametrize("planted", ["pipe", "/dev/zero"])
def test_a_campaign_manifest_is_read_bounded(
    planted: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a manifest.json linked to /dev/zero was read whole (16 GB), a pipe waited on for ever
    if planted == "pipe":
        os.mkfifo(tmp_path / "manifest.json")
    else:
        (tmp_path / "manifest.json").symlink_to(planted)
    assert "[P8041]" in refused(capsys, "learn", str(tmp_path))


def test_a_device_is_no_config(capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: `import-hf /dev/zero` read to the size limit and said the file was too large."""
    err = refused(capsys, "import-hf", "/dev/zero")
    assert "[P3101]" in err and "`/dev/zero` is a device, not a file" in err


def test_a_config_saved_with_a_byte_order_mark_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain" / "config.json"
    marked = tmp_path / "marked" / "config.json"
    plain.parent.mkdir()
    marked.parent.mkdir()
    plain.write_bytes(HF.read_bytes())
    marked.write_bytes(b"\xef\xbb\xbf" + HF.read_bytes())
    assert main(["import-hf", str(plain), "--name", "m"]) == 0
    expected = capsys.readouterr().out.replace(str(plain), "CONFIG")
    assert main(["import-hf", str(marked), "--name", "m"]) == 0
    assert capsys.readouterr().out.replace(str(marked), "CONFIG") == expected


def test_import_hf_never_replaces_its_own_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_bytes(HF.read_bytes())
    for out in (str(config), str(tmp_path / "." / "config.json")):
        assert "[P8012]" in refused(capsys, "import-hf", str(tmp_path), "--out", out, "--force")
    assert config.read_bytes() == HF.read_bytes()


def test_import_recipe_never_replaces_its_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "run.sh"
    recipe.write_bytes(QWEN.read_bytes())
    assert "[P8012]" in refused(
        capsys, "import-recipe", str(recipe), "--gpu", "h100", "--out", str(recipe), "--force"
    )
    assert recipe.read_bytes() == QWEN.read_bytes()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (QWEN.read_text().replace("--nproc_per_node 8", "--nproc_per_node ²"), "P3126"),
        (f"{PERF} -tp ² -gb 256\n", "P3123"),
        (f"{PERF} -tp 2 -gb 256 -gn ²\n", "P3126"),
    ],
)
def test_a_superscript_count_in_a_recipe_is_no_count(
    text: str, code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "²".isdigit() is True and int("²") a ValueError: an internal error
    recipe = tmp_path / "run.sh"
    recipe.write_text(text, encoding="utf-8")
    assert f"[{code}]" in refused(capsys, "import-recipe", str(recipe), "--gpu", "h100")


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--budget", "3", "--seed", "-1"], "P2017"),  # numpy refused a negative seed deep in the search
        (["--budget", "3", "--seed", "²"], "P2017"),
        (["--budget", "²"], "P8009"),
        (["--budget", "²,1min"], "P8009"),
    ],
)
def test_plan_numbers_that_are_not_counts(
    argv: list[str], code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(capsys, "plan", str(SPACE), "--no-emit", "--out", str(tmp_path / "o"), *argv)
    assert f"[{code}]" in err


def test_bench_limit_is_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert "[P2017]" in refused(capsys, "bench", str(SPACE), "--limit", "-1")


@pytest.mark.parametrize("ranks", ["²", "2,x", "ü", "1", "10" * 15, ""])
def test_collective_group_sizes_are_refused_not_dropped_or_spawned(ranks: str) -> None:
    # `--ranks ü` measured nothing and exited 0; `--ranks 10**30` reached torch's spawn
    from primus_lang.commands._bench_campaign import _ranks
    from primus_lang.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        _ranks(ranks)
    assert [d.code.id for d in err.value.diagnostics] == ["P2017"]
    assert _ranks(" 8,2,4,2") == (2, 4, 8)


# ---- the language server's stdin -----------------------------------------------------------------


def test_the_language_server_reads_a_huge_body_in_pieces() -> None:
    from primus_lang.lsp.server import MAX_HEADER, MAX_MESSAGE, BoundedStdin

    claimed = MAX_MESSAGE + 5 * 2**20
    stdin = BoundedStdin(io.BytesIO(b"x" * (MAX_HEADER * 3) + b"\n" + b"y" * claimed + b"rest"))
    assert len(stdin.readline()) == MAX_HEADER  # an endless header line comes in pieces
    stdin.readline(), stdin.readline(), stdin.readline()
    assert stdin.read(claimed) == b"null" and stdin.read(4) == b"rest"
    assert BoundedStdin(io.BytesIO(b"short")).read(claimed) == b""  # the stream ended inside the body


def test_the_language_server_logs_a_bad_message_in_one_line() -> None:
    from primus_lang.lsp.server import _OneLine

    try:
        raise ValueError("bad position")
    except ValueError:
        record = logging.LogRecord(
            "pygls", logging.ERROR, __file__, 1, "Unable to handle message", (), sys.exc_info()
        )
    pasted = logging.LogRecord(
        "pygls",
        logging.ERROR,
        __file__,
        1,
        "Unable to deserialize message\n%s",
        ('Traceback (most recent call last):\n  File "x", line 1\n    | TypeError: no\n    +------\n',),
        None,
    )
    fmt = _OneLine("%(message)s")
    assert fmt.format(record) == "Unable to handle message: ValueError: bad position"
    assert fmt.format(pasted) == "Unable to deserialize message: TypeError: no"


def test_the_language_server_survives_a_malformed_stream() -> None:
    pytest.importorskip("pygls")

    def frame(body: bytes, length: int | None = None) -> bytes:
        return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body

    init = frame(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}')
    stream = (
        init
        + b"Content-Length: abc\r\n\r\n{}"
        + frame(b"not json")
        + frame(b'{"jsonrpc":"2.0","id":5}')
        + frame(
            b'{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":'
            b'{"uri":"file:///x.prx"},"position":{"line":-5,"character":0}}}'
        )
        + frame(b"{}", 10**15)
    )
    done = subprocess.run(
        [sys.executable, "-m", "primus_lang.cli", "lsp"],
        input=stream,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = done.stderr.decode()
    # the huge Content-Length was a MemoryError, exit 2; every bad message a logged traceback
    assert done.returncode == 0 and "Traceback" not in err and "P9001" not in err, err
    assert b'"id": 1' in done.stdout


@pytest.mark.parametrize("value", ["abc", "²", "-1", "9" * 20])
def test_a_thread_count_from_the_environment_is_a_count(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # int() failed on `abc` and `²`, torch on a count past a C long: P9001 from `bench`
    from primus_lang.bench.runtime import cpu_threads
    from primus_lang.diagnostics import CompileError

    monkeypatch.setenv("PRIMUSC_BENCH_THREADS", value)
    with pytest.raises(CompileError) as err:
        cpu_threads()
    assert [d.code.id for d in err.value.diagnostics] == ["P2017"]
    monkeypatch.setenv("PRIMUSC_BENCH_THREADS", " 3 ")
    assert cpu_threads() == 3


@pytest.mark.parametrize("sigma", ["nan", "inf", "0", "-1", "1e400", "²"])
def test_the_pooling_width_is_a_finite_positive_number(
    sigma: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # float() took each of these: 0 divided by zero, nan made every fit NaN, and the fit ran minutes on them
    assert "[P2017]" in refused(capsys, "calibrate", "--runs", "/nonexistent.yaml", "--pool-sigma", sigma)


@pytest.mark.parametrize(
    "argv",
    [
        # 10^30 seeds ran for ever; a 1 TiB message or endless repeats per kernel never end a campaign
        ["tune-compare", str(SPACE), "--budgets", "5", "--strategies", "random", "--seeds", "1" + "0" * 30],
        ["tune-compare", str(SPACE), "--budgets", "5", "--strategies", "random", "--seeds", "0"],
        ["bench", str(SPACE), "--collectives", "local", "--ranks", "2", "--max-bytes", "1" + "0" * 30],
        ["bench", str(SPACE), "--collectives", "local", "--ranks", "2", "--max-bytes", "4095"],
        ["bench", str(SPACE), "--collectives", "local", "--ranks", "2", "--budget-s", "1e300"],
        ["bench", str(SPACE), "--collectives", "local", "--ranks", "2", "--budget-s", "inf"],
    ],
)
def test_counts_and_seconds_with_no_end_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert "[P2017]" in refused(capsys, *argv)


@pytest.mark.parametrize("command", ["explain", "check", "project"])
def test_a_folder_named_as_a_space_is_refused_alike_by_every_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # explain had said "no file `d.prx`" (P2015) where the others say it is a directory
    folder = tmp_path / "d.prx"
    folder.mkdir()
    assert "[P1017]" in refused(capsys, command, str(folder))
