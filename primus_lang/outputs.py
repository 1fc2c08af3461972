"""Writing what a command produces so that nothing the user has is lost, torn or written through.

Every output file is written whole to a new file beside its destination and renamed into place: a
reader never sees half a file and a killed command leaves the old file or the new one, never a mix.
Nothing is written through a symbolic link: a link at the destination, or at a folder between an
output folder and its file, is refused even with ``force`` (a link planted in ``--out`` would
otherwise send ``--force`` to a file outside it). Without ``force`` an existing file is never
replaced, and that is decided by the rename itself (a hard link fails if the name is taken), not
only by a look before the work started.

Every command's files go through here; the trace, which grows line by line, is opened here too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import OUT_NOT_EMPTY, OUTPUT_IS_LINK, OUTPUT_LOCKED, OUTPUTS_COLLIDE

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
LOCK_NAME = ".primusc.lock"  # a plan's lock inside its --out; not an output, so never "a file you have"
# what a plan wrote into its --out, each file with its SHA-256 as written: a file still as written is the
# plan's own to replace, one changed since is the user's (``written_before``)
LEDGER_NAME = ".primusc-written.json"
_LEDGER_BYTES = 2**20
# errors of a file system that has no hard links: the rename then replaces after a last look
_NO_HARD_LINKS = {errno.EPERM, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}


def _refusal(path: Path, st: os.stat_result, option: str) -> CompileError:
    if stat.S_ISLNK(st.st_mode):
        return CompileError(Diagnostic(OUTPUT_IS_LINK, f"`{path}` is a symbolic link; primusc does not write "
                                       "through links", help="remove the link, or choose another output path"))
    if stat.S_ISDIR(st.st_mode):
        return CompileError(Diagnostic(OUTPUT_IS_LINK, f"`{path}` is a folder where an output file goes",
                                       help=f"choose another --{option}"))
    if not stat.S_ISREG(st.st_mode):
        # a device or a pipe: renaming over it would replace it (/dev/null), opening it may block
        return CompileError(Diagnostic(OUTPUT_IS_LINK, f"`{path}` is not a regular file",
                                       help=f"choose another --{option}"))
    return CompileError(Diagnostic(OUT_NOT_EMPTY, f"`{path}` already exists",
                                   help=f"choose another --{option}, or pass --force to replace it"))


def _not_folder(where: Path, st: os.stat_result) -> CompileError:
    if stat.S_ISLNK(st.st_mode):
        return _refusal(where, st, "out")
    return CompileError(Diagnostic(OUTPUT_IS_LINK, f"`{where}` is a file where a folder goes",
                                   help="choose another --out"))


def refuse_unwritable(path: Path, option: str = "out") -> None:
    """Refuse, before any work, an output whose folder cannot take it: the nearest folder of ``path``
    that exists must be a folder, and a file must be creatable there (tried: permissions, a read-only
    mount or ``/proc`` say no only when asked). A plan that searched for minutes and then failed to
    write its report would leave a half-written --out."""
    here = path.parent
    while not os.path.lexists(here) and here != here.parent:
        here = here.parent
    if os.path.lexists(here) and not here.is_dir():
        raise CompileError(Diagnostic(OUTPUT_IS_LINK, f"cannot write `{path}`: `{here}` is not a folder",
                                      help=f"choose another --{option}"))
    try:
        fd, probe = tempfile.mkstemp(prefix=".primusc-probe-", dir=here)
    except OSError as err:
        raise CompileError(Diagnostic(OUTPUT_IS_LINK, f"cannot write `{path}`: {err.strerror or err}",
                                      help=f"choose another --{option}")) from None
    os.close(fd)
    os.unlink(probe)


def refuse_link(path: Path, option: str = "out") -> None:
    """Refuse an output ``path`` that is a link, a folder or anything but a regular file, whatever
    --force says."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(path, st, option)


