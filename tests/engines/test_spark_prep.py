"""leakage.preprocessing and schema.expectations on the spark engine: the same findings
(statuses, metrics, subjects, counts) as on polars for planted preprocessing leaks (a scaler
fitted before the split, mean and median imputers fitted on train+test, a target encoding fitted
on all rows, a robust scaler and a one-hot encoder fitted on all rows); honest data and GX
expectations: the conformance suite's cases. Skipped when pyspark or Java is
missing (see conftest.py)."""
from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.preprocessing import PreprocessingFit
from auditor.engines.spark_io import SparkAuditData
from auditor.loading.data import build_audit_data
from auditor.report.results import Severity

N_TRAIN, N_TEST = 800, 200
N = N_TRAIN + N_TEST
FLOAT_TOL = 1e-9  # relative: sums of 1,000 values in another order differ by ~1e-15


def _leaky() -> pl.DataFrame:
    """One frame of 1,000 rows (train the first 800, test the last 200) with planted leaks."""
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder, RobustScaler, StandardScaler

    rng = np.random.default_rng(5)
    raw = rng.normal(50, 10, N)
    cols: dict[str, np.ndarray] = {}
    cols["std_all"] = StandardScaler().fit_transform(raw[:, None])[:, 0]
    cols["std_train"] = StandardScaler().fit(raw[:N_TRAIN, None]).transform(raw[:, None])[:, 0]
    cols["robust_all"] = RobustScaler().fit_transform(rng.gamma(2.0, 3.0, N)[:, None])[:, 0]
    holes = 10 + rng.gamma(2.0, 5.0, N)  # skewed: its mean is far from its median
    holes[rng.random(N) < 0.12] = np.nan
    cols["mean_fill"] = SimpleImputer(strategy="mean").fit_transform(holes[:, None])[:, 0]
    holes2 = rng.gamma(3.0, 2.0, N)
    holes2[rng.random(N) < 0.15] = np.nan
    cols["median_fill"] = SimpleImputer(strategy="median").fit_transform(holes2[:, None])[:, 0]
    city = rng.choice([f"c{i}" for i in range(12)], N).astype("<U8")
    city[N_TRAIN:N_TRAIN + 10] = "atlantis"  # a category only test rows have
    onehot = OneHotEncoder(sparse_output=False).fit_transform(city[:, None])
    for j, name in enumerate(sorted(set(city))):
        cols[f"city_{name}"] = onehot[:, j]
    y = (rng.random(N) < 0.3).astype(np.int64)
    store = rng.integers(0, 30, N)
    means = pl.DataFrame({"store": store, "y": y}).group_by("store").agg(pl.col("y").mean())
    lookup = dict(zip(means["store"].to_list(), means["y"].to_list()))
    cols["store"] = store
    cols["store_te"] = np.array([lookup[s] for s in store], dtype=np.float64)
    cols["x"] = rng.normal(size=N)
    cols["y"] = y
    return pl.DataFrame(cols)


