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
    split = "train"  # the one with NaN, nulls and within-split copies (Spark jobs are slow here)
    assert pe.rows(split) == se.rows(split)
    keys = ["user", "x1", "cat", "flag"]  # NaN and null are no key; one job per operation
    assert pe.key_summaries(keys) == se.key_summaries(keys)
    got = [e.key_overlaps(keys, [("train", "test")], max_examples=5) for e in (pe, se)]
    assert got[0].keys() == got[1].keys()
    for k, a in got[0].items():
        b = got[1][k]
        assert (a.shared, a.rows_earlier, a.rows_later) == (b.shared, b.rows_earlier,
                                                            b.rows_later), k
        assert a.top.select("rows_earlier", "rows_later").equals(
            b.top.select("rows_earlier", "rows_later")), k
    assert got[0][("user", "train", "test")].shared > 0
    # example rows carry the asked id columns on both engines: the same rows (Spark orders
    # them by value, polars by position: compared as sets of (value, ids))
    from auditor.engines.operations import Between, Num

    shown = [e.examples("test", Between(Num("x2"), hi=0.5), [Num("x2")], 500,
                      ids=["row_id", "user"]) for e in (pe, se)]
    for ex in shown:
        assert set(ex.ids) == {"row_id", "user"} and len(ex.ids["user"]) == len(ex.values)
    seen = [sorted(zip([v for (v,) in ex.values], ex.ids["row_id"], ex.ids["user"]))
            for ex in shown]
    assert seen[0] == seen[1]
    test = planted()["test"].filter(pl.col("x2") < 0.5)
    assert sorted(shown[0].ids["row_id"]) == sorted(test["row_id"].to_list())


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


def _brute_tally(values: list, lo, hi) -> tuple:
    """(hits, compared, largest, smallest) of ``lo <= v < hi`` over ``values`` (None: no
    value)."""
    have = [v for v in values if v is not None]
    hits = [v for v in have if (lo is None or v >= lo) and (hi is None or v < hi)]
    return len(hits), len(have), max(hits, default=None), min(hits, default=None)


def test_tallies_counted_by_bucket_equal_each_condition_counted_alone(spark):
    """Many conditions on one value are counted by bucket (one group-by) on both engines: the
    same tallies as counting each condition on its own, for values on the bounds, NaN and
    null (missing), repeated and open bounds, an empty interval, datetimes (epoch
    microseconds, integer bounds and float ones) and an Exceeds condition alongside."""
    from datetime import datetime, timedelta

    from auditor.engines.operations import BUCKETED, Between, Exceeds, Num, bucketed

    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=400), 1)
    x[:5] = np.nan
    t = [datetime(2024, 1, 1) + timedelta(hours=int(h)) for h in rng.integers(0, 2000, 400)]
    frame = pl.DataFrame({"x": x, "t": t}).with_columns(
        pl.when(pl.int_range(pl.len()) % 50 == 7).then(None).otherwise(pl.col("x")).alias("x"))
    xs = [None if v is None or np.isnan(v) else v for v in frame["x"].to_list()]
    us = [int((v - datetime(1970, 1, 1)).total_seconds()) * 1_000_000 for v in t]
    bounds = [-1.0, -0.5, 0.0, 0.0, 0.3, 0.5, 1.0, 2.5]
    conds = ([Between(Num("x"), hi=b) for b in bounds]
             + [Between(Num("x"), lo=-0.5, hi=0.5), Between(Num("x"), lo=0.3),
                Between(Num("x"), lo=0.5, hi=0.5), Exceeds(Num("x"), Num("x", 1))])
    t_bounds = [us[0], us[1] + 0.5, min(us), max(us)] + sorted(us[10:16])
    t_conds = [Between(Num("t"), hi=b) for b in t_bounds] + [Between(Num("t"), lo=us[3])]
    groups, rest = bucketed(conds)
    assert [len(g.at) for g in groups] == [len(conds) - 1] and rest == [len(conds) - 1]
    assert len(t_conds) >= BUCKETED
    expected = [_brute_tally(xs, c.lo, c.hi) for c in conds[:-1]]
    expected.append((0, sum(v is not None for v in xs), None, None))
    expected_t = [_brute_tally(us, c.lo, c.hi) for c in t_conds]
    spark_engine = SparkEngine({"a": spark.createDataFrame(frame.to_arrow())})
    for engine in (PolarsEngine({"a": frame}), spark_engine):
        got = engine.tallies({"a": conds})["a"]
        assert [(g.hits, g.compared, g.largest, g.smallest) for g in got] == expected, engine
        got = engine.tallies({"a": t_conds})["a"]
        assert [(g.hits, g.compared, g.largest, g.smallest) for g in got] == expected_t, engine


