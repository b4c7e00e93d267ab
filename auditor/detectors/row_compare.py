"""What rows are compared on across splits, and how many copies chance explains.

Helpers of ``leakage.duplicates`` (:mod:`auditor.detectors.duplicates`): columns whose types
differ across splits are compared as text and columns that cannot be compared are named (none is
dropped silently); :func:`copy_chance` gives the share of later rows expected to copy an earlier
row when rows repeat naturally (discrete data).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from auditor.loading.data import AuditData, Kind, kind_of
from auditor.detectors.near_duplicates import frames_equal
from auditor.stats.numerics import share


def columns_outside(data: AuditData) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Columns that the harmonised comparison would lose, so that none is dropped silently:
    (columns present in every split with incompatible types -> their type per split; they are
    compared as text), (columns left out -> why: missing from a split, or nested in one)."""
    skip = set(data.columns.ids) | set(data.columns.exclude)
    if data.tokens:
        skip |= set(data.tokens.columns())
    as_text: dict[str, dict[str, str]] = {}
    left_out: dict[str, str] = {}
    for issue in data.schema_issues:
        c = issue.column
        if c in skip or c in data.kinds or c in as_text or c in left_out:
            continue
        if issue.problem == "missing":
            left_out[c] = f"missing from {', '.join(issue.splits)}"
        elif issue.problem == "dtype":
            dtypes = {n: df.schema[c] for n, df in data.splits.items()}
            if any(kind_of(d) == Kind.NESTED for d in dtypes.values()):
                left_out[c] = "nested in some split, " + ", ".join(
                    f"{n}: {d}" for n, d in dtypes.items())
            else:
                as_text[c] = {n: str(d) for n, d in dtypes.items()}
    return as_text, left_out


def compared_frame(data: AuditData, split: str, cols: list[str],
                   as_text: list[str] = ()) -> pl.DataFrame:  # type: ignore[assignment]
    """The values a row is compared on: ``cols`` as loaded, ``as_text`` cast to strings."""
    df = data.splits[split]
    return df.select(*cols, *(pl.col(c).cast(pl.String) for c in as_text))


def compared_hashes(data: AuditData, split: str, cols: list[str],
                    as_text: list[str] = ()) -> pl.Series:  # type: ignore[assignment]
    if not as_text:
        return data.row_hashes(split, cols)
    return data.cached(("duplicates.hashes", split, tuple(cols), tuple(as_text)),
                       lambda: compared_frame(data, split, cols, as_text)
                       .hash_rows(seed=data.seed % (2**32)))


def copy_chance(data: AuditData, earlier: str, later: str, count: int, cols: list[str],
                as_text: list[str], earlier_copies: pl.DataFrame,
                copied: pl.Series | None = None) -> dict[str, Any]:
    """The share of ``later`` rows expected to copy an ``earlier`` row by chance, and the
    one-sided p-value of the observed ``count`` against it.

    Discrete data repeat naturally (statsmodels ``fair``: 1,039 of 6,366 rows copy another), so
    an honest random split puts copies of train rows into test. A later row drawn from the same
    distribution as the earlier split matches an earlier row about as often as an earlier row
    matches *another* earlier row, so the chance baseline is

        b = R / n_a,   R = earlier rows whose values occur at least twice in the earlier split

    (verified copies, not hashes), leaving out rows with a value in a continuous column
    (:func:`continuous_columns`: at least half of its values distinct): two rows sharing a
    measured value to the last digit are copies (oversampling, augmentation), not
    coincidence, so continuous data -- also when rows were
    duplicated before the split -- have b = 0, and every copy counts. The
    observed share s = C / n_b (C later rows that copy an earlier row) is compared with b by a
    one-sided z-test of D = s - b against its distribution under an honest random split of the
    pooled rows (:func:`_split_null`): each value pattern seen m times in earlier + later puts
    X ~ Binomial(m, n_a / (n_a + n_b)) rows in earlier, adding X 1[X >= 2] to R and
    (m - X) 1[X >= 1] to C, so D's null mean mu and variance v are sums over patterns
    (independent, then conditioned on the earlier split's size); z = (D - mu) / sqrt(v),
    p = 1 - Phi(z). (A plug-in variance from b itself was
    4x too wide at b = 0.7, missing 5% planted copies, and anti-conservative at b = 0.002, with
    1% of honest splits at p < 1e-4.) Graded value: the excess max(0, s - b). Copies planted
    into naturally repeating data show only once they exceed the chance fluctuation.
    In mixed data (a continuous column null on some rows), the ``copied`` later rows with a
    continuous value (K of them) are never chance: they are left out of s and D and added to
    the excess, K / n_b + max(0, (C - K) / n_b - b), with p = 0 when K > 0 (before, 100
    copied measured rows hid in the fluctuation of 1,400 discrete chance copies).
    """
    n_a, n_b = data.rows(earlier), data.rows(later)
    rows = pl.concat([earlier_copies["row"], earlier_copies["first_row"]]).unique() \
        if earlier_copies.height else pl.Series("row", [], dtype=pl.UInt32)
    unique_cols = continuous_columns(data, earlier, cols) if rows.len() else []
    if unique_cols:  # equal values of a continuous column are no coincidence
        known = data.splits[earlier].select(unique_cols)[rows].select(
            pl.any_horizontal(pl.all().is_not_null()))
        rows = rows.filter(~known.to_series())
    repeating = rows.len()
    b = share(repeating, n_a)
    if b <= 0:
        return {"baseline": 0.0, "repeating": 0, "p_value": 0.0 if count else 1.0}
    pooled = []
    for split in (earlier, later):  # rows with a continuous value never count as chance
        h = compared_hashes(data, split, cols, as_text)
        if unique_cols:
            h = h.filter(~data.splits[split].select(
                pl.any_horizontal(pl.col(unique_cols).is_not_null())).to_series())
        pooled.append(h)
    m = pl.concat(pooled).value_counts()["count"].to_numpy()
    mu, var = _split_null(m, n_a, n_b)
    certain = 0
    if unique_cols and copied is not None and copied.len():
        certain = int(data.splits[later].select(unique_cols)[copied].select(
            pl.any_horizontal(pl.all().is_not_null())).to_series().sum())
    return chance_verdict(count, certain, n_b, b, repeating, mu, var)


