"""Summaries merged from batch summaries (the preprocessing context summarises each batch of
each split once and merges them per split and per union), against the statistics of the
concatenated values; quantiles by rank against numpy's linear interpolation."""
from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from auditor.detectors.preprocessing_context import merge_parts, summary_batch
from auditor.stats.preprocessing import interpolate_quantile, linear_quantile, robust_possible


def test_merged_batch_summaries_equal_the_summary_of_the_union():
    """Batches of one split or of several (an empty one too) merged by Chan's formula give
    the statistics of their concatenated values; a column of one batch keeps its own."""
    rng = np.random.default_rng(0)
    parts = [rng.normal(5.0, 2.0, 300), np.round(rng.normal(-1.0, 0.5, 120)), np.array([]),
             rng.exponential(3.0, 50)]
    frames = [pl.DataFrame({"x": p}, schema={"x": pl.Float64}) for p in parts]
    got = merge_parts(pl.concat([summary_batch(f, 0, cols=("x",)) for f in frames]), ["x"])["x"]
    union = np.concatenate(parts)
    assert got["n"] == union.size
    assert got["mean"] == pytest.approx(union.mean(), rel=1e-12)
    assert got["std0"] == pytest.approx(union.std(ddof=0), rel=1e-12)
    assert got["std1"] == pytest.approx(union.std(ddof=1), rel=1e-12)
    assert (got["min"], got["max"], got["maxabs"]) == (union.min(), union.max(),
                                                       np.abs(union).max())
    assert got["nonzero"] == int((union != 0).sum()) and got["negative"] == int((union < 0).sum())
    assert got["integral"] is False and (got["n_at_min"], got["n_at_max"]) == (1, 1)
    one = merge_parts(summary_batch(frames[1], 0, cols=("x",)), ["x"])["x"]
    assert one["integral"] is True and one["mean"] == parts[1].mean()
    assert one["std0"] == pytest.approx(parts[1].std(), rel=1e-12)
    empty = merge_parts(summary_batch(frames[2], 0, cols=("x",)), ["x"])["x"]
    assert empty["n"] == 0 and math.isnan(empty["mean"]) and empty["nonzero"] == 0


@pytest.mark.parametrize("n", [1, 2, 7, 100])
@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_quantiles_by_rank_equal_numpy(n, q):
    x = np.sort(np.random.default_rng(n).normal(size=n))
    k0, k1, w = linear_quantile(n, q)
    assert interpolate_quantile(x[k0], x[k1], w, False) == pytest.approx(np.quantile(x, q))
    if q == 0.5:  # polars' median: the midpoint of the two middle values
        assert interpolate_quantile(x[k0], x[k1], w, True) == pytest.approx(np.median(x))


def test_robust_scaling_is_possible_only_when_the_brackets_admit_median_0_and_iqr_1():
    # [q25 lo, q25, q25 hi, median lo, median, median hi, q75 lo, q75, q75 hi]
    assert robust_possible([-0.52, -0.5, -0.48, -0.02, 0.0, 0.02, 0.48, 0.5, 0.52])
    assert not robust_possible([0.5, 0.5, 0.5, 0.9, 1.0, 1.1, 1.5, 1.5, 1.5])  # median 1
    assert not robust_possible([-1.0, -1.0, -1.0, -0.1, 0.0, 0.1, 1.0, 1.0, 1.0])  # IQR 2
