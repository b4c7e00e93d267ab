"""Opening inputs safely: what a path given as input may be, and which files of a dataset
folder are data.

Only regular files and directories are read: a FIFO (named pipe), socket or device would block
a reader forever or stream without end, so it is refused with one line (exit 2). A symbolic
link loop and a dangling link are named as such, not as "file not found". In a folder of
Parquet files, what Spark, Hive and pyarrow skip is skipped: any path part starting with ``.``
or ``_`` (``_temporary/`` of an unfinished Spark job, ``_SUCCESS``, ``_committed_*``,
``.part-0.crc``), so an unfinished write is not read twice.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from auditor.errors import InputError


def check_input_path(path: Path | str, *, what: str = "file") -> os.stat_result:
    """The ``os.stat`` of an input that may be read: a regular file or a directory.
    Raises InputError naming the path and what is wrong otherwise."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(f"{path}: broken symbolic link (it points to "
                             f"{os.readlink(path)!r}, which does not exist)") from None
        raise InputError(f"{path}: {what} not found") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(f"{path}: symbolic link loop (the link points back to "
                             "itself); give the real file") from None
        if err.errno in (errno.EACCES, errno.EPERM):
            raise InputError(f"{path}: permission denied") from None
        if err.errno == errno.ENOTDIR:
            raise InputError(f"{path}: {what} not found (a part of the path is not a "
                             "directory)") from None
        raise InputError(f"{path}: cannot open: {err.strerror or err}") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "not a regular file")
        raise InputError(f"{path}: is {kind}; expected a regular file or a directory "
                         "(reading it could block forever)")
    return st


def is_skipped_part(name: str) -> bool:
    """Spark/Hive/pyarrow convention: names starting with '.' or '_' are not data."""
    return name.startswith((".", "_"))


def data_files(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Regular files under ``folder`` whose suffix is in ``suffixes``, sorted, skipping every
    path with a part that starts with ``.`` or ``_`` (below ``folder``) and anything that is
    not a regular file (a FIFO named ``x.parquet`` would block the reader)."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not is_skipped_part(d))
        for name in files:
            if is_skipped_part(name) or Path(name).suffix.lower() not in suffixes:
                continue
            p = Path(root) / name
            try:
                if stat.S_ISREG(os.stat(p).st_mode):
                    out.append(p)
            except OSError:
                continue
    return sorted(out)
