"""Shared numerics against reference implementations."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency
from scipy.stats.contingency import association

from auditor.report.results import Severity
from auditor.stats.numerics import cramers_v, fmt_share, grade, grade_at_least


def test_grade_is_strict_above_and_below():
    assert grade(0.1, warn=0.1, fail=0.2) == Severity.INFO
    assert grade(0.11, warn=0.1, fail=0.2) == Severity.WARN
    assert grade(0.21, warn=0.1, fail=0.2) == Severity.FAIL
    assert grade(0.05, warn=0.1, fail=0.01, higher_is_worse=False) == Severity.WARN
    assert grade(float("nan"), warn=0, fail=0) == Severity.INFO
    assert grade_at_least(0.95, warn=0.85, fail=0.95) == Severity.FAIL


def test_cramers_v_matches_the_bias_corrected_formula_from_scipy_chi2():
    rng = np.random.default_rng(0)
    for _ in range(5):
        table = rng.integers(0, 50, size=(3, 4))
        n = table.sum()
        chi2 = chi2_contingency(table, correction=False)[0]
        r, k = table.shape
        phi2c = max(0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
        rc, kc = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
        assert cramers_v(table) == pytest.approx(np.sqrt(phi2c / min(rc - 1, kc - 1)),
                                                 abs=1e-12)


def test_cramers_v_is_one_for_a_perfect_association_at_large_n():
    table = np.diag([5000, 5000, 5000])
    assert cramers_v(table) == pytest.approx(1.0, abs=1e-3)
    # uncorrected V from scipy for comparison on a mid-sized table
    t = np.array([[30, 10], [10, 30]])
    assert association(t, method="cramer") > cramers_v(t) > 0


def test_fmt_share_keeps_small_shares_non_zero():
    assert fmt_share(0.0203) == "2.0%" and fmt_share(0.00004) == "0.004%"
    assert fmt_share(0) == "0%"


def test_chi2_test_equals_scipy_chi2_contingency_without_correction():
    from scipy.stats import chi2_contingency

    from auditor.stats.numerics import chi2_test

    rng = np.random.default_rng(12)
    for shape in ((2, 2), (2, 5), (3, 4), (2, 11)):
        for _ in range(20):
            t = rng.integers(0, 30, shape)
            t[:, 0] += 1  # no all-zero row
            t = t[:, t.sum(0) > 0]
            res = chi2_contingency(t, correction=False)
            stat, p = chi2_test(t)
            assert stat == pytest.approx(res.statistic, rel=1e-12)
            assert p == pytest.approx(res.pvalue, rel=1e-12, abs=1e-300)
    # all-zero columns are dropped first; one column left: no test
    assert chi2_test(np.array([[3, 0, 4], [5, 0, 1]]))[1] == pytest.approx(
        chi2_contingency(np.array([[3, 4], [5, 1]]), correction=False).pvalue)
    assert chi2_test(np.array([[3, 0], [5, 0]])) == (0.0, 1.0)


def test_correlation_ratio_from_moments_survives_values_near_the_float_limit():
    """eta is scale-free: values of magnitude 1e153 (whose squared deviations times the group
    sizes overflow float64) give the eta of the same values at magnitude 1, without a
    RuntimeWarning (the fuzz test's frames hold such columns)."""
    import warnings

    from auditor.stats.numerics import correlation_ratio, correlation_ratio_from_moments

    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, 500)
    base = rng.normal(size=500) + g * 0.5 + 3
    n = np.array([[np.sum(g == k)] for k in range(3)], dtype=float)
    # the moments of base * 1e153 (finite: variances ~1e306, their weighted sum overflows)
    mean = np.array([[base[g == k].mean()] for k in range(3)]) * 1e153
    var = np.array([[base[g == k].var()] for k in range(3)]) * 1e153 * 1e153
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = correlation_ratio_from_moments(n, mean, var)[0]
    assert got == pytest.approx(correlation_ratio(g, base), rel=1e-12)
