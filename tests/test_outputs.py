"""Every output file is written atomically, never through a link, and never over a file without force."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.diagnostics import CompileError
from primus_lang.outputs import (
    LOCK_NAME,
    folder_lock,
    open_log,
    refuse_collisions,
    sealed,
    still_sealed,
    write_file,
    write_files,
)


def code(err: pytest.ExceptionInfo[CompileError]) -> str:
    return err.value.diagnostics[0].code.id


def test_a_link_at_the_destination_is_refused_even_with_force(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "node.sh").symlink_to(victim)
    with pytest.raises(CompileError) as err:
        write_file(out / "node.sh", "#!/bin/sh\n", force=True, root=out)
    assert code(err) == "P8010"
    assert victim.read_text() == "precious" and (out / "node.sh").is_symlink()


def test_a_linked_folder_inside_the_output_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").symlink_to(outside)
    with pytest.raises(CompileError) as err:
        write_files(out, {"sub/x.yaml": "a: 1\n"}, force=True)
    assert code(err) == "P8010"
    assert not list(outside.iterdir())


def test_the_output_folder_itself_may_be_reached_through_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    write_files(tmp_path / "alias", {"a.txt": "a"})
    assert (real / "a.txt").read_text() == "a"


def test_an_existing_file_is_kept_without_force_and_replaced_with_it(tmp_path: Path) -> None:
    path = tmp_path / "tables.md"
    path.write_text("mine")
    with pytest.raises(CompileError) as err:
        write_file(path, "new")
    assert code(err) == "P8003" and path.read_text() == "mine"
    write_file(path, "new", force=True)
    assert path.read_text() == "new"


def test_a_file_that_appears_during_the_write_is_not_replaced(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Exclusive at the rename itself, not only at the look before it."""
    import primus_lang.outputs as outputs

    path = tmp_path / "report.html"
    real = outputs._write_temp

    def racing(fd: int, name: str, blob: bytes, executable: bool) -> str:
        path.write_text("written meanwhile")
        return real(fd, name, blob, executable)

    monkeypatch.setattr(outputs, "_write_temp", racing)
    with pytest.raises(CompileError) as err:
        write_file(path, "ours")
    assert code(err) == "P8003" and path.read_text() == "written meanwhile"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary left


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import primus_lang.outputs as outputs

    path = tmp_path / "launch.sbatch"
    path.write_text("old")

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs, "_put", killed)
    with pytest.raises(KeyboardInterrupt):
        write_file(path, "new", force=True)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["launch.sbatch"]


def test_modes_are_those_plain_writes_gave(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_files(tmp_path, {"node.sh": "x", "manifest.json": "{}"}, executable=lambda rel: rel.endswith(".sh"))
    finally:
        os.umask(umask)
    assert (tmp_path / "node.sh").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "manifest.json").stat().st_mode & 0o777 == 0o644


