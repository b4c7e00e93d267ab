"""The Spark engine's key operations against the polars engine's, exactly, on planted splits,
and the duplicates' chance baseline on rows that repeat by chance (whole-report agreement of
every check on planted and honest splits is the conformance suite's:
tests/engines/test_conformance.py). Skipped when pyspark or Java is missing (see
conftest.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from auditor.engines.polars_engine import PolarsEngine
from auditor.engines.spark_engine import SparkEngine
from tests.engines.fixtures import planted


def _spark_frames(spark, frames):
    return {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}


@pytest.fixture(scope="module")
def engines(spark):
    frames = planted()
    return PolarsEngine(frames), SparkEngine(_spark_frames(spark, frames))


def test_engine_operations_agree_exactly_on_planted_splits(engines):
    pe, se = engines
    whole = ["user", "x1", "x2", "cat", "flag", "y"]
    split = "train"  # the one with NaN, nulls and within-split copies (Spark jobs are slow here)
    assert pe.rows(split) == se.rows(split)
    for key, nulls in ((["cat", "flag"], False), (whole, True)):
        assert pe.key_summary(split, key, nulls_are_keys=nulls, null_in=key[1:3]) == \
            se.key_summary(split, key, nulls_are_keys=nulls, null_in=key[1:3])
    a, b = pe.category_counts(split, "cat"), se.category_counts(split, "cat")
    assert a[1] == b[1] == 20 and a[0].equals(b[0])
    whole = ["user", "x1", "x2", "cat", "flag", "y"]
    for key, nulls in ((["user"], False), (whole, True)):
        a = pe.key_overlap("train", "test", key, nulls_are_keys=nulls, max_examples=5)
        b = se.key_overlap("train", "test", key, nulls_are_keys=nulls, max_examples=5)
        assert (a.shared, a.rows_earlier, a.rows_later) == (b.shared, b.rows_earlier,
                                                            b.rows_later)
        assert a.top.select("rows_earlier", "rows_later").equals(
            b.top.select("rows_earlier", "rows_later"))
    # the planted numbers themselves (not just agreement)
    exact = pe.key_overlap("train", "test", whole, nulls_are_keys=True)
    assert exact.rows_later == 12
    assert pe.key_summary("train", whole, nulls_are_keys=True).repeated_rows == 6


def _audit(frames, engine, spark, tmp_path: Path, suite_text: str, **roles):
    from auditor.api import audit

    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text)
    if engine == "spark":
        frames = _spark_frames(spark, frames)
    return audit(train=frames["train"], test=frames["test"], suite=str(suite), engine=engine,
                 spark=spark, hash="fast", **roles)


def test_duplicates_chance_baseline_agrees_on_discrete_rows(spark, tmp_path):
    """Three 3-level columns: rows repeat by chance (27 patterns), so the copy share is judged
    against the chance baseline; both engines give the same baseline, p-value and verdict."""
    rng = np.random.default_rng(5)

    def part(n: int) -> pl.DataFrame:
        return pl.DataFrame({c: rng.choice(["p", "q", "r"], n) for c in ("a", "b", "c")}
                            | {"y": rng.integers(0, 2, n)})

    frames = {"train": part(300), "test": part(100)}
    suite = "checks:\n  leakage.duplicates: {}\n"
    rp = _audit(frames, "polars", spark, tmp_path, suite, label="y")
    rs = _audit(frames, "spark", spark, tmp_path, suite, label="y")
    keep = ("duplicate_rows", "within_split_duplicates")
    fp = {(f.metric, tuple(f.splits)): f for f in rp.checks[0].findings if f.metric in keep}
    fs = {(f.metric, tuple(f.splits)): f for f in rs.checks[0].findings if f.metric in keep}
    assert set(fp) == set(fs) and len(fs) == 3
    for k in fp:
        assert (fp[k].severity, fp[k].value, fp[k].count, fp[k].message) == \
            (fs[k].severity, fs[k].value, fs[k].count, fs[k].message), k
    chance = fs[("duplicate_rows", ("train", "test"))].evidence["chance_baseline"]
    assert chance == fp[("duplicate_rows", ("train", "test"))].evidence["chance_baseline"]
    assert chance["baseline"] > 0.9  # 300 rows over 27 patterns: nearly every row repeats
