"""Shared numerics and grading used by several detectors.

Every threshold in the project is graded by :func:`grade`, so "above" and "below" mean the same
thing everywhere: a value strictly beyond the threshold is flagged.
"""
from __future__ import annotations

import math

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
