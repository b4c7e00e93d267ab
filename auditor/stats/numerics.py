"""Shared numerics and grading used by several detectors.

Every threshold in the project is graded by :func:`grade`, so "above" and "below" mean the same
thing everywhere: a value strictly beyond the threshold is flagged.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, NamedTuple

import numpy as np

from auditor.report.results import Severity


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
    for digits in (1, 2, 3, 4):  # neither 0% for a non-zero share nor 100% for a partial one
        if round(pct, digits) != 0 and (x >= 1 or round(pct, digits) < 100):
            return f"{pct:.{digits}f}%"
    return f"{pct:.2g}%" if pct < 1 else f"{math.floor(pct * 1e4) / 1e4:.4f}%"


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
    return cramers_v_from_chi2(float(chi2), float(n), r, k)


def cramers_v_from_chi2(chi2: float, n: float, r: int, k: int) -> float:
    """Bias-corrected Cramér's V (:func:`cramers_v`'s formula) from Pearson's chi2 of an
    r x k table of n rows with no empty row or column (the spark engine aggregates chi2 from
    its level tables without collecting them); 0 with one row or column or fewer than 2
    rows."""
    return float(cramers_v_of_chi2s(np.array([chi2], dtype=float), n, r, k)[0])


def cramers_v_of_chi2s(chi2: np.ndarray, n: float, r: int, k: int) -> np.ndarray:
    """:func:`cramers_v_from_chi2` of many chi2 values of tables of one shape and size (the
    random re-splits of :mod:`auditor.judging.row_resplits`), vectorised."""
    if r < 2 or k < 2 or n < 2:
        return np.zeros(len(chi2))
    phi2c = np.maximum(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    r_c = r - (r - 1) ** 2 / (n - 1)
    k_c = k - (k - 1) ** 2 / (n - 1)
    denom = min(k_c - 1, r_c - 1)
    return np.sqrt(phi2c / denom) if denom > 0 else np.zeros(len(chi2))


def _noncentrality(cdf: Callable[[float], float], target: float, start: float) -> float:
    """The noncentrality lam with ``cdf(lam) = target`` (``cdf`` decreasing in lam: the
    observed statistic's CDF under lam), 0 when even lam = 0 puts less than ``target`` below
    the statistic."""
    from scipy.optimize import brentq

    if cdf(0.0) <= target:
        return 0.0
    hi = max(10.0, start)
    for _ in range(60):  # the CDF falls to 0 as lam grows: a bracket within 4^60 of start
        if cdf(hi) <= target:
            break
        hi *= 4
    return float(brentq(lambda lam: cdf(lam) - target, 0.0, hi, xtol=1e-9 * hi,
                        maxiter=200))


def _ncx2_cdf(x: float, df: int, lam: float) -> float:
    """The noncentral chi-square CDF, its normal approximation (mean df + lam, variance
    2 (df + 2 lam)) where scipy's series gives NaN. (scipy's ufuncs, as ``ncx2.cdf`` calls
    them, without its argument checks: this is called thousands of times per column.)"""
    from scipy import special

    p = float(special.chdtr(df, x) if lam == 0 else special.chndtr(x, df, lam))
    if math.isfinite(p):
        return p
    return float(special.ndtr((x - df - lam) / math.sqrt(2 * (df + 2 * lam))))


LARGE_NONCENTRALITY = 2_000.0  # beyond, the noncentral F's CDF by its normal approximation


def _ncf_cdf_normal(f: float, d1: int, d2: int, lam: float) -> float:
    """P(N / D <= f) for N = chi2(d1, lam) / d1 and D = chi2(d2) / d2 taken as normal (mean
    (d1 + lam) / d1 and 1, variances 2 (d1 + 2 lam) / d1^2 and 2 / d2): P(N - f D <= 0)."""
    from scipy import special

    mean = (d1 + lam) / d1 - f
    sd = math.sqrt(2 * (d1 + 2 * lam) / d1 ** 2 + f * f * 2 / d2)
    return float(special.ndtr(-mean / sd))


def ratio_interval(eta: float, n: int, k: int, level: float = 0.95
                   ) -> tuple[float, float] | None:
    """``level`` interval of a correlation ratio ``eta`` of ``n`` rows in ``k`` groups (a
    point-biserial r is eta over 2 groups) by inverting the noncentral F distribution
    (Steiger 2004): F = (eta^2 / (k - 1)) / ((1 - eta^2) / (n - k)) has noncentrality
    lam = n eta_true^2 / (1 - eta_true^2); the lam whose F-distribution puts the observed F at
    its (1 + level) / 2 and (1 - level) / 2 quantiles bound it, eta^2 = lam / (lam + n). Exact
    for normal values within each group, and unlike Fisher's z it does not assume a bivariate
    normal pair (a class label is not one). None for n <= k or k < 2."""
    from scipy import special

    if k < 2 or n <= k:
        return None
    e2 = max(eta * eta, 0.0)
    if 1 - e2 < 1e-9:  # the groups explain every value (a recoded label): nothing to bound
        return min(eta, 1.0), 1.0
    d1, d2 = k - 1, n - k
    f = (e2 / d1) / ((1 - e2) / d2)
    tail = (1 - level) / 2

    def cdf(lam: float) -> float:
        # scipy's series is slow and gives NaN far in the tail (lam in the thousands):
        # there F = (chi2(d1, lam) / d1) / (chi2(d2) / d2) is close to normal's ratio
        # (``ncf.cdf``'s ufunc, without its argument checks: 40x faster, called thousands
        # of times per column)
        p = float(special.ncfdtr(d1, d2, lam, f)) if lam < LARGE_NONCENTRALITY else math.nan
        return p if math.isfinite(p) else _ncf_cdf_normal(f, d1, d2, lam)

    def bound(target: float) -> float:
        lam = _noncentrality(cdf, target, f * d1)
        return math.sqrt(lam / (lam + n))

    return bound(1 - tail), bound(tail)


def cramers_v_interval(v: float, n: int, r: int, k: int, level: float = 0.95
                       ) -> tuple[float, float] | None:
    """``level`` interval of a bias-corrected Cramér's V (:func:`cramers_v`) of an r x k
    table of n rows by inverting the noncentral chi-square distribution, as Smithson (2003)
    does: Pearson's X^2 (recovered from V) has noncentrality lam ~ n phi^2_true; the lam whose
    distribution puts X^2 at its (1 + level) / 2 and (1 - level) / 2 quantiles bound it.
    V's bounds are read on the bias-corrected scale, sqrt(lam / n / min(k~ - 1, r~ - 1)), as
    the correction estimates lam by X^2 - df (Smithson's uncorrected V reads
    sqrt((lam + df) / (n (min(r, k) - 1))) instead). None without a table (r or k < 2,
    n < 2)."""
    if r < 2 or k < 2 or n < 2:
        return None
    df = (r - 1) * (k - 1)
    r_c, k_c = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    denom = min(k_c - 1, r_c - 1)
    if denom <= 0:
        return None
    chi2 = n * (v * v * denom + df / (n - 1))
    tail = (1 - level) / 2

    def bound(target: float) -> float:
        lam = _noncentrality(lambda x: _ncx2_cdf(chi2, df, x), target, chi2)
        return min(1.0, math.sqrt(lam / n / denom))

    return bound(1 - tail), bound(tail)


# ---------------------------------------------------------------------------------------------
# Comparing two distributions (drift): PSI, KS, Wasserstein, Jensen–Shannon, chi-square, BH
# ---------------------------------------------------------------------------------------------

PSI_EPSILON = 1e-4
KS_EXACT_MAX_N = 10_000  # scipy.stats.ks_2samp(method="auto") is exact up to this sample size
# exact KS p-values by (n1, n2, h): scipy's exact p depends on the samples only through n1,
# n2 and h = round(D * lcm(n1, n2)) (its D is on that lattice), so columns sharing them share
# the p-value -- on a wide table most columns have the same sizes and D takes few values
_KS_EXACT: dict[tuple[int, int, int], float] = {}


def psi(expected: np.ndarray, actual: np.ndarray, *,
        epsilon: float = PSI_EPSILON) -> tuple[float, np.ndarray]:
    """Population stability index of two histograms over the same bins, and each bin's term.

    ``expected`` (reference) and ``actual`` (compared) are counts per bin. Shares
    e_i = expected_i / sum(expected) and a_i = actual_i / sum(actual) are clipped below at
    ``epsilon`` (default 1e-4, i.e. one row in 10,000) so an empty bin adds a finite term and a
    bin empty on both sides adds exactly 0; shares are not renormalised after clipping.
    PSI = sum_i (a_i - e_i) * ln(a_i / e_i) >= 0. NaN (and NaN terms) when a side is empty.
    """
    e = np.asarray(expected, dtype=float)
    a = np.asarray(actual, dtype=float)
    if e.sum() <= 0 or a.sum() <= 0:
        return math.nan, np.full(e.shape, math.nan)
    e = np.maximum(e / e.sum(), epsilon)
    a = np.maximum(a / a.sum(), epsilon)
    terms = (a - e) * np.log(a / e)
    return float(terms.sum()), terms


class EcdfGap(NamedTuple):
    """How two samples' empirical CDFs differ: the KS statistic ``d`` = max |F_a - F_b|, the
    value ``x`` where it is reached (F evaluated as the share <= x), both CDFs there, and the
    Wasserstein-1 distance ``w1`` = integral |F_a - F_b| dx."""

    d: float
    x: float
    cdf_a: float
    cdf_b: float
    w1: float


def ecdf_gap(a: np.ndarray, b: np.ndarray) -> EcdfGap:
    """KS statistic and Wasserstein-1 distance of two **sorted**, non-empty float samples.

    One merge of the sorted arrays (a stable sort of their concatenation) and a few linear passes:
    at every position of the merged order, F_a = (#a so far) / n_a and F_b = (#b so far) / n_b;
    D is their largest gap at the last position of each run of equal values (so ties count as
    one step), W1 = sum |F_a - F_b| * (next value - value). Equal to
    ``scipy.stats.ks_2samp(a, b).statistic`` and ``scipy.stats.wasserstein_distance(a, b)``
    (same arithmetic, up to summation order for W1) without their O(n log n) searches.
    """
    n1, n2 = len(a), len(b)
    n = n1 + n2
    # the merge: a stable sort of two sorted runs is one linear merge (timsort), ties keep
    # a's values first (as a binary search of b in a with side="right" placed them)
    x = np.concatenate([a, b])
    order = np.argsort(x, kind="stable")
    x = x[order]
    is_b = order >= n1
    del order
    # memory (12.5M rows: ~350 MB instead of ~750): counts in int32 when they fit, F_a built
    # in place in the gap array (c1 / n1 with c1 = position - c2: the same floats)
    c2 = np.cumsum(is_b, dtype=np.int32 if n < 2**31 else np.int64)
    del is_b
    gap = np.arange(1, n + 1, dtype=np.float64)
    gap -= c2  # c1, exact (integers below 2^53)
    gap /= n1
    gap -= c2 / n2
    np.abs(gap, out=gap)
    with np.errstate(invalid="ignore"):  # inf - inf
        step = np.diff(x)
        np.multiply(gap[:-1], step, out=step)
        w1 = float(np.sum(step))
        del step
    ends = np.flatnonzero(np.append(x[1:] != x[:-1], True))  # not step != 0: inf - inf
    i = ends[np.argmax(gap[ends])]
    c2i = int(c2[i])
    return EcdfGap(float(gap[i]), float(x[i]), float((i + 1 - c2i) / n1), float(c2i / n2), w1)


def ks_pvalue(d: float, n1: int, n2: int, a: np.ndarray | None = None,
              b: np.ndarray | None = None) -> float:
    """Two-sided two-sample KS p-value as ``scipy.stats.ks_2samp(method="auto")`` gives it.

    Exact (scipy's own computation, called on the samples ``a`` and ``b``) when
    max(n1, n2) <= 10,000, remembered by (n1, n2, round(D * lcm(n1, n2))), which is all the
    exact p-value depends on (an exact p costs up to 0.4 s at 10,000 x 2,500 rows; a table of
    1,000 numeric columns with those sizes has a few hundred distinct keys); otherwise Smirnov's
    asymptotic form p = kstwo.sf(D, round(n1 * n2 / (n1 + n2))), computed from ``d`` alone. NaN
    for an empty sample.
    """
    from scipy import stats

    if n1 == 0 or n2 == 0 or math.isnan(d):
        return math.nan
    if max(n1, n2) <= KS_EXACT_MAX_N and a is not None and b is not None:
        import warnings

        key = (n1, n2, int(round(d * (n1 // math.gcd(n1, n2)) * n2)))
        p = _KS_EXACT.get(key)
        if p is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(stats.ks_2samp(a, b, method="auto").pvalue)
            if len(_KS_EXACT) < 100_000:
                _KS_EXACT[key] = p
        return p
    m, n = sorted([float(n1), float(n2)], reverse=True)
    return float(np.clip(stats.kstwo.sf(d, np.round(m * n / (m + n))), 0.0, 1.0))


def js_distance(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen–Shannon distance, base 2 (0 = same distribution, 1 = disjoint), of two
    histograms over the same bins; equals ``scipy.spatial.distance.jensenshannon(p, q, base=2)``.

    p and q are normalised to sum 1, m = (p + q) / 2,
    JS = sqrt((KL(p || m) + KL(q || m)) / (2 ln 2)). NaN when a side is empty.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.sum() <= 0 or q.sum() <= 0:
        return math.nan
    p = p / p.sum()
    q = q / q.sum()
    m = (p + q) / 2

    def kl(x: np.ndarray) -> float:
        nz = x > 0
        return float(np.sum(x[nz] * np.log(x[nz] / m[nz])))

    return math.sqrt(max(0.0, (kl(p) + kl(q)) / (2 * math.log(2))))


def chi2_test(table: np.ndarray) -> tuple[float, float]:
    """Pearson's chi-square test of independence of an r x c table of counts, without
    continuity correction: (statistic, p-value) as
    ``scipy.stats.chi2_contingency(table, correction=False)`` gives them.

    Rows and columns that are all zero are dropped first; a table left with fewer than two
    rows or columns gives (0.0, 1.0). chi2 = sum (O - E)^2 / E with E = row total * column
    total / n; p = P(chi2_dof > chi2), dof = (r - 1)(c - 1).
    """
    from scipy import special

    t = np.asarray(table, dtype=float)
    t = t[t.sum(1) > 0][:, t.sum(0) > 0]
    if t.ndim != 2 or min(t.shape) < 2:
        return 0.0, 1.0
    expected = np.outer(t.sum(1), t.sum(0)) / t.sum()
    chi2 = float(((t - expected) ** 2 / expected).sum())
    dof = (t.shape[0] - 1) * (t.shape[1] - 1)
    # scipy.stats.chi2.sf's own kernel, without its per-call argument handling (~100 us: a
    # wide table calls this once per column and comparison)
    return chi2, float(special.chdtrc(dof, chi2))


def bh_adjust(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (false discovery rate), equal to
    ``scipy.stats.false_discovery_control(p, method="bh")``.

    With the m finite p-values sorted ascending, p_adj(i) = min over j >= i of p(j) * m / j,
    capped at 1. NaN entries are not part of the family and stay NaN.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, math.nan)
    ok = np.isfinite(p)
    m = int(ok.sum())
    if m == 0:
        return out
    vals = p[ok]
    order = np.argsort(vals, kind="stable")
    scaled = vals[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    res = np.empty(m)
    res[order] = adjusted
    out[ok] = res
    return out


# ---------------------------------------------------------------------------------------------
# Rank-based association (single-feature AUC, Spearman, correlation ratio) and bootstrap CIs.
# Reference implementations on numpy arrays; detectors compute the same formulas from polars
# aggregates (see auditor/detectors/label_association.py) and are tested against these.
# ---------------------------------------------------------------------------------------------

def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their average rank (``scipy.stats.rankdata``'s
    "average"). ``x`` must be free of NaN."""
    x = np.asarray(x)
    n = x.shape[0]
    if n == 0:
        return np.empty(0)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(n)
    ranks[order] = tie_ranks(x[order])
    return ranks


def auc_from_rank_sum(rank_sum_pos: np.ndarray | float, n_pos: np.ndarray | float,
                      n_neg: np.ndarray | float) -> np.ndarray:
    """Mann–Whitney AUC = (R1 - n1(n1+1)/2) / (n1 n0), R1 the sum of the positives' average
    ranks among all n1 + n0 rows: P(score_pos > score_neg) + P(tie)/2. Vectorised; NaN
    where a class is empty."""
    r = np.asarray(rank_sum_pos, dtype=float)
    n1 = np.asarray(n_pos, dtype=float)
    n0 = np.asarray(n_neg, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (r - n1 * (n1 + 1) / 2) / (n1 * n0)
    return np.where((n1 > 0) & (n0 > 0), out, np.nan)


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Binary ROC AUC of ``scores`` for the boolean ``positive`` (sklearn's roc_auc_score,
    ties counted half). NaN when a class is empty."""
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    ranks = average_ranks(scores)
    n1 = int(positive.sum())
    return float(auc_from_rank_sum(ranks[positive].sum(), n1, positive.size - n1))


def ovr_aucs(scores: np.ndarray, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-rest AUC per class k: column k of ``scores`` (n x K; a 1-D score is used for
    every class) for ``codes == k``. NaN for a class absent from (or the only class in)
    ``codes``. The macro average is ``np.nanmean`` of the result, as sklearn's
    ``roc_auc_score(multi_class="ovr", average="macro")`` over the classes present."""
    scores = np.asarray(scores, dtype=float)
    codes = np.asarray(codes)
    out = np.full(n_classes, np.nan)
    for k in range(n_classes):  # a loop over classes, vectorised over rows
        s = scores[:, k] if scores.ndim == 2 else scores
        out[k] = roc_auc(s, codes == k)
    return out


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r (two-pass, centred); NaN when either input is constant or n < 2."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 2:
        return float("nan")
    xc, yc = x - x.mean(), y - y.mean()
    denom = math.sqrt(float((xc * xc).sum()) * float((yc * yc).sum()))
    return float((xc * yc).sum() / denom) if denom > 0 else float("nan")


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the average ranks (scipy's spearmanr)."""
    return pearson(average_ranks(np.asarray(x)), average_ranks(np.asarray(y)))


def correlation_ratio(groups: np.ndarray, values: np.ndarray) -> float:
    """Correlation ratio eta = sqrt(SS_between / SS_total) of ``values`` over ``groups``:
    SS_between = sum_g n_g (mean_g - mean)^2, SS_total = sum_i (v_i - mean)^2. In [0, 1];
    with two groups it equals |Pearson's r| of values with the group indicator. NaN when
    ``values`` is constant."""
    values = np.asarray(values, dtype=float)
    _, inv = np.unique(np.asarray(groups), return_inverse=True)
    vc = values - values.mean()
    n_g = np.bincount(inv)
    s_g = np.bincount(inv, weights=vc)
    total = float((vc * vc).sum())
    if total <= 0:
        return float("nan")
    return float(math.sqrt(min(1.0, float((s_g * s_g / n_g).sum()) / total)))


def correlation_ratio_from_moments(n: np.ndarray, mean: np.ndarray, var: np.ndarray
                                   ) -> np.ndarray:
    """eta from per-group counts, means and population variances (ddof 0), along axis 0
    (groups) for every column at once: SS_within = sum n_g var_g, SS_between =
    sum n_g (mean_g - mean)^2, eta = sqrt(SS_between / (SS_within + SS_between))."""
    n = np.asarray(n, dtype=float)
    mean = np.nan_to_num(np.asarray(mean, dtype=float))
    var = np.nan_to_num(np.asarray(var, dtype=float))
    total_n = n.sum(0)
    # eta is scale-free: a column of huge values (|mean| or sd beyond 1e150, where n * mean and
    # the squared deviations overflow float64) is divided by its largest magnitude first
    size = np.maximum(np.abs(mean).max(0, initial=0.0), np.sqrt(var).max(0, initial=0.0))
    big = np.isfinite(size) & (size > 1e150)
    if big.any():
        scale = np.where(big, size, 1.0)
        mean, var = mean / scale, var / scale / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        grand = (n * mean).sum(0) / total_n
        between = (n * (mean - grand) ** 2).sum(0)
        ss = (n * var).sum(0) + between
        eta = np.sqrt(np.clip(between / ss, 0.0, 1.0))
    return np.where(ss > 0, eta, np.nan)


def point_biserial_from_moments(n: np.ndarray, mean: np.ndarray, var: np.ndarray
                                ) -> np.ndarray:
    """Pearson's r of a value with a binary label from per-class (rows 0 and 1) counts, means
    and population variances: r = (mean1 - mean0) sqrt(n0 n1) / (n sqrt(SS_total / n)).
    Signed; its magnitude equals :func:`correlation_ratio_from_moments` over the two classes."""
    eta = correlation_ratio_from_moments(n, mean, var)
    sign = np.sign(np.nan_to_num(np.asarray(mean, dtype=float)[1] -
                                 np.asarray(mean, dtype=float)[0]))
    both = (np.asarray(n, dtype=float) > 0).all(0)  # a class without rows: r is undefined
    return np.where(both, np.where(sign == 0, np.where(np.isnan(eta), np.nan, 0.0), sign * eta),
                    np.nan)


def _level_sums(scores: np.ndarray, weights: np.ndarray, positive: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct score level (ascending), weighted positive and negative counts; weights
    is (B, n)."""
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    w = weights[:, order]
    pos = positive[order]
    p = np.add.reduceat(np.where(pos, w, 0), starts, axis=1)
    q = np.add.reduceat(np.where(pos, 0, w), starts, axis=1)
    return p.astype(float), q.astype(float)


def weighted_auc(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUC under row weights, one per row of ``weights`` (B x n): with per-level weighted
    positives P_l and negatives N_l, AUC = sum_l P_l (N_<l + N_l / 2) / (sum P sum N). With
    integer weights it is the AUC of the rows repeated that many times (bootstrap counts)."""
    p, q = _level_sums(np.asarray(scores, dtype=float), np.atleast_2d(weights),
                       np.asarray(positive, dtype=bool))
    below = np.cumsum(q, axis=1) - q
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p * (below + q / 2)).sum(1) / (p.sum(1) * q.sum(1))


def bootstrap_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n) resampling counts: how often each row is drawn in each bootstrap
    resample of size n (multinomial, drawn with replacement)."""
    draws = rng.integers(0, n, size=(n_boot, n))
    flat = draws + (np.arange(n_boot) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n).reshape(n_boot, n)


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap ``samples`` (NaNs dropped)."""
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    return float(np.quantile(s, a)), float(np.quantile(s, 1 - a))


def bootstrap_auc_ci(scores: np.ndarray, codes: np.ndarray, n_classes: int, *,
                     n_boot: int = 300, level: float = 0.95, seed: int = 0
                     ) -> tuple[float, float]:
    """Percentile bootstrap CI of the (macro one-vs-rest) AUC: ``scores`` is (n,) for a
    binary label (positive = code 1) or (n, K) with column k scoring class k. Every resample
    re-draws n rows with replacement; the AUC of each is computed exactly (ties half) from
    resampling counts, vectorised over resamples."""
    scores = np.asarray(scores, dtype=float)
    codes = np.asarray(codes)
    rng = np.random.default_rng(seed)
    counts = bootstrap_counts(codes.size, n_boot, rng)
    if scores.ndim == 1:
        return percentile_ci(weighted_auc(scores, codes == 1, counts), level)
    per_class = np.vstack([weighted_auc(scores[:, k], codes == k, counts)
                           for k in range(n_classes) if (codes == k).any()])
    with np.errstate(invalid="ignore"):
        macro = np.nanmean(np.where(np.isfinite(per_class), per_class, np.nan), axis=0)
    return percentile_ci(macro, level)


def bootstrap_spearman_ci(x: np.ndarray, y: np.ndarray, *, n_boot: int = 300,
                          level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of Spearman's rho: weighted Pearson's r of the sample's average
    ranks under resampling counts (ranks are not recomputed within a resample: a standard,
    slightly conservative approximation that keeps the bootstrap vectorised)."""
    rx = average_ranks(np.asarray(x))
    ry = average_ranks(np.asarray(y))
    rng = np.random.default_rng(seed)
    w = bootstrap_counts(rx.size, n_boot, rng).astype(float)
    tot = w.sum(1)
    mx = (w @ rx) / tot
    my = (w @ ry) / tot
    cov = (w @ (rx * ry)) / tot - mx * my
    vx = (w @ (rx * rx)) / tot - mx * mx
    vy = (w @ (ry * ry)) / tot - my * my
    with np.errstate(divide="ignore", invalid="ignore"):
        return percentile_ci(cov / np.sqrt(vx * vy), level)


def roc_points(scores: np.ndarray, positive: np.ndarray, max_points: int = 200
               ) -> tuple[list[float], list[float]]:
    """The ROC curve (fpr, tpr) of ``scores`` (higher = more positive), one point per distinct
    score from (0, 0) to (1, 1), thinned to at most ``max_points`` evenly spaced points."""
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    p, q = _level_sums(-scores, np.ones((1, scores.size)), positive)
    tp = np.r_[0.0, np.cumsum(p[0])]
    fp = np.r_[0.0, np.cumsum(q[0])]
    if tp[-1] == 0 or fp[-1] == 0:
        return [], []
    keep = np.unique(np.linspace(0, tp.size - 1, min(max_points, tp.size)).round().astype(int))
    return ([round(float(v), 5) for v in fp[keep] / fp[-1]],
            [round(float(v), 5) for v in tp[keep] / tp[-1]])


# ---------------------------------------------------------------------------------------------
# Shared by the detectors: message fragments, evidence cells, runs and ranks of sorted arrays,
# inverted-CDF quantiles, and maps over columns on a thread pool.
# ---------------------------------------------------------------------------------------------

def fmt_rows(count: int, total: int, noun: str) -> str:
    """``"37 of 1,200 val rows (3.1%)"``: count, denominator and share as every finding message
    states them; ``noun`` names what is counted (``"val rows"``, ``"rows with a value"``)."""
    return f"{fmt_count(count)} of {fmt_count(total)} {noun} ({fmt_share(share(count, total))})"


def clip_text(v: object, limit: int = 60) -> str:
    """``str(v)`` cut to at most ``limit`` characters, the last one an ellipsis when cut."""
    s = str(v)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def round_finite(x: float | None, digits: int = 4) -> float | None:
    """``x`` rounded to ``digits`` decimals for the report; None for None, NaN and ±inf."""
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def run_starts(v: np.ndarray) -> np.ndarray:
    """For a sorted array: True where a run of equal values begins (one linear pass)."""
    new = np.empty(len(v), dtype=bool)
    if len(v):
        new[0] = True
        np.not_equal(v[1:], v[:-1], out=new[1:])
    return new


def tie_ranks(v: np.ndarray) -> np.ndarray:
    """1-based ranks of a sorted array, ties sharing the mean of their ranks (the "average"
    method of ``scipy.stats.rankdata``)."""
    if len(v) == 0:
        return np.empty(0)
    starts = np.flatnonzero(run_starts(v))
    ends = np.r_[starts[1:], len(v)]
    return np.repeat((starts + ends + 1) / 2.0, ends - starts)


def inverted_cdf(v: np.ndarray, steps: int) -> np.ndarray:
    """Quantiles of a sorted, non-empty array at q = j / steps, j = 1 .. steps - 1, by the
    inverted CDF (numpy's ``method="inverted_cdf"``): the smallest value with F(value) >= q,
    i.e. ``v[ceil(j n / steps) - 1]``, in exact integer arithmetic. Not deduplicated."""
    n = len(v)
    j = np.arange(1, steps, dtype=np.int64)
    return v[np.clip((j * n + steps - 1) // steps - 1, 0, n - 1)]


def map_columns(fn: Callable[[Any], Any], items: Iterable[Any], workers: int | None = None
                ) -> list[Any]:
    """``[fn(x) for x in items]`` on a thread pool (numpy sorts and polars release the GIL),
    results in the order of ``items``; serial for one item or one worker. ``workers`` defaults
    to polars' thread pool size (``POLARS_MAX_THREADS``)."""
    items = list(items)
    if workers is None:
        import polars as pl

        workers = pl.thread_pool_size()
    workers = min(workers, len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def check_params(check: object, names: tuple[str, ...] | list[str], ok: Callable[[Any], bool],
                 what: str) -> None:
    """Validate parameters of a check in ``__post_init__``: for each of ``names``, raise
    ``ValueError("<name> must be <what>; got <value>")`` unless ``ok(value)`` holds (a value
    ``ok`` cannot compare, such as a string for a number, fails too)."""
    for name in names:
        v = getattr(check, name)
        try:
            good = bool(ok(v))
        except TypeError:
            good = False
        if not good:
            raise ValueError(f"{name} must be {what}; got {v!r}")


def is_share(v: float) -> bool:
    """A share in [0, 1] (NaN is not)."""
    return 0 <= v <= 1
