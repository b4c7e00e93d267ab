"""Levels (categories, classes, per-value bins) of one column in two splits: the tests and
effects that stay honest at small counts and over thousands of levels.

- :func:`contingency_test`: chi-square when Cochran's rule holds, else Fisher's exact test
  (2 x 2) or a seeded Monte Carlo exact test.
- :func:`pool_rare_levels` and :func:`psi_by_chance`: high-cardinality columns compared on the
  levels a sample can resolve, PSI judged net of its no-drift expectation.
- :func:`one_off_share`: Good–Turing's share of values a sample has not seen yet.
- :func:`level_shifts`: per-level fold and 2 x 2 test, so a rare class that doubles is seen.

Used by :mod:`auditor.stats.drift`; tested against scipy in tests/detectors/test_drift.py.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from auditor.stats.numerics import chi2_test

MISSING = "(missing)"
OTHER_VALUES = "(unseen values)"  # a bin label, never shown as a value rows have
RARE_LEVELS = "(rare levels)"
SMALL_EXPECTED = 5.0   # expected count below which a chi-square p-value is not trusted
EXACT_MAX_BINS = 50    # Monte Carlo exact test up to this many bins; chi-square beyond
MC_RESAMPLES = 9999
MC_FIRST = 199         # resamples of the first stage, which settles clearly large p-values
MC_SETTLED = 0.25      # p-value at or above which the first stage's answer is kept
COUNT_METHOD_ROWS = 300  # tables of up to this many rows are drawn by counting (faster)
MC_HITS = 100          # the second stage stops at this many tables as extreme as the observed


@dataclass
class LevelShift:
    """One level (category, class, or value of a per-value binned numeric) whose share moved:
    ``fold`` = max(r, 1/r) with r = ((b + 0.5) / (n_b + 0.5)) / ((a + 0.5) / (n_a + 0.5))
    (shares with Haldane's +0.5, so an empty side stays finite), ``p`` the chi-square test
    (1 dof, no continuity correction) of the 2 x 2 table level / rest by split, ``p_adj`` that
    p-value times the number of levels tested (Bonferroni), capped at 1: here the column's,
    in the drift checks every level tested in the comparison."""

    value: str
    ref_count: int
    cur_count: int
    ref_share: float
    cur_share: float
    fold: float
    p: float
    p_adj: float


def contingency_test(table: np.ndarray, seed: int = 0) -> tuple[float, str]:
    """p-value of the 2 x k table of counts (reference / compared by bin) and the test used.

    Rows/columns that are all zero are dropped. When Cochran's rule holds (no expected count
    below 1, at most 20% of them below 5) the chi-square approximation is used: Pearson's test
    without continuity correction (:func:`auditor.stats.numerics.chi2_test`). Otherwise the
    approximation is anti-conservative (a 6-vs-6 column gets p 0.045 where the exact p is
    0.18), so: a 2 x 2 table gets Fisher's exact test (``scipy.stats.fisher_exact``,
    two-sided), and a 2 x k table with k <= 50 the chi-square statistic's seeded Monte Carlo
    p-value over tables with the same margins (:func:`monte_carlo_p`: at most 9,999 tables,
    fewer when p is clearly large). When no resampled table is as extreme, the exact p is below
    1e-4 and the chi-square p-value, if smaller, is kept, so a large sample with one sparse cell
    is not held at 1e-4. Wider tables (high-cardinality columns are pooled first, see
    :func:`pool_rare_levels`) keep the chi-square approximation.
    """
    from scipy import stats

    t = np.asarray(table, dtype=float)
    t = t[t.sum(1) > 0][:, t.sum(0) > 0]
    if t.ndim != 2 or min(t.shape) < 2:
        return 1.0, "chi-square"
    expected = np.outer(t.sum(1), t.sum(0)) / t.sum()
    if expected.min() >= 1 and (expected < SMALL_EXPECTED).mean() <= 0.2:
        return chi2_test(t)[1], "chi-square"
    if t.shape == (2, 2):
        return float(stats.fisher_exact(t.astype(np.int64)).pvalue), "Fisher's exact"
    if min(t.shape) == 2 and max(t.shape) <= EXACT_MAX_BINS:
        p = monte_carlo_p((t if t.shape[0] == 2 else t.T).astype(np.int64), seed)
        if p <= 1 / (MC_RESAMPLES + 1):  # no resampled table as extreme: p is below 1e-4,
            return min(p, chi2_test(t)[1]), "chi-square"  # the asymptotic value says how far
        return p, "Monte Carlo exact chi-square"
    return chi2_test(t)[1], "chi-square"


def random_tables(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random 2 x k tables with the margins of ``counts`` (the permutation null of a
    2 x k table), as their first rows, shape (n, k): the first row's counts drawn column by
    column from the hypergeometric distribution of what is left (as Patefield's algorithm
    does for two rows), vectorised over the tables (cost grows with the columns, ~40 us per
    column and call). Tables of up to COUNT_METHOD_ROWS rows are read from shared subsets
    instead (:func:`null_draws`)."""
    cols = counts.sum(0)
    first = int(counts[0].sum())
    left = np.full(n, first)  # first-row rows still to place, per table
    pool = int(cols.sum())
    out = np.empty((n, len(cols)), dtype=np.int64)
    for j, c in enumerate(cols[:-1]):
        pool -= int(c)
        out[:, j] = rng.hypergeometric(int(c), pool, left)
        left -= out[:, j]
    out[:, -1] = left
    return out