def _look(fd: int, name: str, path: Path, force: bool, option: str) -> None:
    """Refuse a link or a folder at ``name`` in the folder ``fd``; and any file there unless ``force``."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if force and stat.S_ISREG(st.st_mode):
        return
    raise _refusal(path, st, option)


@contextlib.contextmanager
def _folder(root: Path, parts: tuple[str, ...]) -> Iterator[int]:
    """A descriptor of the folder ``root/parts``, made if missing; below ``root`` nothing may be a
    link (``root`` itself is the user's own path and may go through links)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        where = root
        for part in parts:
            where = where / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise _not_folder(where, st)
            sub = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def _split(path: Path, root: Path | None) -> tuple[Path, tuple[str, ...], str]:
    base = root if root is not None else path.parent
    rel = path.relative_to(base).parts if root is not None else (path.name,)
    return base, tuple(rel[:-1]), rel[-1]


_LEFTOVER = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")


def ours(name: str) -> bool:
    """Whether ``name`` in an output folder is primusc's own and no output: the plan's lock, or the
    temporary file of a write that a killed process left behind (``_write_temp``'s names)."""
    return name in (LOCK_NAME, LEDGER_NAME) or _LEFTOVER.fullmatch(name) is not None


@contextlib.contextmanager
def _regular(path: Path) -> Iterator[IO[bytes] | None]:
    """``path`` open for reading where it is a regular file (not followed through a link, never blocking
    on a pipe), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK)
    except OSError:
        yield None
        return
    with os.fdopen(fd, "rb") as f:
        yield f if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else None


def _digest(path: Path) -> str | None:
    """SHA-256 of the regular file ``path`` (not followed through a link), or None."""
    import hashlib

    with _regular(path) as f:
        if f is None:
            return None
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(2**20), b""):
            h.update(chunk)
        return h.hexdigest()


def written_before(folder: Path) -> tuple[set[Path], set[Path]]:
    """The files an earlier plan wrote into ``folder`` (its ledger): those still as it wrote them, which a
    new plan there may replace or remove, and those changed since, which are the user's. A ledger that is
    missing, too large or unreadable records nothing."""
    import json

    with _regular(folder / LEDGER_NAME) as f:
        raw = f.read(_LEDGER_BYTES + 1) if f is not None else b""
    try:
        recorded = json.loads(raw) if 0 < len(raw) <= _LEDGER_BYTES else {}
    except ValueError:
        recorded = {}
    same: set[Path] = set()
    changed: set[Path] = set()
    for rel, digest in (recorded.items() if isinstance(recorded, dict) else ()):
        path = folder / str(rel)
        if not isinstance(rel, str) or ".." in Path(rel).parts or Path(rel).is_absolute() or not os.path.lexists(path):
            continue
        (same if _digest(path) == digest else changed).add(path)
    return same, changed


def keep_ledger(out: Path, written: list[Path], prior: set[Path], edited: set[Path]) -> list[str]:
    """Record what a command wrote into ``out`` (``written``); remove what an earlier one wrote there,
    unchanged since (``prior``), that this one did not write again (another target's launch files).
    The notes that say so, and which files ``--force`` replaced that had been changed since a command
    wrote them (``edited``)."""
    now = {p.resolve() for p in written}
    stale = sorted(p for p in prior if p.resolve() not in now)
    for p in stale:
        p.unlink(missing_ok=True)
        folder = p.parent
        while folder != out and folder.is_relative_to(out) and not any(folder.iterdir()):
            folder.rmdir()  # a campaign's job folder this plan no longer writes
            folder = folder.parent
    notes = []
    if stale:
        notes.append("removed what was written here before and is not now, unchanged since: "
                     + ", ".join(str(p.relative_to(out)) for p in stale))
    replaced = sorted(p for p in edited if p.resolve() in now)
    if replaced:
        notes.append("--force replaced files changed since primusc wrote them: "
                     + ", ".join(str(p.relative_to(out)) for p in replaced))
    record_written(out, written)
    return notes


def foreign_files(out: Path, prior: set[Path]) -> list[Path]:
    """The files in ``out`` that no primusc command wrote, or that were changed since one did: what a
    command writing there without ``--force`` must not touch (its ledger and what it recorded, still as
    written, are its own)."""
    if not out.is_dir():
        return []
    own = {p.resolve() for p in prior} | {(out / LEDGER_NAME).resolve()}
    return sorted(p for p in out.rglob("*") if not p.is_dir() and p.resolve() not in own)


def record_written(folder: Path, paths: Iterable[Path]) -> None:
    """The ledger of ``folder``: each of ``paths`` inside it with its SHA-256 as it is now."""
    import json

    inside = {}
    for p in paths:
        try:
            rel = p.resolve().relative_to(folder.resolve())
        except ValueError:
            continue  # a --trace or --report given elsewhere is no file of the folder
        digest = _digest(p)
        if digest is not None:
            inside[rel.as_posix()] = digest
    write_file(folder / LEDGER_NAME, json.dumps(dict(sorted(inside.items())), indent=1) + "\n", force=True)


# the last line of a single output file that a later run of the same command may replace while it is
# unchanged (``sealed``, ``still_sealed``): a folder has its ledger, a file named by --out has this
_SEAL = "# written by primusc; unchanged while this line matches: sha256 "
_SEAL_BYTES = 2**22


def sealed(text: str) -> str:
    """``text`` (ending in a newline) with a last comment line holding its SHA-256: what lets a later
    run tell its own unchanged output from a file the user edited (``still_sealed``)."""
    import hashlib

    body = text if text.endswith("\n") else text + "\n"
    return f"{body}{_SEAL}{hashlib.sha256(body.encode('utf-8')).hexdigest()}\n"


def still_sealed(path: Path) -> bool:
    """Whether ``path`` is a regular file that ``sealed`` wrote and nobody changed since (not followed
    through a link; a file too large to be one is not)."""
    import hashlib

    with _regular(path) as f:
        raw = f.read(_SEAL_BYTES + 1) if f is not None else b""
    if len(raw) > _SEAL_BYTES or not raw.endswith(b"\n"):
        return False
    body, _, last = raw[:-1].rpartition(b"\n")
    seal = _SEAL.encode("utf-8")
    return last.startswith(seal) and last[len(seal):] == hashlib.sha256(body + b"\n").hexdigest().encode("ascii")


def _write_temp(fd: int, name: str, blob: bytes, mode: int | None) -> str:
    while True:
        tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
        try:
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=fd)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(out, "wb") as f:
            f.write(blob)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
    except BaseException:
        os.unlink(tmp, dir_fd=fd)
        raise
    return tmp


def _put(fd: int, tmp: str, name: str, path: Path, force: bool, option: str) -> None:
    if force:
        _look(fd, name, path, force, option)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)  # replaces a link planted since, never follows it
        return
    try:
        os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
    except FileExistsError:
        _look(fd, name, path, False, option)
        raise
    except OSError as err:
        if err.errno not in _NO_HARD_LINKS:
            raise
        _look(fd, name, path, False, option)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)


def write_file(path: Path, data: str | bytes, *, force: bool = False, root: Path | None = None,
               executable: bool = False, option: str = "out", mode: int | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically. ``root``: the output folder ``path`` lies
    in, whose sub-folders are made as needed and may not be links; ``option`` names the command-line
    option a refusal points at; ``executable``: mode 0755, as launch scripts need; ``mode``: these
    permission bits instead (a replaced file's own)."""
    base, dirs, name = _split(Path(path), root)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    with _folder(base, dirs) as fd:
        _look(fd, name, Path(path), force, option)
        try:
            tmp = _write_temp(fd, name, blob, 0o755 if executable else mode)
        except OSError as err:
            # the error names the hidden temporary file; the user knows the path they gave
            raise OSError(err.errno, err.strerror, str(path)) from err
        try:
            _put(fd, tmp, name, Path(path), force, option)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
    return Path(path)


def rewrite_file(path: Path, before: bytes, data: str, *, option: str = "files") -> None:
    """Replace the user's own file ``path``, read as ``before``, with ``data`` (``fmt --write``).

    Its permission bits stay (a 0600 file does not become world-readable); a file with more than one
    hard link is written through its inode, so every name sees the new text rather than one keeping
    the old; a file with no write permission is refused, as is one changed since it was read (an
    editor's save would otherwise be lost)."""
    from primus_lang.diagnostics.codes_names import FILE_ACCESS

    st = os.stat(path, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(path, st, option)
    if not st.st_mode & 0o222:
        raise CompileError(Diagnostic(FILE_ACCESS, f"`{path}` is read-only", help="make it writable "
                                      "(`chmod u+w`) to format it in place, or leave out --write"))
    fd = os.open(path, os.O_RDWR | _NOFOLLOW | _CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "rb") as f:
            now = f.read(len(before) + 1)
        if now != before:
            raise CompileError(Diagnostic(FILE_ACCESS, f"`{path}` changed while it was being formatted; "
                                          "left as it is now", help="run `primusc fmt --write` again"))
        blob = data.encode("utf-8")
        if st.st_nlink > 1:
            os.lseek(fd, 0, os.SEEK_SET)
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
            os.ftruncate(fd, len(blob))
            os.fsync(fd)
            return
    finally:
        os.close(fd)
    write_file(path, blob, force=True, option=option, mode=stat.S_IMODE(st.st_mode))


def write_files(root: Path, files: Mapping[str, str | bytes], *, force: bool | Callable[[str], bool] = False,
                executable: Callable[[str], bool] = lambda rel: False) -> list[Path]:
    """Write ``files`` (relative path -> content) under ``root``. Every destination is looked at
    before the first is written, so a refusal leaves the folder as it was. ``force`` may be decided
    per file (a resumed plan replaces only the launch files it wrote itself)."""
    replace = force if callable(force) else (lambda rel: bool(force))
    for rel in files:
        preflight(root, rel, replace(rel))
    return [write_file(root / rel, text, force=replace(rel), root=root, executable=executable(rel))
            for rel, text in files.items()]


def preflight(root: Path, rel: str, force: bool) -> None:
    """Refuse to write ``root/rel`` where a folder on the way below ``root`` is a link or a file, or
    where ``rel`` itself is anything but a regular file that ``force`` allows replacing."""
    *dirs, name = Path(rel).parts
    here = root
    for part in dirs:
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return  # made fresh by the write: nothing below it exists yet
        if not stat.S_ISDIR(st.st_mode):
            raise _not_folder(here, st)
    try:
        st = os.lstat(here / name)
    except FileNotFoundError:
        return
    if not (force and stat.S_ISREG(st.st_mode)):
        raise _refusal(here / name, st, "out")


def refuse_collisions(outputs: Mapping[str, Path], inputs: Mapping[str, Path] | None = None) -> None:
    """Refuse two outputs, or an output and an input, that are one file however they are spelled
    (``--trace X --report X``, ``--out runs.yaml --runs runs.yaml``); keys say what each path is."""
    seen: list[tuple[str, Path, bool]] = [(what, p, True) for what, p in outputs.items()]
    seen += [(what, p, False) for what, p in (inputs or {}).items()]
    for i, (what, path, written) in enumerate(seen):
        for other, other_path, other_written in seen[:i]:
            if (written or other_written) and same_file(path, other_path):
                raise CompileError(Diagnostic(
                    OUTPUTS_COLLIDE, f"{other} and {what} are the same file `{path}`",
                    help="give each output a file of its own" if written and other_written
                    else "write the output somewhere else than the input"))


def same_file(a: Path, b: Path) -> bool:
    """One file, however spelled: through links, ``..``, or a second hard link."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _try_lock(fd: int, path: Path, holder: str) -> bool:
    """Take ``fd``'s exclusive lock or refuse; False where the file system has no locks."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: nothing to hold
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise CompileError(Diagnostic(
            OUTPUT_LOCKED, f"another primusc plan is writing {holder} `{path}`",
            help="wait for it to finish, or give this plan its own --out")) from None
    except OSError as err:
        if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF):
            return False
        raise
    return True


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder`` (made if missing) for one plan: a second plan into it is refused at once.

    The lock file is removed when the plan ends; a plan that took a lock file another one removed
    in the meantime finds its descriptor no longer named by the path, and takes the new file."""
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK_NAME
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refusal(lock, os.lstat(lock), "out") from None
            raise
        try:
            if not _try_lock(fd, folder, "into the folder"):
                break
            try:
                if os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)


def open_log(path: Path, append: bool) -> IO[str]:
    """``path`` opened to add lines to, locked against a second writer for as long as it is open;
    not ``append``: a new file replaces an existing one (whose writer, if any, must have finished)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        refuse_link(path, "trace")  # a pipe would block the open below, a device be replaced
    if not append:
        try:
            old = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            old = -1
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refusal(path, os.lstat(path), "trace") from None
            raise
        if old >= 0:
            try:
                _try_lock(old, path, "the trace")
                os.unlink(path)
            finally:
                os.close(old)
    flags = os.O_WRONLY | (os.O_APPEND if append else os.O_CREAT | os.O_EXCL)
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC, 0o666)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EEXIST):
            raise _refusal(path, os.lstat(path), "trace") from None
        raise
    try:
        _try_lock(fd, path, "the trace")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8")
