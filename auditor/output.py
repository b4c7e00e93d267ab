"""Atomic writes: a reader (or an interrupted run) never sees a half-written file."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder to write to; on success it gets the permissions
    of a normally created file (mkstemp makes 0600) and is renamed over ``path``; on any
    error it is removed and ``path`` is left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, fsynced) to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def write_parquet_atomic(df: Any, path: Path) -> None:
    """Write the polars DataFrame ``df`` to ``path`` as Parquet atomically."""
    with atomic_path(path) as tmp:
        df.write_parquet(tmp)
