"""Review of ``leakage.preprocessing`` on the spark engine as a user would run it: column names
Spark would otherwise parse (spaces, dots, backticks, markup) in features, the level key and the
label give the same findings as polars; the number of Spark jobs does not grow with the number
of columns. Skipped when pyspark or Java is missing (see conftest.py)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.preprocessing import PreprocessingFit
from auditor.engines.spark_io import SparkAuditData
from auditor.loading.data import build_audit_data
from auditor.report.results import Severity

N_TRAIN, N = 600, 800


def _key(findings):
    return sorted((f.severity.value, f.metric, str(f.subject), f.count, tuple(f.splits or ()),
                   round(f.value, 9) if isinstance(f.value, float) else f.value)
                  for f in findings)


def _both(spark, frame: pl.DataFrame, label: str):
    frames = {"train": frame[:N_TRAIN], "test": frame[N_TRAIN:]}
    columns = Columns(label=label)
    spark_frames = {k: spark.createDataFrame(v.to_arrow()) for k, v in frames.items()}
    return build_audit_data(frames, columns=columns), SparkAuditData(spark_frames,
                                                                      columns=columns)


def _odd_names() -> pl.DataFrame:
    rng = np.random.default_rng(21)
    raw = rng.normal(50, 10, N)
    z = (raw - raw.mean()) / raw.std()  # a scaler fitted on all rows
    holes = 10 + rng.gamma(2.0, 5.0, N)
    holes[rng.random(N) < 0.12] = np.nan
    filled = np.where(np.isnan(holes), np.nanmean(holes), holes)  # a mean fill over all rows
    y = (rng.random(N) < 0.3).astype(np.int64)
    store = rng.integers(0, 30, N)
    means = pl.DataFrame({"s": store, "y": y}).group_by("s").agg(pl.col("y").mean())
    lookup = dict(zip(means["s"].to_list(), means["y"].to_list()))
    return pl.DataFrame({"a b": z, "a.b": z * 1.0, "a`b": z + 0.0, "<script>x</script>": z,
                         "fill.`v": filled, "st.o`re": store,
                         "te `x.": np.array([lookup[s] for s in store], dtype=np.float64),
                         "la.b`el": y})


def test_column_names_spark_would_parse_give_the_polars_findings(spark):

    polars_data, spark_data = _both(spark, _odd_names(), "la.b`el")
    check = PreprocessingFit()
    on_polars, on_spark = check.run(polars_data), check.run(spark_data)
    assert _key(on_spark) == _key(on_polars)
    fails = {(f.metric, str(f.subject)) for f in on_spark if f.severity == Severity.FAIL}
    assert fails == {
        ("standard_scaling_fit", str(["a b", "a.b", "a`b", "<script>x</script>"])),
        ("imputation_fit", "fill.`v"), ("target_encoding_fit", "te `x.")}
    te = next(f for f in on_spark if f.metric == "target_encoding_fit")
    assert te.evidence["level_key"] == "st.o`re" and te.evidence["levels"] == 30


def _wide(n_cols: int) -> pl.DataFrame:
    rng = np.random.default_rng(11)
    cols = {f"x{i}": rng.normal(size=N) for i in range(n_cols)}
    holes = rng.gamma(2.0, 5.0, N)
    holes[rng.random(N) < 0.12] = np.nan
    cols["fill"] = np.where(np.isnan(holes), np.nanmean(holes), holes)  # a mean fill over all rows
    cols["y"] = (rng.random(N) < 0.3).astype(np.int64)
    return pl.DataFrame(cols)


def test_spark_jobs_do_not_grow_with_the_number_of_columns(spark):
    """All columns are summarised in shared passes: 28 columns cost the jobs 4 columns cost (up
    to 2 more: adaptive query execution may plan an extra job for a stage, depending on what the
    shared session ran before: 23 jobs alone, 41 after the other Spark modules), not 24 x
    more."""

    sc = spark.sparkContext
    jobs = []
    for n_cols in (4, 28):
        _, spark_data = _both(spark, _wide(n_cols), "y")
        for name in spark_data.split_names:
            spark_data.rows(name)  # row counts are the loader's, not the check's
        group = f"prep-review-{n_cols}"
        sc.setJobGroup(group, group)
        try:
            findings = PreprocessingFit().run(spark_data)
        finally:
            sc.setJobGroup("", "")
        jobs.append(len(sc.statusTracker().getJobIdsForGroup(group)))
        assert [(f.metric, str(f.subject)) for f in findings if f.severity != Severity.INFO] \
            == [("imputation_fit", "fill")]
    assert jobs[1] - jobs[0] <= 2, jobs


def test_a_missed_bracket_is_widened_not_replaced_by_the_whole_column(spark, monkeypatch):
    """Brackets that hold none of the ranks (as when the sketch's guarantee fails) are
    re-measured with a wider percentile_approx margin, exact as numpy, without collecting
    every distinct value of the column to the driver."""
    import math

    from pyspark.sql import functions as F

    import auditor.engines.spark_values as sp
    from auditor.stats.preprocessing import linear_quantile

    rng = np.random.default_rng(8)
    x = rng.normal(size=5000)
    df = spark.createDataFrame(pl.DataFrame({"x": x}).to_arrow())
    calls = []
    real = sp.order_stats

    def spy(frame, requests, lows=None, highs=None, margin=sp._MARGIN):
        calls.append((None if lows is None else lows[0], margin))
        return real(frame, requests, lows, highs, margin)

    monkeypatch.setattr(sp, "order_stats", spy)
    ranks = [linear_quantile(len(x), q) for q in (0.25, 0.5, 0.9)]
    requests = [(F.col("x"), len(x), k0, k1) for k0, k1, _ in ranks]
    got = sp.order_stats(df, requests, [10.0] * 3, [11.0] * 3)  # brackets above every value
    s = np.sort(x)
    assert got == [(s[k0], s[k1]) for k0, k1, _ in ranks]
    assert calls[1:] == [(None, sp._MARGIN * 16)]  # one wider sketch pass, no whole range
    assert all(lo is None or math.isfinite(lo) for lo, _ in calls)


def test_target_encoding_over_a_key_of_hundreds_of_levels_is_summed_by_level_on_the_executors(
        spark, monkeypatch):
    """A target encoding keyed by a 400-level user column (leaked: fitted on all rows):
    the polars findings and fit evidence, while no collect of the fit returns more than a row
    per level (the rows are summed per level on the executors, never brought one by one)."""
    from auditor.detectors.preprocessing_context import Context

    rng = np.random.default_rng(17)
    user = rng.integers(0, 400, 6000)
    y = (rng.random(6000) < 0.3).astype(np.int64)
    means = pl.DataFrame({"u": user, "y": y}).group_by("u").agg(pl.col("y").mean())
    lookup = dict(zip(means["u"].to_list(), means["y"].to_list()))
    frame = pl.DataFrame({"user": [f"u{u}" for u in user],
                          "user_te": np.array([lookup[u] for u in user]), "y": y})
    frames = {"train": frame[:4500], "test": frame[4500:]}
    columns = Columns(label="y")
    polars_data = build_audit_data(frames, columns=columns)
    spark_data = SparkAuditData({k: spark.createDataFrame(v.to_arrow()).cache()
                                 for k, v in frames.items()}, columns=columns)
    DataFrame = type(spark_data.splits["train"])  # pyspark's classic (or connect) frame
    largest, inside = [0], [False]
    real_fits, real_collect, real_arrow = (Context.encoding_fits, DataFrame.collect,
                                           DataFrame.toArrow)

    def fits(self, c, key):
        inside[0] = True
        try:
            return real_fits(self, c, key)
        finally:
            inside[0] = False

    def collect(self):
        out = real_collect(self)
        if inside[0]:
            largest[0] = max(largest[0], len(out))
        return out

    def to_arrow(self):
        out = real_arrow(self)
        if inside[0]:
            largest[0] = max(largest[0], out.num_rows)
        return out

    monkeypatch.setattr(Context, "encoding_fits", fits)
    monkeypatch.setattr(DataFrame, "collect", collect)
    monkeypatch.setattr(DataFrame, "toArrow", to_arrow)
    check = PreprocessingFit()
    on_polars, on_spark = check.run(polars_data), check.run(spark_data)
    assert _key(on_spark) == _key(on_polars)
    te = [f for f in on_spark if f.metric == "target_encoding_fit"]
    assert [(str(f.subject), f.severity) for f in te] == [("user_te", Severity.FAIL)]
    want = next(f for f in on_polars if f.metric == "target_encoding_fit").evidence
    got = te[0].evidence
    assert got["levels"] == want["levels"] and got["level_key"] == want["level_key"] == "user"
    assert want["levels"] > 300
    assert got["smoothing_m"] == pytest.approx(want["smoothing_m"], rel=1e-9, abs=1e-12)
    assert 0 < largest[0] <= 400  # levels, not the 4,500 train rows
