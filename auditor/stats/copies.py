"""The chance baseline of exact copies between two splits, from counts (engine-free).

Discrete rows repeat naturally, so an honest random split puts copies of earlier rows into a
later split; :func:`chance_verdict` weighs the observed copies against that. Both engines
measure the counts (:func:`auditor.detectors.copy_keys.row_copies`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from auditor.stats.numerics import share


def no_chance(count: int) -> dict[str, Any]:
    """The chance baseline when the earlier rows do not repeat naturally (b = 0): every one of
    the ``count`` copies counts, p = 0 when there is one."""
    return {"baseline": 0.0, "repeating": 0, "p_value": 0.0 if count else 1.0}


SMALL_PATTERNS = 40   # at most this many repeated patterns: D's null drawn, not a normal z
NULL_DRAWS = 100_000  # draws of that null (p-values down to 1e-5)


def chance_from_counts(count: int, certain: int, n_a: int, n_b: int, b: float,
                       repeating: int, sizes: np.ndarray, n_patterns: np.ndarray
                       ) -> dict[str, Any]:
    """:func:`chance_verdict` from the counts of counts of the pooled value patterns
    (``n_patterns[i]`` patterns seen ``sizes[i]`` >= 2 times; both engines measure these):
    D's null mean and variance by :func:`split_null_from_counts`, and with at most
    :data:`SMALL_PATTERNS` patterns its p-value drawn (:func:`drawn_p`): with few patterns
    the normal z is anti-conservative (7 pairs all crossing a 68/32 split happen with
    probability 0.32^7 = 3.4e-4; the z said 6e-5)."""
    order = np.argsort(sizes)
    sizes, n_patterns = sizes[order], n_patterns[order]
    mu, var = split_null_from_counts(sizes, n_patterns, n_a, n_b)
    d = share(count - certain, n_b) - b
    p = drawn_p(sizes, n_patterns, n_a, n_b, d) if n_patterns.sum() <= SMALL_PATTERNS else None
    return chance_verdict(count, certain, n_b, b, repeating, mu, var, p)


def drawn_p(sizes: np.ndarray, n_patterns: np.ndarray, n_a: int, n_b: int, d: float
            ) -> float:
    """P(D >= d) under the random re-split of :func:`split_null_from_counts` (each
    pattern's rows in the earlier split Binomial(m, n_a / N), independently), from
    :data:`NULL_DRAWS` seeded draws: (1 + draws at least d) / (1 + draws)."""
    rng = np.random.default_rng(0)
    p = n_a / (n_a + n_b)
    m = np.repeat(sizes, n_patterns)
    hits = 0
    for start in range(0, NULL_DRAWS, 20_000):  # in blocks: 40 patterns x 20,000 draws each
        x = rng.binomial(m[None, :], p, size=(min(20_000, NULL_DRAWS - start), len(m)))
        f = np.where(x >= 1, m - x, 0) / n_b - np.where(x >= 2, x, 0) / n_a
        hits += int((f.sum(1) >= d - 1e-12).sum())
    return (hits + 1) / (NULL_DRAWS + 1)


def chance_verdict(count: int, certain: int, n_b: int, b: float, repeating: int, mu: float,
                   var: float, p_drawn: float | None = None) -> dict[str, Any]:
    """The chance-baseline result of :meth:`auditor.detectors.copy_keys.KeyedRows.chance` from
    its measured parts: D = (count - certain) / n_b - b against its null mean ``mu`` and variance
    ``var``; z = (D - mu) / sqrt(var), p = 1 - Phi(z), or ``p_drawn`` when the null was drawn
    (:func:`chance_from_counts`), 0 when ``certain`` copies hold a measured value;
    excess = certain / n_b + max(0, D)."""
    from scipy.stats import norm

    d = share(count - certain, n_b) - b
    sd = math.sqrt(var)
    z = (d - mu) / sd if sd > 0 else (math.inf if d > mu + 1e-12 else 0.0)
    p = float(norm.sf(z)) if p_drawn is None else p_drawn
    out = {"baseline": b, "repeating": repeating,
           "expected_copies": round(b * n_b, 1), "z": round(float(z), 3),
           "p_value": 0.0 if certain else p,
           "null_excess": {"mean": mu, "sd": sd},
           "excess": share(certain, n_b) + max(0.0, d)}
    if p_drawn is not None:
        out["p_drawn"] = True
    if certain:
        out["copies_with_a_continuous_value"] = certain
    return out


def natural_repeats(within: int, duplicated: int, rows: int, natural_below: float
                    ) -> dict[str, int]:
    """Whether the data repeat records holding a measured value by themselves, so that a
    copy of one across two splits is what an honest split of these rows makes too: some such
    records repeat *within* a split (``within`` rows; an all-crossing pattern is what copying
    rows into a later split leaves, and a copy then counts however few), and the rows of
    such records repeated in the two splits together (``duplicated``) are at most
    ``natural_below`` of their ``rows`` (oversampling or augmentation before the split
    duplicates far more: 15% of the rows copied -> 26% of the rows repeated). The evidence
    when so, else an empty dict."""
    if within and duplicated <= natural_below * rows:
        return {"measured_repeats_within": within, "measured_repeats": duplicated}
    return {}


def split_null_from_counts(sizes: np.ndarray, n_patterns: np.ndarray, n_a: int,
                           n_b: int) -> tuple[float, float]:
    """Mean and variance of D = C / n_b - R / n_a when the pooled rows, with ``n_patterns[i]``
    value patterns seen ``sizes[i]`` >= 2 times each (an engine measures these counts of
    counts as a small aggregate), are split at random into ``n_a`` earlier and ``n_b`` later
    rows. Per pattern X ~ Binomial(m, p), p = n_a / N, N = n_a + n_b, and f(X) =
    (m - X) 1[X >= 1] / n_b - X 1[X >= 2] / n_a; the patterns' X are independent and then
    conditioned on sum X = n_a (the split's size): Var D = sum Var f - (sum Cov(f, X))^2 /
    (N p (1 - p)). Patterns seen once add nothing to D."""
    from scipy.stats import binom

    total = n_a + n_b
    p = n_a / total
    mean = var = cov = 0.0
    for size, k in zip(sizes.tolist(), n_patterns.tolist()):
        x = np.arange(size + 1)
        pmf = binom.pmf(x, size, p)
        f = np.where(x >= 1, size - x, 0) / n_b - np.where(x >= 2, x, 0) / n_a
        e = float((pmf * f).sum())
        mean += k * e
        var += k * max(0.0, float((pmf * f * f).sum()) - e * e)
        cov += k * (float((pmf * f * x).sum()) - e * size * p)
    var_total = total * p * (1 - p)
    if var_total > 0:
        var = max(0.0, var - cov * cov / var_total)
    return mean, var
