"""The random-split design's null of a drift statistic, from the binned counts already measured.

In a random or stratified design an honest split of the same rows is the pooled rows dealt
again at random into splits of the same sizes. Per compared pair, the rows of each bin
(numeric quantile bins, categories, the missing bin) are pooled, and each re-split is a
random 2 x k table with the same margins: the earlier split's counts drawn from the
multivariate hypergeometric distribution (:func:`auditor.stats.levels.null_draws`), the
compared split's the rest. No data is read again: :data:`DRAWS` tables of a column of more
than 300 rows cost 20-120 ms (10 bins to 50 levels; fewer rows share one cached draw), and
only columns graded above info are judged so. A stratified design is re-split as a random
one (its strata are the label's classes, which the features' null barely depends on).

- PSI (and PSI beyond chance for high-cardinality columns) and Cramér's V are measured on
  every drawn table exactly as on the observed one (:func:`auditor.stats.numerics.psi`,
  :func:`auditor.stats.numerics.cramers_v_from_chi2`).
- KS D of a column binned per value (few distinct values) is measured on every re-split
  too: its bins are its values. Otherwise D is measured on values, not bins, and its null is
  the two-sample Kolmogorov distribution: sqrt(n m / (n + m)) D is asymptotically
  Kolmogorov-distributed under a random split (scipy's ``kstwobign``; for small splits the
  exact distribution lies below it, so its quantiles are a little conservative).

The judge grades against the null (:class:`~auditor.judging.drift_verdicts.TrendNull`): the
statistic less the null's median (what chance adds: sampling noise adds to every one of these
statistics) once it is beyond the null's 95% quantile; a fail also needs it beyond the
99.9% quantile (fewer than one honest split in a thousand). At thousands of rows the null
is tiny (PSI's 99.9% quantile 0.006 at 5,000 rows) and a grade is what it was. Small splits
make PSI heavy-tailed, a bin empty on one side adding a large term: a 59-row test split of
ISLR Hitters' salaries (10 quantile bins) reaches PSI 0.43 in one honest re-split of
twenty, 0.85 in one of a hundred and 1.2 in one of a thousand -- its PSI 0.91 warns.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from auditor.judging.drift_verdicts import ColumnTrend, trend_values
from auditor.stats.drift import ColumnDrift
from auditor.stats.levels import MISSING, OTHER_VALUES, chi2_statistics, null_draws
from auditor.stats.numerics import PSI_EPSILON, cramers_v_of_chi2s

DRAWS = 9_999      # random re-splits per column (a 99.9% quantile from the 10 largest)
# Drawn in stages from the same seed: a column whose every statistic is reached by at least
# ``settled`` of the first ``draws`` re-splits is far inside the null (a statistic at the null's
# 95% quantile is reached by 30 or more of 199 draws with probability 8e-8, by 90 of 999 with
# 9e-8) and is graded on them; any other column is drawn DRAWS times, as it always was --
# unless no grade above info can read its null (``tail``), which stops at the last stage.
STAGES = ((199, 30), (999, 90))
UPPER = 0.95       # the null's quantile a drift is graded beyond
FAIL_GATE = 0.999  # the null's quantile a fail must exceed
DESIGNS = ("random", "stratified")


def row_resplit_trend(cd: ColumnDrift, seed: int, epsilon: float = PSI_EPSILON, *,
                      tail: bool = True) -> ColumnTrend | None:
    """The :class:`ColumnTrend` of ``cd`` under random re-splits of its pooled rows: per
    statistic (median, 95% and 99.9% quantiles, draws; see :data:`STAGES`); None when a side
    has no rows or the column has one bin. ``tail``: whether a grade above info could read
    the null (the null only lowers a grade: a column info without it needs no 99.9% quantile
    and stops at the last stage's draws)."""
    a = np.asarray(cd.ref_counts, dtype=np.int64)
    b = np.asarray(cd.cur_counts, dtype=np.int64)
    keep = (a + b) > 0
    table = np.vstack([a[keep], b[keep]])
    n_a, n_b = int(table[0].sum()), int(table[1].sum())
    if table.shape[1] < 2 or n_a == 0 or n_b == 0:
        return None
    labels = [cd.bins[i] for i in np.flatnonzero(keep)]
    # one bin per value, in value order: KS D of each re-split is exact (a discrete
    # column's D is far below the Kolmogorov quantiles, which assume no ties)
    per_value = cd.gap is not None and cd.per_value and OTHER_VALUES not in labels
    values = [i for i, lab in enumerate(labels) if lab != MISSING]
    recent = trend_values(cd)
    bins = values if per_value else None
    for draws, settled in STAGES:
        drawn = _drawn(cd, table, bins, draws, seed, epsilon)
        if all(np.count_nonzero(v >= recent.get(k, math.inf)) >= settled
               for k, v in drawn.items()):
            break  # far inside the null: no grade reads its tail
    else:
        if tail:
            drawn = _drawn(cd, table, bins, DRAWS, seed, epsilon)
    full = len(next(iter(drawn.values()))) == DRAWS
    out = {k: _summary(v, gate=full) for k, v in drawn.items()}
    if cd.gap is not None and not per_value:
        n, m = cd.ref_rows - cd.ref_missing, cd.cur_rows - cd.cur_missing
        if n > 0 and m > 0:
            scale = math.sqrt((n + m) / (n * m))
            med, upper, gate = _kolmogorov_quantiles()
            out["ks_d"] = (med * scale, upper * scale, gate * scale, DRAWS)
    return ColumnTrend(against="", recent=recent, backtests=[], design="random",
                       quantiles=out)


def _drawn(cd: ColumnDrift, table: np.ndarray, values: list[int] | None, draws: int,
           seed: int, epsilon: float) -> dict[str, np.ndarray]:
    """Each drawn statistic on ``draws`` random re-splits of ``table``, drawn from the seed
    (the same ``DRAWS`` tables every time all are drawn); ``values``: the value bins'
    positions when KS D is measured on every re-split."""
    n_a, n_b = int(table[0].sum()), int(table[1].sum())
    first = null_draws(table, [seed, 26])(draws)
    second = table.sum(0) - first
    ea = np.maximum(first / n_a, epsilon)
    eb = np.maximum(second / n_b, epsilon)
    psis = ((eb - ea) * np.log(eb / ea)).sum(1)
    out = {"psi": psis}
    if cd.psi_chance is not None:
        out["psi_excess"] = np.maximum(0.0, psis - cd.psi_chance)
    if cd.cramers_v is not None:
        out["cramers_v"] = _cramers_v(first, table)
    if values is not None:
        ks = _ks_d(first[:, values], second[:, values])
        if ks is not None:
            out["ks_d"] = ks
    return out


@lru_cache(maxsize=1)
def _kolmogorov_quantiles() -> tuple[float, float, float]:
    """The Kolmogorov distribution's median, UPPER and FAIL_GATE quantiles (scipy's
    ``kstwobign``), scaled per column by sqrt((n + m) / (n m))."""
    from scipy.stats import kstwobign

    return (float(kstwobign.ppf(0.5)), float(kstwobign.ppf(UPPER)),
            float(kstwobign.ppf(FAIL_GATE)))


def _ks_d(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """KS D of every re-split from its counts per value (columns in value order): the largest
    gap between the two empirical CDFs; NaN for a draw that leaves a side without a value
    (left out of the null's quantiles, so the null does not depend on how many were drawn);
    None when every draw does."""
    na, nb = a.sum(1, keepdims=True), b.sum(1, keepdims=True)
    both = ((na > 0) & (nb > 0))[:, 0]
    if not both.any():
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps: np.ndarray = np.abs(np.cumsum(a, 1) / na - np.cumsum(b, 1) / nb).max(1)
    gaps[~both] = np.nan
    return gaps


def _summary(values: np.ndarray, gate: bool = True
             ) -> tuple[float, float, float | None, int]:
    """Median, UPPER quantile, FAIL_GATE quantile (None when ``gate`` is False: a few hundred
    draws do not estimate a 99.9% quantile) and how many draws."""
    values = values[np.isfinite(values)]
    med, upper, tail = np.quantile(values, [0.5, UPPER, FAIL_GATE])
    return float(med), float(upper), float(tail) if gate else None, len(values)


def _cramers_v(first: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Bias-corrected Cramér's V (as :func:`auditor.stats.numerics.cramers_v`) of every 2 x k
    table given by its first row with the margins of ``table`` (no empty column)."""
    return cramers_v_of_chi2s(chi2_statistics(first, table), float(table.sum()), 2,
                              table.shape[1])
