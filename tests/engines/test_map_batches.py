"""``map_batches`` on both engines: row numbers, empty splits, ``sum_by`` and ``splits``, with
batches cut at different places (what a check merges must not depend on the cut)."""
from __future__ import annotations

from functools import partial

import numpy as np
import polars as pl
import pytest

from auditor.engines.polars_engine import PolarsEngine

SCHEMA = {"kind": pl.String, "key": pl.Int64, "n": pl.Int64, "ids": pl.List(pl.Int64)}


def per_batch(batch: pl.DataFrame, first_row: int, *, limit: int) -> pl.DataFrame:
    """Rows per batch, list lengths summed by length, and the first ``limit`` rows of the
    batch whose list is longer than 2 (with the list itself)."""
    lens = batch["ids"].list.len().fill_null(0)
    by_len = pl.DataFrame({"key": lens}).group_by("key").len(name="n")
    long = np.flatnonzero(lens.to_numpy() > 2)[:limit]
    return pl.concat([
        pl.DataFrame({"kind": ["rows"], "n": [batch.height]}),
        by_len.with_columns(kind=pl.lit("len")),
        pl.DataFrame({"kind": ["long"] * len(long), "key": (long + first_row).tolist(),
                      "ids": batch["ids"].gather(long).to_list()},
                     schema_overrides={"ids": pl.List(pl.Int64)}),
    ], how="diagonal_relaxed")


def _frames() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(3)
    ids = [None if i % 17 == 0 else rng.integers(0, 9, rng.integers(0, 6)).tolist()
           for i in range(230)]
    return {"train": pl.DataFrame({"ids": ids}, schema={"ids": pl.List(pl.Int64)}),
            "empty": pl.DataFrame({"ids": []}, schema={"ids": pl.List(pl.Int64)}),
            "test": pl.DataFrame({"ids": ids[:61]}, schema={"ids": pl.List(pl.Int64)})}


def _expected(frames: dict[str, pl.DataFrame]) -> dict[str, dict]:
    out = {}
    for s, df in frames.items():
        lens = [len(v) if v is not None else 0 for v in df["ids"].to_list()]
        long = [i for i, n in enumerate(lens) if n > 2]
        out[s] = {"rows": df.height, "len": {n: lens.count(n) for n in set(lens)},
                  "long": long}
    return out


def _summary(got: dict[str, pl.DataFrame], limit: int) -> dict[str, dict]:
    out = {}
    for s, df in got.items():
        lens = df.filter(pl.col("kind") == "len").group_by("key").agg(pl.col("n").sum())
        long = df.filter(pl.col("kind") == "long").sort("key")
        out[s] = {"rows": int(df.filter(pl.col("kind") == "rows")["n"].sum()),
                  "len": dict(lens.iter_rows()), "long": long["key"].to_list()}
        assert long["ids"].list.len().min() is None or long["ids"].list.len().min() > 2
    return out


def _run(engine, monkeypatch=None) -> None:
    frames = _frames()
    want = _expected(frames)
    got = engine.map_batches(["ids"], partial(per_batch, limit=1000), SCHEMA)
    assert list(got) == list(frames)
    assert all(g.schema == pl.Schema(SCHEMA) for g in got.values())
    assert got["empty"].height == 0
    assert _summary(got, 1000) == {s: w if w["rows"] else {"rows": 0, "len": {}, "long": []}
                                   for s, w in want.items()}
    summed = engine.map_batches(["ids"], partial(per_batch, limit=0), SCHEMA,
                                sum_by=["kind", "key", "ids"], splits=["test"])
    assert list(summed) == ["test"]
    rows = summed["test"].filter(pl.col("kind") == "len").sort("key")
    assert dict(rows.select("key", "n").iter_rows()) == want["test"]["len"]
    assert rows["key"].is_unique().all()  # merged across batches


def test_polars_batches_merge_to_the_whole(monkeypatch):
    import auditor.engines.polars_engine as polars_engine

    monkeypatch.setattr(polars_engine, "BATCH_ROWS", 23)
    _run(PolarsEngine(_frames()))


def test_spark_batches_merge_to_the_whole(spark):
    from auditor.engines.spark_engine import SparkEngine

    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "19")
    # in stored order over several partitions (persisted, as the loader leaves every split):
    # row numbers = partition offset + position
    frames = {s: spark.createDataFrame(df.to_arrow()).cache() if df.height
              else spark.createDataFrame([], "ids array<bigint>")
              for s, df in _frames().items()}
    assert frames["train"].rdd.getNumPartitions() > 1
    _run(SparkEngine(frames))


def test_sum_by_refuses_to_sum_a_list():
    with pytest.raises(ValueError, match=r"non-numeric columns to sum: \['ids'\]"):
        PolarsEngine(_frames()).map_batches(["ids"], partial(per_batch, limit=0), SCHEMA,
                                            sum_by=["kind", "key"])


def test_a_type_spark_cannot_hold_is_refused_before_any_job():
    from auditor.engines.spark_engine import spark_type

    assert spark_type(pl.List(pl.Int64)) == "array<long>"
    with pytest.raises(TypeError, match="no Spark type"):
        spark_type(pl.Datetime("us"))
