"""Rank-based association numerics of auditor.stats.numerics against scipy/sklearn references."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr, rankdata, spearmanr
from sklearn.metrics import roc_auc_score, roc_curve

from auditor.stats.numerics import (auc_from_rank_sum, average_ranks, bootstrap_auc_ci,
                           bootstrap_counts, bootstrap_spearman_ci, correlation_ratio,
                           correlation_ratio_from_moments, ovr_aucs, pearson,
                           point_biserial_from_moments, roc_auc, roc_points, spearman,
                           weighted_auc)


def _tied(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values with many ties (rounded) and a few extremes."""
    return np.round(rng.normal(size=n), 1) * rng.choice([1, 1, 1, 10], n)


def test_average_ranks_match_scipy_rankdata_with_ties():
    rng = np.random.default_rng(0)
    for x in (_tied(rng, 200), rng.integers(0, 3, 50).astype(float), np.array([5.0]),
              np.array([2.0, 2.0, 2.0])):
        np.testing.assert_allclose(average_ranks(x), rankdata(x), atol=1e-12)
    assert average_ranks(np.array([])).size == 0


def test_roc_auc_matches_sklearn_including_ties():
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = _tied(rng, 300)
        y = rng.random(300) < 1 / (1 + np.exp(-x))
        assert roc_auc(x, y) == pytest.approx(roc_auc_score(y, x), abs=1e-9)
    x = np.array([1.0, 1.0, 1.0, 2.0])
    assert roc_auc(x, np.array([0, 1, 0, 1], bool)) == pytest.approx(
        roc_auc_score([0, 1, 0, 1], x), abs=1e-12)


def test_auc_from_rank_sum_is_nan_for_an_empty_class():
    assert np.isnan(auc_from_rank_sum(10.0, 4, 0))
    assert np.isnan(roc_auc(np.array([1.0, 2.0]), np.array([True, True])))


def test_macro_one_vs_rest_auc_matches_sklearn_multiclass_ovr():
    rng = np.random.default_rng(2)
    n, k = 400, 4
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    logits = np.round(logits, 1)  # ties
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    expected = roc_auc_score(y, p, multi_class="ovr", average="macro")
    assert np.nanmean(ovr_aucs(p, y, k)) == pytest.approx(expected, abs=1e-9)
    # a class absent from the labels is NaN (left out of the macro mean)
    aucs = ovr_aucs(p[y < 3], y[y < 3], k)
    assert np.isnan(aucs[3]) and np.isfinite(aucs[:3]).all()


def test_pearson_and_spearman_match_scipy():
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = _tied(rng, 150)
        y = 0.5 * x + rng.standard_t(2, 150)
        assert pearson(x, y) == pytest.approx(pearsonr(x, y)[0], abs=1e-9)
        assert spearman(x, y) == pytest.approx(spearmanr(x, y)[0], abs=1e-9)
    big = 1.7e15 + rng.normal(size=500) * 1e6  # timestamps in microseconds
    other = big * 1e-15 + rng.normal(size=500)
    assert pearson(big, other) == pytest.approx(pearsonr(big, other)[0], abs=1e-9)
    assert np.isnan(pearson(np.ones(5), np.arange(5.0)))


def test_correlation_ratio_matches_a_hand_computation_from_group_means():
    rng = np.random.default_rng(4)
    groups = rng.choice(["a", "b", "c", "d"], 300)
    values = rng.normal(size=300) + (groups == "b") * 1.0 + (groups == "d") * 0.4
    mean = values.mean()
    between = sum((groups == g).sum() * (values[groups == g].mean() - mean) ** 2
                  for g in "abcd")
    total = ((values - mean) ** 2).sum()
    assert correlation_ratio(groups, values) == pytest.approx(np.sqrt(between / total),
                                                             abs=1e-9)


def test_correlation_ratio_from_moments_equals_the_direct_formula():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 3, 200)
    x = rng.normal(size=(200, 2)) + codes[:, None] * np.array([0.2, 1.0])
    n = np.array([(codes == k).sum() for k in range(3)])[:, None]
    mean = np.array([x[codes == k].mean(0) for k in range(3)])
    var = np.array([x[codes == k].var(0) for k in range(3)])
    eta = correlation_ratio_from_moments(n, mean, var)
    for j in range(2):
        assert eta[j] == pytest.approx(correlation_ratio(codes, x[:, j]), abs=1e-9)


def test_point_biserial_from_moments_matches_pearsonr_with_a_binary_label():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 250)
    x = rng.normal(size=250) - 0.7 * y
    n = np.array([[(y == 0).sum()], [(y == 1).sum()]])
    mean = np.array([[x[y == 0].mean()], [x[y == 1].mean()]])
    var = np.array([[x[y == 0].var()], [x[y == 1].var()]])
    r = point_biserial_from_moments(n, mean, var)[0]
    assert r == pytest.approx(pearsonr(x, y)[0], abs=1e-9) and r < 0
    assert np.isnan(point_biserial_from_moments(np.array([[0], [5]]), mean, var)[0])