def test_a_refusal_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("mine")
    with pytest.raises(CompileError):
        write_files(tmp_path, {"a.txt": "a", "b.txt": "b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]


def test_two_spellings_of_one_file_collide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "runs.yaml").write_text("[]")
    os.link(tmp_path / "runs.yaml", tmp_path / "hard.yaml")
    (tmp_path / "soft.yaml").symlink_to(tmp_path / "runs.yaml")
    for a, b in (("x.html", "d/../x.html"), ("runs.yaml", "hard.yaml"), ("runs.yaml", "soft.yaml")):
        with pytest.raises(CompileError) as err:
            refuse_collisions({"--out": Path(a)}, {"--runs": Path(b)})
        assert code(err) == "P8012"
    refuse_collisions({"--trace": Path("t.jsonl"), "--report": Path("r.html")}, {"--runs": Path("runs.yaml")})
    refuse_collisions({}, {"a": Path("runs.yaml"), "b": Path("hard.yaml")})  # two inputs may be one file


def test_a_held_folder_is_refused_and_released_after(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    with folder_lock(out):
        assert (out / LOCK_NAME).exists()
        with pytest.raises(CompileError) as err, folder_lock(out):
            pass
        assert code(err) == "P8011" and str(out) in err.value.diagnostics[0].message
    assert not (out / LOCK_NAME).exists()
    (out / LOCK_NAME).write_text("")  # left by a plan killed with SIGKILL: its lock died with it
    with folder_lock(out):
        pass


def test_a_trace_open_for_writing_is_held(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with open_log(trace, append=False) as first:
        first.write("{}\n")
        for append in (True, False):
            with pytest.raises(CompileError) as err:
                open_log(trace, append=append)
            assert code(err) == "P8011"
    assert trace.read_text() == "{}\n"


def test_a_trace_is_never_opened_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "trace.jsonl").symlink_to(victim)
    for append in (True, False):
        with pytest.raises(CompileError) as err:
            open_log(tmp_path / "trace.jsonl", append=append)
        assert code(err) == "P8010"
    assert victim.read_text() == "precious"


def test_the_cli_module_imports_no_stage_at_import_time() -> None:
    """The console script imports it outside any handler: a Ctrl-C there printed a traceback."""
    probe = ("import sys; before = set(sys.modules); import primus_lang.cli; "
             "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=600).stdout
    assert set(ast.literal_eval(out)) <= {"__future__", "primus_lang", "primus_lang.cli"}  # not even argparse or typing


def test_ctrl_c_anywhere_in_the_cli_is_one_line_and_130(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import primus_lang.cli as cli

    def interrupted(argv: object = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["check", "x.prx"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_a_device_or_a_pipe_is_never_an_output(tmp_path: Path) -> None:
    """Renaming over /dev/null would replace it for everyone; opening a pipe would block."""
    pipe = tmp_path / "trace.jsonl"
    os.mkfifo(pipe)
    for path in (Path("/dev/null"), pipe):
        with pytest.raises(CompileError) as err:
            write_file(path, "x", force=True)
        assert code(err) == "P8010" and "not a regular file" in err.value.diagnostics[0].message
    with pytest.raises(CompileError) as err:
        open_log(pipe, append=False)
    assert code(err) == "P8010"
    assert Path("/dev/null").is_char_device()


def test_a_killed_writes_temporary_file_does_not_make_the_folder_someone_elses(tmp_path: Path) -> None:
    from primus_lang.commands._options import check_outputs
    from primus_lang.outputs import ours

    out = tmp_path / "out"
    out.mkdir()
    (out / ".launch.sh.0123456789ab.tmp").write_text("half")
    (out / ".primusc.lock").write_text("")
    check_outputs(out, {}, force=False)  # only primusc's own leftovers: still an empty folder
    assert ours(".launch.sh.0123456789ab.tmp") and not ours(".launch.sh.tmp") and not ours("launch.sh")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(CompileError):
        check_outputs(out, {}, force=False)


def test_fmt_write_replaces_the_file_a_link_points_at(tmp_path: Path) -> None:
    from primus_lang.cli import main

    real = tmp_path / "real.prx"
    real.write_text("model m {num_layers=2; hidden=64; ffn_hidden=128; heads=4; vocab=100; seq_len=32}\n")
    link = tmp_path / "link.prx"
    link.symlink_to(real)
    assert main(["fmt", "--write", str(link)]) == 0
    assert link.is_symlink() and "num_layers = 2; hidden = 64" in real.read_text()


def test_a_global_option_value_is_not_taken_for_the_command() -> None:
    from primus_lang.cli import _requested

    assert _requested(["--error-format", "short", "check", "x.prx"], ["check", "fmt"]) == ["check"]
    assert _requested(["--error-format=json", "fmt", "x.prx"], ["check", "fmt"]) == ["fmt"]


def test_fmt_keeps_a_files_windows_line_ends(tmp_path: Path) -> None:
    """`fmt --write` changes the layout, not the line ends a Windows editor wrote (they became LF silently);
    `--check` reads the file as formatted afterwards, and a second write changes nothing."""
    from primus_lang.cli import main

    src = tmp_path / "crlf.prx"
    src.write_bytes(b"model m {num_layers=2; hidden=64; ffn_hidden=128; heads=4; vocab=100; seq_len=32}\r\n")
    assert main(["fmt", "--write", str(src)]) == 0
    once = src.read_bytes()
    assert b"\r\n" in once and b"\n" not in once.replace(b"\r\n", b"")
    assert main(["fmt", "--check", str(src)]) == 0
    assert main(["fmt", "--write", str(src)]) == 0 and src.read_bytes() == once


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
@settings(deadline=None, max_examples=50)
def test_a_sealed_file_is_known_until_any_byte_of_it_changes(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "site.prx"
        path.write_bytes(sealed(text).encode("utf-8"))
        assert still_sealed(path)
        raw = path.read_bytes()
        for at in {0, len(raw) // 2, len(raw) - 2}:
            changed = bytearray(raw)
            changed[at] ^= 1
            path.write_bytes(bytes(changed))
            assert not still_sealed(path)
        path.write_bytes(text.encode("utf-8"))  # a file without the seal is not one
        assert not still_sealed(path)
        os.symlink(path, Path(folder) / "link.prx")
        path.write_bytes(raw)
        assert not still_sealed(Path(folder) / "link.prx")  # nor one reached through a link
