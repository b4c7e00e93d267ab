"""Writing outputs safely: atomic writes (a reader or an interrupted run never sees a
half-written file), writes confined to their folder, the report pair published under a lock
(concurrent runs into one folder each succeed and leave a json and html of the same run),
stale temporary files of killed runs cleaned, and text escaped for the terminal."""
from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from auditor.errors import ConfigError, InputError

# temporary files of this tool: .<target name>.<host>-<pid>.<random>.tmp (the pid tells a
# live writer's file from one a killed run left behind; it means something only on the host,
# or in the container, that wrote it: another machine or container writing into a shared
# folder has its own pids, so its files are never taken for a dead writer's)
_TMP = re.compile(r"^\.(?P<target>.+)\.(?:(?P<host>[A-Za-z0-9_-]+)-)?(?P<pid>\d+)"
                  r"\.[A-Za-z0-9_]+\.tmp$")
LOCK_NAME = ".auditor.lock"
# the names this tool writes into an output folder by itself: a sweep of the whole folder
# (target=None) removes stale temporary files of these only. A user's ``.draft.2023.final.tmp``
# beside the report also matches _TMP (2023 read as a dead pid): it is never touched.
OWN_TARGETS = frozenset({"report.json", "report.html", "write-test", "history.html"})


def _host() -> str:
    import socket

    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname().split(".")[0])[:40] or "host"


def _tmp_prefix(name: str) -> str:
    return f".{name}.{_host()}-{os.getpid()}."


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def clean_stale_temp_files(folder: Path, target: str | None = None) -> list[Path]:
    """Remove this tool's temporary files in ``folder`` (of ``target`` only, when given, else
    of the names in OWN_TARGETS) whose writing process no longer exists: what a killed run
    (SIGKILL, power loss) left behind. Files of live writers (a concurrent run) are kept.
    Returns the removed paths."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP.match(entry.name)
        if not m or m["target"] not in ({target} if target is not None else OWN_TARGETS):
            continue
        if m["host"] not in (None, _host()) or _pid_alive(int(m["pid"])):
            continue  # another host's file, or a live writer's
        try:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def confined(folder: Path | str, name: str) -> Path:
    """``folder / name``, proven to stay inside ``folder``: ``name`` must be one plain file
    name (no separators, not ``.``/``..``, no NUL), and the resolved path (symlinks
    followed) must lie in the resolved folder. Raises ConfigError otherwise."""
    folder = Path(folder)
    if (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name
            or os.sep in name):
        raise ConfigError(f"{folder}: refusing to write {name!r}: not a plain file name")
    path = folder / name
    base = folder.resolve()
    if not path.resolve().is_relative_to(base):
        raise ConfigError(f"{folder}: refusing to write {name!r}: it resolves to "
                          f"{path.resolve()}, outside the folder")
    return path


@contextmanager
def atomic_path(path: Path, *, within: Path | None = None) -> Iterator[Path]:
    """A temporary path in ``path``'s folder to write to; on success it gets the permissions
    of a normally created file (mkstemp makes 0600) and is renamed over ``path``; on any
    error it is removed and ``path`` is left as it was. ``within``: the folder the write is
    confined to (``path`` must be a plain name in it, see :func:`confined`). Temporary files
    that killed runs left for the same target are removed first."""
    if within is not None:
        if path.parent.resolve() != Path(within).resolve():
            raise ConfigError(f"{within}: refusing to write {path}: it is not a file of that "
                              "folder")
        path = confined(within, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temp_files(path.parent, path.name)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(path.name), suffix=".tmp",
                               dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        _normal_permissions(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _normal_permissions(tmp: str) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, fsynced) to ``path`` atomically. A target that is not a regular
    file (``/dev/stdout``, ``/dev/null``, a FIFO with a reader) is written into, never replaced
    (as root, a rename put a regular file in place of /dev/null); a FIFO without a reader is an
    OSError, not a hang. A symbolic link is kept: the file it points to is replaced."""
    import stat

    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def write_parquet_atomic(df: Any, path: Path, *, within: Path | None = None) -> None:
    """Write the polars DataFrame ``df`` to ``path`` as Parquet atomically (confined to
    ``within`` when given)."""
    with atomic_path(path, within=within) as tmp:
        df.write_parquet(tmp)


