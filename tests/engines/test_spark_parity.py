"""The same planted and honest splits through both engines: equal statuses and equal values.

Exact equality for every count and for the statistics computed from counts (drift of
categorical columns and of the label, duplicate shares, chance baselines); the model probes
run on the driver-side sample, which here holds every row (sample_rows >= rows), so their
AUCs agree within 0.02 (row order may differ, not the rows). Skipped when pyspark or Java is
missing (see conftest.py).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from auditor.engines import NOT_ON_SPARK
from auditor.engines.polars_engine import PolarsEngine
from auditor.engines.spark_engine import SparkEngine
from tests.engines.fixtures import honest, planted

ROLES = dict(label="y", groups=["user"], ids=["row_id"])
CATEGORICAL = ("cat", "flag")
SUITE = """
checks:
  leakage.duplicates: {}
  leakage.group_overlap: {}
  drift.label: {}
  drift.features: {}
  separability.adversarial: {max_rows: 25000, folds: 3}
  schema.consistency: {}
"""


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


def _audit(frames, engine, spark, tmp_path: Path, suite_text: str = SUITE, **roles):
    from auditor.api import audit

    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text)
    if engine == "spark":
        frames = _spark_frames(spark, frames)
    return audit(train=frames["train"], test=frames["test"], suite=str(suite), engine=engine,
                 spark=spark, hash="fast", **(roles or ROLES))


def _findings(result, keep):
    return {(f.metric, str(f.subject), tuple(f.splits)): f for f in result.findings
            if keep(f)}


def _compare(rp, rs):
    by_p = {c.id: c for c in rp.checks}
    by_s = {c.id: c for c in rs.checks}
    # schema.consistency runs on spark (spark_drift: variants judged by the polars code)
    assert by_s["schema.consistency"].status == by_p["schema.consistency"].status
    assert NOT_ON_SPARK not in by_s["schema.consistency"].summary
    for cid in ("leakage.duplicates", "leakage.group_overlap", "drift.label", "drift.features",
                "separability.adversarial"):
        p, s = by_p[cid], by_s[cid]
        assert p.status == s.status, (cid, p.summary, s.summary)
        if cid == "drift.features":
            keep = lambda f: f.subject in CATEGORICAL  # noqa: E731  (numeric: not on spark)
        elif cid == "leakage.duplicates":
            keep = lambda f: f.metric in ("duplicate_rows", "within_split_duplicates")  # noqa
        else:
            keep = lambda f: f.metric != "not_computed_on_spark"  # noqa: E731
        fp, fs = _findings(p, keep), _findings(s, keep)
        assert set(fp) == set(fs), (cid, set(fp) ^ set(fs))
        for k in fp:
            a, b = fp[k], fs[k]
            assert a.severity == b.severity and a.count == b.count, (cid, k)
            if cid.startswith("separability"):  # every row on the driver: nothing to state
                assert math.isclose(a.value, b.value, abs_tol=0.02), (cid, k, a.value, b.value)
                assert "driver-side sample" not in b.message and "driver_sample" not in \
                    b.evidence
            else:
                assert a.value == b.value, (cid, k, a.value, b.value)
                # drift.features: p-values are BH-adjusted over the compared columns and the
                # spark engine compares fewer (no numeric ones yet): same verdicts and values,
                # another adjusted p in the message
                if cid != "drift.features":
                    assert a.message == b.message, (cid, k)


def test_checks_agree_on_planted_splits(spark, tmp_path):
    frames = planted()
    rp = _audit(frames, "polars", spark, tmp_path)
    rs = _audit(frames, "spark", spark, tmp_path)
    _compare(rp, rs)
    by_s = {c.id: c for c in rs.checks}
    dup = {f.metric: f for f in by_s["leakage.duplicates"].findings}
    assert dup["duplicate_rows"].count == 12 and dup["duplicate_rows"].severity == "fail"
    assert dup["within_split_duplicates"].count == 6
    groups = {f.metric: f for f in by_s["leakage.group_overlap"].findings}
    assert groups["group_overlap_rows"].severity == "fail"
    assert groups["id_overlap_rows"].count == 0
    label = by_s["drift.label"].findings[0]
    assert label.subject == "y" and label.severity in ("warn", "fail")
    cat = [f for f in by_s["drift.features"].findings if f.subject == "cat"]
    assert cat and cat[0].severity == "fail"


def test_checks_agree_on_honest_splits(spark, tmp_path):
    frames = honest()
    rp = _audit(frames, "polars", spark, tmp_path)
    rs = _audit(frames, "spark", spark, tmp_path)
    _compare(rp, rs)
    assert all(c.status != "fail" for c in rs.checks), [(c.id, c.summary) for c in rs.checks]


def test_temporal_agrees_on_overlapping_dated_splits(spark, tmp_path):
    """train runs daily from Jan 1 to Apr 9 2024 (UTC); test from Apr 1: 8 of its 60 dated
    rows (plus 3 undated) are dated before train ends, and the gap is shorter than 30d."""
    from datetime import datetime, timedelta

    start = datetime(2024, 1, 1)
    utc = pl.Datetime("us", "UTC")  # Spark's TIMESTAMP is an instant: compare zoned times
    train = pl.DataFrame({"ts": pl.Series([start + timedelta(days=i) for i in range(100)],
                                          dtype=pl.Datetime("us")).dt.replace_time_zone("UTC"),
                          "x": np.arange(100.0)})
    ts = [start + timedelta(days=91 + i) for i in range(60)] + [None] * 3
    test = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Datetime("us")).dt.replace_time_zone("UTC"),
                         "x": np.arange(63.0)})
    assert train.schema["ts"] == utc
    suite = "checks:\n  leakage.temporal: {min_gap: 30d}\n"
    frames = {"train": train, "test": test}
    rp = _audit(frames, "polars", spark, tmp_path, suite, time="ts")
    rs = _audit(frames, "spark", spark, tmp_path, suite, time="ts")
    p, s = rp.checks[0], rs.checks[0]
    assert p.status == s.status == "fail"
    fp = {f.metric: f for f in p.findings}
    fs = {f.metric: f for f in s.findings}
    assert set(fp) == set(fs)
    for k in fp:
        assert (fp[k].severity, fp[k].value, fp[k].count, fp[k].message) == \
            (fs[k].severity, fs[k].value, fs[k].count, fs[k].message), k
    assert fs["rows_before_previous_end"].count == 8  # Apr 1..8 are before Apr 9
    assert fs["gap_shorter_than_min_gap"].value == -8.0  # days
    assert fs["null_time_rows"].count == 3


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
