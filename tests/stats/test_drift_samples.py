"""The samples drift.features compares: every numeric column read as float64, null and NaN
counted as missing, the rest sorted -- checked against polars' own cast of the column."""
from __future__ import annotations

import numpy as np
import polars as pl

from auditor.core.roles import Kind
from auditor.stats.drift import prepare


def _reference(s: pl.Series) -> tuple[int, np.ndarray]:
    f = s.cast(pl.Float64).fill_nan(None)
    return f.null_count(), np.sort(f.drop_nulls().to_numpy())


def test_numeric_samples_equal_polars_cast_for_every_numeric_type():
    rng = np.random.default_rng(4)
    n = 300
    df = pl.DataFrame({
        "f64": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "f32": rng.normal(size=n).astype(np.float32),
        "i64": rng.integers(-5, 5, n),
        "u64": rng.integers(0, 2**63, n, dtype=np.uint64) * 2,
        "i8": rng.integers(-100, 100, n).astype(np.int8),
        "zeros": np.where(rng.random(n) < 0.5, -0.0, 0.0),
    }).with_columns(
        pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col(c)).alias(c)
        for c in ("f64", "i64", "u64", "i8"))
    # many columns at once take the thread pool; one at a time the plain loop
    for cols in (list(df.columns), ["f64"]):
        got = prepare(df.select(cols), {c: Kind.NUMERIC for c in cols})
        for c in cols:
            missing, values = _reference(df[c])
            assert got[c].missing == missing, c
            assert got[c].rows == n
            assert got[c].values.dtype == np.float64
            assert np.array_equal(got[c].values, values), c
    assert prepare(df, {"f64": Kind.NUMERIC})["f64"].missing == int(
        (df["f64"].is_null() | df["f64"].is_nan()).sum())