def probe_writable(folder: Path) -> None:
    """Prove ``folder`` is writable with a uniquely named probe (concurrent runs must not
    race on one name). Raises OSError."""
    fd, probe = tempfile.mkstemp(prefix=_tmp_prefix("write-test"), suffix=".tmp",
                                 dir=folder)
    os.close(fd)
    os.unlink(probe)


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``fcntl.flock`` on ``folder/.auditor.lock`` (a no-op where flock does
    not exist); released when the block ends, or by the kernel if the process dies."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_files_together(folder: Path, files: dict[str, str]) -> None:
    """Write every ``name -> text`` of ``files`` into ``folder`` so that a reader never mixes
    runs: each is written to its own temporary file (fsynced) first, then all are renamed into
    place while holding the folder's lock. Two runs publishing into one folder at once each
    succeed, and the files left are all from the same run (the one that renamed last)."""
    temps: dict[str, str] = {}
    try:
        for name in files:
            confined(folder, name)
            clean_stale_temp_files(folder, name)
            fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(name), suffix=".tmp",
                                       dir=folder)
            temps[name] = tmp
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(files[name])
                fh.flush()
                os.fsync(fh.fileno())
            _normal_permissions(tmp)
        with folder_lock(folder):
            for name, tmp in temps.items():
                os.replace(tmp, folder / name)
    except BaseException:
        for tmp in temps.values():
            Path(tmp).unlink(missing_ok=True)
        raise


def refuse_overwriting_inputs(outputs: Iterable[Path], inputs: Iterable[Path]) -> None:
    """Inputs are never modified: an output path that resolves to an input file (or into an
    input directory) is an InputError, raised before anything is written."""
    resolved = []
    for p in inputs:
        try:
            resolved.append(Path(p).resolve())
        except (OSError, RuntimeError):
            continue
    for out in outputs:
        target = Path(out).resolve()
        for inp in resolved:
            if target == inp or (inp.is_dir() and target.is_relative_to(inp)):
                raise InputError(f"{out}: refusing to write there: it is an input of this "
                                 f"audit ({inp}); inputs are never modified: choose another "
                                 "--out folder")


def refuse_colliding_outputs(outputs: dict[str, Path]) -> None:
    """Two outputs of one run (``what -> path``) that resolve to one file would replace each
    other (``--junit out/report.json`` left a JUnit file where the report was): InputError,
    raised before anything is written."""
    seen: dict[Path, str] = {}
    for what, p in outputs.items():
        target = Path(p).resolve()
        if target in seen:
            raise InputError(f"{p}: {what} and {seen[target]} would both be written there; "
                             "give them different paths")
        seen[target] = what


@contextmanager
def output_errors(where: Path | str) -> Iterator[None]:
    """An OSError while writing an output (disk full, read-only folder, a directory in the
    way) becomes one InputError naming ``where`` (exit 2), not an internal error."""
    try:
        yield
    except OSError as err:
        name = err.filename if isinstance(err.filename, str) else None
        if name and not _TMP.match(Path(name).name):  # e.g. the lock file, not a temp file
            where = name
        raise InputError(f"{where}: cannot write: {err.strerror or err}") from None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e"
                      r"\u2066-\u2069]")


def terminal_safe(text: object, *, markup: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters (escape sequences, carriage
    returns, newlines, bidi overrides) shown as ``\\x1b``-style escapes; with ``markup``, rich
    markup brackets escaped as well (for text passed to a rich console with markup on)."""
    s = _CONTROL.sub(lambda m: (f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                                else f"\\u{ord(m[0]):04x}"), str(text))
    if markup:
        from rich.markup import escape

        s = escape(s)
    return s