def chance_verdict(count: int, certain: int, n_b: int, b: float, repeating: int, mu: float,
                   var: float) -> dict[str, Any]:
    """The chance-baseline result of :func:`copy_chance` from its measured parts (shared by the
    engines): D = (count - certain) / n_b - b against its null mean ``mu`` and variance
    ``var``; z = (D - mu) / sqrt(var), p = 1 - Phi(z) (0 when ``certain`` copies hold a
    continuous value); excess = certain / n_b + max(0, D)."""
    from scipy.stats import norm

    d = share(count - certain, n_b) - b
    sd = math.sqrt(var)
    z = (d - mu) / sd if sd > 0 else (math.inf if d > mu + 1e-12 else 0.0)
    out = {"baseline": b, "repeating": repeating,
           "expected_copies": round(b * n_b, 1), "z": round(float(z), 3),
           "p_value": 0.0 if certain else float(norm.sf(z)),
           "null_excess": {"mean": mu, "sd": sd},
           "excess": share(certain, n_b) + max(0.0, d)}
    if certain:
        out["copies_with_a_continuous_value"] = certain
    return out


def _split_null(m: np.ndarray, n_a: int, n_b: int) -> tuple[float, float]:
    """Mean and variance of D = C / n_b - R / n_a when the pooled rows, with value patterns
    seen ``m`` times each, are split at random into ``n_a`` earlier and ``n_b`` later rows.
    Per pattern X ~ Binomial(m, p), p = n_a / N, N = n_a + n_b, and f(X) = (m - X) 1[X >= 1] /
    n_b - X 1[X >= 2] / n_a; the patterns' X are independent and then conditioned on
    sum X = n_a (the split's size): Var D = sum Var f - (sum Cov(f, X))^2 / (N p (1 - p)).
    Patterns seen once add nothing to D."""
    sizes, n_patterns = np.unique(m[m >= 2], return_counts=True)
    return split_null_from_counts(sizes, n_patterns, n_a, n_b)


def split_null_from_counts(sizes: np.ndarray, n_patterns: np.ndarray, n_a: int,
                           n_b: int) -> tuple[float, float]:
    """:func:`_split_null` from the counts of counts: ``n_patterns[i]`` value patterns are seen
    ``sizes[i]`` times each (sizes >= 2; an engine computes these as a small aggregate)."""
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


def continuous_columns(data: AuditData, split: str, cols: list[str]) -> list[str]:
    """Columns of ``cols`` (any type but boolean) whose distinct non-null values number at least
    half of the split's non-null values: measurements, timestamps, free text, fine-grained
    codes, where two rows with equal values are copies, not coincidence."""
    df = data.splits[split]
    schema = df.schema  # built anew on every access: once, not once per column
    cand = [c for c in cols if schema[c] != pl.Boolean]
    if not cand:
        return []
    stats = df.select(*(pl.col(c).drop_nulls().n_unique().alias(f"u{i}")
                        for i, c in enumerate(cand)),
                      *(pl.col(c).count().alias(f"n{i}") for i, c in enumerate(cand))).row(0)
    k = len(cand)
    return [c for i, c in enumerate(cand)
            if stats[k + i] > 1 and stats[i] >= 0.5 * stats[k + i]]


def also_equal(data: AuditData, pairs: pl.DataFrame, a: str, b: str, col_a: str, col_b: str,
                as_text: list[str]) -> pl.DataFrame:
    """``pairs`` kept where the columns compared as text are equal too."""
    if not as_text or pairs.height == 0:
        return pairs
    fa = compared_frame(data, a, [], as_text)
    fb = compared_frame(data, b, [], as_text)
    return pairs.filter(pl.Series(frames_equal(fa, pairs[col_a], fb, pairs[col_b])))
