"""Rank statistics from binned counts (the Spark engine's ``class_ranks`` driver math),
checked without Spark: with one bin per distinct value they equal the row-level
:func:`auditor.stats.label.class_rank_stats`; with coarser bins the AUC stays within the
stated error bound of sklearn's."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

from auditor.stats.binned_ranks import ClassBins, bin_error, rank_stats
from auditor.stats.label import N_CUTS, YCOL, class_rank_stats


def _bins(x: np.ndarray, y: np.ndarray, edges: np.ndarray, exact: bool, k: int,
          center: float) -> ClassBins:
    """The counts an engine returns: bin b holds (edges[b-1], edges[b]]; bin B above the last
    edge; the last row the missing values."""
    miss = np.isnan(x)
    b = np.where(miss, len(edges) + 1, np.searchsorted(edges, np.where(miss, 0, x)))
    hist = np.zeros((len(edges) + 2, k))
    np.add.at(hist, (b, y), 1)
    d = np.where(miss, 0.0, x - center)
    sums = np.bincount(y, weights=d, minlength=k)[None, :]
    squares = np.bincount(y, weights=d * d, minlength=k)[None, :]
    return ClassBins(["x"], list(range(k)), [edges], [exact], np.array([center]),
                     {"s": [hist]}, {"s": sums}, {"s": squares},
                     {"s": np.bincount(y, minlength=k).astype(float)}, [len(edges)])


@pytest.mark.parametrize("decimals", [1, 3])  # 63 distinct values; 1,500 (> N_CUTS: quantiles)
def test_one_bin_per_value_gives_the_row_level_statistics(decimals):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 2_000)
    x = np.round(rng.normal(size=2_000) + y, decimals)  # ties
    x[rng.random(2_000) < 0.1] = np.nan
    ref = class_rank_stats(pl.DataFrame({"x": x, YCOL: y}).with_columns(
        pl.col("x").fill_nan(None)), [pl.col("x")], 3, moments=True)
    got = rank_stats(_bins(x, y, np.unique(x[~np.isnan(x)]), True, 3, np.nanmin(x)), "s")
    for key in ("n", "count", "rank_sum", "rank_var", "mean", "var"):
        assert got[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-9), key
    assert got["distinct"].tolist() == ref["distinct"].tolist()
    (_, edges, below), (ref_edges, ref_below) = got["cuts"][0], ref["cuts"][0]
    assert edges == pytest.approx(ref_edges) and below.tolist() == ref_below.tolist()
    if decimals == 3:  # more distinct values than candidate cuts: the quantile branch
        assert ref["distinct"][0] > N_CUTS and len(edges) <= N_CUTS + 1


def test_coarse_bins_keep_the_auc_within_the_stated_error():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 2_000)
    x = rng.normal(size=2_000) + 0.8 * y
    edges = np.quantile(x, np.linspace(0.05, 0.95, 19))
    b = _bins(x, y, edges, False, 2, float(np.median(x)))
    st = rank_stats(b, "s")
    n1, n0 = st["count"][1, 0], st["count"][0, 0]
    auc = (st["rank_sum"][1, 0] - n1 * (n1 + 1) / 2) / (n1 * n0)
    err = bin_error(b, "s", 0)
    assert 0 < err < 0.06
    assert abs(auc - roc_auc_score(y, x)) <= err
    assert bin_error(_bins(x, y, np.unique(x), True, 2, 0.0), "s", 0) == 0.0
