"""auditor.report.output: atomic writes leave a normally readable file or nothing."""
from __future__ import annotations

import os

import polars as pl
import pytest

from auditor.report.output import write_atomic, write_parquet_atomic


def test_written_files_get_umask_permissions_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "r.json", "{}")
        write_parquet_atomic(pl.DataFrame({"a": [1]}), tmp_path / "c.parquet")
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "c.parquet").stat().st_mode & 0o777 == 0o644
    assert pl.read_parquet(tmp_path / "c.parquet")["a"].to_list() == [1]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "c.parquet"
    target.write_bytes(b"old")

    class Broken:
        def write_parquet(self, path):
            raise OSError("disk full")

    with pytest.raises(OSError):
        write_parquet_atomic(Broken(), target)
    assert target.read_bytes() == b"old" and list(tmp_path.iterdir()) == [target]
