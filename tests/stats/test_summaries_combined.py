"""Summaries combined from the splits' summaries (the preprocessing context summarises each
split once and combines them per union), against the statistics of the concatenated values;
quantiles by rank against numpy's linear interpolation."""
from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from auditor.detectors.preprocessing_context import frame_summary
from auditor.stats.preprocessing import (combine_summaries, interpolate_quantile,
                                         linear_quantile, robust_possible)


def test_combined_summaries_equal_the_summary_of_the_union():
    rng = np.random.default_rng(0)
    parts = [rng.normal(5.0, 2.0, 300), np.round(rng.normal(-1.0, 0.5, 120)), np.array([]),
             rng.exponential(3.0, 50)]
    def part(x: np.ndarray) -> dict:  # what the engine measures per split
        return {"n": x.size, "mean": x.mean() if x.size else math.nan,
                "var0": x.var() if x.size else math.nan,
                "min": x.min(initial=np.inf), "max": x.max(initial=-np.inf),
                "maxabs": np.abs(x).max(initial=0.0), "integral": bool((x == np.round(x)).all()),
                "nonzero": int((x != 0).sum()), "negative": int((x < 0).sum())}

    each = [part(p) for p in parts]
    got = combine_summaries(each)
    union = np.concatenate(parts)
    assert got["n"] == union.size
    assert got["mean"] == pytest.approx(union.mean(), rel=1e-12)
    assert got["std0"] == pytest.approx(union.std(ddof=0), rel=1e-12)
    assert got["std1"] == pytest.approx(union.std(ddof=1), rel=1e-12)
    assert (got["min"], got["max"], got["maxabs"]) == (union.min(), union.max(),
                                                       np.abs(union).max())
    assert got["nonzero"] == int((union != 0).sum()) and got["negative"] == int((union < 0).sum())
    assert got["integral"] is False
    ref = frame_summary(pl.DataFrame({"x": union}), ["x"]).row(0, named=True)  # one batch
    ref |= {"std0": math.sqrt(ref["var0"]), "std1": math.sqrt(ref["var0"] * ref["n"]
                                                              / (ref["n"] - 1))}
    for key in ("n", "mean", "std0", "std1", "min", "max", "maxabs", "nonzero", "negative"):
        assert got[key] == pytest.approx(ref[key], rel=1e-12), key
    assert combine_summaries([each[1]])["integral"] is True
    empty = combine_summaries([each[2]])
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