def _splits(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {"train": frame[:N_TRAIN], "test": frame[N_TRAIN:]}


def _both(spark, frames: dict[str, pl.DataFrame], **roles):
    columns = Columns(**roles)
    polars_data = build_audit_data(frames, columns=columns)
    spark_frames = {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}
    return polars_data, SparkAuditData(spark_frames, columns=columns)


def _key(findings):
    return sorted((f.severity.value, f.metric, str(f.subject), f.count, tuple(f.splits or ()))
                  for f in findings)


def _close(a, b) -> bool:
    if a is None or b is None:
        return a == b
    return math.isclose(a, b, rel_tol=FLOAT_TOL, abs_tol=1e-12)


@pytest.fixture(scope="module")
def leaky(spark):
    frames = _splits(_leaky())
    polars_data, spark_data = _both(spark, frames, label="y")
    check = PreprocessingFit()

    return check.run(polars_data), check.run(spark_data), spark_data


def test_planted_preprocessing_leaks_are_the_same_findings_on_both_engines(leaky):
    on_polars, on_spark, _ = leaky
    assert _key(on_spark) == _key(on_polars)
    fails = {(f.metric, str(f.subject)) for f in on_polars if f.severity == Severity.FAIL}
    # the planted leaks themselves, with their exact subjects
    assert ("standard_scaling_fit", "std_all") in fails
    assert ("robust_scaling_fit", "robust_all") in fails
    assert ("target_encoding_fit", "store_te") in fails
    assert ("category_from_later_split", "city_atlantis") in fails
    imputed = [f for f in on_polars if f.metric == "imputation_fit"]
    assert {str(f.subject) for f in imputed} == {"mean_fill", "median_fill"}
    assert all(f.severity == Severity.FAIL for f in imputed)
    subjects = {str(f.subject) for f in on_polars if f.severity != Severity.INFO}
    assert "std_train" not in subjects and "x" not in subjects
    for a, b in zip(sorted(on_polars, key=lambda f: (f.metric, str(f.subject))),
                    sorted(on_spark, key=lambda f: (f.metric, str(f.subject)))):
        assert _close(a.threshold, b.threshold), (a.metric, a.subject)
        if a.metric in ("standard_scaling_fit",):
            # a deviation at float precision: both far inside the same tolerance
            assert a.value <= a.threshold and b.value <= b.threshold
        else:
            assert _close(a.value, b.value), (a.metric, a.subject, a.value, b.value)
        if a.metric == "imputation_fit":
            ea, eb = a.evidence, b.evidence
            assert ea["rows_with_value"] == eb["rows_with_value"]
            assert ea["largest_neighbour_count"] == eb["largest_neighbour_count"]
            assert _close(ea["fill_value"], eb["fill_value"])
            for stats in ("train+test_statistics", "train_statistics"):
                for k, v in ea[stats].items():
                    assert _close(v, eb[stats][k]), (a.subject, stats, k)
        if a.metric == "target_encoding_fit":
            assert a.evidence["levels"] == b.evidence["levels"] == 30
            assert a.evidence["level_key"] == b.evidence["level_key"] == "store"
            assert _close(a.evidence["smoothing_m"]["train"], b.evidence["smoothing_m"]["train"])


def _numpy_summary(frame: pl.DataFrame, cols: list[str]) -> dict[str, dict]:
    """Every statistic of the context's summaries, by numpy (NaN and null are no value)."""
    out = {}
    for c in cols:
        x = frame[c].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy()
        out[c] = {"n": x.size, "integral": bool((x == np.round(x)).all()),
                  "nonzero": int((x != 0).sum()), "negative": int((x < 0).sum()),
                  "n_at_min": int((x == x.min()).sum()), "n_at_max": int((x == x.max()).sum()),
                  "min": x.min(), "max": x.max(), "maxabs": np.abs(x).max(), "mean": x.mean(),
                  "std0": x.std(), "std1": x.std(ddof=1), "median": np.median(x),
                  "q25": np.quantile(x, 0.25), "q75": np.quantile(x, 0.75)}
    return out


def test_summaries_combined_from_splits_equal_numpy(leaky):
    _, _, spark_data = leaky
    from auditor.engines.selection import engine_of

    # the engine keeps the context for the run: the one the check judged, with its refinements
    ctx = PreprocessingFit().measure(engine_of(spark_data), spark_data.roles).context
    frames = _splits(_leaky())
    cols = ctx.cols
    want = {"train": _numpy_summary(frames["train"], cols),
            ("train", "test"): _numpy_summary(pl.concat([frames["train"], frames["test"]]),
                                              cols)}
    got = {"train": ctx.per_split["train"], ("train", "test"): ctx.per_set[("train", "test")]}
    for target, summary in want.items():
        for c in cols:
            for k in ("n", "integral", "nonzero", "negative", "n_at_min", "n_at_max", "min",
                      "max", "maxabs"):
                assert got[target][c][k] == summary[c][k], (target, c, k)
            for k in ("mean", "std0", "std1"):
                assert math.isclose(got[target][c][k], summary[c][k], rel_tol=FLOAT_TOL,
                                    abs_tol=1e-14), (target, c, k)
            for k in ("median", "q25", "q75"):
                if (c, target if isinstance(target, tuple) else (target,), k) \
                        in ctx.exact_quantiles:
                    assert math.isclose(got[target][c][k], summary[c][k], rel_tol=1e-12,
                                        abs_tol=1e-15), (target, c, k)
    # exact quartiles where the verdict needs them: the robust-scaled column, the medians of
    # the union (median-fill candidates)
    assert {("robust_all", ("train",), k) for k in ("q25", "median", "q75")} \
        <= ctx.exact_quantiles
    assert ("median_fill", ("train", "test"), "median") in ctx.exact_quantiles


def test_exact_order_statistics_with_ties_match_numpy(spark):
    from pyspark.sql import functions as F

    from auditor.engines.spark_values import order_stats
    from auditor.stats.preprocessing import linear_quantile

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=3000), np.full(400, 0.5), rng.integers(0, 5, 600)])
    df = spark.createDataFrame(pl.DataFrame({"x": x}).to_arrow())
    s = np.sort(x)
    requests, ranks = [], []
    for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.999, 1.0):
        k0, k1, _ = linear_quantile(len(x), q)
        requests.append((F.col("x"), len(x), k0, k1))
        ranks.append((k0, k1))
    got = order_stats(df, requests)
    assert got == [(s[a], s[b]) for a, b in ranks]
    for q in (0.25, 0.5, 0.75):
        k0, k1, w = linear_quantile(len(x), q)
        assert math.isclose(s[k0] + w * (s[k1] - s[k0]), float(np.quantile(x, q)),
                            rel_tol=1e-12)


def _key_one(f):
    return (f.metric, f.splits, str(f.subject))
