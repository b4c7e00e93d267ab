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
import json
import os
import stat
from pathlib import Path
from typing import Any

from auditor.errors import ConfigError, InputError

DATASET_STATE = "state.json"
DATASET_DICT = "dataset_dict.json"
DATASET_INFO = "dataset_info.json"


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


# ---------------------------------------------------------------------------------------------
# Folders written by Hugging Face datasets' save_to_disk (read by auditor.loading.hf)
# ---------------------------------------------------------------------------------------------

def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def is_saved_dataset(path: Path) -> bool:
    """A ``Dataset.save_to_disk`` folder: a directory holding ``state.json``."""
    return path.is_dir() and (path / DATASET_STATE).is_file()


def is_saved_dataset_dict(path: Path) -> bool:
    """A ``DatasetDict.save_to_disk`` folder: a directory holding ``dataset_dict.json``."""
    return path.is_dir() and (path / DATASET_DICT).is_file()


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{path}: not a readable datasets metadata file: "
                         f"{_first_line(err)}") from None


def saved_splits(path: Path) -> list[str]:
    """Split names of a ``DatasetDict.save_to_disk`` folder, in their saved order."""
    raw = read_json(path / DATASET_DICT)
    splits = raw.get("splits") if isinstance(raw, dict) else None
    if not isinstance(splits, list) or not splits or not all(isinstance(s, str) for s in splits):
        raise InputError(f"{path / DATASET_DICT}: expected {{\"splits\": [...]}} as "
                         "DatasetDict.save_to_disk writes it")
    return splits


def expand_dataset_dict(path: Path, source: str) -> dict[str, str]:
    """``datasets: FOLDER`` in audit.yaml -> ``{split: FOLDER/split}`` in saved order."""
    if not path.exists():
        raise ConfigError(f"{source}: datasets: {path}: folder not found")
    if not is_saved_dataset_dict(path):
        hint = (" (it is a single Dataset folder: name its split, e.g. "
                f"`datasets: {{train: {path.name}}}`)" if is_saved_dataset(path) else "")
        raise ConfigError(f"{source}: datasets: {path}: expected a mapping of split names to "
                          f"paths, or a DatasetDict.save_to_disk folder with {DATASET_DICT}"
                          f"{hint}")
    try:
        names = saved_splits(path)
    except InputError as err:
        raise ConfigError(f"{source}: datasets: {err}") from None
    return {name: str(path / name) for name in names}
