"""Model inputs: numeric moments as numpy computes them on the numeric matrix."""
from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import polars as pl

from auditor.probes.features import numeric_expr, numeric_matrix, numeric_moments


def test_numeric_moments_equal_numpy_on_the_numeric_matrix():
    rng = np.random.default_rng(0)
    n = 500
    x = rng.normal(3, 2, n)
    x[:7] = [np.nan, np.inf, -np.inf, np.nan, 1e6, -1e6, 0.0]
    t0 = datetime(2024, 1, 1)
    frame = pl.DataFrame({
        "x": x, "i": rng.integers(-5, 5, n), "flag": rng.random(n) < 0.3,
        "when": [t0 + timedelta(minutes=int(m)) for m in rng.integers(0, 10_000, n)],
        "took": [timedelta(seconds=float(s)) for s in rng.exponential(30, n)],
        "none": pl.Series([None] * n, dtype=pl.Float64)}).with_columns(
        pl.when(pl.int_range(n) % 11 == 0).then(None).otherwise(pl.col("i")).alias("i"))
    cols = ["x", "i", "flag", "when", "took", "none"]
    mean, sd, count = numeric_moments(frame, cols)
    m = numeric_matrix(frame, cols)
    known = ~np.isnan(m)
    np.testing.assert_array_equal(count, known.sum(0))
    for j in range(len(cols) - 1):
        v = m[known[:, j], j]
        np.testing.assert_allclose(mean[j], v.mean(), rtol=1e-12)
        np.testing.assert_allclose(sd[j], v.std(), rtol=1e-9)
    assert (mean[-1], sd[-1], count[-1]) == (0.0, 0.0, 0.0)  # nothing known: 0, not NaN
    assert count[0] == n - 4  # NaN, inf, -inf, NaN left out
    for j, c in enumerate(cols):  # one column at a time: the same values
        one = frame.select(numeric_expr(frame, c))[c].cast(pl.Float64).fill_null(np.nan)
        np.testing.assert_array_equal(one.to_numpy(), m[:, j])