SUBSET_BLOCKS = (199, 999, 2999, 9999)  # the shared subsets are drawn up to these counts


class _Subsets:
    """Random subsets of ``first`` of ``total`` numbered rows, drawn from one seed, kept as
    cumulative counts: ``cum[d, x]`` = rows below ``x`` in subset ``d``. Drawn in
    SUBSET_BLOCKS blocks (then blocks of the last one's size), so the first ``n`` subsets are
    the same whatever was asked before."""

    def __init__(self, seed: tuple[int, ...], total: int, first: int) -> None:
        self.rng = np.random.default_rng(list(seed))
        self.total, self.first = total, first
        self.cum = np.zeros((0, total + 1), dtype=np.int16)
        self.lock = threading.Lock()

    def upto(self, n: int) -> np.ndarray:
        with self.lock:
            while len(self.cum) < n:
                have, last = len(self.cum), SUBSET_BLOCKS[-1]
                stop = next((b for b in SUBSET_BLOCKS if b > have), (have // last + 1) * last)
                picked = self.rng.multivariate_hypergeometric(
                    np.ones(self.total, dtype=np.int64), self.first,
                    size=stop - have, method="count")
                block = np.zeros((len(picked), self.total + 1), dtype=np.int16)
                np.cumsum(picked, axis=1, out=block[:, 1:])
                self.cum = np.concatenate([self.cum, block])
            return self.cum[:n]


@lru_cache(maxsize=8)
def _subsets(seed: tuple[int, ...], total: int, first: int) -> _Subsets:
    return _Subsets(seed, total, first)


def null_draws(counts: np.ndarray, seed: int | Sequence[int]) -> Callable[[int], np.ndarray]:
    """The permutation null of a 2 x k table of ``counts`` drawn from ``seed``: a function
    giving the next ``n`` random tables with its margins (first rows, shape (n, k)).

    Up to COUNT_METHOD_ROWS rows in all, a random table is a uniformly random subset of
    ``first`` of the table's ``total`` rows, numbered column after column (column j holds rows
    B_j .. B_{j+1} - 1, B_j = c_0 + ... + c_{j-1} of the column totals c): its first row is
    t_j = cum[d, B_{j+1}] - cum[d, B_j], read from the subsets' cumulative counts -- exactly
    the multivariate hypergeometric draw. The subsets depend only on (seed, total, first), so
    the many short columns of a wide table share one draw (numpy's draw by counting, cached)
    and each of their tables costs a lookup. Columns with the same totals are thus drawn from
    the same subsets (their nulls are dependent, as they were when each column drew afresh
    from the same seed). Beyond, :func:`random_tables` draws column by column from the
    seed."""
    total, first = int(counts.sum()), int(counts[0].sum())
    key = tuple(int(v) for v in np.atleast_1d(seed))
    if total > COUNT_METHOD_ROWS:
        rng = np.random.default_rng(list(key))
        return lambda n: random_tables(counts, n, rng)
    bounds = np.concatenate([[0], np.cumsum(counts.sum(0))])
    subsets, drawn = _subsets(key, total, first), 0

    def tables(n: int) -> np.ndarray:
        nonlocal drawn
        cum = subsets.upto(drawn + n)[drawn:]
        drawn += n
        return np.diff(cum[:, bounds].astype(np.int64), axis=1)

    return tables


def chi2_statistics(first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pearson's X^2 = sum (O - E)^2 / E of 2 x k tables given by their first rows (the
    margins of ``counts``, whose columns are all non-empty, fix the second rows)."""
    cols, rows = counts.sum(0), counts.sum(1)
    e1, e2 = rows[0] * cols / cols.sum(), rows[1] * cols / cols.sum()
    x = first.astype(float)
    return (((x - e1) ** 2) / e1 + ((cols - x - e2) ** 2) / e2).sum(-1)


def monte_carlo_p(counts: np.ndarray, seed: int = 0) -> float:
    """Monte Carlo p-value of Pearson's X^2 for a 2 x k table of counts (no empty row or
    column), under the permutation null (tables with the same margins), drawn with ``seed``.

    Two stages. Stage 1 draws 199 tables: p = (hits + 1) / 200, where a hit is a table whose
    X^2 is at least the observed one (within 100 ulp, as ``scipy.stats.monte_carlo_test``);
    kept when p >= 0.25 (nowhere near significant). Stage 2 starts again from the same seed
    (its first tables are stage 1's), Besag & Clifford's sequential test (Biometrika 1991):
    tables are drawn until 100 hits, p = 100 / tables drawn, or until 9,999 tables,
    p = (hits + 1) / 10,000. Each stage is a
    valid test; at any level below 0.25 only stage 2 rejects. Where stage 2 stops early
    (p >= 0.01) the estimate's relative error is about 10% (100 hits; 9,999 tables would give
    4% at p = 0.05): a column with p ~ 0.1 costs ~1,000 tables instead of 9,999, which is what
    makes a table of thousands of short, unrelated columns fast (10,000 columns of 50 rows per
    split: 24 s of scipy's resampling before, 7 s with this rule; their tables are now read
    from one shared draw, :func:`null_draws`). Checked against exact enumeration and
    against ``scipy.stats.chi2_contingency(method=MonteCarloMethod)`` in
    tests/detectors/test_drift.py.
    """
    observed = chi2_statistics(counts[0], counts)
    floor = observed - abs(observed) * np.finfo(float).eps * 100
    hits = int(np.count_nonzero(chi2_statistics(null_draws(counts, seed)(MC_FIRST), counts)
                                >= floor))
    p = (hits + 1) / (MC_FIRST + 1)
    if p >= MC_SETTLED:
        return p
    draw, drawn, hits, batch = null_draws(counts, seed), 0, 0, 500
    while drawn < MC_RESAMPLES:
        n = min(batch, MC_RESAMPLES - drawn)
        hit = chi2_statistics(draw(n), counts) >= floor
        if hits + int(hit.sum()) >= MC_HITS:  # the MC_HITS-th hit is in this batch
            return MC_HITS / (drawn + int(np.flatnonzero(hit)[MC_HITS - hits - 1]) + 1)
        hits, drawn, batch = hits + int(hit.sum()), drawn + n, batch * 2
    return (hits + 1) / (MC_RESAMPLES + 1)


def pool_rare_levels(labels: list[str], ca: np.ndarray, cb: np.ndarray, n_levels: int
                     ) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    """High-cardinality categoricals: the first ``n_levels`` labels (the values; a MISSING bin
    after them stays) whose expected count in the smaller split, (a_i + b_i) / (n_a + n_b) *
    min(n_a, n_b), is below 5 are pooled into one RARE_LEVELS bin. Over thousands of sparse
    levels each bin's share is mostly sampling noise; pooled, PSI and chi-square measure what
    moved in the levels a sample can resolve, and the pooled bin's own share still moves
    when rare or new values gain mass. Returns the new labels, counts, and how many levels
    were pooled."""
    na, nb = ca.sum(), cb.sum()
    expected = (ca[:n_levels] + cb[:n_levels]) / max(na + nb, 1) * min(na, nb)
    rare = np.zeros(len(labels), dtype=bool)
    rare[:n_levels] = expected < SMALL_EXPECTED
    k = int(rare.sum())
    if k < 2:
        return labels, ca, cb, 0
    keep = np.flatnonzero(~rare)
    head, tail = keep[keep < n_levels], keep[keep >= n_levels]
    new_labels = [labels[i] for i in head] + [RARE_LEVELS] + [labels[i] for i in tail]

    def pooled(c: np.ndarray) -> np.ndarray:
        return np.concatenate([c[head], [c[rare].sum()], c[tail]])

    return new_labels, pooled(ca), pooled(cb), k


def psi_by_chance(n_bins: int, n_a: int, n_b: int) -> float:
    """PSI expected from sampling alone when nothing moved: PSI is close to the chi-square
    divergence sum (a_i - e_i)^2 / p_i, whose expectation under no drift is
    (B - 1) * (1/n_a + 1/n_b) for B bins (each share's variance p_i (1 - p_i) (1/n_a + 1/n_b)).
    Subtracted from a high-cardinality column's PSI (the "PSI excess"), where B is large."""
    if n_a <= 0 or n_b <= 0 or n_bins < 2:
        return 0.0
    return (n_bins - 1) * (1 / n_a + 1 / n_b)


def one_off_share(counts: np.ndarray) -> float:
    """Good–Turing estimate of the probability that a new row holds a value the reference
    never had: (number of values seen exactly once) / (reference rows with a value). A column
    with thousands of levels sampled once each will keep meeting new values without any drift;
    this is the share of unseen values to expect."""
    c = np.asarray(counts)
    total = c.sum()
    return float((c == 1).sum() / total) if total else 0.0


def one_off_sd(counts: np.ndarray) -> float:
    """Standard error of :func:`one_off_share` (Esty 1983): sqrt((N1 (1 - N1/N) + 2 N2) / N^2),
    N1, N2 the numbers of values seen once and twice, N the rows with a value."""
    c = np.asarray(counts)
    total = float(c.sum())
    if not total:
        return 0.0
    n1, n2 = float((c == 1).sum()), float((c == 2).sum())
    return float(np.sqrt(max(0.0, n1 * (1 - n1 / total) + 2 * n2)) / total)


def level_shifts(labels: list[str], ca: np.ndarray, cb: np.ndarray, *, min_rows: int
                 ) -> list[LevelShift]:
    """Per-level share changes (see :class:`LevelShift`), for the levels that hold at least
    ``min_rows`` rows in one split and an expected count of at least 5 in each (pooled share
    times the split's rows); MISSING, RARE_LEVELS and OTHER_VALUES bins are not levels, nor are
    values new in the compared split (reported as unseen values).
    Sorted by p-value, then by fold (largest first). A rare level that doubles (1% -> 2% of
    10,000 rows) barely moves PSI or Cramér's V but is a fold of 2 with a tiny p-value."""
    from scipy import stats

    na, nb = int(ca.sum()), int(cb.sum())
    if na == 0 or nb == 0:
        return []
    n = na + nb
    pooled = (ca + cb) / n
    special = np.array([lab in (MISSING, RARE_LEVELS, OTHER_VALUES) for lab in labels])
    tested = (~special & (ca > 0) & (np.maximum(ca, cb) >= min_rows)
              & (pooled * min(na, nb) >= SMALL_EXPECTED) & (pooled < 1))
    idx = np.flatnonzero(tested)
    if not len(idx):
        return []
    a, b = ca[idx].astype(float), cb[idx].astype(float)
    # 2 x 2 table [[a, na - a], [b, nb - b]]: chi2 = n (a (nb - b) - b (na - a))^2 / margins
    col1 = a + b
    chi2 = n * (a * (nb - b) - b * (na - a)) ** 2 / (na * nb * col1 * (n - col1))
    p = stats.chi2.sf(chi2, 1)
    p_adj = np.minimum(p * len(idx), 1.0)
    r = ((b + 0.5) / (nb + 0.5)) / ((a + 0.5) / (na + 0.5))
    fold = np.maximum(r, 1 / r)
    order = np.lexsort((-fold, p))
    return [LevelShift(labels[idx[j]], int(a[j]), int(b[j]), float(a[j] / na), float(b[j] / nb),
                       float(fold[j]), float(p[j]), float(p_adj[j])) for j in order]


UNSEEN_EXACT_ROWS = 20_000  # unseen rows up to which their chance tail is summed exactly,
UNSEEN_EXACT_WORK = 2_000_000  # while unseen rows x distinct value sizes stay below this


def _convolved(a: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """The first ``len(a)`` terms of the convolution of two probability vectors, by FFT
    (rounding error ~1e-16 of the largest term, clipped at 0)."""
    n = len(a) + len(kernel) - 1
    size = 1 << (n - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(kernel, size), size)[:len(a)]
    return np.clip(out, 0.0, None)


def unseen_by_chance_p(pooled: np.ndarray, n_a: int, n_b: int, unseen: int) -> float:
    """P(U >= ``unseen``) for U, the compared split's rows holding a value the reference lacks,
    when the ``n_a + n_b`` rows (missing values included) are dealt again at random into splits
    of ``n_a`` and ``n_b`` rows: the null of a random split design, from the values' pooled
    counts ``pooled`` (m_j rows hold value j).

    Value j is unseen when all its m_j rows land in the compared split, with the hypergeometric
    probability P_j = prod_{i < m_j} (n_b - i) / (n_a + n_b - i); U = sum_j m_j B_j,
    B_j ~ Bernoulli(P_j) taken as independent (dealing fixes the split sizes, which makes the
    B_j negatively associated: the independent tail is a little wider, so the test is
    conservative). Summed exactly by convolution over the distinct m (K_m of the c_m values
    held m times are unseen, K_m ~ Binomial(c_m, P_m)) up to :data:`UNSEEN_EXACT_ROWS`
    unseen rows; beyond, U is a sum of many small terms and its normal tail is used.
    Unlike Good–Turing, which estimates the unseen share from the reference alone, this
    conditions on the rows actually held: a common value absent from a 50-row reference by
    chance (6 of 100 pooled rows, all 6 in the compared split: P = 1.4%) counts as chance."""
    from scipy.special import gammaln
    from scipy.stats import binom, norm

    if unseen <= 0:
        return 1.0
    m = np.asarray(pooled, dtype=np.int64)
    m = m[(m > 0) & (m <= n_b)]
    if not len(m):
        return 0.0
    total = n_a + n_b
    sizes, counts = np.unique(m, return_counts=True)
    p = np.exp(gammaln(n_b + 1) - gammaln(n_b - sizes + 1) - gammaln(total + 1)
               + gammaln(total - sizes + 1))
    if unseen > UNSEEN_EXACT_ROWS or unseen * int((sizes < unseen).sum()) > UNSEEN_EXACT_WORK:
        mean = float((counts * sizes * p).sum())
        sd = float(np.sqrt((counts * sizes ** 2 * p * (1 - p)).sum()))
        return float(norm.sf((unseen - 0.5 - mean) / sd)) if sd > 0 else float(unseen <= mean)
    below = np.zeros(unseen)  # P(U = u) for u < unseen, over the values convolved so far
    below[0] = 1.0
    for size, c, q in zip(sizes, counts, p):
        k = np.arange(min(int(c), (unseen - 1) // int(size)) + 1)
        kernel = np.zeros(int(k[-1]) * int(size) + 1)
        kernel[::int(size)] = binom.pmf(k, int(c), q)  # m K_m for K_m ~ Binomial(c_m, P_m)
        below = below * kernel[0] if len(kernel) == 1 else _convolved(below, kernel)
    return float(min(1.0, max(0.0, 1.0 - below.sum())))
