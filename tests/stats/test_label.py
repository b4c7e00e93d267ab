"""auditor.stats.label.packed_class_sort against the argsort path it replaces and scipy."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import rankdata

from auditor.stats.label import class_sorted, packed_class_sort, sorted_ranks


def _reference(x: np.ndarray, y: np.ndarray):
    pos, v, r = sorted_ranks(pl.Series(x))
    return y[pos], v, r


def _same(got, want):
    yc, v, r = got
    wy, wv, wr = want
    np.testing.assert_array_equal(v, wv)
    np.testing.assert_array_equal(r, wr)
    # classes may be ordered differently inside a run of ties: compare per distinct value
    for value in np.unique(wv):
        at = wv == value
        assert sorted(yc[at].tolist()) == sorted(wy[at].tolist())


@pytest.mark.parametrize("k", [2, 3, 5, 16])
def test_floats_with_ties_nan_and_signed_zero_match_the_argsort_path(k):
    rng = np.random.default_rng(k)
    x = np.round(rng.normal(size=5000), 2)
    x[rng.choice(5000, 300, replace=False)] = np.nan
    x[:20] = -0.0
    x[20:40] = 0.0
    x[40:45] = np.inf
    x[45:50] = -np.inf
    y = rng.integers(0, k, 5000)
    got = packed_class_sort(x, y, k)
    assert got is not None
    _same(got, _reference(x, y))
    keep = ~np.isnan(x)
    np.testing.assert_array_equal(got[2], np.sort(rankdata(x[keep])))


def test_integers_are_exact_including_negative_and_large_values():
    rng = np.random.default_rng(1)
    x = rng.integers(-(2**40), 2**40, 3000)
    x[:100] = x[100]  # a tie run
    y = rng.integers(0, 2, 3000)
    got = packed_class_sort(x, y, 2)
    assert got is not None and got[1].dtype == x.dtype
    _same(got, _reference(x, y))


def test_values_one_ulp_apart_fall_back_instead_of_tying():
    x = np.array([1.0, np.nextafter(1.0, 2.0), 2.0, 3.0])
    y = np.array([0, 1, 0, 1])
    assert packed_class_sort(x, y, 2) is None  # the low bit would merge the first two
    yc, v, r = class_sorted(pl.Series(x), y, 2)
    assert r.tolist() == [1.0, 2.0, 3.0, 4.0] and yc.tolist() == [0, 1, 0, 1]


def test_integer_span_too_wide_falls_back():
    x = np.array([-(2**62), 2**62], dtype=np.int64)
    assert packed_class_sort(x, np.array([0, 1]), 2) is None


def test_class_sorted_of_strings_uses_the_polars_ranks():
    s = pl.Series(["b", "a", None, "b", "c"])
    y = np.array([1, 0, 1, 0, 1])
    yc, v, r = class_sorted(s, y, 2)
    assert r.tolist() == [1.0, 2.5, 2.5, 4.0] and sorted(yc[1:3].tolist()) == [0, 1]