def test_value_operations_agree_with_numpy_on_both_engines(spark):
    """quantiles (polars exact; Spark's bracket holds the exact order statistics), exact
    order statistics, the most repeated value, distinct counts (NaN and null each a level of
    their own when asked) and level spreads, on values with NaN, nulls and ties, bounded by
    every kind of bound, equal on both engines and to numpy."""
    from auditor.engines.operations import OrderStat, Values
    from auditor.stats.preprocessing import linear_quantile

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(size=3000), np.full(300, 0.5), rng.integers(0, 4, 700)])
    x[rng.random(x.size) < 0.02] = np.nan
    key = rng.integers(0, 50, x.size)
    f = (key % 7) / 7.0  # a function of the key
    frames = {"a": pl.DataFrame({"x": x[:2500], "k": key[:2500], "f": f[:2500]}),
              "b": pl.DataFrame({"x": x[2500:], "k": key[2500:], "f": f[2500:]})
              .with_columns(pl.when(pl.int_range(pl.len()) % 10 == 0).then(None)
                            .otherwise(pl.col("x")).alias("x"))}
    pe, se = PolarsEngine(frames), SparkEngine(_spark_frames(spark, frames))
    both = np.concatenate([frames["a"]["x"].to_numpy(),
                           frames["b"]["x"].fill_null(np.nan).to_numpy()])
    requests = [Values("x", ("a", "b")), Values("x", ("b",)), Values("x", ("a", "b"), lo=0.0),
                Values("x", ("a", "b"), at=0.5, far=1e-9), Values("x", ("a",), at=0.5, near=0.6)]

    def ref(v):
        s = both if v.splits == ("a", "b") else (frames["a"]["x"].to_numpy() if v.splits ==
                                                 ("a",) else both[2500:])
        s = s[~np.isnan(s)]
        keep = np.ones(s.size, bool)
        if v.lo is not None:
            keep &= s >= v.lo
        if v.near is not None:
            keep &= np.abs(s - v.at) <= v.near
        if v.far is not None:
            keep &= np.abs(s - v.at) > v.far
        return np.sort(s[keep])

    qs = (0.25, 0.5, 0.75)
    sized = [(v, ref(v).size) for v in requests]
    for engine in (pe, se):
        for (v, n), got in zip(sized, engine.quantiles(sized, qs)):
            s = ref(v)
            for q, b in zip(qs, got):
                k0, k1, _ = linear_quantile(n, q)
                exact = float(np.quantile(s, q))
                assert b.lo <= exact <= b.hi, (engine.name, v, q)
                if engine is pe:
                    assert b.exact and b.value == pytest.approx(exact, rel=1e-12)
                elif not b.exact:  # Spark: a bracket around both order statistics
                    assert b.lo <= s[k0] <= s[k1] <= b.hi, (v, q)
        stats = [OrderStat(v, n, k, min(k + 1, n - 1)) for v, n in sized for k in (0, n // 3)]
        assert engine.order_statistics(stats) == [
            (ref(r.values)[r.k0], ref(r.values)[r.k1]) for r in stats]
        assert engine.most_repeated(requests) == [
            int(np.unique(ref(v), return_counts=True)[1].max()) for v in requests]
        assert engine.distinct_counts(["x", "k", "f"], ["a", "b"]) == {
            "x": np.unique(both[~np.isnan(both)]).size, "k": 50, "f": 7}
        assert engine.distinct_counts(["x"], ["b"], missing_level=True) == {
            "x": np.unique(ref(Values("x", ("b",)))).size + 2}  # a NaN and a null level
        assert engine.level_spreads("k", ["f", "x"], ["a", "b"]) == {
            "f": (50, 1), "x": (50, max(np.unique(both[(key == k) & ~np.isnan(both)]).size
                                        for k in range(50)))}
