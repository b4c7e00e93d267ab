"""Shared fixtures: small seeded frames, split files on disk, and a CLI runner."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

# The slowest test files, slowest first (seconds summed per file from `pytest -n 2 --dist
# loadfile --durations=0` on 2 cores, 2026-11-30). `make test` hands whole files to the two
# workers in collection order (`--no-loadscope-reorder`; xdist's default order is by number of
# tests, which left a 3-test, 120 s Spark file to run alone at the end): these go first, so
# the run ends on short files and both workers finish together.
SLOWEST_FIRST = (
    "engines/test_conformance.py",       # 348 s
    "engines/test_spark_assoc.py",       # 151 s
    "engines/test_spark_e2e.py",         # 118 s
    "test_hardening.py",                 # 98 s
    "engines/test_spark_drift.py",       # 96 s
    "engines/test_spark_rows.py",        # 89 s
    "detectors/test_expectations.py",    # 77 s
    "realdata/test_honest_splits.py",    # 72 s
    "test_cli.py",                       # 66 s
    "engines/test_spark_contamination.py",
    "engines/test_spark_io.py",
    "engines/test_spark_names.py",
    "realdata/test_real_leaks.py",
    "detectors/test_separability.py",
    "engines/test_spark_prep_review.py",
    "engines/test_spark_prep.py",
    "engines/test_spark_tokens.py",
    "loading/test_hf.py",
    "detectors/test_drift.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (:data:`SLOWEST_FIRST`), the others after in collection order;
    a file's tests stay together and in order."""
    rank = {f"tests/{name}": i for i, name in enumerate(SLOWEST_FIRST)}

    def key(item: pytest.Item) -> int:  # the file part of the node id: xdist's scope
        return rank.get(item.nodeid.split("::", 1)[0], len(rank))

    items.sort(key=key)  # stable: the rest keep their order


def clean_frame(n: int, seed: int, offset: int = 0) -> pl.DataFrame:
    """A random tabular split with no planted problem: unique ids, continuous features."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    return pl.DataFrame({
        "row_id": np.arange(offset, offset + n),
        "x1": x1,
        "x2": rng.normal(size=n),
        "cat": rng.choice(["a", "b", "c", "d"], n),
        "y": (rng.random(n) < 1 / (1 + np.exp(-0.5 * x1))).astype(np.int64),
    })


@pytest.fixture
def clean_splits() -> dict[str, pl.DataFrame]:
    return {"train": clean_frame(800, 1), "test": clean_frame(200, 2, offset=10_000)}


@pytest.fixture
def write_splits(tmp_path: Path):
    """Write frames as Parquet into tmp_path; return {split: path}."""
    def write(frames: dict[str, pl.DataFrame], suffix: str = ".parquet") -> dict[str, Path]:
        out = {}
        for name, df in frames.items():
            path = tmp_path / f"{name}{suffix}"
            if suffix == ".parquet":
                df.write_parquet(path)
            elif suffix == ".csv":
                df.write_csv(path)
            elif suffix == ".jsonl":
                df.write_ndjson(path)
            elif suffix == ".arrow":
                df.write_ipc(path)
            out[name] = path
        return out
    return write


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m auditor ARGS`` in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "auditor", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def cli():
    return run_cli


def gx_or_skip() -> Any:
    """great_expectations imported as the audit imports it (``import_gx``: it survives a
    ``__main__`` without ``__file__``, as in pytest-xdist's workers, where GX's pyspark import
    would otherwise call ``sys.exit(0)``), or the test skipped when it is not installed."""
    from auditor.integrations.gx import import_gx

    try:
        return import_gx()
    except ImportError as err:
        pytest.skip(str(err), allow_module_level=True)