def test_weighted_auc_with_integer_weights_equals_the_auc_of_repeated_rows():
    rng = np.random.default_rng(7)
    x = _tied(rng, 80)
    y = rng.random(80) < 0.4
    w = rng.integers(0, 4, (3, 80))
    got = weighted_auc(x, y, w)
    for b in range(3):
        rep = np.repeat(np.arange(80), w[b])
        assert got[b] == pytest.approx(roc_auc_score(y[rep], x[rep]), abs=1e-9)


def test_bootstrap_counts_resample_n_rows_each_time():
    c = bootstrap_counts(50, 7, np.random.default_rng(0))
    assert c.shape == (7, 50) and (c.sum(1) == 50).all()


def test_bootstrap_auc_ci_brackets_the_auc_is_seeded_and_narrows_with_n():
    rng = np.random.default_rng(8)
    x = rng.normal(size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-2 * x))).astype(int)
    auc = roc_auc(x, y == 1)
    lo, hi = bootstrap_auc_ci(x, y, 2, n_boot=300, seed=1)
    assert lo < auc < hi and hi - lo < 0.05
    assert (lo, hi) == bootstrap_auc_ci(x, y, 2, n_boot=300, seed=1)
    lo_s, hi_s = bootstrap_auc_ci(x[:200], y[:200], 2, n_boot=300, seed=1)
    assert hi_s - lo_s > hi - lo
    # multiclass: (n, K) scores, macro mean
    codes = rng.integers(0, 3, 600)
    scores = rng.normal(size=(600, 3)) + np.eye(3)[codes]
    macro = np.nanmean(ovr_aucs(scores, codes, 3))
    lo, hi = bootstrap_auc_ci(scores, codes, 3, n_boot=200, seed=2)
    assert lo < macro < hi


def test_bootstrap_spearman_ci_brackets_rho():
    rng = np.random.default_rng(9)
    x = rng.normal(size=1500)
    y = x + rng.normal(size=1500)
    lo, hi = bootstrap_spearman_ci(x, y, n_boot=300, seed=3)
    assert lo < spearmanr(x, y)[0] < hi and hi - lo < 0.1


def test_roc_points_match_sklearn_and_are_thinned():
    rng = np.random.default_rng(10)
    x = _tied(rng, 300)
    y = rng.random(300) < 0.5
    fpr, tpr = roc_points(x, y, max_points=10_000)
    ref_fpr, ref_tpr, _ = roc_curve(y, x, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr, atol=1e-5)
    np.testing.assert_allclose(tpr, ref_tpr, atol=1e-5)
    fpr, tpr = roc_points(rng.normal(size=5000), rng.random(5000) < 0.3, max_points=200)
    assert len(fpr) <= 200 and (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1, 1)
    assert roc_points(x, np.zeros(300, bool)) == ([], [])


# --- shared helpers of the detectors (auditor.stats.numerics) -------------------------------------

def test_tie_ranks_of_a_sorted_array_match_rankdata():
    from auditor.stats.numerics import tie_ranks

    v = np.sort(_tied(np.random.default_rng(5), 300))
    assert np.array_equal(tie_ranks(v), rankdata(v))
    assert tie_ranks(np.array([])).size == 0


def test_inverted_cdf_matches_numpy_for_every_length():
    from auditor.stats.numerics import inverted_cdf

    for n in range(1, 80):
        v = np.sort(np.random.default_rng(n).normal(size=n))
        for steps in (2, 7, 10):
            ref = np.quantile(v, np.arange(1, steps) / steps, method="inverted_cdf")
            assert np.array_equal(inverted_cdf(v, steps), ref), (n, steps)


def test_fmt_share_never_rounds_a_partial_share_to_all_or_nothing():
    from auditor.stats.numerics import fmt_rows, fmt_share

    assert fmt_share(0.99999) == "99.999%" and fmt_share(1 - 1e-10) == "99.9999%"
    assert fmt_share(1.0) == "100.0%" and fmt_share(0.5) == "50.0%"
    assert fmt_rows(37, 1200, "val rows") == "37 of 1,200 val rows (3.1%)"


def test_map_columns_keeps_the_order_of_its_items():
    from auditor.stats.numerics import map_columns

    assert map_columns(lambda x: x * x, range(50), workers=4) == [x * x for x in range(50)]
    assert map_columns(str, [], workers=4) == []


def test_check_params_names_the_parameter_and_rejects_wrong_types():
    from dataclasses import dataclass

    from auditor.stats.numerics import check_params, is_share

    @dataclass
    class P:
        a: object = 0.5

    check_params(P(), ("a",), is_share, "a share in [0, 1]")
    for bad in (1.5, float("nan"), "0.5"):
        with pytest.raises(ValueError, match=r"a must be a share in \[0, 1\]; got"):
            check_params(P(bad), ("a",), is_share, "a share in [0, 1]")
