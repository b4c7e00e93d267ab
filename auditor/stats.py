"""Shared numerics and grading used by several detectors.

Every threshold in the project is graded by :func:`grade`, so "above" and "below" mean the same
thing everywhere: a value strictly beyond the threshold is flagged.
"""
from __future__ import annotations

import math

import numpy as np

from auditor.report import Severity


def grade(value: float | None, *, warn: float | None = None, fail: float | None = None,
          higher_is_worse: bool = True) -> Severity:
    """Grade ``value`` against ``warn``/``fail`` thresholds.

    With ``higher_is_worse`` (``*_above`` fields): ``fail`` when value > fail, ``warn`` when
    value > warn, else ``info``. With ``higher_is_worse=False`` (``*_below`` fields) the
    comparisons flip. ``None``/NaN values and ``None`` thresholds never flag.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Severity.INFO

    def beyond(t: float | None) -> bool:
        if t is None:
            return False
        return value > t if higher_is_worse else value < t

    if beyond(fail):
        return Severity.FAIL
    if beyond(warn):
        return Severity.WARN
    return Severity.INFO


def grade_at_least(value: float | None, *, warn: float | None = None,
                   fail: float | None = None) -> Severity:
    """Like :func:`grade` but inclusive (value >= threshold): for ``*_at`` style limits such as
    "AUC >= 0.95 fails"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Severity.INFO
    if fail is not None and value >= fail:
        return Severity.FAIL
    if warn is not None and value >= warn:
        return Severity.WARN
    return Severity.INFO


def share(count: int, total: int) -> float:
    """count / total, 0.0 for an empty denominator."""
    return count / total if total else 0.0


def fmt_count(n: int) -> str:
    return f"{n:,}"


def fmt_share(x: float) -> str:
    """A percentage with enough digits to be non-zero when x is non-zero."""
    if x == 0:
        return "0%"
    pct = 100 * x
    for digits in (1, 2, 3, 4):
        if round(pct, digits) != 0:
            return f"{pct:.{digits}f}%"
    return f"{pct:.2g}%"


def cramers_v(table: np.ndarray) -> float:
    """Bias-corrected Cramér's V of an r x c contingency table of counts (Bergsma 2013).

    phi2 = chi2 / n;  phi2c = max(0, phi2 - (k-1)(r-1)/(n-1));
    r~ = r - (r-1)^2/(n-1);  k~ = k - (k-1)^2/(n-1);  V = sqrt(phi2c / min(k~-1, r~-1)).
    Rows/columns that are all zero are dropped first. 0 for a table with one row or column.
    ``chi2`` is Pearson's statistic without continuity correction (scipy's
    ``chi2_contingency(table, correction=False)``).
    """
    t = np.asarray(table, dtype=float)
    t = t[t.sum(1) > 0][:, t.sum(0) > 0]
    n = t.sum()
    r, k = t.shape
    if r < 2 or k < 2 or n < 2:
        return 0.0
    expected = np.outer(t.sum(1), t.sum(0)) / n
    chi2 = ((t - expected) ** 2 / expected).sum()
    phi2c = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    r_c = r - (r - 1) ** 2 / (n - 1)
    k_c = k - (k - 1) ** 2 / (n - 1)
    denom = min(k_c - 1, r_c - 1)
    return float(math.sqrt(phi2c / denom)) if denom > 0 else 0.0
